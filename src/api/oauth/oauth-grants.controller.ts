import { Controller, Delete, Get, HttpCode, Inject, Param } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AppError, ErrorCode } from '@skillhost/core';
import { OAUTH_ARTIFACT_STORE, type OAuthArtifactStore } from '../../domain/oauth/oauth-artifact-store.js';
import type { Principal } from '../../domain/users/principal.js';
import { CurrentPrincipal, RequireScope } from '../http/decorators/auth.decorators.js';
import { ApiErrors } from '../http/openapi/api-errors.decorator.js';
import { OAuthGrantListDto } from './oauth-grant.dto.js';
import { OAuthServerService } from './oauth-server.service.js';

/** The OAuth grants the caller gave MCP clients: what each may do, and a way to take it back. */
@Controller('v1/me/oauth-grants')
@ApiTags('me')
@RequireScope('none')
export class OAuthGrantsController {
  constructor(
    @Inject(OAUTH_ARTIFACT_STORE) private readonly store: OAuthArtifactStore,
    private readonly server: OAuthServerService,
  ) {}

  @Get()
  @ApiOperation({ summary: 'The OAuth grants the caller gave MCP clients, newest first' })
  @ApiOkResponse({ type: OAuthGrantListDto })
  async list(@CurrentPrincipal() principal: Principal): Promise<OAuthGrantListDto> {
    const grants = await this.store.listGrants(principal.userId);
    return {
      items: grants.map((grant) => ({
        ...grant,
        createdAt: grant.createdAt.toISOString(),
        expiresAt: grant.expiresAt?.toISOString() ?? null,
      })),
    };
  }

  /** Revokes a grant with every token issued under it; another person's grant is not found. */
  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke one of the caller’s OAuth grants' })
  @ApiNoContentResponse({
    description: 'Revoked with its tokens; they stop working on this instance at once, on others within seconds.',
  })
  @ApiErrors(ErrorCode.OAUTH_GRANT_NOT_FOUND)
  async revoke(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    if (!(await this.store.revokeGrant(principal.userId, id)))
      throw new AppError(
        ErrorCode.OAUTH_GRANT_NOT_FOUND,
        `You gave no OAuth grant with id '${id}': GET /v1/me/oauth-grants lists yours.`,
      );
    this.server.forgetGrant(id);
  }
}
