import { Field, Float, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { VALIDATION_MODES } from '../../../config/app-config.js';
import { SKILL_SCOPES } from '../../../domain/skills/skill.types.js';
import { GraphQLDateTime } from '../scalars/date-time.scalar.js';
import { CommandScanReportModel } from './command.model.js';

export const ValidationMode = Object.fromEntries(VALIDATION_MODES.map((mode) => [mode, mode]));
registerEnumType(ValidationMode, { name: 'ValidationMode' });

export const SkillKind = { instructions: 'instructions', code: 'code' };
registerEnumType(SkillKind, { name: 'SkillKind', description: '`code`: it runs code when invoked (a `skill.mjs` of a code directory, or a programmatic `execute`).' });

export const SkillOrigin = { folder: 'folder', programmatic: 'programmatic' };
registerEnumType(SkillOrigin, { name: 'SkillOrigin', description: '`programmatic`: registered by the embedding application at run time.' });

export const SkillScope = Object.fromEntries(SKILL_SCOPES.map((scope) => [scope, scope]));
registerEnumType(SkillScope, { name: 'SkillScope', description: 'A higher scope wins a name clash (bundled < user < workspace); folder skills are `user`.' });

@ObjectType('SkillDirectoryReport')
export class SkillDirectoryReportModel {
  @Field({ description: 'As written in the configuration.' })
  configured: string;

  @Field()
  path: string;

  @Field()
  exists: boolean;

  @Field({ nullable: true, description: 'True for an app.skills.code_directories folder.' })
  code?: boolean;

  @Field(() => Int)
  skills: number;

  @Field(() => Int)
  invalid: number;
}

@ObjectType('CatalogueDiffEntry')
export class CatalogueDiffEntryModel {
  @Field()
  name: string;

  @Field(() => String, { nullable: true })
  digest: string | null;

  @Field()
  source: string;
}

@ObjectType('CatalogueChange')
export class CatalogueChangeModel {
  @Field()
  name: string;

  @Field(() => String, { nullable: true })
  oldDigest: string | null;

  @Field(() => String, { nullable: true })
  newDigest: string | null;

  @Field()
  source: string;
}

@ObjectType('CatalogueDiff', { description: 'What a reload changed in the catalogue, by content digest.' })
export class CatalogueDiffModel {
  @Field(() => [CatalogueDiffEntryModel])
  added: CatalogueDiffEntryModel[];

  @Field(() => [CatalogueDiffEntryModel])
  removed: CatalogueDiffEntryModel[];

  @Field(() => [CatalogueChangeModel])
  changed: CatalogueChangeModel[];

  @Field(() => Int)
  unchanged: number;
}

@ObjectType('StoreOrigin', { description: "A store skill's scope, owner and version number." })
export class StoreOriginModel {
  @Field({ description: '`shared` or `personal`.' })
  scope: string;

  @Field(() => String, { nullable: true })
  owner: string | null;

  @Field(() => Int)
  version: number;
}

@ObjectType('LoadedSkill')
export class LoadedSkillModel {
  @Field()
  name: string;

  @Field()
  path: string;

  @Field()
  source: string;

  @Field(() => [String])
  warnings: string[];

  @Field(() => SkillKind)
  kind: string;

  @Field(() => SkillOrigin)
  origin: string;

  @Field(() => SkillScope)
  scope: string;

  @Field(() => String, { nullable: true, description: 'The content version loaded (`sha256:…`); null for programmatic skills and folders past max_install_bytes.' })
  digest: string | null;

  @Field(() => StoreOriginModel, { nullable: true, description: 'For a skill installed through the store.' })
  store: StoreOriginModel | null;
}

@ObjectType('UnavailableSkill', { description: 'A valid skill left out of the catalogue: it needs tools (tools_required) the chats do not have.' })
export class UnavailableSkillModel {
  @Field()
  name: string;

  @Field()
  path: string;

  @Field()
  source: string;

  @Field(() => [String], { description: 'As the skill wrote them.' })
  missingTools: string[];

  @Field({ description: 'Why, and what would offer it.' })
  reason: string;
}

@ObjectType('InvalidSkill')
export class InvalidSkillModel {
  @Field()
  path: string;

  @Field()
  source: string;

  @Field({ nullable: true, description: 'The name it declared, when it declared a string.' })
  name?: string;

  @Field(() => [String])
  errors: string[];

  @Field(() => [String])
  warnings: string[];
}

@ObjectType('SkillLocation')
export class SkillLocationModel {
  @Field()
  path: string;

  @Field()
  source: string;
}

@ObjectType('SkillCollision')
export class SkillCollisionModel {
  @Field()
  name: string;

  @Field(() => SkillLocationModel)
  winner: SkillLocationModel;

  @Field(() => SkillLocationModel)
  loser: SkillLocationModel;
}

@ObjectType('ExcludedSkill')
export class ExcludedSkillModel {
  @Field()
  name: string;

  @Field()
  path: string;
}

@ObjectType('DisabledSkill', { description: 'A valid skill switched off ([app.skills] disabled).' })
export class DisabledSkillModel extends ExcludedSkillModel {
  @Field()
  source: string;
}

@ObjectType('SkillScanReport', { description: "Everything a scan saw, host paths included: the operators' view (the twin of GET /v1/admin/skills)." })
export class SkillScanReportModel {
  @Field(() => GraphQLDateTime)
  scannedAt: string;

  @Field(() => Float)
  durationMs: number;

  @Field(() => ValidationMode)
  mode: string;

  @Field(() => [SkillDirectoryReportModel])
  directories: SkillDirectoryReportModel[];

  @Field(() => [LoadedSkillModel])
  valid: LoadedSkillModel[];

  @Field(() => [InvalidSkillModel])
  invalid: InvalidSkillModel[];

  @Field(() => [SkillCollisionModel])
  collisions: SkillCollisionModel[];

  @Field(() => [ExcludedSkillModel])
  excluded: ExcludedSkillModel[];

  @Field(() => [UnavailableSkillModel])
  unavailable: UnavailableSkillModel[];

  @Field(() => [DisabledSkillModel])
  disabled: DisabledSkillModel[];

  @Field(() => [LoadedSkillModel], { description: "Users' personal store skills, offered only to their owners." })
  personal: LoadedSkillModel[];

  @Field(() => CatalogueDiffModel, { nullable: true, description: 'From reloadSkills: what the reload changed. Null in the admin report.' })
  diff?: CatalogueDiffModel | null;

  @Field(() => [String])
  warnings: string[];

  @Field(() => CommandScanReportModel, { description: 'The commands directories, scanned with the skills.' })
  commands: CommandScanReportModel;
}
