import type { Group, GroupMember } from '../../domain/users/group.types.js';

/** Response shapes for groups and their members: one place for REST and the CLI. */
export function presentGroup(group: Group) {
  return {
    id: group.id,
    name: group.name,
    source: group.source,
    createdAt: group.createdAt,
    memberCount: group.memberCount,
  };
}

export function presentGroupMember(member: GroupMember) {
  return { userId: member.userId, name: member.name, addedAt: member.addedAt };
}

/** A group with its members; the count is the members' (read together, so the two agree). */
export function presentGroupDetail(group: Group, members: readonly GroupMember[]) {
  return { ...presentGroup(group), memberCount: members.length, members: members.map(presentGroupMember) };
}
