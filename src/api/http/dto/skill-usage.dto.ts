import { Float, ObjectType } from '@nestjs/graphql';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { USAGE_GROUPS, type UsageGroup } from '../../../domain/skills/usage/skill-usage.js';
import { DEFAULT_USAGE_DAYS } from '../../../domain/skills/usage/skill-usage.service.js';
import { ApiField } from './api-field.decorator.js';

/** `GET /v1/admin/skills/usage`'s filters (GraphQL's `skillUsage` takes the same, with `groupBy` as a list). */
export class SkillUsageQueryDto {
  @ApiPropertyOptional({ maxLength: 200, example: 'pdf', description: 'Only this skill.' })
  @IsOptional()
  @IsString()
  @MaxLength(200, { message: 'skill must be at most 200 characters' })
  skill?: string;

  @ApiPropertyOptional({
    maxLength: 200,
    example: 'gpt-4o',
    description: "Only this model (the configured name). `''` is what MCP clients did (they have no model).",
  })
  @IsOptional()
  @IsString()
  @MaxLength(200, { message: 'model must be at most 200 characters' })
  model?: string;

  @ApiPropertyOptional({
    example: '2026-11-01',
    description: `First UTC day (YYYY-MM-DD), inclusive; default: ${DEFAULT_USAGE_DAYS - 1} days before \`to\`.`,
  })
  @IsOptional()
  @IsString()
  from?: string;

  @ApiPropertyOptional({ example: '2026-11-28', description: 'Last UTC day (YYYY-MM-DD), inclusive; default: today.' })
  @IsOptional()
  @IsString()
  to?: string;

  @ApiPropertyOptional({
    type: String,
    example: 'day,model',
    description:
      `What each row is per, besides the skill: any of ${USAGE_GROUPS.join(', ')}, comma-separated. ` +
      'Default: one row per skill over the range.',
  })
  @IsOptional()
  @Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.split(',') : value))
  @IsIn(USAGE_GROUPS, { each: true, message: `groupBy must list only ${USAGE_GROUPS.join(', ')}` })
  groupBy?: UsageGroup[];
}

const COUNT = { openapi: { type: 'integer', minimum: 0 } } as const;

@ObjectType('SkillUsageCounts', { description: 'The funnel of one row (or of all): how often each step happened.' })
export class SkillUsageCountsDto {
  @ApiField(() => Float, {
    ...COUNT,
    description: "Times a catalogue listed the skill: a turn's system prompt, an MCP client's `tools/list`.",
  })
  offered: number;

  @ApiField(() => Float, { ...COUNT, description: "Activations by a model's tool call in a chat turn." })
  activatedTool: number;

  @ApiField(() => Float, { ...COUNT, description: 'Activations by a `/name` (or `$name`) in a chat message.' })
  activatedSlash: number;

  @ApiField(() => Float, { ...COUNT, description: "Activations as a command's required skill." })
  activatedCommand: number;

  @ApiField(() => Float, {
    ...COUNT,
    description: "Activations over MCP: the activation tool, or a read of the skill's SKILL.md resource.",
  })
  activatedMcp: number;

  @ApiField(() => Float, { ...COUNT, description: 'Activations in turns of the OpenAI-compatible gateway.' })
  activatedGateway: number;

  @ApiField(() => Float, {
    ...COUNT,
    description:
      "Activations by a REST or GraphQL client outside a turn: a chat's tool routes (`POST " +
      '/v1/chats/{id}/tools/{tool}`, `activateSkill`, `runSkillTool`), `GET /v1/skills/{name}/body`.',
  })
  activatedApi: number;

  @ApiField(() => Float, {
    ...COUNT,
    description: "Reads of the skill's other files (tools, MCP resources, the skill routes).",
  })
  resourcesRead: number;

  @ApiField(() => Float, { ...COUNT, description: "Runs of the skill's scripts." })
  scriptsRun: number;

  @ApiField(() => Float, {
    ...COUNT,
    description: "Tool calls on the skill that failed, and the skill routes' reads of it that failed.",
  })
  errors: number;

  @ApiField(() => Float, { ...COUNT, description: 'Answered turns that activated the skill, read it or ran it.' })
  turns: number;
}

@ObjectType('SkillUsageRow')
export class SkillUsageRowDto extends SkillUsageCountsDto {
  @ApiField()
  skill: string;

  @ApiField({ optional: true, description: 'UTC day (YYYY-MM-DD), when grouped by day.' })
  day?: string;

  @ApiField({ optional: true, description: "The version (`sha256:…`, `''` for none), when grouped by version." })
  version?: string;

  @ApiField({
    optional: true,
    description:
      "The model that answered the turn (`''` outside a turn: MCP, the direct API routes), when grouped by model.",
  })
  model?: string;
}

@ObjectType('SkillUsageReport', { description: 'The skills usage funnel (the twin of GET /v1/admin/skills/usage).' })
export class SkillUsageReportDto {
  @ApiField({ openapi: { example: '2026-10-30' } })
  from: string;

  @ApiField({ openapi: { example: '2026-11-28' } })
  to: string;

  @ApiField(() => [String], { openapi: { enum: USAGE_GROUPS, isArray: true } })
  groupBy: string[];

  @ApiField(() => [SkillUsageRowDto], { openapi: { type: () => [SkillUsageRowDto] } })
  rows: SkillUsageRowDto[];

  @ApiField(() => SkillUsageCountsDto, {
    openapi: { type: () => SkillUsageCountsDto },
    description: 'The rows summed.',
  })
  totals: SkillUsageCountsDto;

  @ApiField(() => [String], {
    description: "The team catalogue's skills (as loaded now) that nothing activated in the range, in name order.",
  })
  neverActivated: string[];
}
