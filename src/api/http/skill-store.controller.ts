import type { Readable } from 'node:stream';
import {
  applyDecorators,
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Put,
  Query,
  Req,
  Res,
} from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { AdminOnly, CurrentPrincipal, RequireScope } from './decorators/auth.decorators.js';
import type { Principal } from '../../domain/users/principal.js';
import { AppError, ErrorCode } from '@skillhost/core';
import { RequireFeature } from './guards/feature.guard.js';
import { ApiErrors } from './openapi/api-errors.decorator.js';
import type { StoreScope } from '../../domain/skills/store/skill-version-store.js';
import {
  ImportBodyDto,
  ImportResultDto,
  InstallResultDto,
  RollbackDto,
  RollbackResultDto,
  SkillFilterBodyDto,
  SkillFilterResultDto,
  SwitchDto,
  SwitchResultDto,
  VersionHistoryDto,
  VersionsQueryDto,
} from './dto/store.dto.js';
import { SkillLifecycleService } from '../../domain/skills/store/skill-lifecycle.service.js';
import { IMPORT_RETRY_AFTER_SECONDS, type ImportResult } from '../../domain/skills/store/skill-import.service.js';
import type { InstallResult } from '../../domain/skills/store/skill-store.service.js';
import { UPLOAD_MEDIA_TYPES } from '../../domain/skills/store/skill-upload.reader.js';
import { SetSkillAccessDto, SkillAccessDto } from './dto/groups.dto.js';

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
  header(name: string, value: string): unknown;
}

const UPLOAD_DESCRIPTION =
  'One skill per upload: a `.zip` (`application/zip`) or `.tar.gz` (`application/gzip`) body, or ' +
  '`multipart/form-data` with one part per file whose filename is its path relative to the skill folder. ' +
  '`SKILL.md` at the root or inside one top folder. Validated with the configured rules (400 ' +
  "`VALIDATION_FAILED` with the validator's messages); unsafe or malformed archives are 400 `INVALID_ARCHIVE`; " +
  'past `[app.skills] max_install_bytes` unpacked or 1,000 files, 413 (reading stops there). 201 for a new ' +
  'version, 200 when the same content was installed before (that version becomes current).';

/** How an upload route is documented: the body types, both answers, the refusals. */
function ApiSkillUpload(summary: string, ...more: ErrorCode[]) {
  return applyDecorators(
    ApiOperation({ summary, description: UPLOAD_DESCRIPTION }),
    ApiConsumes(...UPLOAD_MEDIA_TYPES),
    ApiBody({ schema: { type: 'string', format: 'binary' } }),
    ApiCreatedResponse({ type: InstallResultDto, description: 'A new version.' }),
    ApiOkResponse({
      type: InstallResultDto,
      description: 'This content was installed before: that version is current again.',
    }),
    ApiErrors(
      ErrorCode.VALIDATION_FAILED,
      ErrorCode.INVALID_ARCHIVE,
      ErrorCode.PAYLOAD_TOO_LARGE,
      ErrorCode.UNSUPPORTED_MEDIA_TYPE,
      ...more,
    ),
  );
}

const IMPORT_DESCRIPTION =
  'Reads every skill the source names and installs each as an upload would be (same rules, same limits): a git ' +
  'repository (shallow fetch of one ref, no hooks, submodules only with `submodules: true`; `#REF:PATH` for one ' +
  'skill folder or every skill ' +
  "folder under PATH) or another server's discovery index (every file checked against its size and digest, on " +
  "the index's origin only; `#name` for one skill). Each new version records its source (URL, ref, commit or " +
  'digest). 201 when a version is new, 200 when all were installed before. A source that cannot be read is 422 ' +
  '`IMPORT_SOURCE_UNREACHABLE`; an index that lies is 422 `IMPORT_VERIFICATION_FAILED` and installs nothing. A ' +
  "member's import reaches public hosts and `[app.skills.import] member_hosts` only (else 422 " +
  '`IMPORT_SOURCE_FORBIDDEN`); a clone past `max_clone_bytes` is 422 `IMPORT_TOO_LARGE`; past `max_concurrent` ' +
  'imports at once, 503 `IMPORT_BUSY` with `Retry-After`.';

/** How an import route is documented. */
function ApiSkillImport(summary: string, ...more: ErrorCode[]) {
  return applyDecorators(
    ApiOperation({ summary, description: IMPORT_DESCRIPTION }),
    ApiCreatedResponse({ type: ImportResultDto, description: 'At least one new version.' }),
    ApiOkResponse({ type: ImportResultDto, description: 'Every skill was installed with this content before.' }),
    ApiErrors(
      ErrorCode.VALIDATION_FAILED,
      ErrorCode.INVALID_ARCHIVE,
      ErrorCode.PAYLOAD_TOO_LARGE,
      ErrorCode.IMPORT_SOURCE_UNREACHABLE,
      ErrorCode.IMPORT_VERIFICATION_FAILED,
      ErrorCode.IMPORT_SOURCE_FORBIDDEN,
      ErrorCode.IMPORT_TOO_LARGE,
      ErrorCode.IMPORT_BUSY,
      ...more,
    ),
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
  constructor(private readonly lifecycle: SkillLifecycleService) {}

  @Post('admin/skills')
  @ApiSkillUpload(
    'Install a shared skill (a new version when it exists): admins, and editors for new skills (which they then own) ' +
      'and the ones they or one of their groups own (else 403 FORBIDDEN)',
    ErrorCode.FORBIDDEN,
  )
  installShared(
    @Req() request: UploadRequest,
    @Res({ passthrough: true }) reply: StatusReply,
    @CurrentPrincipal() principal: Principal,
  ) {
    return this.install(request, reply, 'shared', principal);
  }

  @Post('skills')
  @ApiSkillUpload('Install a personal skill: in your catalogue and chats only', ErrorCode.SKILL_QUOTA_EXCEEDED)
  installPersonal(
    @Req() request: UploadRequest,
    @Res({ passthrough: true }) reply: StatusReply,
    @CurrentPrincipal() principal: Principal,
  ) {
    return this.install(request, reply, 'personal', principal);
  }

  @Post('admin/skills/import')
  @ApiSkillImport(
    "Import shared skills from a git repository or another server's discovery index (admins; editors as for uploads)",
    ErrorCode.FORBIDDEN,
  )
  importShared(
    @Body() body: ImportBodyDto,
    @Res({ passthrough: true }) reply: StatusReply,
    @CurrentPrincipal() principal: Principal,
  ) {
    return this.importFrom(body, reply, 'shared', principal);
  }

  @Post('skills/import')
  @ApiSkillImport(
    "Import personal skills from a git repository or another server's discovery index",
    ErrorCode.SKILL_QUOTA_EXCEEDED,
  )
  importPersonal(
    @Body() body: ImportBodyDto,
    @Res({ passthrough: true }) reply: StatusReply,
    @CurrentPrincipal() principal: Principal,
  ) {
    return this.importFrom(body, reply, 'personal', principal);
  }

  private async importFrom(
    body: ImportBodyDto,
    reply: StatusReply,
    scope: StoreScope,
    principal: Principal,
  ): Promise<ImportResult> {
    let result: ImportResult;
    try {
      result = await this.lifecycle.importFrom(body.source, scope, principal, { submodules: body.submodules });
    } catch (error) {
      if (AppError.isInstance(error) && error.code === ErrorCode.IMPORT_BUSY)
        reply.header('retry-after', String(error.details?.retryAfterSeconds ?? IMPORT_RETRY_AFTER_SECONDS));
      throw error;
    }
    reply.status(result.skills.some((skill) => skill.created) ? 201 : 200);
    return result;
  }

  private async install(
    request: UploadRequest,
    reply: StatusReply,
    scope: StoreScope,
    principal: Principal,
  ): Promise<InstallResult> {
    const body = request.body;
    const contentType = String(request.headers['content-type'] ?? '');
    if (!isStream(body)) {
      throw new AppError(
        ErrorCode.UNSUPPORTED_MEDIA_TYPE,
        `Send the skill as a zip (application/zip), a tar.gz (application/gzip) or multipart/form-data body${
          contentType === '' ? '' : `, not '${contentType.slice(0, 100)}'`
        }.`,
        {
          contentType: contentType.slice(0, 100) || null,
        },
      );
    }
    const result = await this.lifecycle.install(body, contentType, scope, principal);
    reply.status(result.created ? 201 : 200);
    return result;
  }

  @Get('skills/:name/versions')
  @RequireScope('skills:read')
  @ApiOperation({ summary: "An installed skill's versions" })
  @ApiOkResponse({ type: VersionHistoryDto })
  @ApiErrors(ErrorCode.SKILL_NOT_FOUND, ErrorCode.VALIDATION_FAILED)
  versions(@Param('name') name: string, @Query() query: VersionsQueryDto, @CurrentPrincipal() principal: Principal) {
    return this.lifecycle.versions(name, principal, query.scope);
  }

  @Post('admin/skills/:name/rollback')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Make an earlier version of a shared skill current',
    description: 'Admins, and editors for the shared skills they or one of their groups own (else 403 FORBIDDEN).',
  })
  @ApiOkResponse({ type: RollbackResultDto })
  @ApiErrors(
    ErrorCode.SKILL_NOT_FOUND,
    ErrorCode.SKILL_VERSION_NOT_FOUND,
    ErrorCode.VALIDATION_FAILED,
    ErrorCode.FORBIDDEN,
  )
  rollback(@Param('name') name: string, @Body() body: RollbackDto, @CurrentPrincipal() principal: Principal) {
    return this.lifecycle.rollback(name, body.version, principal);
  }

  @Delete('admin/skills/:name')
  @AdminOnly()
  @HttpCode(204)
  @ApiOperation({
    summary: 'Uninstall a shared skill',
    description:
      'It leaves every catalogue; activating or reading it answers SKILL_NOT_FOUND, in chats that activated it too.',
  })
  @ApiNoContentResponse({ description: 'Uninstalled.' })
  @ApiErrors(ErrorCode.SKILL_NOT_FOUND)
  async uninstallShared(@Param('name') name: string, @CurrentPrincipal() principal: Principal): Promise<void> {
    await this.lifecycle.uninstall(name, 'shared', principal);
  }

  @Delete('skills/:name')
  @HttpCode(204)
  @ApiOperation({ summary: 'Uninstall one of your personal skills' })
  @ApiNoContentResponse({ description: 'Uninstalled.' })
  @ApiErrors(ErrorCode.SKILL_NOT_FOUND)
  async uninstallPersonal(@Param('name') name: string, @CurrentPrincipal() principal: Principal): Promise<void> {
    await this.lifecycle.uninstall(name, 'personal', principal);
  }

  @Get('admin/skills/:name/access')
  @AdminOnly()
  @ApiOperation({ summary: "A shared skill's audience (the whole team or some groups) and owners" })
  @ApiOkResponse({ type: SkillAccessDto })
  @ApiErrors(ErrorCode.SKILL_NOT_FOUND)
  access(@Param('name') name: string) {
    return this.lifecycle.access(name);
  }

  @Put('admin/skills/:name/access')
  @AdminOnly()
  @ApiOperation({
    summary: 'Share a shared skill with the whole team or with groups, and set who may publish it besides admins',
    description:
      "`audience: 'groups'` with `groups` (ids): only those groups' members see it, through every door (catalogue, " +
      'search, MCP, the discovery index, sync, the gateway, activation and resources answer SKILL_NOT_FOUND to ' +
      "others). `owningUserId` / `owningGroupId`: an editor, or a group's editors, may publish and roll it back " +
      '(null removes one). Fields not sent stay as they are. Written to the audit log.',
  })
  @ApiOkResponse({ type: SkillAccessDto })
  @ApiErrors(
    ErrorCode.SKILL_NOT_FOUND,
    ErrorCode.GROUP_NOT_FOUND,
    ErrorCode.USER_NOT_FOUND,
    ErrorCode.VALIDATION_FAILED,
  )
  setAccess(@Param('name') name: string, @Body() body: SetSkillAccessDto, @CurrentPrincipal() principal: Principal) {
    return this.lifecycle.setAccess(name, body, principal);
  }

  @Put('admin/skills/:name/enabled')
  @AdminOnly()
  @ApiOperation({
    summary: 'Switch a skill on or off, whatever its source (persisted)',
    description:
      'Off: in no catalogue, `/name` stays plain text, activating or reading it answers 403 SKILL_DISABLED (an ' +
      'error card in a chat). A skill switched off in the configuration (`[app.skills] disabled`) cannot be ' +
      'switched on here (409).',
  })
  @ApiOkResponse({ type: SwitchResultDto })
  @ApiErrors(ErrorCode.SKILL_NOT_FOUND, ErrorCode.SKILL_SWITCH_LOCKED, ErrorCode.VALIDATION_FAILED)
  setEnabled(@Param('name') name: string, @Body() body: SwitchDto, @CurrentPrincipal() principal: Principal) {
    return this.lifecycle.setEnabled(name, body.enabled, principal);
  }

  @Get('me/skills')
  @RequireScope('skills:read')
  @ApiTags('me')
  @ApiOperation({ summary: 'Your skill filter and the skills it offers you' })
  @ApiOkResponse({ type: SkillFilterResultDto })
  myFilter(@CurrentPrincipal() principal: Principal) {
    return this.lifecycle.userFilter(principal);
  }

  @Put('me/skills')
  @ApiTags('me')
  @ApiOperation({
    summary: 'Narrow the catalogue your chats get',
    description:
      '`include` (only these) and `exclude` (never these): skill names or `prefix-*` patterns. Send `{}` to ' +
      'remove the filter. A chat can narrow further (`PUT /v1/chats/:id/skills`).',
  })
  @ApiOkResponse({ type: SkillFilterResultDto })
  @ApiErrors(ErrorCode.VALIDATION_FAILED)
  setMyFilter(@CurrentPrincipal() principal: Principal, @Body() body: SkillFilterBodyDto) {
    return this.lifecycle.setUserFilter(principal, body);
  }
}

function isStream(body: unknown): body is Readable {
  return (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as Readable).pipe === 'function' &&
    typeof (body as Readable).on === 'function'
  );
}
