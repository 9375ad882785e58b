/** admin: everything; editor: also publishes and rolls back the shared skills they or their groups own; member. */
export type UserRole = 'admin' | 'editor' | 'member';
export const USER_ROLES: readonly UserRole[] = ['admin', 'editor', 'member'];

/** The built-in admin: every request acts as it when auth is off, and it owns chats made before users existed. */
export const LOCAL_USER = Object.freeze({ id: '00000000-0000-4000-8000-000000000001', name: 'local' });

/**
 * Lowercase letters, digits, `.`, `_` and `-`, 1–64 characters, starting with a letter or digit (also a database
 * constraint).
 */
export const USER_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;

/** A user as the domain reads it. */
export interface User {
  id: string;
  name: string;
  role: UserRole;
  /** A disabled user's keys stop working; its chats stay. */
  disabled: boolean;
  createdAt: Date;
}

/** An API key as the domain reads it: a short visible prefix, never the key itself nor its hash. */
export interface ApiKey {
  id: string;
  userId: string;
  label: string | null;
  prefix: string;
  createdAt: Date;
  /** Written at most once a minute per key. */
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  expiresAt: Date | null;
}

export interface NewApiKey {
  userId: string;
  label: string | null;
  prefix: string;
  keyHash: string;
  expiresAt: Date | null;
}

/** What authenticating one key needs, in one round trip: the key's state and its user's. */
export interface KeyOwner {
  keyId: string;
  revokedAt: Date | null;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  userId: string;
  userName: string;
  role: UserRole;
  disabled: boolean;
}

/** A key with its user's name, for listings that span users. */
export interface ListedApiKey {
  key: ApiKey;
  userName: string;
}
