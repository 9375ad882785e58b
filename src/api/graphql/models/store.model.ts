import { Field, Int, ObjectType } from '@nestjs/graphql';
import { GraphQLDateTime } from '../scalars/date-time.scalar.js';

@ObjectType('InstalledVersion')
export class InstalledVersionModel {
  @Field(() => Int)
  version: number;

  @Field()
  digest: string;

  @Field(() => GraphQLDateTime)
  installedAt: Date;

  @Field(() => String, { nullable: true })
  installedBy: string | null;

  @Field(() => Int)
  fileCount: number;

  @Field(() => Int)
  totalBytes: number;
}

@ObjectType('SkillVersions', { description: "An installed skill's versions (GET /v1/skills/{name}/versions)." })
export class SkillVersionsModel {
  @Field()
  name: string;

  @Field({ description: '`shared` or `personal`.' })
  scope: string;

  @Field(() => Int, { description: 'The version in use.' })
  current: number;

  @Field(() => [InstalledVersionModel], { description: 'Oldest first.' })
  versions: InstalledVersionModel[];
}

@ObjectType('SkillRollback')
export class SkillRollbackModel {
  @Field()
  name: string;

  @Field(() => Int)
  version: number;

  @Field()
  digest: string;

  @Field({ description: 'False when that version was current already.' })
  changed: boolean;
}

@ObjectType('SkillSwitch')
export class SkillSwitchModel {
  @Field()
  name: string;

  @Field()
  enabled: boolean;
}

@ObjectType('SkillFilterResult', { description: 'A skill filter as stored (null: no restriction) and the skills it offers.' })
export class SkillFilterResultModel {
  @Field(() => [String], { nullable: true })
  include: string[] | null;

  @Field(() => [String], { nullable: true })
  exclude: string[] | null;

  @Field(() => [String])
  offered: string[];
}
