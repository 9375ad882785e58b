import { Int, ObjectType } from '@nestjs/graphql';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  ValidateIf,
} from 'class-validator';
import { FILTER_ENTRY_PATTERN } from '../../../domain/shared/skill-filter.js';
import { ApiField } from './api-field.decorator.js';
import { GraphQLDateTime } from '../../graphql/scalars/date-time.scalar.js';
import { CatalogueDiffDto, DisabledSkillDto, SkillScanReportDto } from './skill-responses.dto.js';

const FILTER_MAX_ENTRIES = 200;

export class StoredFileDto {
  @ApiProperty({ example: 'references/REFERENCE.md' })
  path: string;

  @ApiProperty({ type: 'integer' })
  size: number;

  @ApiProperty({ example: 'sha256:9f86d0…' })
  digest: string;
}

export class InstallResultDto {
  @ApiProperty()
  name: string;

  @ApiProperty({ enum: ['shared', 'personal'] })
  scope: 'shared' | 'personal';

  @ApiProperty({ type: String, nullable: true, description: "The owner's name, for a personal skill." })
  owner: string | null;

  @ApiProperty({
    type: 'integer',
    minimum: 1,
    description: 'The version number (per skill and scope): a new one, or the earlier one with the same content.',
  })
  version: number;

  @ApiProperty({
    description:
      '`sha256:<hex>` over the sorted manifest of path and file digest: the same files give the same digest.',
  })
  digest: string;

  @ApiProperty({ type: () => [StoredFileDto] })
  files: StoredFileDto[];

  @ApiProperty({
    description: 'False when this content was installed before (answered with 200): nothing new was stored.',
  })
  created: boolean;

  @ApiProperty({
    type: [String],
    description:
      "The validator's warnings, and a note when a skill of the same name wins over this one (never silently).",
  })
  warnings: string[];
}

export class ImportBodyDto {
  @ApiProperty({
    description:
      'Where to import from: `git+https://…`, `git+http://…` or `git+file://…` (admins) with an optional ' +
      "`#REF`, `#REF:PATH` or `#:PATH`; or another server's discovery index " +
      '(`https://host/.well-known/agent-skills/index.json`, optionally `#skill-name`).',
    example: 'git+https://github.com/acme/skills.git#v1.2:skills',
    maxLength: 2048,
  })
  @IsString()
  @MaxLength(2048)
  source: string;

  @ApiPropertyOptional({
    description:
      "A git source's submodules are checked out too, each at depth 1 and recursively, with the same checks as the " +
      "source (a member's: public hosts only; `file://` only for an admin's `git+file://` source). Default false.",
    default: false,
  })
  @IsOptional()
  @IsBoolean()
  submodules?: boolean;
}

export class ImportResultDto {
  @ApiProperty({ type: () => [InstallResultDto], description: 'One per skill imported, in the order installed.' })
  skills: InstallResultDto[];

  @ApiProperty({
    type: [String],
    description: "What the source named but was not imported, and why (a marketplace's plugins from elsewhere).",
  })
  warnings: string[];
}

@ObjectType('SkillVersionSource', { description: 'Where an imported version came from.' })
export class VersionSourceDto {
  @ApiField({ description: 'The git repository or discovery index, as given (without `git+`).' })
  url: string;

  @ApiField(() => String, { optional: true, description: 'The git ref asked for.' })
  ref?: string;

  @ApiField(() => String, { optional: true, description: 'The folder in the repository.' })
  path?: string;

  @ApiField(() => String, { optional: true, description: 'The git commit that was checked out.' })
  commit?: string;

  @ApiField(() => String, { optional: true, description: 'The digest the index gave the skill.' })
  digest?: string;
}

@ObjectType('InstalledVersion')
export class InstalledVersionDto {
  @ApiField(() => Int)
  version: number;

  @ApiField()
  digest: string;

  @ApiField(() => GraphQLDateTime, { openapi: { type: String, format: 'date-time' } })
  installedAt: string;

  @ApiField(() => String, {
    nullable: true,
    openapi: { description: 'Who installed it (null: the CLI, or a deleted user).' },
  })
  installedBy: string | null;

  @ApiField(() => Int)
  fileCount: number;

  @ApiField(() => Int)
  totalBytes: number;

  @ApiField(() => VersionSourceDto, {
    nullable: true,
    description: 'Where an imported version came from; null for uploads and folders.',
  })
  source: VersionSourceDto | null;
}

@ObjectType('SkillVersions', { description: "An installed skill's versions (GET /v1/skills/{name}/versions)." })
export class VersionHistoryDto {
  @ApiField()
  name: string;

  @ApiField({ openapi: { enum: ['shared', 'personal'] }, graphql: { description: '`shared` or `personal`.' } })
  scope: 'shared' | 'personal';

  @ApiField(() => Int, { description: 'The version in use.' })
  current: number;

  @ApiField(() => [InstalledVersionDto], { description: 'Oldest first.' })
  versions: InstalledVersionDto[];
}

export class VersionsQueryDto {
  @ApiPropertyOptional({
    enum: ['shared', 'personal'],
    description: "Default: the caller's personal skill of that name when there is one, else the shared one.",
  })
  @IsOptional()
  @IsIn(['shared', 'personal'], { message: 'scope must be shared or personal' })
  scope?: 'shared' | 'personal';
}

export class RollbackDto {
  @ApiProperty({ type: 'integer', minimum: 1 })
  @IsInt({ message: 'version must be an integer' })
  @Min(1, { message: 'version must be at least 1' })
  @Max(2_147_483_647, { message: 'version is too large' })
  version: number;
}

@ObjectType('SkillRollback')
export class RollbackResultDto {
  @ApiField()
  name: string;

  @ApiField(() => Int)
  version: number;

  @ApiField()
  digest: string;

  @ApiField({ description: 'False when that version was current already.' })
  changed: boolean;
}

export class SwitchDto {
  @ApiProperty()
  @IsBoolean({ message: 'enabled must be true or false' })
  enabled: boolean;
}

@ObjectType('SkillSwitch')
export class SwitchResultDto {
  @ApiField()
  name: string;

  @ApiField()
  enabled: boolean;
}

/**
 * Names are compared NFKC-normalised: entries are normalised before they are checked, so what is checked is what is
 * stored.
 */
function nfkcEntries({ value }: { value: unknown }): unknown {
  return Array.isArray(value)
    ? value.map((entry) => (typeof entry === 'string' ? entry.trim().normalize('NFKC') : entry))
    : value;
}

export class SkillFilterBodyDto {
  @ApiPropertyOptional({
    type: [String],
    maxItems: FILTER_MAX_ENTRIES,
    description: 'Only skills matching one of these (names, or `prefix-*`); absent: no restriction; `[]`: no skills.',
  })
  @ValidateIf((body: SkillFilterBodyDto) => body.include !== undefined)
  @Transform(nfkcEntries)
  @IsArray({ message: 'include must be a list of names' })
  @ArrayMaxSize(FILTER_MAX_ENTRIES, { message: `include may hold at most ${FILTER_MAX_ENTRIES} entries` })
  @IsString({ each: true, message: 'include must hold strings' })
  @MaxLength(65, { each: true, message: 'include entries are at most 65 characters' })
  @Matches(FILTER_ENTRY_PATTERN, {
    each: true,
    message: "include entries are skill names or prefixes ending in '*' (no spaces)",
  })
  include?: string[];

  @ApiPropertyOptional({
    type: [String],
    maxItems: FILTER_MAX_ENTRIES,
    description: 'Never skills matching one of these (names, or `prefix-*`).',
  })
  @ValidateIf((body: SkillFilterBodyDto) => body.exclude !== undefined)
  @Transform(nfkcEntries)
  @IsArray({ message: 'exclude must be a list of names' })
  @ArrayMaxSize(FILTER_MAX_ENTRIES, { message: `exclude may hold at most ${FILTER_MAX_ENTRIES} entries` })
  @IsString({ each: true, message: 'exclude must hold strings' })
  @MaxLength(65, { each: true, message: 'exclude entries are at most 65 characters' })
  @Matches(FILTER_ENTRY_PATTERN, {
    each: true,
    message: "exclude entries are skill names or prefixes ending in '*' (no spaces)",
  })
  exclude?: string[];
}

@ObjectType('SkillFilterResult', {
  description: 'A skill filter as stored (null: no restriction) and the skills it offers.',
})
export class SkillFilterResultDto {
  @ApiField(() => [String], { nullable: true, openapi: { description: 'null: no restriction.' } })
  include: string[] | null;

  @ApiField(() => [String], { nullable: true })
  exclude: string[] | null;

  @ApiField(() => [String], {
    openapi: { description: "The skills offered with this filter (for a chat: with the user's filter too)." },
  })
  offered: string[];
}

export class ReloadReportDto extends SkillScanReportDto {
  @ApiProperty({
    type: () => CatalogueDiffDto,
    description: 'What the reload changed in the catalogue, by content digest.',
  })
  declare diff: CatalogueDiffDto;
}

export { DisabledSkillDto };
