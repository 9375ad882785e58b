import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { AppError, ErrorCode } from '@skillhost/core';
import { type AuditActor, SYSTEM_ACTOR } from '../shared/audit.js';
import { NOTIFICATION_BUS, type NotificationBus } from '../shared/notification-bus.js';
import { announceUserViews } from '../shared/user-views.js';
import type { Page } from '../shared/page.js';
import { isUuid } from '../shared/uuid.js';
import { validationFailed } from '../shared/validation-errors.js';
import { GROUP_STORE, type GroupStore } from './group-store.js';
import {
  GROUP_NAME_PATTERN,
  type Group,
  type GroupMember,
  MAX_PROVIDER_GROUPS,
  type ProviderGroupsResult,
} from './group.types.js';

/**
 * Groups and who is in them. Admins make groups and manage their members; the sign-in provider's groups claim makes
 * the provider groups and is the only thing that changes their members (`setProviderGroups`), so a claim and an admin
 * never undo each other's work. A store skill shared with groups is offered to their members only.
 */
@Injectable()
export class GroupsService {
  private readonly logger = new Logger('Groups');

  constructor(
    @Inject(GROUP_STORE) private readonly groups: GroupStore,
    @Optional() @Inject(NOTIFICATION_BUS) private readonly notifications?: NotificationBus,
  ) {}

  listGroups(limit = 50, offset = 0): Promise<Page<Group>> {
    return this.groups.list(limit, offset);
  }

  async getGroup(id: string): Promise<{ group: Group; members: GroupMember[] }> {
    const group = await this.findGroup(id);
    return { group, members: await this.groups.members(group.id) };
  }

  async createGroup(name: string, actor: AuditActor): Promise<Group> {
    const trimmed = name.trim().normalize('NFKC');
    if (!GROUP_NAME_PATTERN.test(trimmed))
      throw validationFailed([`name: use 1–128 characters without control characters, not '${shown(name)}'`]);
    const group = await this.groups.create(trimmed, 'admin', actor);
    if (group === null)
      throw new AppError(
        ErrorCode.GROUP_NAME_TAKEN,
        `A group named '${trimmed}' already exists; add members to it (PUT /v1/admin/groups/{id}/members/{userId}) ` +
          `or choose another name.`,
        { name: trimmed },
      );
    return group;
  }

  /** Its memberships go with it, and skills shared with it are no longer offered through it. */
  async deleteGroup(id: string, actor: AuditActor): Promise<Group> {
    const members = isUuid(id) ? await this.groups.members(id) : [];
    const deleted = isUuid(id) ? await this.groups.delete(id, actor) : null;
    if (deleted === null) throw groupNotFound(id);
    await this.viewsChanged(members.map((member) => member.userId));
    return deleted;
  }

  async addMember(groupId: string, userId: string, actor: AuditActor): Promise<GroupMember[]> {
    const group = await this.adminGroup(groupId);
    const outcome = isUuid(userId) ? await this.groups.addMember(group.id, userId, actor) : 'no-user';
    if (outcome === 'no-group') throw groupNotFound(groupId);
    if (outcome === 'no-user')
      throw new AppError(ErrorCode.USER_NOT_FOUND, `User '${userId}' not found.`, { id: userId });
    await this.viewsChanged([userId]);
    return this.groups.members(group.id);
  }

  async removeMember(groupId: string, userId: string, actor: AuditActor): Promise<GroupMember[]> {
    const group = await this.adminGroup(groupId);
    if (!isUuid(userId) || !(await this.groups.removeMember(group.id, userId, actor)))
      throw new AppError(ErrorCode.USER_NOT_FOUND, `User '${userId}' is not a member of group '${group.name}'.`, {
        id: userId,
        groupId: group.id,
      });
    await this.viewsChanged([userId]);
    return this.groups.members(group.id);
  }

  groupsOf(userId: string): Promise<Group[]> {
    return this.groups.groupsOf(userId);
  }

  /**
   * What sign-in calls with the provider's groups claim: the user's provider groups become exactly these names
   * (groups made as needed), and groups made by admins stay as they are. Names no group may have, and those past the
   * 200th, are left out and reported, not refused: a sign-in does not fail over one odd group name.
   */
  async setProviderGroups(
    userId: string,
    groupNames: readonly unknown[],
    actor: AuditActor = SYSTEM_ACTOR,
  ): Promise<ProviderGroupsResult> {
    const { names, ignored } = providerGroupNames(groupNames);
    const changed = isUuid(userId) ? await this.groups.setProviderGroups(userId, names, actor) : null;
    if (changed === null) throw new AppError(ErrorCode.USER_NOT_FOUND, `User '${userId}' not found.`, { id: userId });
    if (changed.joined.length > 0 || changed.left.length > 0) await this.viewsChanged([userId]);
    return { ...changed, ignored };
  }

  /**
   * Members' views of the skills follow their groups (group-only skills): every instance is told, so connected MCP
   * clients hear `list_changed` at once. The change itself is saved already; a lost announcement only delays that.
   */
  private async viewsChanged(userIds: readonly string[]): Promise<void> {
    await announceUserViews(this.notifications, userIds).catch((error: Error) =>
      this.logger.warn(`A group membership change was not announced: ${error.message}`),
    );
  }

  private async findGroup(id: string): Promise<Group> {
    const group = isUuid(id) ? await this.groups.findById(id) : null;
    if (group === null) throw groupNotFound(id);
    return group;
  }

  /** A group whose members admins manage; a provider group's change at sign-in, so GROUP_MANAGED_BY_PROVIDER. */
  private async adminGroup(id: string): Promise<Group> {
    const group = await this.findGroup(id);
    if (group.source === 'provider')
      throw new AppError(
        ErrorCode.GROUP_MANAGED_BY_PROVIDER,
        `Group '${group.name}' comes from the sign-in provider's groups claim: its members change when they sign in. ` +
          `Change the membership at the provider, or make an admin group (POST /v1/admin/groups) and use that.`,
        { id: group.id, name: group.name },
      );
    return group;
  }
}

/** The claim's usable names (trimmed, NFKC, once each, at most MAX_PROVIDER_GROUPS) and the ones left out. */
export function providerGroupNames(claim: readonly unknown[]): { names: string[]; ignored: string[] } {
  const names: string[] = [];
  const ignored: string[] = [];
  for (const entry of claim) {
    const name = typeof entry === 'string' ? entry.trim().normalize('NFKC') : '';
    if (!GROUP_NAME_PATTERN.test(name) || names.length >= MAX_PROVIDER_GROUPS) {
      if (ignored.length < MAX_PROVIDER_GROUPS) ignored.push(typeof entry === 'string' ? shown(entry) : typeof entry);
      continue;
    }
    if (!names.includes(name)) names.push(name);
  }
  return { names, ignored };
}

/** A name for a message: control characters shown as '?', at most 80 characters. */
function shown(name: string): string {
  return name.replace(/\p{Cc}/gu, '?').slice(0, 80);
}

function groupNotFound(id: string): AppError {
  return new AppError(ErrorCode.GROUP_NOT_FOUND, `Group '${shown(id)}' not found (GET /v1/admin/groups lists them).`, {
    id: shown(id),
  });
}
