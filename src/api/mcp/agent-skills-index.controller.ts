import { Controller, Get, Headers, Param, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { CurrentPrincipal, RequireScope } from '../http/decorators/auth.decorators.js';
import type { Principal } from '../../domain/users/principal.js';
import { ErrorCode, normalizeResourcePath, skillFileHeaders } from '@skillhost/core';
import { RequireFeature } from '../http/guards/feature.guard.js';
import { ApiErrors } from '../http/openapi/api-errors.decorator.js';
import { SkillRegistryService } from '@skillhost/nest';
import { parseVersionedName } from './agent-skills-index.js';
import { AgentSkillsIndexDto, AgentSkillsVersionsDto } from '../http/dto/mcp-report.dto.js';
import { type PublishedFile, PublishedSkillsService } from './published-skills.service.js';
import { type DiscoveryBody, DiscoveryIndexService } from './discovery-index.service.js';
import { PUBLISHED_MIME_TYPES } from './skill-uri.js';

/**
 * The Agent Skills discovery index and the files it points to: what the caller may see (their
 * catalogue, as over MCP), behind the same API keys as every route.
 */
@Controller('.well-known/agent-skills')
@RequireScope('skills:read')
@RequireFeature('mcp')
@ApiTags('skills')
export class AgentSkillsIndexController {
  constructor(
    private readonly registry: SkillRegistryService,
    private readonly published: PublishedSkillsService,
    private readonly discovery: DiscoveryIndexService,
  ) {}

  @Get('index.json')
  @ApiOperation({
    summary: 'The Agent Skills discovery index',
    description:
      "The caller's skills (as of the last scan: a file found changed on disk makes the server rescan) in the " +
      'shape of the Agent Skills discovery proposal (`version` 0.2.0): name, description, the skill-level ' +
      'digest, and every file with its digest, size and where to fetch it. Skills the proposal cannot describe ' +
      '(a file path outside printable ASCII) are left out.',
  })
  @ApiOkResponse({ type: AgentSkillsIndexDto })
  @ApiResponse({ status: 304, description: '`If-None-Match` named the `ETag` of the index this caller would get.' })
  async index(
    @CurrentPrincipal() principal: Principal,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res() reply: FastifyReply,
  ) {
    return sendJson(reply, await this.discovery.index(await this.registry.viewForUser(principal.userId)), ifNoneMatch);
  }

  @Get('versions.json')
  @ApiOperation({
    summary: "Every version of the caller's skills, to pin one",
    description:
      "Skillhost's companion to the index (the proposal has no version list yet), in its shape: per skill, the " +
      'skill-level digest of the version the index lists now and every version, newest first, with its skill-level ' +
      'digest (what `skillhost sync --pin NAME@DIGEST` takes), the store digest and number, install time, source ' +
      "and files. A version's file URLs (`<name>@<version digest>/<path>`) keep serving that version after the " +
      'skill changes. A skill from a folder has one version, the one on disk.',
  })
  @ApiOkResponse({ type: AgentSkillsVersionsDto })
  @ApiResponse({ status: 304, description: '`If-None-Match` named the `ETag` of the list this caller would get.' })
  async versionList(
    @CurrentPrincipal() principal: Principal,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res() reply: FastifyReply,
  ) {
    const view = await this.registry.viewForUser(principal.userId);
    return sendJson(reply, await this.discovery.versions(view), ifNoneMatch);
  }

  @Get(':name/*')
  @ApiOperation({
    summary: 'One file of a skill in the discovery index',
    description:
      'The raw bytes, text or binary, with a content type by extension and the digest of the bytes sent as ' +
      '`ETag`; as a download (`Content-Disposition: attachment`, a sandboxing `Content-Security-Policy`), never ' +
      'as a page of this server. Only files the index lists are served, and with `<name>@<version digest>` the ' +
      'files of that stored version that versions.json lists (immutable: cached for a year).',
  })
  @ApiParam({ name: 'name', description: 'The skill, or `<name>@sha256:<hex>` for one of its stored versions.' })
  @ApiParam({ name: '*', description: 'Relative to the skill folder, e.g. `SKILL.md` or `references/REFERENCE.md`.' })
  @ApiProduces(...PUBLISHED_MIME_TYPES)
  @ApiOkResponse({ schema: { type: 'string', format: 'binary' } })
  @ApiErrors(
    ErrorCode.SKILL_NOT_FOUND,
    ErrorCode.SKILL_DISABLED,
    ErrorCode.RESOURCE_NOT_FOUND,
    ErrorCode.RESOURCE_OUTSIDE_SKILL,
  )
  async file(
    @Param('name') name: string,
    @Param('*') requested: string,
    @Res() reply: FastifyReply,
    @CurrentPrincipal() principal: Principal,
  ) {
    const path = normalizeResourcePath(requested ?? '');
    const view = await this.registry.viewForUser(principal.userId);
    const versioned = parseVersionedName(name);
    let file: PublishedFile;
    if (versioned === undefined) file = await this.published.indexedFile(view, name, path);
    else {
      file = await this.discovery.file(this.registry.get(versioned.name, view), versioned.digest, path);
      reply.header('cache-control', 'private, max-age=31536000, immutable');
    }
    const type =
      file.isText && (file.mimeType.startsWith('text/') || file.mimeType === 'application/json')
        ? `${file.mimeType}; charset=utf-8`
        : file.mimeType;
    return reply
      .headers(skillFileHeaders(path, 'always'))
      .header('content-type', type)
      .header('etag', `"${file.digest}"`)
      .send(file.bytes);
  }
}

/** A JSON body with the digest of its very bytes as `ETag`: an unchanged one costs a client one 304. */
function sendJson(reply: FastifyReply, body: DiscoveryBody, ifNoneMatch: string | undefined) {
  reply.header('etag', body.etag).header('cache-control', 'private, no-cache');
  if (ifNoneMatch !== undefined && matchesEtag(ifNoneMatch, body.etag)) return reply.code(304).send();
  return reply.header('content-type', 'application/json; charset=utf-8').send(body.text);
}

/** `If-None-Match` as RFC 9110 reads it: `*`, or a list of tags compared weakly (a `W/` prefix ignored). */
function matchesEtag(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
