import { Field, Float, Int, ObjectType } from '@nestjs/graphql';
import { GraphQLDateTime } from '../scalars/date-time.scalar.js';
import { GraphQLJSON } from '../scalars/json.scalar.js';

@ObjectType('SkillSummary')
export class SkillSummaryModel {
  @Field()
  name: string;

  @Field()
  description: string;

  @Field(() => GraphQLJSON, { description: 'The SKILL.md frontmatter as parsed.' })
  frontmatter: Record<string, unknown>;
}

@ObjectType('SkillList', { description: 'The loaded skills (the twin of GET /v1/skills).' })
export class SkillListModel {
  @Field(() => Int)
  count: number;

  @Field(() => GraphQLDateTime)
  scannedAt: string;

  @Field(() => [String], { description: 'The prefixes that invoke a skill at the start of a message ([app.skills] explicit_prefixes): /name, and $name when $ is listed.' })
  explicitPrefixes: string[];

  @Field(() => [SkillSummaryModel])
  skills: SkillSummaryModel[];
}

@ObjectType('SkillFile')
export class SkillFileModel {
  @Field({ description: 'Relative to the skill folder.' })
  path: string;

  @Field(() => Float, { description: 'In bytes.' })
  size: number;
}

@ObjectType('SkillFileListing')
export class SkillFileListingModel {
  @Field(() => [SkillFileModel])
  files: SkillFileModel[];

  @Field({ description: 'True when the listing stopped at its bounds and more files exist.' })
  truncated: boolean;
}

@ObjectType('SkillDetail', { description: 'One skill with its other files (the twin of GET /v1/skills/{name}).' })
export class SkillDetailModel extends SkillSummaryModel {
  @Field({ description: "Where it comes from: `bundled` (Skillhost's own skills), `shared folder N` (the Nth of [app.skills] directories), `code folder N` (of code_directories), `store`, `personal` (your own store skill) or `programmatic:<scope>`. Never a host path: admins find those in the admin report." })
  source: string;

  @Field(() => [String])
  warnings: string[];

  @Field(() => SkillFileListingModel)
  resources: SkillFileListingModel;
}

@ObjectType('SkillResource', { description: 'One file of a skill, as text (the twin of GET /v1/skills/{name}/resources/{path}).' })
export class SkillResourceModel {
  @Field()
  name: string;

  @Field()
  path: string;

  @Field()
  content: string;

  @Field({ description: 'True when the file was cut at app.skills.max_resource_bytes (the content then ends with a notice).' })
  truncated: boolean;
}
