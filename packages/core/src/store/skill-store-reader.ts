import type { SkillRecord } from '../skill/skill.types.js';

/** Whose an installed skill is: the team's (shared) or one user's (personal). */
export type StoreScope = 'shared' | 'personal';

/** An installed skill at its current version, as the store describes it. */
export interface StoredInstall {
  name: string;
  scope: StoreScope;
  ownerId: string | null;
  ownerName: string | null;
  version: number;
  digest: string;
  manifest: { path: string; size: number; digest: string }[];
  /** The digests of every version of this install (a rollback may return to any of them). */
  history: string[];
  /**
   * A shared skill offered only to these groups (ids), not to the whole team; absent (or undefined) for the whole
   * team and for personal skills. Empty: nobody's catalogue offers it (its groups were deleted).
   */
  groups?: readonly string[];
}

/** An installed skill at its current version, unpacked and ready to be read like a folder. */
export interface StoreEntry {
  install: StoredInstall;
  folder: string;
}

/** What the store holds now: every instance builds its catalogue from it. */
export interface StoreContents {
  entries: StoreEntry[];
  /** Persisted switches: name → enabled. */
  switches: ReadonlyMap<string, boolean>;
}

/** What keeping the activated version gave: its digest, or why it was not kept. */
export type KeptVersion = { digest: string } | { warning: string };

/** A user's own include/exclude lists over the skills they are offered. */
export interface StoredSkillFilter {
  include?: string[];
  exclude?: string[];
}

/**
 * The skill store as the registry and the resources read it (a port: the server's store implements
 * it; an app that embeds the library has none).
 */
export interface SkillStoreReader {
  generations(): Promise<{ generation: string; reloadGeneration: string }>;
  contents(): Promise<StoreContents>;
  /** Asks every instance to rescan its folders; resolves to the new reload generation. */
  requestReload(): Promise<string>;
  userFilter(userId: string): Promise<StoredSkillFilter | null>;
  /** The ids of the groups the user is in: a skill shared with groups is in the views of their members only. */
  userGroups?(userId: string): Promise<readonly string[]>;
  /** Keeps the version a chat activated, so the chat reads the same files later. */
  keep(skill: SkillRecord): Promise<KeptVersion> | undefined;
  keptDigest(skill: SkillRecord): Promise<string | undefined>;
  versionFolder(digest: string, name: string): Promise<string | undefined>;
}
