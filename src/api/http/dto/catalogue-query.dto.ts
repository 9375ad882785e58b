import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { IntegerInRange } from './page-query.dto.js';
import {
  DEFAULT_SEARCH_RESULTS,
  MAX_PREVIEW_MESSAGE,
  MAX_SEARCH_QUERY,
  MAX_SEARCH_RESULTS,
  RESOURCE_TYPES,
  type ResourceType,
} from '@skillhost/core';
import { CATALOGUE_FORMATS, type CatalogueFormat } from '../../../config/app-config.js';

export class CatalogueQueryDto {
  @ApiPropertyOptional({ enum: CATALOGUE_FORMATS, description: 'Default: `app.skills.catalogue_format`.' })
  @IsOptional()
  @IsIn(CATALOGUE_FORMATS, { message: `format must be one of ${CATALOGUE_FORMATS.join(', ')}` })
  format?: CatalogueFormat;

  @ApiPropertyOptional({
    maxLength: MAX_PREVIEW_MESSAGE,
    description:
      'A message as a user would send it in a new chat: the catalogue a turn with it would list (ranked for it ' +
      'when the skills do not all fit `app.skills.catalogue_budget_tokens`). Without it: every skill, whatever ' +
      'the budget.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_PREVIEW_MESSAGE)
  query?: string;
}

export class SkillSearchQueryDto {
  @ApiPropertyOptional({
    maxLength: MAX_SEARCH_QUERY,
    description:
      'What the skill should do, in a few words (any language; typos are tolerated). Required, except that `GET ' +
      '/v1/skills/search` without it answers the skill named `search`, when there is one.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_SEARCH_QUERY)
  q?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_SEARCH_RESULTS, default: DEFAULT_SEARCH_RESULTS })
  @IsOptional()
  @IntegerInRange(1, MAX_SEARCH_RESULTS)
  limit?: number;
}

export class ResourceListQueryDto {
  @ApiPropertyOptional({
    enum: RESOURCE_TYPES,
    description: 'Only files under `scripts/`, `references/` or `assets/`, or `other` for everything else.',
  })
  @IsOptional()
  @IsIn(RESOURCE_TYPES, { message: `type must be one of ${RESOURCE_TYPES.join(', ')}` })
  type?: ResourceType;
}

export class SkillBodyQueryDto {
  @ApiPropertyOptional({
    enum: ['true', 'false'],
    example: 'true',
    description:
      "`true`: a look at the instructions (the web page's skill view), not a use: the usage funnel does not count " +
      'it as an activation. Default `false`.',
  })
  @IsOptional()
  @IsIn(['true', 'false'], { message: 'preview must be `true` or `false`' })
  preview?: 'true' | 'false';
}
