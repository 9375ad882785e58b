import { Controller, Get, Param, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { CurrentPrincipal } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { AppError, ErrorCode } from '../common/app-error.js';
import { RequireFeature } from '../common/feature.guard.js';
import { ApiErrors } from '../openapi/api-errors.decorator.js';
import { SkillRegistryService } from '../skills/skill-registry.service.js';
import { normalizeResourcePath } from '../skills/resource-path.js';
import { INDEX_VERSION, indexEntry, type IndexSkill } from './agent-skills-index.js';
import { AgentSkillsIndexDto } from './dto/mcp-report.dto.js';
import { isPublished, PublishedSkillsService } from './published-skills.service.js';
import { PUBLISHED_MIME_TYPES } from './skill-uri.js';

/**
 * The Agent Skills discovery index and the files it points to: what the caller may see (their
 * catalogue, as over MCP), behind the same API keys as every route.
 */
@Controller('.well-known/agent-skills')
@RequireFeature('mcp')
@ApiTags('skills')
export class AgentSkillsIndexController {
  constructor(
    private readonly registry: SkillRegistryService,
    private readonly published: PublishedSkillsService,
  ) {}

  @Get('index.json')
  @ApiOperation({
    summary: 'The Agent Skills discovery index',
    description: "The caller's skills (disk skills as their files are now) in the shape of the Agent Skills discovery proposal (`version` 0.2.0): name, description, the skill-level digest, and every file with its digest, size and where to fetch it. Skills the proposal cannot describe (a file path outside printable ASCII) are left out.",
  })
  @ApiOkResponse({ type: AgentSkillsIndexDto })
  async index(@CurrentPrincipal() principal: Principal): Promise<AgentSkillsIndexDto> {
    const skills: IndexSkill[] = [];
    for (const skill of await this.published.all(await this.registry.viewForUser(principal.userId), true)) {
      const entry = indexEntry(skill);
      if (!('problem' in entry)) skills.push(entry);
    }
    return { version: INDEX_VERSION, skills };
  }

  @Get(':name/*')
  @ApiOperation({ summary: 'One file of a skill in the discovery index', description: 'The raw bytes the index digest covers, text or binary, with a content type by extension and the digest as `ETag`. Only files the index lists are served.' })
  @ApiParam({ name: 'name', description: 'The skill.' })
  @ApiParam({ name: '*', description: 'Relative to the skill folder, e.g. `SKILL.md` or `references/REFERENCE.md`.' })
  @ApiProduces(...PUBLISHED_MIME_TYPES)
  @ApiOkResponse({ schema: { type: 'string', format: 'binary' } })
  @ApiErrors(ErrorCode.SKILL_NOT_FOUND, ErrorCode.SKILL_DISABLED, ErrorCode.RESOURCE_NOT_FOUND, ErrorCode.RESOURCE_OUTSIDE_SKILL)
  async file(@Param('name') name: string, @Param('*') requested: string, @Res() reply: FastifyReply, @CurrentPrincipal() principal: Principal) {
    const view = await this.registry.viewForUser(principal.userId);
    const record = this.registry.get(name, view);
    const published = await this.published.publish(record, true);
    const path = normalizeResourcePath(requested ?? '');
    const listed = isPublished(published) ? published.files.get(path) : undefined;
    if (!isPublished(published) || listed === undefined) {
      const why = isPublished(published) ? 'it lists no such file' : `the skill is not published: ${published.reason}`;
      throw new AppError(ErrorCode.RESOURCE_NOT_FOUND, `Resource '${path}' of skill '${record.name}' is not in the discovery index: ${why}.`, { name: record.name, path });
    }
    const file = await this.published.readFile(published, path);
    const type = file.isText && (file.mimeType.startsWith('text/') || file.mimeType === 'application/json') ? `${file.mimeType}; charset=utf-8` : file.mimeType;
    return reply.header('content-type', type).header('etag', `"${listed.digest}"`).header('x-content-type-options', 'nosniff').send(file.bytes);
  }
}
