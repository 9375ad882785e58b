import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  Optional,
} from '@nestjs/common';
import {
  AppError,
  DIGEST_PATTERN,
  ErrorCode,
  FolderDigests,
  inspectSkillFolder,
  type ManifestEntry,
  MAX_SKILL_FILES,
  readFolderFiles,
  type SkillRecord,
  type SkillVersion,
  versionOf,
} from '@skillhost/core';
import { APP_CONFIG, type AppConfig, type SkillsConfig } from '../../../config/app-config.js';
import { NOTIFICATION_BUS, type NotificationBus } from '../../shared/notification-bus.js';
import { USER_VIEWS_CHANNEL, userViewsOf } from '../../shared/user-views.js';
import {
  CHAT_SKILL_FILTERS,
  type ChatSkillFilters,
  USER_SKILL_FILTERS,
  type UserSkillFilters,
} from './skill-filter-store.js';
import {
  type CurrentInstall,
  type InstallKey,
  type InstallOutcome,
  type NewVersion,
  SKILL_VERSION_STORE,
  type SkillVersionStore,
  type StoredManifestEntry,
  type StoredSkillFilter,
  type StoreScope,
  type VersionHistory,
  type VersionSource,
  type AccessChange,
  type Publisher,
  type SharedSkillAccess,
} from './skill-version-store.js';
import type { AuditActor } from '../../shared/audit.js';
import { validationFailed } from '../../shared/validation-errors.js';
import { SkillCache } from './skill-cache.js';
import { readSkillUpload, skillRootOf } from './skill-upload.reader.js';
import { UserFilterCache } from './user-filter-cache.js';
import type { InstallGate } from './install-gate.js';

/** Where a skill keeps its trigger evals (docs/trigger-evals.md): handed to the install gate. */
const TRIGGER_EVALS_FILE = 'evals/triggers.json';

/** Where a saved user filter is announced to every instance: `<instance id> <user id>`. */
export const USER_FILTER_CHANNEL = 'skillhost_user_filters';
/** How long a user's filter may be served after a change whose announcement was lost. */
const USER_FILTER_TTL_MS = 5_000;

export interface InstallResult {
  name: string;
  scope: StoreScope;
  /** The owner's name, for a personal skill. */
  owner: string | null;
  version: number;
  digest: string;
  files: ManifestEntry[];
  /** False when this content was installed before: nothing new was stored. */
  created: boolean;
  warnings: string[];
  /**
   * Set when the install was asked to keep a rolled-back skill (a mirror's) and did: the skill stays at this version,
   * an earlier one than its newest, which an admin chose (`version` and `digest` are then the held version's).
   */
  held?: true;
}

/** One skill's files to install (re-rooted at the skill folder), as an upload or an import read them. */
export interface SkillToInstall {
  files: readonly { path: string; bytes: Buffer }[];
  /** The folder it came from, whose name the skill's must match (undefined: the declared name stands in). */
  folder: string | undefined;
  /** Where an import read it: recorded with a new version. */
  source?: VersionSource;
}

/** A skill that passed validation: its name, warnings and version; `label` names it in errors (path or folder). */
interface CheckedSkill extends SkillToInstall {
  name: string;
  warnings: string[];
  record: SkillRecord;
  label: string;
  version: SkillVersion;
}

/**
 * Which store an install goes to: shared, or one user's personal skills (`owner`: their name, for messages); who asks
 * (`actor`, for the audit log) and, for an editor, what they may publish (`publisher`).
 */
export interface InstallTarget {
  scope: StoreScope;
  ownerId: string | null;
  owner: string | null;
  actor?: AuditActor;
  publisher?: Publisher;
}

/** An installed skill at its current version, unpacked and ready to be read like a folder. */
export interface StoreEntry {
  install: CurrentInstall;
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

/**
 * The skill store: versions in PostgreSQL (content-addressed), unpacked into a local cache folder
 * that the registry reads as one more source. Installs are validated with the configured rules
 * before anything is stored. Disk skills are kept too when a chat activates them, so the chat can
 * go on reading the version it activated after the folder changes.
 */
@Injectable()
export class SkillStoreService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(SkillStoreService.name);
  private readonly config: SkillsConfig;
  readonly cache: SkillCache;
  /** Versions known to be stored: saving them again is skipped. */
  private readonly stored = new Set<string>();
  /** Disk skills' versions by folder, recognised again by a stat of their files while unchanged. */
  private readonly folders = new FolderDigests();
  private readonly filterListeners = new Set<(userId: string) => void>();
  private readonly filters = new UserFilterCache(USER_FILTER_TTL_MS);
  private stopFollowing: (() => void)[] = [];
  private gate: InstallGate | undefined;

  constructor(
    @Inject(SKILL_VERSION_STORE) private readonly repository: SkillVersionStore,
    @Inject(USER_SKILL_FILTERS) private readonly users: UserSkillFilters,
    @Inject(CHAT_SKILL_FILTERS) private readonly chats: ChatSkillFilters,
    @Inject(APP_CONFIG) appConfig: AppConfig,
    @Optional() @Inject(NOTIFICATION_BUS) private readonly notifications?: NotificationBus,
  ) {
    this.config = appConfig.app.skills;
    this.cache = new SkillCache(this.config.storeDirectory);
  }

  /** Users' filters are remembered only with a bus that tells of every instance's changes. */
  onApplicationBootstrap(): void {
    const bus = this.notifications;
    if (!this.config.enabled || bus === undefined) return;
    this.stopFollowing = [
      bus.listen(USER_FILTER_CHANNEL, (payload) => this.filterSavedElsewhere(bus.instanceId, payload)),
      // Groups changed (any instance, this one too): the filter is unchanged, but the listeners look again.
      bus.listen(USER_VIEWS_CHANNEL, (payload) => {
        for (const userId of userViewsOf(payload)) this.filterChanged(userId);
      }),
      bus.onReconnect(() => this.filters.clear()),
    ];
    bus.ready().then(
      () => this.filters.enable(),
      () => undefined,
    );
  }

  onApplicationShutdown(): void {
    for (const stop of this.stopFollowing) stop();
  }

  /** What every install asks before storing anything (the trigger evals, set by TriggerEvalService). */
  useInstallGate(gate: InstallGate): void {
    this.gate = gate;
  }

  get limits() {
    return { maxBytes: this.config.maxInstallBytes, maxFiles: MAX_SKILL_FILES };
  }

  /**
   * Validates one skill's files (re-rooted at the skill folder; `folder`: the archive's top folder,
   * whose name the skill's must match) and makes them the skill's current version; `source` is
   * recorded with a new version (where an import read it).
   */
  async install(
    files: readonly { path: string; bytes: Buffer }[],
    folder: string | undefined,
    target: InstallTarget,
    installedBy: string | null,
    source?: VersionSource,
    keepRolledBack = false,
  ): Promise<InstallResult> {
    const [result] = await this.installMany([{ files, folder, source }], target, installedBy, keepRolledBack);
    return result;
  }

  /**
   * Installs several skills all or nothing (an import's): each is validated, their names must differ, and a personal
   * import's new names must fit the quota together, before anything is stored; then every version is stored and made
   * current in one transaction, which the other instances hear of once. An error names the skill it is about (with
   * `details.skill` when there are several), and nothing of the lot is installed. Results in the order given.
   */
  async installMany(
    skills: readonly SkillToInstall[],
    target: InstallTarget,
    installedBy: string | null,
    keepRolledBack = false,
  ): Promise<InstallResult[]> {
    const checked = skills.map((skill, index) => this.check(skill, index, skills.length));
    assertNamesDiffer(checked);
    // Checked before anything is stored; the repository checks again under a lock (two imports at once).
    await this.checkQuota(checked, target);
    const gateWarnings = await this.gate?.check(
      checked.map((skill) => ({
        key: { scope: target.scope, ownerId: target.ownerId, name: skill.name },
        record: skill.record,
        evalsFile: skill.files.find((file) => file.path === TRIGGER_EVALS_FILE)?.bytes,
        digest: skill.version.digest,
      })),
    );
    const versions = checked.map((skill) => newVersion(skill.name, skill.version, skill.files));
    const outcome = await this.repository.installMany(
      checked.map((skill, index) => ({
        key: { scope: target.scope, ownerId: target.ownerId, name: skill.name },
        version: versions[index],
        ...(skill.source === undefined ? {} : { source: skill.source }),
      })),
      {
        installedBy,
        maxPersonal: this.config.maxPersonalSkills,
        keepRolledBack,
        ...(target.actor === undefined ? {} : { actor: target.actor }),
        ...(target.publisher === undefined ? {} : { publisher: target.publisher }),
      },
    );
    if ('quotaReached' in outcome)
      throw this.quotaExceeded(target.owner, outcome.quotaReached.owned, outcome.quotaReached.adding);
    if ('notOwned' in outcome) throw notOwned(outcome.notOwned, 'publish');
    const results: InstallResult[] = [];
    for (const [index, installed] of outcome.installed.entries()) {
      this.stored.add(versions[index].digest);
      const result = await this.resultOf(checked[index], versions[index].blobs, target, installed);
      result.warnings.push(...(gateWarnings?.get(result.name) ?? []));
      results.push(result);
    }
    await this.gate?.installed?.(
      results
        .filter((result) => result.held !== true)
        .map((result) => ({
          key: { scope: target.scope, ownerId: target.ownerId, name: result.name },
          digest: result.digest,
        })),
    );
    return results;
  }

  /** One skill of `count` validated; with several, a refusal names the skill (by its path or folder). */
  private check(skill: SkillToInstall, index: number, count: number): CheckedSkill {
    const label = skill.source?.path ?? skill.folder ?? `number ${index + 1}`;
    try {
      const { record, warnings } = this.validate(skill.files, skill.folder);
      return { ...skill, name: record.name, record, warnings, label, version: versionOf(skill.files) };
    } catch (error) {
      if (count === 1 || !AppError.isInstance(error)) throw error;
      throw new AppError(
        error.code,
        `Skill '${label}' (${index + 1} of ${count}) was refused, so none of the ${count} was installed: ` +
          error.message,
        { ...error.details, skill: label },
        error.adminDetails,
      );
    }
  }

  /** SKILL_QUOTA_EXCEEDED when the personal skills the install adds, counted together, do not fit the owner's quota. */
  private async checkQuota(checked: readonly CheckedSkill[], target: InstallTarget): Promise<void> {
    if (target.ownerId === null) return;
    const names = checked.map((skill) => skill.name);
    const { owned, existing } = await this.repository.personalCount(target.ownerId, names);
    const adding = names.filter((name) => !existing.includes(name));
    if (adding.length > 0 && owned + adding.length > this.config.maxPersonalSkills)
      throw this.quotaExceeded(target.owner, owned, adding);
  }

  /**
   * What became of one installed skill: unpacked into the cache (from the files in hand, `blobs`) and logged, or held
   * at its rolled-back version.
   */
  private async resultOf(
    skill: CheckedSkill,
    blobs: ReadonlyMap<string, Buffer>,
    target: InstallTarget,
    installed: InstallOutcome,
  ): Promise<InstallResult> {
    const key: InstallKey = { scope: target.scope, ownerId: target.ownerId, name: skill.name };
    if ('held' in installed) return this.heldResult(key, target, installed.held, skill.warnings);
    const { version, name } = skill;
    await this.cache.materialise(version.digest, name, version.files, async () => blobs);
    this.logger.log(
      `${installed.created ? 'Installed' : 'Re-installed'} ${target.scope} skill ` +
        `'${name}'${target.owner === null ? '' : ` of ${target.owner}`} version ${installed.version} ` +
        `(${version.digest})`,
    );
    return {
      name,
      scope: target.scope,
      owner: target.owner,
      version: installed.version,
      digest: version.digest,
      files: [...version.files],
      created: installed.created,
      warnings: skill.warnings,
    };
  }

  /** A rolled-back skill kept at the version an admin chose: that version, as its history has it. */
  private async heldResult(
    key: InstallKey,
    target: InstallTarget,
    version: number,
    warnings: string[],
  ): Promise<InstallResult> {
    const history = await this.repository.history(key);
    const digest = history?.versions.find((entry) => entry.version === version)?.digest ?? '';
    const found = digest === '' ? null : await this.repository.findVersion(digest);
    this.logger.log(`Kept ${target.scope} skill '${key.name}' at version ${version}, to which it was rolled back`);
    return {
      name: key.name,
      scope: target.scope,
      owner: target.owner,
      version,
      digest,
      files: found?.manifest ?? [],
      created: false,
      warnings: [
        ...warnings,
        `'${key.name}' was rolled back to version ${version}: it stays there, and the new content was not installed.`,
      ],
      held: true,
    };
  }

  /** `adding`: the new names that do not fit together; the first that does not fit is the one named. */
  private quotaExceeded(owner: string | null, owned: number, adding: readonly string[]): AppError {
    const limit = this.config.maxPersonalSkills;
    const first = adding[Math.min(adding.length - 1, Math.max(0, limit - owned))];
    const who = owner ?? 'This user';
    if (adding.length === 1)
      return new AppError(
        ErrorCode.SKILL_QUOTA_EXCEEDED,
        `${who} has ${owned} personal skill(s), as many as [app.skills] max_personal_skills allows; uninstall one ` +
          `(DELETE /v1/skills/:name) to install '${first}'.`,
        { name: first, limit },
      );
    return new AppError(
      ErrorCode.SKILL_QUOTA_EXCEEDED,
      `${who} has ${owned} personal skill(s) and the import adds ${adding.length} new ones (${adding.join(', ')}), ` +
        `more than the ${limit} that [app.skills] max_personal_skills allows: '${first}' is the first that does not ` +
        `fit, so none was installed. Uninstall ${owned + adding.length - limit} (DELETE /v1/skills/:name) or import ` +
        `fewer.`,
      { name: first, names: [...adding], limit },
    );
  }

  /** An upload (zip, tar.gz, tar or multipart body) read with every check, then installed as `install` does. */
  async installUpload(
    body: NodeJS.ReadableStream,
    contentType: string,
    target: InstallTarget,
    installedBy: string | null,
  ): Promise<InstallResult> {
    const root = skillRootOf(await readSkillUpload(body, contentType, this.limits));
    return this.install(root.files, root.folder, target, installedBy);
  }

  history(key: InstallKey): Promise<VersionHistory | null> {
    return this.repository.history(key);
  }

  /**
   * The versions of the skill a user means by a name: with `scope`, that one; without, the user's
   * personal skill of that name when there is one, else the shared one. SKILL_NOT_FOUND otherwise.
   */
  async historyFor(name: string, userId: string, scope?: StoreScope): Promise<VersionHistory> {
    const personal: InstallKey = { scope: 'personal', ownerId: userId, name };
    const shared: InstallKey = { scope: 'shared', ownerId: null, name };
    for (const key of scope === 'personal' ? [personal] : scope === 'shared' ? [shared] : [personal, shared]) {
      const history = await this.repository.history(key);
      if (history !== null) return history;
    }
    throw noHistory(name, scope);
  }

  async rollback(
    key: InstallKey,
    version: number,
    options: { actor?: AuditActor; publisher?: Publisher } = {},
  ): Promise<{ changed: boolean; digest: string }> {
    const result = await this.repository.rollback(key, version, options);
    switch (result.outcome) {
      case 'no-skill':
        throw notInstalled(key);
      case 'not-owned':
        throw notOwned(key.name, 'roll back');
      case 'no-version': {
        const history = await this.repository.history(key);
        const versions = history?.versions.map((entry) => entry.version) ?? [];
        throw new AppError(
          ErrorCode.SKILL_VERSION_NOT_FOUND,
          `Skill '${key.name}' has no version ${version}. Its versions: ${versions.join(', ')}.`,
          { name: key.name, version, versions },
        );
      }
      default:
        this.logger.log(`Rolled ${key.scope} skill '${key.name}' back to version ${version}`);
        return { changed: result.outcome === 'rolled-back', digest: result.digest };
    }
  }

  async uninstall(key: InstallKey, by: AuditActor): Promise<void> {
    if (!(await this.repository.uninstall(key, by))) throw notInstalled(key);
    this.logger.log(`Uninstalled ${key.scope} skill '${key.name}'`);
  }

  /** The store's generation (bumped by every change) and reload generation (bumped by every reload asked for). */
  generations(): Promise<{ generation: string; reloadGeneration: string }> {
    return this.repository.state();
  }

  /** Asks every instance (this one too) to rescan its skill directories; the new reload generation. */
  requestReload(): Promise<string> {
    return this.repository.requestReload();
  }

  /** Persists a switch; a skill the configuration switches off cannot be switched on (SKILL_SWITCH_LOCKED). */
  setSwitch(name: string, enabled: boolean, by: AuditActor): Promise<void> {
    if (enabled && this.config.disabled.includes(name)) {
      throw new AppError(
        ErrorCode.SKILL_SWITCH_LOCKED,
        `Skill '${name}' is switched off in the configuration ([app.skills] disabled); remove it there to ` +
          `switch it on.`,
        { name },
      );
    }
    return this.repository.setSwitch(name, enabled, by);
  }

  /**
   * The ids of the groups the user is in, read on every view (one indexed query), so a membership change made on any
   * instance holds on the next request everywhere.
   */
  userGroups(userId: string): Promise<readonly string[]> {
    return this.users.groupIds(userId);
  }

  /** A shared skill's audience and owners; SKILL_NOT_FOUND when no shared skill has the name. */
  async access(name: string): Promise<SharedSkillAccess> {
    const access = await this.repository.access(name);
    if (access === null) throw notInstalled({ scope: 'shared', ownerId: null, name });
    return access;
  }

  /**
   * Changes who sees a shared skill (`audience` 'team', or 'groups' with at least one group) or who may publish it
   * besides admins (an owning user, an owning group). GROUP_NOT_FOUND or USER_NOT_FOUND for an id that names nothing.
   */
  async setAccess(name: string, change: AccessChange, actor: AuditActor): Promise<SharedSkillAccess> {
    if (change.audience === 'groups' && (change.groups === undefined || change.groups.length === 0))
      throw validationFailed([
        "groups: audience 'groups' needs at least one group id (GET /v1/admin/groups); use audience 'team' to " +
          'share it with everyone',
      ]);
    if (change.audience !== 'groups' && change.groups !== undefined && change.groups.length > 0)
      throw validationFailed(["groups: only audience 'groups' takes groups"]);
    const outcome = await this.repository.setAccess(name, change, actor);
    if (outcome === null) throw notInstalled({ scope: 'shared', ownerId: null, name });
    if ('unknownGroups' in outcome)
      throw new AppError(
        ErrorCode.GROUP_NOT_FOUND,
        `No group has the id(s) ${outcome.unknownGroups.join(', ')} (GET /v1/admin/groups lists them); nothing ` +
          `was changed.`,
        { ids: outcome.unknownGroups },
      );
    if ('unknownUser' in outcome)
      throw new AppError(ErrorCode.USER_NOT_FOUND, `User '${outcome.unknownUser}' not found; nothing was changed.`, {
        id: outcome.unknownUser,
      });
    this.logger.log(`Shared skill '${name}' is now for ${describeAudience(outcome.access)}`);
    return outcome.access;
  }

  userFilter(userId: string): Promise<StoredSkillFilter | null> {
    return this.filters.get(userId, () => this.users.skillFilter(userId));
  }

  /** A filter with neither list is stored as none. */
  async setUserFilter(userId: string, filter: StoredSkillFilter): Promise<StoredSkillFilter | null> {
    const stored = normalizeFilter(filter);
    await this.users.setSkillFilter(userId, stored);
    this.filterChanged(userId);
    // Unannounced, the other instances serve the old filter until it expires there (USER_FILTER_TTL_MS).
    await this.notifications
      ?.notify(USER_FILTER_CHANNEL, `${this.notifications.instanceId} ${userId}`)
      .catch((error: Error) => this.logger.warn(`A skill filter change was not announced: ${error.message}`));
    return stored;
  }

  /** Another instance saved a user's filter: it is read again, and this instance's listeners hear of it. */
  private filterSavedElsewhere(instanceId: string, payload: string): void {
    const [from, userId] = payload.split(' ');
    if (from === instanceId || userId === undefined) return;
    this.filterChanged(userId);
  }

  /** A user's filter changed (here or elsewhere): read again on the next ask, and the listeners told. */
  private filterChanged(userId: string): void {
    this.filters.forget(userId);
    for (const listener of this.filterListeners) listener(userId);
  }

  /**
   * Calls `listener` with the user's id after a user's filter is saved, or their groups change, on this instance or
   * (with a notification bus) another (their catalogue changed, not the snapshot); returns how to stop.
   */
  onUserFilterChange(listener: (userId: string) => void): () => void {
    this.filterListeners.add(listener);
    return () => this.filterListeners.delete(listener);
  }

  /** False when the owner has no such chat. */
  async setChatFilter(
    chatId: string,
    ownerId: string,
    filter: StoredSkillFilter,
  ): Promise<{ found: boolean; filter: StoredSkillFilter | null }> {
    const stored = normalizeFilter(filter);
    return { found: await this.chats.setSkillFilter(chatId, ownerId, stored), filter: stored };
  }

  /** Every current install unpacked (the missing ones read from the database), and the switches. */
  async contents(): Promise<StoreContents> {
    const [installs, switches] = await Promise.all([this.repository.currentInstalls(), this.repository.switches()]);
    const entries: StoreEntry[] = [];
    for (const install of installs) {
      try {
        const folder = await this.cache.materialise(install.digest, install.name, install.manifest, (digests) =>
          this.repository.blobs(digests),
        );
        entries.push({ install, folder });
      } catch (error) {
        if (AppError.isInstance(error)) throw error;
        this.logger.error(
          `Installed skill '${install.name}' (${install.digest}) cannot be unpacked into ` +
            `${this.cache.directory}: ${(error as Error).message}`,
        );
      }
    }
    return { entries, switches: new Map(switches.map((entry) => [entry.name, entry.enabled])) };
  }

  /**
   * The version a chat activates, kept in the store so the chat can read it after the skill
   * changes: a store skill's is stored already; a disk skill's files are read and stored (content
   * stored before is not written again). Programmatic skills have none.
   */
  keep(skill: SkillRecord): Promise<KeptVersion> | undefined {
    if (skill.programmatic !== undefined) return undefined;
    if (skill.store !== undefined && skill.digest !== undefined) return Promise.resolve({ digest: skill.digest });
    return this.keepFolder(skill);
  }

  /**
   * The digest of what a skill's folder holds now (a stat per file while it is unchanged), as keep() would record it.
   */
  async keptDigest(skill: SkillRecord): Promise<string | undefined> {
    if (skill.store !== undefined || skill.programmatic !== undefined) return skill.digest;
    const version = this.folders.versionOf(skill.path, this.limits);
    return 'digest' in version ? version.digest : undefined;
  }

  /**
   * A disk skill's version as its folder holds it now (edited since the scan or not), stored unless
   * it was before: with the files read to find the version when they were, else read once more.
   */
  private async keepFolder(skill: SkillRecord): Promise<KeptVersion> {
    const { version, files } = this.folders.read(skill.path, this.limits);
    if ('problem' in version)
      return {
        warning:
          `This version of '${skill.name}' is not pinned for the chat ` +
          `(${version.problem}; [app.skills] max_install_bytes): after a change on disk the chat reads the new files.`,
      };
    if (this.stored.has(version.digest)) return { digest: version.digest };
    // Recognised by its files' stats alone (not read this time): read now, to store what is there.
    if (files === undefined) {
      const read = readFolderFiles(skill.path, this.limits);
      if (read.kind !== 'files')
        return { warning: `This version of '${skill.name}' is not pinned for the chat (${read.reason}).` };
      const stored = versionOf(read.files);
      await this.save(skill.name, stored, read.files);
      return { digest: stored.digest };
    }
    await this.save(skill.name, version, files);
    return { digest: version.digest };
  }

  /**
   * A stored version's name and manifest (current or not; versions are content-addressed, so the answer for a digest
   * never changes), or null when the store has none by that digest.
   */
  storedVersion(digest: string): Promise<{ name: string; manifest: StoredManifestEntry[] } | null> {
    return DIGEST_PATTERN.test(digest) ? this.repository.findVersion(digest) : Promise.resolve(null);
  }

  /** One stored file's bytes by the digest of its content, or undefined when the store has none. */
  async storedFile(digest: string): Promise<Buffer | undefined> {
    return (await this.repository.blobs([digest])).get(digest);
  }

  /** The unpacked folder of a stored version of a skill, or undefined when the store has no such version. */
  async versionFolder(digest: string, name: string): Promise<string | undefined> {
    if (!DIGEST_PATTERN.test(digest)) return undefined;
    if (this.cache.has(digest, name)) return this.cache.folderOf(digest, name);
    // The version's files are what count; its name is the folder's (one digest may serve two names in lenient mode).
    const version = await this.repository.findVersion(digest);
    if (version === null) return undefined;
    return this.cache.materialise(digest, name, version.manifest, (digests) => this.repository.blobs(digests));
  }

  private async save(
    name: string,
    version: SkillVersion,
    files: readonly { path: string; bytes: Buffer }[],
  ): Promise<void> {
    if (this.stored.has(version.digest)) return;
    await this.repository.saveVersion(newVersion(name, version, files));
    this.stored.add(version.digest);
  }

  /** The skill's name and warnings; VALIDATION_FAILED with the validator's messages when the rules refuse it. */
  private validate(
    files: readonly { path: string; bytes: Buffer }[],
    folder: string | undefined,
  ): { record: SkillRecord; warnings: string[] } {
    const scratch = mkdtempSync(join(tmpdir(), 'skillhost-install-'));
    try {
      const written = join(scratch, 'skill');
      for (const file of files) {
        const path = join(written, file.path);
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, file.bytes);
      }
      // Without a top folder there is no folder name to match: the skill's own name stands in.
      const declared = folder ?? declaredName(written);
      const inspection = inspectSkillFolder(written, 'upload', this.config.validation, declared ?? 'skill');
      if (inspection === undefined)
        throw new AppError(ErrorCode.INVALID_ARCHIVE, 'The upload has no SKILL.md at the skill folder root.');
      if (inspection.kind === 'invalid') {
        const problems = [...inspection.invalid.errors];
        throw new AppError(
          ErrorCode.VALIDATION_FAILED,
          `The skill is not valid (${this.config.validation} rules): ${problems.join('; ')}`,
          { problems, warnings: inspection.invalid.warnings },
        );
      }
      const name = inspection.skill.name;
      if (name === '.' || name === '..' || /[/\\\0]/.test(name))
        throw new AppError(ErrorCode.VALIDATION_FAILED, `The skill's name '${name}' cannot name a folder.`, {
          problems: [`name '${name}' cannot name a folder`],
        });
      return { record: inspection.skill, warnings: [...inspection.skill.warnings] };
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }
}

/** A version as the repository stores it: its manifest, and each file's content by digest. */
function newVersion(
  name: string,
  version: SkillVersion,
  files: readonly { path: string; bytes: Buffer }[],
): NewVersion {
  const digests = new Map(version.files.map((entry) => [entry.path, entry.digest]));
  const blobs = new Map<string, Buffer>();
  for (const file of files) blobs.set(digests.get(file.path)!, file.bytes);
  return { name, digest: version.digest, manifest: version.files, totalBytes: version.totalBytes, blobs };
}

/** VALIDATION_FAILED when two skills of one install have one name: one would replace the other. */
function assertNamesDiffer(checked: readonly CheckedSkill[]): void {
  const seen = new Map<string, string>();
  for (const skill of checked) {
    const other = seen.get(skill.name);
    if (other !== undefined) {
      const problem = `'${other}' and '${skill.label}' are both named '${skill.name}'`;
      throw new AppError(
        ErrorCode.VALIDATION_FAILED,
        `Two skills of the import have one name (${problem}), so none was installed: rename one, or import them ` +
          `one at a time.`,
        { problems: [problem], skill: skill.label },
      );
    }
    seen.set(skill.name, skill.label);
  }
}

/** The name a SKILL.md declares (lenient reading), to stand for the folder name of an upload without one. */
function declaredName(folder: string): string | undefined {
  const inspection = inspectSkillFolder(folder, 'upload', 'lenient', 'skill');
  if (inspection?.kind === 'valid') return inspection.skill.name;
  return inspection?.invalid.name;
}

/** Entries NFKC-normalised (as names are compared), duplicates dropped; no lists at all is no filter. */
function normalizeFilter(filter: StoredSkillFilter): StoredSkillFilter | null {
  const clean = (list: string[] | undefined) =>
    list === undefined ? undefined : [...new Set(list.map((entry) => entry.trim().normalize('NFKC')))];
  const include = clean(filter.include);
  const exclude = clean(filter.exclude);
  if (include === undefined && exclude === undefined) return null;
  return { ...(include === undefined ? {} : { include }), ...(exclude === undefined ? {} : { exclude }) };
}

/** FORBIDDEN for an editor and a shared skill neither they nor one of their groups owns. */
function notOwned(name: string, what: 'publish' | 'roll back'): AppError {
  return new AppError(
    ErrorCode.FORBIDDEN,
    `Editors ${what} only the shared skills they own or one of their groups owns, and '${name}' is not one of them; ` +
      `nothing was changed. An admin can make you or your group its owner (PUT /v1/admin/skills/${name}/access).`,
    { name },
  );
}

function describeAudience(access: SharedSkillAccess): string {
  return access.audience === 'team' ? 'the whole team' : `the group(s) ${access.groups.map((g) => g.name).join(', ')}`;
}

/** SKILL_NOT_FOUND for a version history asked for by name (in `scope`, when given) that the caller has none of. */
export function noHistory(name: string, scope?: StoreScope): AppError {
  return new AppError(
    ErrorCode.SKILL_NOT_FOUND,
    `Skill '${name}' is not installed in the ` +
      `store${scope === undefined ? '' : ` (${scope})`}; skills from the skills directories have no version history.`,
    { name },
  );
}

export function notInstalled(key: InstallKey): AppError {
  const where = key.scope === 'shared' ? 'as a shared skill' : "as this user's personal skill";
  return new AppError(ErrorCode.SKILL_NOT_FOUND, `Skill '${key.name}' is not installed ${where} in the store.`, {
    name: key.name,
    scope: key.scope,
  });
}
