/** Who made a group: an admin (members added and removed by admins), or the sign-in provider's groups claim. */
export type GroupSource = 'admin' | 'provider';

/** A group's name: 1–128 characters, no control characters (also a database constraint). */
export const GROUP_NAME_PATTERN = /^[^\p{Cc}]{1,128}$/u;

/** The most groups one sign-in's claim may put a user in; past it the rest are left out. */
export const MAX_PROVIDER_GROUPS = 200;

export interface Group {
  id: string;
  name: string;
  source: GroupSource;
  createdAt: Date;
  memberCount: number;
}

export interface GroupMember {
  userId: string;
  name: string;
  addedAt: Date;
}

/** What `setProviderGroups` changed: the provider groups the user joined and left, and names it left out. */
export interface ProviderGroupsResult {
  joined: string[];
  left: string[];
  /** Names the claim carried that no group may have (empty, control characters, past 128 characters, past 200). */
  ignored: string[];
}
