import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { PageQueryDto } from '../common/page-query.dto.js';
import { AdminOnly } from './auth.decorators.js';
import { CreateApiKeyDto, CreateUserDto, UpdateUserDto } from './dto/users.dto.js';
import { presentCreatedApiKey, presentUser } from './user.presenter.js';
import { UsersService } from './users.service.js';

/** Operators manage users and anyone's keys. */
@Controller('v1/admin')
@AdminOnly()
export class AdminUsersController {
  constructor(private readonly users: UsersService) {}

  @Post('users')
  async createUser(@Body() body: CreateUserDto) {
    return presentUser(await this.users.createUser(body.name, body.role ?? 'member'));
  }

  @Get('users')
  async listUsers(@Query() query: PageQueryDto) {
    const page = await this.users.listUsers(query.limit, query.offset);
    return { ...page, items: page.items.map(presentUser) };
  }

  @Patch('users/:id')
  async updateUser(@Param('id') id: string, @Body() body: UpdateUserDto) {
    return presentUser(await this.users.updateUser(id, body));
  }

  @Post('users/:id/keys')
  async createKey(@Param('id') id: string, @Body() body: CreateApiKeyDto) {
    return presentCreatedApiKey(await this.users.createKey(id, body));
  }

  @Delete('keys/:id')
  @HttpCode(204)
  async revokeKey(@Param('id') id: string): Promise<void> {
    await this.users.revokeKey(id);
  }
}
