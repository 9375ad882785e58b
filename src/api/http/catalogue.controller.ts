import { Controller, Get, Inject, Query, Res } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { CurrentPrincipal, RequireScope } from './decorators/auth.decorators.js';
import type { Principal } from '../../domain/users/principal.js';
import { ErrorCode } from '@skillhost/core';
import { RequireFeature } from './guards/feature.guard.js';
import { APP_CONFIG, type AppConfig, type CatalogueFormat } from '../../config/app-config.js';
import { ApiErrors } from './openapi/api-errors.decorator.js';
import { CatalogueQueryDto } from './dto/catalogue-query.dto.js';
import { CatalogueJsonDto } from './dto/skill-responses.dto.js';
import { ChatContextService } from '../../domain/chats/chat-context.service.js';
import type { TextReply } from '../../domain/shared/text-reply.js';

const CATALOGUE_CONTENT_TYPES: Record<CatalogueFormat, string> = {
  json: 'application/json; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
  markdown: 'text/markdown; charset=utf-8',
};

/**
 * The catalogue as a model gets it; here, not in SkillsController, because a message is read as a turn reads it
 * (invocations, commands).
 */
@Controller('v1')
@RequireScope('skills:read')
@RequireFeature('skills')
@ApiTags('skills')
export class CatalogueController {
  constructor(
    private readonly contexts: ChatContextService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('skills-catalogue')
  @ApiOperation({
    summary: 'The catalogue exactly as a model gets it',
    description:
      'In the requested format (default: the configured one); an empty body when no skill is loaded. With ' +
      '`query`, the catalogue a turn with that message would list in a new chat (`/name` and commands read as a ' +
      'turn reads them): every skill when they fit `app.skills.catalogue_budget_tokens` and ' +
      '`catalogue_max_skills`, else the invoked skills and the best-ranked within them, and a closing note ' +
      '(`unlisted_skills` in json and xml) counting the rest. Without `query`: every skill, whatever the budget.',
  })
  @ApiExtraModels(CatalogueJsonDto)
  @ApiOkResponse({
    content: {
      'application/json': { schema: { $ref: getSchemaPath(CatalogueJsonDto) } },
      'application/xml': {
        schema: { type: 'string' },
        example: '<available_skills><skill><name>pdf</name><description>…</description></skill></available_skills>',
      },
      'text/markdown': { schema: { type: 'string' }, example: '- pdf: …' },
    },
  })
  @ApiErrors(ErrorCode.VALIDATION_FAILED)
  async catalogue(
    @Query() query: CatalogueQueryDto,
    @Res() reply: TextReply,
    @CurrentPrincipal() principal: Principal,
  ) {
    const format = query.format ?? this.config.app.skills.catalogueFormat;
    reply
      .header('content-type', CATALOGUE_CONTENT_TYPES[format])
      .send(await this.contexts.previewCatalogue(principal, query.query, format));
  }
}
