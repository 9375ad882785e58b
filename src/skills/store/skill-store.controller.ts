import type { Readable } from 'node:stream';
import { applyDecorators, Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AdminOnly, CurrentPrincipal } from '../../auth/auth.decorators.js';
import type { Principal } from '../../auth/principal.js';
import { AppError, ErrorCode } from '../../common/app-error.js';
import { RequireFeature } from '../../common/feature.guard.js';
import { ApiErrors } from '../../openapi/api-errors.decorator.js';
import type { StoreScope } from '../../persistence/skill-store.repository.js';
import { findSkill } from '../catalogue-snapshot.js';
import { InstallResultDto, RollbackDto, RollbackResultDto, SkillFilterBodyDto, SkillFilterResultDto, SwitchDto, SwitchResultDto, VersionHistoryDto, VersionsQueryDto } from '../dto/store.dto.js';
import { SkillRegistryService } from '../skill-registry.service.js';
import { type InstallResult, SkillStoreService } from './skill-store.service.js';
import { UPLOAD_MEDIA_TYPES } from './skill-upload.reader.js';
import { storeSource } from './store-skills.js';

/** The upload routes, as Fastify knows them: the only routes that take an archive or a form body. */
export const SKILL_UPLOAD_ROUTES = [
  { method: 'POST', url: '/v1/admin/skills' },
  { method: 'POST', url: '/v1/skills' },
];

interface UploadRequest {
  body?: unknown;
  headers: Record<string, string | string[] | undefined>;
}

interface StatusReply {
  status(code: number): unknown;
}

const UPLOAD_DESCRIPTION =
  'One skill per upload: a `.zip` (`application/zip`) or `.tar.gz` (`application/gzip`) body, or `multipart/form-data` with one part per file whose filename is its path relative to the skill folder. `SKILL.md` at the root or inside one top folder. Validated with the configured rules (400 `VALIDATION_FAILED` with the validator\'s messages); unsafe or malformed archives are 400 `INVALID_ARCHIVE`; past `[app.skills] max_install_bytes` unpacked or 1,000 files, 413 (reading stops there). 201 for a new version, 200 when the same content was installed before (that version becomes current).';

/** How an upload route is documented: the body types, both answers, the refusals. */
function ApiSkillUpload(summary: string, ...more: ErrorCode[]) {
  return applyDecorators(
    ApiOperation({ summary, description: UPLOAD_DESCRIPTION }),
    ApiConsumes(...UPLOAD_MEDIA_TYPES),
    ApiBody({ schema: { type: 'string', format: 'binary' } }),
    ApiCreatedResponse({ type: InstallResultDto, description: 'A new version.' }),
    ApiOkResponse({ type: InstallResultDto, description: 'This content was installed before: that version is current again.' }),
    ApiErrors(ErrorCode.VALIDATION_FAILED, ErrorCode.INVALID_ARCHIVE, ErrorCode.PAYLOAD_TOO_LARGE, ErrorCode.UNSUPPORTED_MEDIA_TYPE, ...more),
  );
}

/**
 * The skill store over HTTP: installs (shared by admins, personal by anyone), versions, rollback,
 * uninstall, persisted switches and the caller's skill filter. Every change is read back into the
 * catalogue before the answer, so the next request here sees it; other instances within seconds.
 */
@Controller('v1')
@RequireFeature('skills')
@ApiTags('store')
export class SkillStoreController {
  constructor(
    private readonly store: SkillStoreService,
    private readonly registry: SkillRegistryService,
  ) {}

  @Post('admin/skills')
  @AdminOnly()
  @ApiSkillUpload('Install a shared skill (a new version when it exists)')
  installShared(@Req() request: UploadRequest, @Res({ passthrough: true }) reply: StatusReply, @CurrentPrincipal() principal: Principal) {
    return this.install(request, reply, { scope: 'shared', ownerId: null, owner: null }, principal);
  }

  @Post('skills')
  @ApiSkillUpload('Install a personal skill: in your catalogue and chats only', ErrorCode.SKILL_QUOTA_EXCEEDED)
  installPersonal(@Req() request: UploadRequest, @Res({ passthrough: true }) reply: StatusReply, @CurrentPrincipal() principal: Principal) {
    return this.install(request, reply, { scope: 'personal', ownerId: principal.userId, owner: principal.name }, principal);
  }

  private async install(request: UploadRequest, reply: StatusReply, target: { scope: StoreScope; ownerId: string | null; owner: string | null }, principal: Principal): Promise<InstallResult> {
    const body = request.body;
    const contentType = String(request.headers['content-type'] ?? '');
    if (!isStream(body)) {
      throw new AppError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, `Send the skill as a zip (application/zip), a tar.gz (application/gzip) or multipart/form-data body${contentType === '' ? '' : `, not '${contentType.slice(0, 100)}'`}.`, {
        contentType: contentType.slice(0, 100) || null,
      });
    }
    const result = await this.store.installUpload(body, contentType, target, principal.userId);
    const snapshot = await this.registry.refreshStore();
    const source = storeSource(target.scope, target.owner);
    for (const collision of snapshot.collisions) {
      if (collision.name === result.name && collision.loser.source === source) {
        result.warnings.push(`A skill named '${result.name}' from ${collision.winner.source} wins over this one: it is installed but not offered until that one is gone (see the admin view's collisions).`);
      }
    }
    reply.status(result.created ? 201 : 200);
    return result;
  }

  @Get('skills/:name/versions')
  @ApiOperation({ summary: "An installed skill's versions" })
  @ApiOkResponse({ type: VersionHistoryDto })
  @ApiErrors(ErrorCode.SKILL_NOT_FOUND, ErrorCode.VALIDATION_FAILED)
  async versions(@Param('name') name: string, @Query() query: VersionsQueryDto, @CurrentPrincipal() principal: Principal) {
    const history = await this.store.historyFor(skillName(name), principal.userId, query.scope);
    return { name: history.key.name, scope: history.key.scope, current: history.current, versions: history.versions };
  }

  @Post('admin/skills/:name/rollback')
  @AdminOnly()
  @HttpCode(200)
  @ApiOperation({ summary: 'Make an earlier version of a shared skill current' })
  @ApiOkResponse({ type: RollbackResultDto })
  @ApiErrors(ErrorCode.SKILL_NOT_FOUND, ErrorCode.SKILL_VERSION_NOT_FOUND, ErrorCode.VALIDATION_FAILED)
  async rollback(@Param('name') name: string, @Body() body: RollbackDto) {
    const result = await this.store.rollback({ scope: 'shared', ownerId: null, name: skillName(name) }, body.version);
    await this.registry.refreshStore();
    return { name: skillName(name), version: body.version, digest: result.digest, changed: result.changed };
  }

  @Delete('admin/skills/:name')
  @AdminOnly()
  @HttpCode(204)
  @ApiOperation({ summary: 'Uninstall a shared skill', description: 'It leaves every catalogue; activating or reading it answers SKILL_NOT_FOUND, in chats that activated it too.' })
  @ApiNoContentResponse({ description: 'Uninstalled.' })
  @ApiErrors(ErrorCode.SKILL_NOT_FOUND)
  async uninstallShared(@Param('name') name: string): Promise<void> {
    await this.store.uninstall({ scope: 'shared', ownerId: null, name: skillName(name) });
    await this.registry.refreshStore();
  }

  @Delete('skills/:name')
  @HttpCode(204)
  @ApiOperation({ summary: 'Uninstall one of your personal skills' })
  @ApiNoContentResponse({ description: 'Uninstalled.' })
  @ApiErrors(ErrorCode.SKILL_NOT_FOUND)
  async uninstallPersonal(@Param('name') name: string, @CurrentPrincipal() principal: Principal): Promise<void> {
    await this.store.uninstall({ scope: 'personal', ownerId: principal.userId, name: skillName(name) });
    await this.registry.refreshStore();
  }

  @Put('admin/skills/:name/enabled')
  @AdminOnly()
  @ApiOperation({ summary: 'Switch a skill on or off, whatever its source (persisted)', description: 'Off: in no catalogue, `/name` stays plain text, activating or reading it answers 403 SKILL_DISABLED (an error card in a chat). A skill switched off in the configuration (`[app.skills] disabled`) cannot be switched on here (409).' })
  @ApiOkResponse({ type: SwitchResultDto })
  @ApiErrors(ErrorCode.SKILL_NOT_FOUND, ErrorCode.SKILL_SWITCH_LOCKED, ErrorCode.VALIDATION_FAILED)
  async setEnabled(@Param('name') name: string, @Body() body: SwitchDto, @CurrentPrincipal() principal: Principal) {
    const snapshot = this.registry.snapshot;
    const known =
      findSkill(snapshot.skills, name) ??
      findSkill(snapshot.disabled, name) ??
      [...snapshot.personal.values()].map((own) => findSkill(own.skills, name) ?? findSkill(own.disabled, name)).find((skill) => skill !== undefined);
    if (known === undefined) this.registry.get(name);
    const skillName = known!.name;
    await this.store.setSwitch(skillName, body.enabled, principal.userId);
    await this.registry.refreshStore();
    return { name: skillName, enabled: body.enabled };
  }

  @Get('me/skills')
  @ApiTags('me')
  @ApiOperation({ summary: 'Your skill filter and the skills it offers you' })
  @ApiOkResponse({ type: SkillFilterResultDto })
  async myFilter(@CurrentPrincipal() principal: Principal) {
    return this.presentFilter(principal, await this.store.userFilter(principal.userId));
  }

  @Put('me/skills')
  @ApiTags('me')
  @ApiOperation({ summary: 'Narrow the catalogue your chats get', description: '`include` (only these) and `exclude` (never these): skill names or `prefix-*` patterns. Send `{}` to remove the filter. A chat can narrow further (`PUT /v1/chats/:id/skills`).' })
  @ApiOkResponse({ type: SkillFilterResultDto })
  @ApiErrors(ErrorCode.VALIDATION_FAILED)
  async setMyFilter(@CurrentPrincipal() principal: Principal, @Body() body: SkillFilterBodyDto) {
    return this.presentFilter(principal, await this.store.setUserFilter(principal.userId, body));
  }

  private presentFilter(principal: Principal, filter: { include?: string[]; exclude?: string[] } | null) {
    return { include: filter?.include ?? null, exclude: filter?.exclude ?? null, offered: [...this.registry.viewFor(principal.userId, [filter]).skills.keys()] };
  }
}

/**
 * A skill name from a route, as names are compared everywhere (trimmed, NFKC). One no skill can
 * have (a control character, past 64 characters) names no skill: SKILL_NOT_FOUND, before any query.
 */
function skillName(raw: string): string {
  const name = raw.trim().normalize('NFKC');
  if (name === '' || name.length > 64 || /\p{Cc}/u.test(name)) throw new AppError(ErrorCode.SKILL_NOT_FOUND, `No skill is named '${raw.replace(/\p{Cc}/gu, '?').slice(0, 80)}'.`, { name: raw.slice(0, 80) });
  return name;
}

function isStream(body: unknown): body is Readable {
  return typeof body === 'object' && body !== null && typeof (body as Readable).pipe === 'function' && typeof (body as Readable).on === 'function';
}
