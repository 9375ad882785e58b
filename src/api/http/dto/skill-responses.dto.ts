import { ApiProperty } from '@nestjs/swagger';
import { VALIDATION_MODES, type ValidationMode } from '../../../config/app-config.js';
import { SKILL_SCOPES, type SkillOrigin, type SkillScope } from '@skillhost/core';
import { Field, Float, Int, ObjectType, registerEnumType } from '@nestjs/graphql';
import { ApiField } from './api-field.decorator.js';
import { GraphQLDateTime } from '../../graphql/scalars/date-time.scalar.js';
import { GraphQLJSON } from '../../graphql/scalars/json.scalar.js';
import { CommandScanReportDto } from './command-responses.dto.js';

/**
 * What `skill.presenter.ts` and the skills routes answer: the OpenAPI schemas (the class names) and,
 * where GraphQL answers the same shape, its object types (the names given to `@ObjectType`).
 * Documentation only: nothing is built from them.
 */

const FRONTMATTER = {
  type: 'object',
  additionalProperties: true,
  description: 'The SKILL.md frontmatter as parsed (`name`, `description`, and any other fields).',
} as const;

@ObjectType('SkillSummary')
export class SkillSummaryDto {
  @ApiField()
  name: string;

  @ApiField({ openapi: { description: 'As shown in the catalogue.' } })
  description: string;

  @ApiField(() => GraphQLJSON, {
    openapi: FRONTMATTER,
    graphql: { description: 'The SKILL.md frontmatter as parsed.' },
  })
  frontmatter: Record<string, unknown>;
}

@ObjectType('SkillList', { description: 'The loaded skills (the twin of GET /v1/skills).' })
export class SkillListDto {
  @ApiField(() => Int, { openapi: { minimum: 0 } })
  count: number;

  @ApiField(() => GraphQLDateTime, { openapi: { type: String, format: 'date-time' } })
  scannedAt: string;

  @ApiField(() => [String], {
    openapi: {
      example: ['/'],
      description:
        'The prefixes that invoke a skill at the start of a message (`[app.skills] explicit_prefixes`): ' +
        '`/name`, and `$name` when `$` is listed. Commands are always `/name`.',
    },
    graphql: {
      description:
        'The prefixes that invoke a skill at the start of a message ([app.skills] explicit_prefixes): /name, ' +
        'and $name when $ is listed.',
    },
  })
  explicitPrefixes: string[];

  @ApiField(() => [SkillSummaryDto], { openapi: { description: 'In name order.' } })
  skills: SkillSummaryDto[];
}

@ObjectType('SkillFile')
export class ResourceFileDto {
  @ApiField({ openapi: { example: 'references/REFERENCE.md' }, description: 'Relative to the skill folder.' })
  path: string;

  @ApiField(() => Float, {
    openapi: { type: 'integer', minimum: 0, description: 'Bytes.' },
    graphql: { description: 'In bytes.' },
  })
  size: number;
}

@ObjectType('SkillFileListing')
export class ResourceListingDto {
  @ApiField(() => [ResourceFileDto], { openapi: { description: "The skill's files other than SKILL.md." } })
  files: ResourceFileDto[];

  @ApiField({ description: 'True when the listing stopped at its bounds and more files exist.' })
  truncated: boolean;
}

@ObjectType('SkillDetail', { description: 'One skill with its other files (the twin of GET /v1/skills/{name}).' })
export class SkillDetailDto extends SkillSummaryDto {
  @ApiField({
    description:
      "Where it comes from: `bundled` (Skillhost's own skills), `shared folder N` (the Nth of [app.skills] " +
      'directories), `code folder N` (of code_directories), `store`, `personal` (your own store skill) or ' +
      '`programmatic:<scope>`. Never a host path: admins find those in the admin report.',
  })
  source: string;

  @ApiField(() => [String])
  warnings: string[];

  @ApiField(() => ResourceListingDto)
  resources: ResourceListingDto;
}

/** Level 2: the instructions. */
export class SkillBodyDto {
  @ApiProperty()
  name: string;

  @ApiProperty(FRONTMATTER)
  frontmatter: Record<string, unknown>;

  @ApiProperty({ description: 'SKILL.md after its frontmatter; a cut body ends with a `[Truncated: …]` notice.' })
  body: string;

  @ApiProperty()
  truncated: boolean;
}

export class CatalogueEntryDto {
  @ApiProperty()
  name: string;

  @ApiProperty()
  description: string;
}

/** The `json` catalogue, exactly as a model gets it. */
export class CatalogueJsonDto {
  @ApiProperty({ type: () => [CatalogueEntryDto] })
  available_skills: CatalogueEntryDto[];
}

@ObjectType('SkillSearchResult', { description: 'A skill ranked for a query (skills.search, GET /v1/skills/search).' })
export class SkillSearchResultDto {
  @ApiField()
  name: string;

  @ApiField()
  description: string;

  @ApiField(() => Float, {
    openapi: { minimum: 0, maximum: 1 },
    description:
      'How well the skill fits the query, 0 to 1: its relevance (BM25 over name, description and triggers), ' +
      'normalised so that 0.5 is a middling match; results come in this order.',
  })
  score: number;
}

export class SkillSearchResponseDto {
  @ApiProperty({ type: () => [SkillSearchResultDto], description: 'Best first.' })
  results: SkillSearchResultDto[];
}

const ValidationModeEnum = Object.fromEntries(VALIDATION_MODES.map((mode) => [mode, mode]));
registerEnumType(ValidationModeEnum, { name: 'ValidationMode' });

const SkillKind = { instructions: 'instructions', code: 'code' };
registerEnumType(SkillKind, {
  name: 'SkillKind',
  description: '`code`: it runs code when invoked (a `skill.mjs` of a code directory, or a programmatic `execute`).',
});

const SkillOriginEnum = { folder: 'folder', programmatic: 'programmatic' };
registerEnumType(SkillOriginEnum, {
  name: 'SkillOrigin',
  description: '`programmatic`: registered by the embedding application at run time.',
});

const SkillScopeEnum = Object.fromEntries(SKILL_SCOPES.map((scope) => [scope, scope]));
registerEnumType(SkillScopeEnum, {
  name: 'SkillScope',
  description: 'A higher scope wins a name clash (bundled < user < workspace); folder skills are `user`.',
});

@ObjectType('SkillLocation')
export class SkillLocationDto {
  @ApiField({ openapi: { description: 'Host path.' } })
  path: string;

  @ApiField({ openapi: { description: 'The configured skills directory.' } })
  source: string;
}

@ObjectType('LoadedSkill')
export class ScannedSkillDto extends SkillLocationDto {
  @ApiField()
  name: string;

  @ApiField(() => [String])
  warnings: string[];

  @ApiField(() => SkillKind, {
    openapi: {
      enum: ['instructions', 'code'],
      description:
        '`code`: it runs code when invoked (a `skill.mjs` of a code directory, or a programmatic `execute`).',
    },
  })
  kind: 'instructions' | 'code';

  @ApiField(() => SkillOriginEnum, {
    openapi: {
      enum: ['folder', 'programmatic'],
      description:
        '`programmatic`: registered by the embedding application at run time; its `path` and `source` are ' +
        '`programmatic:<scope>…`.',
    },
  })
  origin: SkillOrigin;

  @ApiField(() => SkillScopeEnum, {
    openapi: {
      enum: SKILL_SCOPES,
      description: 'A higher scope wins a name clash (bundled < user < workspace); folder skills are `user`.',
    },
  })
  scope: SkillScope;

  @ApiField(() => String, {
    nullable: true,
    openapi: {
      description:
        'The content version loaded (`sha256:…`); null for programmatic skills and folders past `max_install_bytes`.',
    },
    graphql: {
      description:
        'The content version loaded (`sha256:…`); null for programmatic skills and folders past max_install_bytes.',
    },
  })
  digest: string | null;

  @ApiField(() => StoreOriginDto, {
    nullable: true,
    openapi: { description: 'For a skill installed through the store: its scope, owner and version number.' },
    graphql: { description: 'For a skill installed through the store.' },
  })
  store: StoreOriginDto | null;
}

@ObjectType('StoreOrigin', { description: "A store skill's scope, owner and version number." })
export class StoreOriginDto {
  @ApiField({ openapi: { enum: ['shared', 'personal'] }, graphql: { description: '`shared` or `personal`.' } })
  scope: 'shared' | 'personal';

  @ApiField(() => String, { nullable: true })
  owner: string | null;

  @ApiField(() => Int)
  version: number;
}

@ObjectType('UnavailableSkill', {
  description: 'A valid skill left out of the catalogue: it needs tools (tools_required) the chats do not have.',
})
export class UnavailableSkillDto extends SkillLocationDto {
  @ApiField()
  name: string;

  @ApiField(() => [String], {
    openapi: { description: 'The tools of its `tools_required` that the chats do not have, as it wrote them.' },
    graphql: { description: 'As the skill wrote them.' },
  })
  missingTools: string[];

  @ApiField({ description: 'Why, and what would offer it.' })
  reason: string;
}

@ObjectType('InvalidSkill')
export class InvalidSkillDto extends SkillLocationDto {
  @ApiField(() => String, { optional: true, description: 'The name it declared, when it declared a string.' })
  name?: string;

  @ApiField(() => [String], { openapi: { description: 'Every reason it did not load.' } })
  errors: string[];

  @ApiField(() => [String])
  warnings: string[];
}

@ObjectType('SkillCollision')
export class SkillCollisionDto {
  @ApiField()
  name: string;

  @ApiField(() => SkillLocationDto)
  winner: SkillLocationDto;

  @ApiField(() => SkillLocationDto)
  loser: SkillLocationDto;
}

@ObjectType('ExcludedSkill')
export class ExcludedSkillDto {
  @ApiField()
  name: string;

  @ApiField()
  path: string;
}

@ObjectType('DisabledSkill', { description: 'A valid skill switched off ([app.skills] disabled).' })
export class DisabledSkillDto extends ExcludedSkillDto {
  @ApiField({ openapi: { description: 'The configured directory it came from.' } })
  source: string;
}

@ObjectType('SkillDirectoryReport')
export class DirectoryReportDto {
  @ApiField({ description: 'As written in the configuration.' })
  configured: string;

  @ApiField({ openapi: { description: 'Resolved host path.' } })
  path: string;

  @ApiField()
  exists: boolean;

  @ApiField({
    optional: true,
    openapi: { description: 'Present (true) for an `app.skills.code_directories` folder.' },
    graphql: { description: 'True for an app.skills.code_directories folder.' },
  })
  code?: boolean;

  @ApiField(() => Int, { openapi: { minimum: 0, description: 'Skills loaded from it.' } })
  skills: number;

  @ApiField(() => Int, { openapi: { minimum: 0 } })
  invalid: number;
}

@ObjectType('CatalogueDiffEntry')
export class DiffEntryDto {
  @ApiField()
  name: string;

  @ApiField(() => String, { nullable: true })
  digest: string | null;

  @ApiField()
  source: string;
}

@ObjectType('CatalogueChange')
export class ChangedEntryDto {
  @ApiField()
  name: string;

  @ApiField(() => String, { nullable: true })
  oldDigest: string | null;

  @ApiField(() => String, { nullable: true })
  newDigest: string | null;

  @ApiField()
  source: string;
}

@ObjectType('CatalogueDiff', { description: 'What a reload changed in the catalogue, by content digest.' })
export class CatalogueDiffDto {
  @ApiField(() => [DiffEntryDto])
  added: DiffEntryDto[];

  @ApiField(() => [DiffEntryDto])
  removed: DiffEntryDto[];

  @ApiField(() => [ChangedEntryDto], { openapi: { description: 'Same name, other content (or another source).' } })
  changed: ChangedEntryDto[];

  @ApiField(() => Int)
  unchanged: number;
}

/**
 * The operator's view of the last scan, host paths included. GraphQL answers it for the admin
 * report and for `reloadSkills` alike, with `diff` (null in the report); REST gives the reload its
 * own schema, `ReloadReportDto`, where `diff` is always there.
 */
@ObjectType('SkillScanReport', {
  description: "Everything a scan saw, host paths included: the operators' view (the twin of GET /v1/admin/skills).",
})
export class SkillScanReportDto {
  @ApiField(() => GraphQLDateTime, { openapi: { type: String, format: 'date-time' } })
  scannedAt: string;

  @ApiField(() => Float)
  durationMs: number;

  @ApiField(() => ValidationModeEnum, { openapi: { enum: VALIDATION_MODES } })
  mode: ValidationMode;

  @ApiField(() => [DirectoryReportDto])
  directories: DirectoryReportDto[];

  @ApiField(() => [ScannedSkillDto])
  valid: ScannedSkillDto[];

  @ApiField(() => [InvalidSkillDto])
  invalid: InvalidSkillDto[];

  @ApiField(() => [SkillCollisionDto])
  collisions: SkillCollisionDto[];

  @ApiField(() => [ExcludedSkillDto])
  excluded: ExcludedSkillDto[];

  @ApiField(() => [UnavailableSkillDto], {
    openapi: {
      description:
        'Valid skills left out of the catalogue because they need tools (`tools_required`) the chats do not have.',
    },
  })
  unavailable: UnavailableSkillDto[];

  @ApiField(() => [DisabledSkillDto], {
    openapi: {
      description:
        'Valid skills switched off (`[app.skills] disabled` or the persisted switch): in no catalogue; ' +
        'activating or reading one answers SKILL_DISABLED.',
    },
  })
  disabled: DisabledSkillDto[];

  @ApiField(() => [ScannedSkillDto], {
    openapi: {
      description:
        "Users' personal store skills, offered only to their owners (a personal skill named like a team skill " +
        'is a collision, and not offered).',
    },
    graphql: { description: "Users' personal store skills, offered only to their owners." },
  })
  personal: ScannedSkillDto[];

  @Field(() => CatalogueDiffDto, {
    nullable: true,
    description: 'From reloadSkills: what the reload changed. Null in the admin report.',
  })
  diff?: CatalogueDiffDto | null;

  @ApiField(() => [String])
  warnings: string[];

  @ApiField(() => CommandScanReportDto, { description: 'The commands directories, scanned with the skills.' })
  commands: CommandScanReportDto;
}
