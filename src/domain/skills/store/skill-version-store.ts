import type { StoredInstall, StoreScope } from '@skillhost/core';
import type { StoredSkillFilter } from '../../shared/skill-filter.js';
import type { AuditActor } from '../../shared/audit.js';
import type { VersionSource } from './skill-import-source.js';

export type { StoredSkillFilter, StoreScope, VersionSource };

/** Which installed skill: a shared one by name, or one user's personal one. */
export interface InstallKey {
  scope: StoreScope;
  /** The owner of a personal skill; null for shared. */
  ownerId: string | null;
  name: string;
}

export interface StoredManifestEntry {
  path: string;
  size: number;
  digest: string;
}

export interface NewVersion {
  name: string;
  digest: string;
  manifest: readonly StoredManifestEntry[];
  totalBytes: number;
  /** File contents by digest (each stored once). */
  blobs: ReadonlyMap<string, Buffer>;
}

/** One skill of an install: the version (stored unless it is already) to make current, and where it came from. */
export interface VersionInstall {
  key: InstallKey;
  version: NewVersion;
  source?: VersionSource;
}

/**
 * An editor publishing or rolling back shared skills: allowed on a skill whose owning user is `userId` or whose owning
 * group is one of `groupIds`, and on a new one (which they then own).
 */
export interface Publisher {
  userId: string;
  groupIds: readonly string[];
}

/** Who may see a shared skill (the whole team, or some groups) and who may publish it besides admins. */
export interface SharedSkillAccess {
  name: string;
  audience: 'team' | 'groups';
  groups: { id: string; name: string }[];
  owningUser: { id: string; name: string } | null;
  owningGroup: { id: string; name: string } | null;
}

/** A change of a shared skill's access; what is not given stays. */
export interface AccessChange {
  audience?: 'team' | 'groups';
  /** The groups (ids) of audience 'groups'; required with it. */
  groups?: readonly string[];
  owningUserId?: string | null;
  owningGroupId?: string | null;
}

/** What changing a shared skill's access gave: the access now, or which id named nothing (nothing changed). */
export type AccessOutcome =
  | { access: SharedSkillAccess }
  | { unknownGroups: string[] }
  | { unknownUser: string }
  | null;

export interface InstallOptions {
  installedBy: string | null;
  /** Written to the audit log with each skill the install changes. */
  actor?: AuditActor;
  /** Set for an editor: shared skills they may not publish stop the whole install (`notOwned`). */
  publisher?: Publisher;
  /** The most personal skills one owner may have. */
  maxPersonal?: number;
  /** Whether a skill an admin rolled back stays at that version (a mirror's imports). */
  keepRolledBack?: boolean;
}

/** What became of one skill of an install. */
export type InstallOutcome = { version: number; created: boolean } | { held: number };

/**
 * Every skill's outcome, in the order asked; or, with nothing changed, the owner's count and the new names that would
 * have passed the quota together.
 */
export type InstallMany =
  | { installed: InstallOutcome[] }
  | { quotaReached: { owned: number; adding: string[] } }
  | { notOwned: string };

/** An installed skill at its current version, as every instance builds its catalogue from (core's reader reads it). */
export type CurrentInstall = StoredInstall;

export interface InstalledVersion {
  version: number;
  digest: string;
  installedAt: Date;
  installedBy: string | null;
  fileCount: number;
  totalBytes: number;
  /** Where an imported version came from; null for uploads and folders. */
  source: VersionSource | null;
}

export interface VersionHistory {
  key: InstallKey;
  current: number;
  versions: InstalledVersion[];
}

export interface StoreState {
  generation: string;
  reloadGeneration: string;
}

/** The channel every change of the store is announced on (sent at commit, by the transaction itself). */
export const SKILL_STORE_CHANNEL = 'skillhost_skills';

/**
 * The skill store's versions, installs and switches as the store's rules use them (infra's SkillStoreRepository
 * implements it in PostgreSQL). Every change bumps the store's generation and is announced on `SKILL_STORE_CHANNEL`
 * at commit. Answers `null` (or false) for "no such skill".
 */
export interface SkillVersionStore {
  /** Stores a version's files and manifest; content already stored is not written again. */
  saveVersion(version: NewVersion): Promise<void>;
  /**
   * Stores the versions and makes each the current one of its installed skill, all in one transaction: every one, or
   * (on a failure, or `quotaReached`) none. Each gets a new numbered version, or, when its content was installed
   * before, that version again (`created` false); with `keepRolledBack`, `held` (the current version) for a skill an
   * admin rolled back to an earlier version than its newest, which then stays current. `quotaReached` when the new
   * personal skills of an owner, counted together, would take them past `maxPersonal`. One generation bump and one
   * announcement for the lot (none when nothing changed). The keys must differ.
   */
  installMany(installs: readonly VersionInstall[], options: InstallOptions): Promise<InstallMany>;
  /** How many personal skills a user has, and which of `names` they have. */
  personalCount(ownerId: string, names: readonly string[]): Promise<{ owned: number; existing: string[] }>;
  history(key: InstallKey): Promise<VersionHistory | null>;
  /**
   * 'rolled-back' (or 'unchanged' when it was current already), 'no-skill', 'no-version', or 'not-owned' (a
   * `publisher` who may not publish it). Written to the audit log as `actor`.
   */
  rollback(
    key: InstallKey,
    version: number,
    options?: { actor?: AuditActor; publisher?: Publisher },
  ): Promise<
    { outcome: 'rolled-back' | 'unchanged'; digest: string } | { outcome: 'no-skill' | 'no-version' | 'not-owned' }
  >;
  /** A shared skill's audience and owners, or null when no shared skill has the name. */
  access(name: string): Promise<SharedSkillAccess | null>;
  /** Changes a shared skill's audience or owners, written to the audit log as `actor`; null for no such skill. */
  setAccess(name: string, change: AccessChange, actor: AuditActor): Promise<AccessOutcome>;
  /** True when the skill was installed and is gone (the stored versions stay, content-addressed). */
  uninstall(key: InstallKey, actor: AuditActor): Promise<boolean>;
  /** Every installed skill at its current version, with its manifest. */
  currentInstalls(): Promise<CurrentInstall[]>;
  /** A stored version's name and manifest, or null. */
  findVersion(digest: string): Promise<{ name: string; manifest: StoredManifestEntry[] } | null>;
  /** File contents by digest; digests not stored are absent from the answer. */
  blobs(digests: readonly string[]): Promise<Map<string, Buffer>>;
  switches(): Promise<{ name: string; enabled: boolean }[]>;
  /** Written to the audit log as `actor`. */
  setSwitch(name: string, enabled: boolean, actor: AuditActor): Promise<void>;
  state(): Promise<StoreState>;
  /** Asks every instance to rescan its skill directories; the new reload generation. */
  requestReload(): Promise<string>;
}

export const SKILL_VERSION_STORE = Symbol('SKILL_VERSION_STORE');
