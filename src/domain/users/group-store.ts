import type { AuditActor } from '../shared/audit.js';
import type { Page } from '../shared/page.js';
import type { Group, GroupMember, GroupSource } from './group.types.js';

/**
 * Groups and memberships as the groups' rules use them (infra's GroupRepository implements it in PostgreSQL). Every
 * change is written to the audit log in its own transaction, as `actor`. Answers `null` (or false) for "no such
 * group".
 */
export interface GroupStore {
  /** The new group, or null when a group of that source has the name. */
  create(name: string, source: GroupSource, actor: AuditActor): Promise<Group | null>;
  findById(id: string): Promise<Group | null>;
  list(limit: number, offset: number): Promise<Page<Group>>;
  /** The deleted group (its memberships and skill shares with it), or null. */
  delete(id: string, actor: AuditActor): Promise<Group | null>;
  members(groupId: string): Promise<GroupMember[]>;
  /** 'added', 'already' (a member before), 'no-group' or 'no-user'. */
  addMember(groupId: string, userId: string, actor: AuditActor): Promise<'added' | 'already' | 'no-group' | 'no-user'>;
  /** False when the user was not in the group. */
  removeMember(groupId: string, userId: string, actor: AuditActor): Promise<boolean>;
  /** The groups a user is in, by name. */
  groupsOf(userId: string): Promise<Group[]>;
  /**
   * Makes the user's provider groups exactly `names` (creating groups that do not exist), in one transaction; groups
   * made by admins are left as they are. The names joined and left; null when there is no such user.
   */
  setProviderGroups(
    userId: string,
    names: readonly string[],
    actor: AuditActor,
  ): Promise<{ joined: string[]; left: string[] } | null>;
}

export const GROUP_STORE = Symbol('GROUP_STORE');
