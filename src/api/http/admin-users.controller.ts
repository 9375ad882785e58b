import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { ErrorCode } from '@skillhost/core';
import { PageQueryDto } from './dto/page-query.dto.js';
import { ApiErrors } from './openapi/api-errors.decorator.js';
import { AdminOnly, CurrentPrincipal } from './decorators/auth.decorators.js';
import { actorOf, type Principal } from '../../domain/users/principal.js';
import { CreatedApiKeyDto, UserDto, UserPageDto } from './dto/user-responses.dto.js';
import { CreateApiKeyDto, CreateUserDto, UpdateUserDto } from './dto/users.dto.js';
import { presentCreatedApiKey, presentUser } from '../presenters/user.presenter.js';
import { UsersService } from '../../domain/users/users.service.js';

/** Operators manage users and anyone's keys. */
@Controller('v1/admin')
@AdminOnly()
@ApiTags('admin')
export class AdminUsersController {
  constructor(private readonly users: UsersService) {}

  @Post('users')
  @ApiOperation({ summary: 'Create a user' })
  @ApiCreatedResponse({ type: UserDto })
  @ApiErrors(ErrorCode.USER_NAME_TAKEN)
  async createUser(@Body() body: CreateUserDto) {
    return presentUser(await this.users.createUser(body.name, body.role ?? 'member'));
  }

  @Get('users')
  @ApiOperation({ summary: 'List users' })
  @ApiOkResponse({ type: UserPageDto })
  async listUsers(@Query() query: PageQueryDto) {
    const page = await this.users.listUsers(query.limit, query.offset);
    return { ...page, items: page.items.map(presentUser) };
  }

  @Patch('users/:id')
  @ApiOperation({ summary: "Change a user's role or disable it" })
  @ApiOkResponse({ type: UserDto })
  @ApiErrors(ErrorCode.USER_NOT_FOUND, ErrorCode.LAST_ADMIN)
  @ApiBody({ type: UpdateUserDto, required: false })
  async updateUser(@Param('id') id: string, @Body() body: UpdateUserDto, @CurrentPrincipal() principal: Principal) {
    return presentUser(await this.users.updateUser(id, body, actorOf(principal)));
  }

  @Post('users/:id/keys')
  @ApiOperation({ summary: 'Make an API key for a user', description: 'The answer carries the key itself, this once.' })
  @ApiCreatedResponse({ type: CreatedApiKeyDto })
  @ApiErrors(ErrorCode.USER_NOT_FOUND)
  @ApiBody({ type: CreateApiKeyDto, required: false })
  async createKey(@Param('id') id: string, @Body() body: CreateApiKeyDto) {
    return presentCreatedApiKey(await this.users.createKey(id, body));
  }

  @Delete('keys/:id')
  @HttpCode(204)
  @ApiOperation({ summary: "Revoke anyone's API key" })
  @ApiNoContentResponse({ description: 'Revoked.' })
  @ApiErrors(ErrorCode.API_KEY_NOT_FOUND, ErrorCode.LAST_ADMIN)
  async revokeKey(@Param('id') id: string): Promise<void> {
    await this.users.revokeKey(id);
  }
}
