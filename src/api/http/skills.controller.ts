import { Controller, Get, HttpCode, Inject, Param, Post, Query, Res } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import {
  ApiExtraModels,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { AdminOnly, CurrentPrincipal, RequireScope } from './decorators/auth.decorators.js';
import type { Principal } from '../../domain/users/principal.js';
import { type CatalogueSnapshot, ErrorCode, skillFileHeaders, type SkillReadScope } from '@skillhost/core';
import { RequireFeature } from './guards/feature.guard.js';
import { ApiErrors } from './openapi/api-errors.decorator.js';
import { ResourceListQueryDto, SkillBodyQueryDto, SkillSearchQueryDto } from './dto/catalogue-query.dto.js';
import {
  ResourceListingDto,
  SkillBodyDto,
  SkillDetailDto,
  SkillListDto,
  SkillScanReportDto,
  SkillSearchResponseDto,
} from './dto/skill-responses.dto.js';
import { SkillSearchService } from '../../domain/skills/ranking/skill-search.service.js';
import { SkillReadsService } from '../../domain/skills/skill-reads.service.js';
import { adminReportJson, presentSkillDetail, skillListJson } from '../presenters/skill.presenter.js';
import { SkillRegistryService, SkillResourcesService } from '@skillhost/nest';
import { ReloadReportDto } from './dto/store.dto.js';
import type { TextReply } from '../../domain/shared/text-reply.js';

const JSON_TYPE = 'application/json; charset=utf-8';

@Controller('v1')
@RequireScope('skills:read')
@RequireFeature('skills')
@ApiTags('skills')
export class SkillsController {
  constructor(
    private readonly registry: SkillRegistryService,
    private readonly resources: SkillResourcesService,
    private readonly searching: SkillSearchService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly reads: SkillReadsService,
  ) {}

  @Get('skills')
  @ApiOperation({ summary: 'List the loaded skills' })
  @ApiOkResponse({ type: SkillListDto })
  list(@Res() reply: TextReply, @CurrentPrincipal() principal: Principal): void | Promise<void> {
    // The busiest route: a view and a JSON made once per catalogue are sent without waiting on a promise.
    const view = this.registry.userViewNow(principal.userId);
    return view instanceof Promise ? view.then((ready) => this.sendList(reply, ready)) : this.sendList(reply, view);
  }

  private sendList(reply: TextReply, view: CatalogueSnapshot): void | Promise<void> {
    const json = skillListJson(view, this.config.app.skills.explicitPrefixes);
    const send = (bytes: Buffer) => void reply.header('content-type', JSON_TYPE).send(bytes);
    return json instanceof Promise ? json.then(send) : send(json);
  }

  @Get('skills/search')
  @ApiOperation({
    summary: 'Find skills by what they do',
    description:
      "The caller's skills ranked for `q` as the catalogue and `skills.search` rank them (BM25 over name, " +
      'description and `metadata.triggers`; accents folded, stems, typos, Spanish words put into English; the ' +
      "team's most used first among near-equals), best first. Without `q`, the skill named `search` when there " +
      'is one: this route and `GET /v1/skills/{name}` share that path, and a request without `q` is no search.',
  })
  @ApiOkResponse({
    schema: { oneOf: [{ $ref: getSchemaPath(SkillSearchResponseDto) }, { $ref: getSchemaPath(SkillDetailDto) }] },
    description: 'The results; without `q`, the skill named `search` (as `GET /v1/skills/{name}` answers it).',
  })
  @ApiExtraModels(SkillSearchResponseDto, SkillDetailDto)
  @ApiErrors(ErrorCode.VALIDATION_FAILED)
  async search(@Query() query: SkillSearchQueryDto, @CurrentPrincipal() principal: Principal) {
    if (query.q === undefined && (await this.registry.userView(principal.userId)).skills.has('search'))
      return this.detail('search', principal);
    return { results: await this.searching.searchFor(principal.userId, query.q ?? '', query.limit, 'q') };
  }

  @Get('skills/:name')
  @ApiOperation({ summary: 'One skill with its files' })
  @ApiOkResponse({ type: SkillDetailDto })
  @ApiErrors(ErrorCode.SKILL_NOT_FOUND, ErrorCode.SKILL_DISABLED)
  async detail(@Param('name') name: string, @CurrentPrincipal() principal: Principal) {
    const snapshot = await this.registry.userView(principal.userId);
    const skill = this.registry.get(name, snapshot);
    return presentSkillDetail(
      skill,
      await this.resources.listResources(skill.name, undefined, { snapshot }),
      snapshot.directories,
    );
  }

  /** What the caller may read: the team's skills and the caller's personal ones. */
  private async scopeOf(principal: Principal): Promise<SkillReadScope> {
    return { snapshot: await this.registry.userView(principal.userId) };
  }

  @Get('skills/:name/body')
  @ApiOperation({ summary: 'Activate a skill: its instructions (level 2)' })
  @ApiOkResponse({ type: SkillBodyDto })
  @ApiErrors(ErrorCode.SKILL_NOT_FOUND, ErrorCode.SKILL_DISABLED, ErrorCode.VALIDATION_FAILED)
  async body(@Param('name') name: string, @Query() query: SkillBodyQueryDto, @CurrentPrincipal() principal: Principal) {
    return this.reads.instructions(principal.userId, name, { preview: query.preview === 'true' });
  }

  @Get('skills/:name/resources')
  @ApiOperation({
    summary: "List a skill's files",
    description:
      'Paths relative to the skill folder with sizes, in name order; at most 500 (`truncated` says when cut). ' +
      'Symbolic links that lead out of the skill are not listed.',
  })
  @ApiOkResponse({ type: ResourceListingDto })
  @ApiErrors(ErrorCode.SKILL_NOT_FOUND, ErrorCode.SKILL_DISABLED)
  async listResources(
    @Param('name') name: string,
    @Query() query: ResourceListQueryDto,
    @CurrentPrincipal() principal: Principal,
  ) {
    return this.resources.listResources(name, query.type, await this.scopeOf(principal));
  }

  /** Level 3 as plain text; `x-skillhost-truncated` says whether the file was cut. */
  @Get('skills/:name/resources/*')
  @ApiOperation({
    summary: "Read one of a skill's files (level 3)",
    description:
      'The file as UTF-8 text; a cut file ends with a `[Truncated: …]` notice. Under a sandboxing ' +
      '`Content-Security-Policy`, and markup, scripts and styles (`.html`, `.svg`, `.xml`, `.js`, `.css`, …) as ' +
      "a download (`Content-Disposition: attachment`): a skill's file is never a page of this server.",
  })
  @ApiParam({ name: '*', description: 'Relative to the skill folder, e.g. `references/REFERENCE.md`.' })
  @ApiProduces('text/plain')
  @ApiOkResponse({
    schema: { type: 'string' },
    headers: {
      'x-skillhost-truncated': {
        description: 'Whether the file was cut.',
        schema: { type: 'string', enum: ['true', 'false'] },
      },
    },
  })
  @ApiErrors(
    ErrorCode.SKILL_NOT_FOUND,
    ErrorCode.SKILL_DISABLED,
    ErrorCode.RESOURCE_NOT_FOUND,
    ErrorCode.RESOURCE_OUTSIDE_SKILL,
    ErrorCode.RESOURCE_IS_DIRECTORY,
    ErrorCode.RESOURCE_BINARY,
    ErrorCode.VALIDATION_FAILED,
  )
  async resource(
    @Param('name') name: string,
    @Param('*') path: string,
    @Res() reply: TextReply,
    @CurrentPrincipal() principal: Principal,
  ) {
    const resource = await this.reads.resource(principal.userId, name, path ?? '');
    reply
      .headers(skillFileHeaders(resource.path, 'active'))
      .header('content-type', 'text/plain; charset=utf-8')
      .header('x-skillhost-truncated', String(resource.truncated))
      .send(resource.content);
  }

  @Get('admin/skills')
  @AdminOnly()
  @ApiTags('admin')
  @ApiOperation({ summary: 'The last scan, as operators see it' })
  @ApiOkResponse({ type: SkillScanReportDto })
  async adminReport(@Res() reply: TextReply) {
    reply.header('content-type', JSON_TYPE).send(await adminReportJson(this.registry.snapshot));
  }

  @Post('admin/skills/reload')
  @AdminOnly()
  @ApiTags('admin')
  @ApiOperation({
    summary: 'Rescan the skills directories, on every instance',
    description:
      'Answers the scan and what it changed in the catalogue (`diff`: added, removed, changed with old and new ' +
      'digest, unchanged count). Other instances on the same database rescan within seconds.',
  })
  @ApiOkResponse({ type: ReloadReportDto })
  @HttpCode(200)
  async reload(@Res() reply: TextReply) {
    const { snapshot, diff } = await this.registry.reloadEverywhere();
    reply
      .header('content-type', JSON_TYPE)
      .header('cache-control', 'no-store')
      .send(await adminReportJson(snapshot, { diff }));
  }
}
