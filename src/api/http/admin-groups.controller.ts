import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ErrorCode } from '@skillhost/core';
import { PageQueryDto } from './dto/page-query.dto.js';
import { ApiErrors } from './openapi/api-errors.decorator.js';
import { AdminOnly, CurrentPrincipal } from './decorators/auth.decorators.js';
import { CreateGroupDto, GroupDetailDto, GroupDto, GroupMembersDto, GroupPageDto } from './dto/groups.dto.js';
import { presentGroup, presentGroupDetail, presentGroupMember } from '../presenters/group.presenter.js';
import { GroupsService } from '../../domain/users/groups.service.js';
import { actorOf, type Principal } from '../../domain/users/principal.js';

/**
 * Admins make groups and manage the members of the ones they made; a provider group's members follow the sign-in
 * provider's groups claim. A store skill shared with groups (PUT /v1/admin/skills/{name}/access) is offered to their
 * members only.
 */
@Controller('v1/admin/groups')
@AdminOnly()
@ApiTags('admin')
export class AdminGroupsController {
  constructor(private readonly groups: GroupsService) {}

  @Get()
  @ApiOperation({ summary: 'List groups (admin-made and from the sign-in provider)' })
  @ApiOkResponse({ type: GroupPageDto })
  async listGroups(@Query() query: PageQueryDto) {
    const page = await this.groups.listGroups(query.limit, query.offset);
    return { ...page, items: page.items.map(presentGroup) };
  }

  @Post()
  @ApiOperation({ summary: 'Make a group' })
  @ApiCreatedResponse({ type: GroupDto })
  @ApiErrors(ErrorCode.GROUP_NAME_TAKEN, ErrorCode.VALIDATION_FAILED)
  async createGroup(@Body() body: CreateGroupDto, @CurrentPrincipal() principal: Principal) {
    return presentGroup(await this.groups.createGroup(body.name, actorOf(principal)));
  }

  @Get(':id')
  @ApiOperation({ summary: 'A group and its members' })
  @ApiOkResponse({ type: GroupDetailDto })
  @ApiErrors(ErrorCode.GROUP_NOT_FOUND)
  async getGroup(@Param('id') id: string) {
    const { group, members } = await this.groups.getGroup(id);
    return presentGroupDetail(group, members);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({
    summary: 'Delete a group',
    description:
      'Its memberships go with it; a skill shared with it is no longer offered through it (a skill shared with no ' +
      'other group is then offered to nobody until an admin shares it again).',
  })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors(ErrorCode.GROUP_NOT_FOUND)
  async deleteGroup(@Param('id') id: string, @CurrentPrincipal() principal: Principal): Promise<void> {
    await this.groups.deleteGroup(id, actorOf(principal));
  }

  @Put(':id/members/:userId')
  @ApiOperation({
    summary: 'Add a user to an admin-made group',
    description: "Idempotent. A provider group's members change at sign-in only (409 GROUP_MANAGED_BY_PROVIDER).",
  })
  @ApiOkResponse({ type: GroupMembersDto })
  @ApiErrors(ErrorCode.GROUP_NOT_FOUND, ErrorCode.USER_NOT_FOUND, ErrorCode.GROUP_MANAGED_BY_PROVIDER)
  async addMember(@Param('id') id: string, @Param('userId') userId: string, @CurrentPrincipal() principal: Principal) {
    return { members: (await this.groups.addMember(id, userId, actorOf(principal))).map(presentGroupMember) };
  }

  @Delete(':id/members/:userId')
  @ApiOperation({ summary: 'Remove a user from an admin-made group' })
  @ApiOkResponse({ type: GroupMembersDto })
  @ApiErrors(ErrorCode.GROUP_NOT_FOUND, ErrorCode.USER_NOT_FOUND, ErrorCode.GROUP_MANAGED_BY_PROVIDER)
  async removeMember(
    @Param('id') id: string,
    @Param('userId') userId: string,
    @CurrentPrincipal() principal: Principal,
  ) {
    return { members: (await this.groups.removeMember(id, userId, actorOf(principal))).map(presentGroupMember) };
  }
}
