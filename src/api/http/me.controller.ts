import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { ErrorCode } from '@skillhost/core';
import { ApiErrors } from './openapi/api-errors.decorator.js';
import { AuthService } from '../../domain/users/auth.service.js';
import { CurrentPrincipal, RequireScope } from './decorators/auth.decorators.js';
import { ApiKeyListDto, CreatedApiKeyDto, MeDto } from './dto/user-responses.dto.js';
import { CreateApiKeyDto } from './dto/users.dto.js';
import type { Principal } from '../../domain/users/principal.js';
import { presentApiKey, presentCreatedApiKey, presentUser } from '../presenters/user.presenter.js';
import { UsersService } from '../../domain/users/users.service.js';

/** The caller's own account and keys. */
@Controller('v1/me')
@ApiTags('me')
export class MeController {
  constructor(
    private readonly users: UsersService,
    private readonly auth: AuthService,
  ) {}

  @Get()
  @RequireScope('none')
  @ApiOperation({ summary: 'Who the caller is' })
  @ApiOkResponse({ type: MeDto })
  async me(@CurrentPrincipal() principal: Principal) {
    return {
      ...presentUser(await this.users.getUser(principal.userId)),
      authMode: this.auth.mode,
      keyId: principal.keyId,
    };
  }

  /** 201 with the new key; `key` is shown this once and cannot be read again. */
  @Post('keys')
  @ApiOperation({
    summary: 'Make an API key for the caller',
    description: 'The answer carries the key itself, this once.',
  })
  @ApiCreatedResponse({ type: CreatedApiKeyDto })
  @ApiBody({ type: CreateApiKeyDto, required: false })
  async createKey(@CurrentPrincipal() principal: Principal, @Body() body: CreateApiKeyDto) {
    return presentCreatedApiKey(await this.users.createKey(principal.userId, body));
  }

  @Get('keys')
  @ApiOperation({ summary: "The caller's API keys" })
  @ApiOkResponse({ type: ApiKeyListDto })
  async listKeys(@CurrentPrincipal() principal: Principal) {
    return { items: (await this.users.listKeys(principal.userId)).map((k) => presentApiKey(k.key, k.userName)) };
  }

  /** Revokes one of the caller's keys; another user's key is not found. */
  @Delete('keys/:id')
  @HttpCode(204)
  @ApiOperation({ summary: "Revoke one of the caller's keys" })
  @ApiNoContentResponse({
    description: 'Revoked; it stops working on this instance at once, on others within seconds.',
  })
  @ApiErrors(ErrorCode.API_KEY_NOT_FOUND, ErrorCode.LAST_ADMIN)
  async revokeKey(@CurrentPrincipal() principal: Principal, @Param('id') id: string): Promise<void> {
    await this.users.revokeKey(id, principal.userId);
  }
}
