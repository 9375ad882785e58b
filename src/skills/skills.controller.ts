import { Controller, Get, Header, HttpCode, Inject, Param, Post, Query, Res } from '@nestjs/common';
import { AdminOnly } from '../auth/auth.decorators.js';
import { RequireFeature } from '../common/feature.guard.js';
import { APP_CONFIG, type AppConfig, type CatalogueFormat } from '../config/app-config.js';
import { CatalogueQueryDto } from './dto/catalogue-query.dto.js';
import { presentAdminReport, presentSkillDetail, skillListJson } from './skill.presenter.js';
import { SkillRegistryService } from './skill-registry.service.js';
import { SkillResourcesService } from './skill-resources.service.js';

interface TextReply {
  header(name: string, value: string): TextReply;
  send(payload: string): unknown;
}

const CATALOGUE_CONTENT_TYPES: Record<CatalogueFormat, string> = {
  json: 'application/json; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
  markdown: 'text/markdown; charset=utf-8',
};

@Controller('v1')
@RequireFeature('skills')
export class SkillsController {
  constructor(
    private readonly registry: SkillRegistryService,
    private readonly resources: SkillResourcesService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('skills')
  list(@Res() reply: TextReply) {
    reply.header('content-type', 'application/json; charset=utf-8').send(skillListJson(this.registry.snapshot));
  }

  @Get('skills/:name')
  async detail(@Param('name') name: string) {
    const skill = this.registry.get(name);
    return presentSkillDetail(skill, await this.resources.listResources(skill.name));
  }

  @Get('skills/:name/body')
  body(@Param('name') name: string) {
    return this.resources.activate(name);
  }

  /** Level 3 as plain text; `x-skillhost-truncated` says whether the file was cut. */
  @Get('skills/:name/resources/*')
  async resource(@Param('name') name: string, @Param('*') path: string, @Res() reply: TextReply) {
    const resource = await this.resources.readResource(name, path ?? '');
    reply
      .header('content-type', 'text/plain; charset=utf-8')
      .header('x-skillhost-truncated', String(resource.truncated))
      .send(resource.content);
  }

  /** The rendered catalogue exactly as a model would get it; empty when no skill is loaded. */
  @Get('skills-catalogue')
  catalogue(@Query() query: CatalogueQueryDto, @Res() reply: TextReply) {
    const format = query.format ?? this.config.app.skills.catalogueFormat;
    reply.header('content-type', CATALOGUE_CONTENT_TYPES[format]).send(this.registry.snapshot.catalogue(format));
  }

  @Get('admin/skills')
  @AdminOnly()
  adminReport() {
    return presentAdminReport(this.registry.snapshot);
  }

  @Post('admin/skills/reload')
  @AdminOnly()
  @HttpCode(200)
  @Header('cache-control', 'no-store')
  reload() {
    return presentAdminReport(this.registry.reload());
  }
}
