import { Float, Int, ObjectType } from '@nestjs/graphql';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ApiField } from '../../common/api-field.decorator.js';
import { VALIDATION_MODES, type ValidationMode } from '../../config/app-config.js';
import { GraphQLDateTime } from '../../graphql/scalars/date-time.scalar.js';
import { GraphQLJSON } from '../../graphql/scalars/json.scalar.js';
import { SKILL_SCOPES, type SkillOrigin, type SkillScope } from '../skill.types.js';
import { CommandScanReportDto } from './command-responses.dto.js';

/**
 * What `skill.presenter.ts` and the skills routes answer: the OpenAPI schemas (the class names) and,
 * where GraphQL answers the same shape, its object types (the names given to `@ObjectType`).
 * Documentation only: nothing is built from them.
 */

const FRONTMATTER = { type: 'object', additionalProperties: true, description: "The SKILL.md frontmatter as parsed (`name`, `description`, and any other fields)." } as const;

@ObjectType('SkillSummary')
export class SkillSummaryDto {
  @ApiField()
  name: string;

  @ApiField({ openapi: { description: 'As shown in the catalogue.' } })
  description: string;

  @ApiField(() => GraphQLJSON, { openapi: FRONTMATTER, graphql: { description: 'The SKILL.md frontmatter as parsed.' } })
  frontmatter: Record<string, unknown>;
}

@ObjectType('SkillList', { description: 'The loaded skills (the twin of GET /v1/skills).' })
export class SkillListDto {
  @ApiField(() => Int, { openapi: { minimum: 0 } })
  count: number;

  @ApiField(() => GraphQLDateTime, { openapi: { type: String, format: 'date-time' } })
  scannedAt: string;

  @ApiField(() => [String], {
    openapi: { example: ['/'], description: 'The prefixes that invoke a skill at the start of a message (`[app.skills] explicit_prefixes`): `/name`, and `$name` when `$` is listed. Commands are always `/name`.' },
    graphql: { description: 'The prefixes that invoke a skill at the start of a message ([app.skills] explicit_prefixes): /name, and $name when $ is listed.' },
  })
  explicitPrefixes: string[];

  @ApiField(() => [SkillSummaryDto], { openapi: { description: 'In name order.' } })
  skills: SkillSummaryDto[];
}

@ObjectType('SkillFile')
export class ResourceFileDto {
  @ApiField({ openapi: { example: 'references/REFERENCE.md' }, description: 'Relative to the skill folder.' })
  path: string;

  @ApiField(() => Float, { openapi: { type: 'integer', minimum: 0, description: 'Bytes.' }, graphql: { description: 'In bytes.' } })
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
      "Where it comes from: `bundled` (Skillhost's own skills), `shared folder N` (the Nth of [app.skills] directories), `code folder N` (of code_directories), `store`, `personal` (your own store skill) or `programmatic:<scope>`. Never a host path: admins find those in the admin report.",
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
    description: 'How well the skill fits the query, 0 to 1: its relevance (BM25 over name, description and triggers), normalised so that 0.5 is a middling match; results come in this order.',
  })
  score: number;
}

export class SkillSearchResponseDto {
  @ApiProperty({ type: () => [SkillSearchResultDto], description: 'Best first.' })
  results: SkillSearchResultDto[];
}

export class SkillLocationDto {
  @ApiProperty({ description: 'Host path.' })
  path: string;

  @ApiProperty({ description: 'The configured skills directory.' })
  source: string;
}

export class ScannedSkillDto extends SkillLocationDto {
  @ApiProperty()
  name: string;

  @ApiProperty({ type: [String] })
  warnings: string[];

  @ApiProperty({ enum: ['instructions', 'code'], description: '`code`: it runs code when invoked (a `skill.mjs` of a code directory, or a programmatic `execute`).' })
  kind: 'instructions' | 'code';

  @ApiProperty({ enum: ['folder', 'programmatic'], description: '`programmatic`: registered by the embedding application at run time; its `path` and `source` are `programmatic:<scope>…`.' })
  origin: SkillOrigin;

  @ApiProperty({ enum: SKILL_SCOPES, description: 'A higher scope wins a name clash (bundled < user < workspace); folder skills are `user`.' })
  scope: SkillScope;

  @ApiProperty({ type: String, nullable: true, description: 'The content version loaded (`sha256:…`); null for programmatic skills and folders past `max_install_bytes`.' })
  digest: string | null;

  @ApiProperty({ type: () => StoreOriginDto, nullable: true, description: 'For a skill installed through the store: its scope, owner and version number.' })
  store: StoreOriginDto | null;
}

export class StoreOriginDto {
  @ApiProperty({ enum: ['shared', 'personal'] })
  scope: 'shared' | 'personal';

  @ApiProperty({ type: String, nullable: true })
  owner: string | null;

  @ApiProperty({ type: 'integer' })
  version: number;
}

export class UnavailableSkillDto extends SkillLocationDto {
  @ApiProperty()
  name: string;

  @ApiProperty({ type: [String], description: 'The tools of its `tools_required` that the chats do not have, as it wrote them.' })
  missingTools: string[];

  @ApiProperty({ description: 'Why, and what would offer it.' })
  reason: string;
}

export class InvalidSkillDto extends SkillLocationDto {
  @ApiPropertyOptional({ description: 'The name it declared, when it declared a string.' })
  name?: string;

  @ApiProperty({ type: [String], description: 'Every reason it did not load.' })
  errors: string[];

  @ApiProperty({ type: [String] })
  warnings: string[];
}

export class SkillCollisionDto {
  @ApiProperty()
  name: string;

  @ApiProperty({ type: () => SkillLocationDto })
  winner: SkillLocationDto;

  @ApiProperty({ type: () => SkillLocationDto })
  loser: SkillLocationDto;
}

export class ExcludedSkillDto {
  @ApiProperty()
  name: string;

  @ApiProperty()
  path: string;
}

export class DisabledSkillDto extends ExcludedSkillDto {
  @ApiProperty({ description: 'The configured directory it came from.' })
  source: string;
}

export class DirectoryReportDto {
  @ApiProperty({ description: 'As written in the configuration.' })
  configured: string;

  @ApiProperty({ description: 'Resolved host path.' })
  path: string;

  @ApiProperty()
  exists: boolean;

  @ApiPropertyOptional({ description: 'Present (true) for an `app.skills.code_directories` folder.' })
  code?: boolean;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Skills loaded from it.' })
  skills: number;

  @ApiProperty({ type: 'integer', minimum: 0 })
  invalid: number;
}

/** The operator's view of the last scan, host paths included. */
export class SkillScanReportDto {
  @ApiProperty({ type: String, format: 'date-time' })
  scannedAt: string;

  @ApiProperty()
  durationMs: number;

  @ApiProperty({ enum: VALIDATION_MODES })
  mode: ValidationMode;

  @ApiProperty({ type: () => [DirectoryReportDto] })
  directories: DirectoryReportDto[];

  @ApiProperty({ type: () => [ScannedSkillDto] })
  valid: ScannedSkillDto[];

  @ApiProperty({ type: () => [InvalidSkillDto] })
  invalid: InvalidSkillDto[];

  @ApiProperty({ type: () => [SkillCollisionDto] })
  collisions: SkillCollisionDto[];

  @ApiProperty({ type: () => [ExcludedSkillDto] })
  excluded: ExcludedSkillDto[];

  @ApiProperty({ type: () => [UnavailableSkillDto], description: 'Valid skills left out of the catalogue because they need tools (`tools_required`) the chats do not have.' })
  unavailable: UnavailableSkillDto[];

  @ApiProperty({ type: () => [DisabledSkillDto], description: 'Valid skills switched off (`[app.skills] disabled` or the persisted switch): in no catalogue; activating or reading one answers SKILL_DISABLED.' })
  disabled: DisabledSkillDto[];

  @ApiProperty({ type: () => [ScannedSkillDto], description: "Users' personal store skills, offered only to their owners (a personal skill named like a team skill is a collision, and not offered)." })
  personal: ScannedSkillDto[];

  @ApiProperty({ type: [String] })
  warnings: string[];

  @ApiProperty({ type: () => CommandScanReportDto, description: 'The commands directories, scanned with the skills.' })
  commands: CommandScanReportDto;
}
