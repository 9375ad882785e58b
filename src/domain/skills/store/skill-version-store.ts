import type { StoredInstall, StoreScope } from '@skillhost/core';
import type { StoredSkillFilter } from '../../shared/skill-filter.js';
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
   * Makes a stored version the current one of an installed skill: a new numbered version, or, when this content was
   * installed before, that version again (`created` false); `quotaReached` when a new personal skill would pass
   * `maxPersonal`; with `keepRolledBack`, `held` (the current version) when an admin rolled the skill back to an
   * earlier version than its newest, which then stays current and nothing is installed.
   */
  install(
    key: InstallKey,
    digest: string,
    installedBy: string | null,
    maxPersonal?: number,
    source?: VersionSource,
    keepRolledBack?: boolean,
  ): Promise<{ version: number; created: boolean } | { quotaReached: number } | { held: number }>;
  /** How many personal skills a user has, and whether one of them has this name. */
  personalCount(ownerId: string, name: string): Promise<{ owned: number; exists: boolean }>;
  history(key: InstallKey): Promise<VersionHistory | null>;
  /** 'rolled-back' (or 'unchanged' when it was current already), 'no-skill' or 'no-version'. */
  rollback(
    key: InstallKey,
    version: number,
  ): Promise<{ outcome: 'rolled-back' | 'unchanged'; digest: string } | { outcome: 'no-skill' | 'no-version' }>;
  /** True when the skill was installed and is gone (the stored versions stay, content-addressed). */
  uninstall(key: InstallKey): Promise<boolean>;
  /** Every installed skill at its current version, with its manifest. */
  currentInstalls(): Promise<CurrentInstall[]>;
  /** A stored version's name and manifest, or null. */
  findVersion(digest: string): Promise<{ name: string; manifest: StoredManifestEntry[] } | null>;
  /** File contents by digest; digests not stored are absent from the answer. */
  blobs(digests: readonly string[]): Promise<Map<string, Buffer>>;
  switches(): Promise<{ name: string; enabled: boolean }[]>;
  setSwitch(name: string, enabled: boolean, updatedBy: string | null): Promise<void>;
  state(): Promise<StoreState>;
  /** Asks every instance to rescan its skill directories; the new reload generation. */
  requestReload(): Promise<string>;
}

export const SKILL_VERSION_STORE = Symbol('SKILL_VERSION_STORE');
