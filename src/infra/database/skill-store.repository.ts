import {
  type StoreScope,
  type InstallKey,
  type StoredManifestEntry,
  type NewVersion,
  type CurrentInstall,
  type VersionHistory,
  type StoreState,
  SKILL_STORE_CHANNEL,
  type SkillVersionStore,
  type VersionSource,
  type VersionInstall,
  type InstallOptions,
  type InstallOutcome,
  type InstallMany,
  type Publisher,
  type SharedSkillAccess,
  type AccessChange,
  type AccessOutcome,
} from '../../domain/skills/store/skill-version-store.js';
import { type AuditActor, SYSTEM_ACTOR, skillTarget } from '../../domain/shared/audit.js';
import { writeAudit } from './audit-log.js';
import { AppError } from '@skillhost/core';
import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import { runQuery } from './database-errors.js';
import { DATA_SOURCE } from './persistence.tokens.js';

/**
 * The skill store's tables. Every change bumps the store's generation and notifies
 * `skillhost_skills` in the same transaction: PostgreSQL delivers the notification at commit, so
 * an instance never hears of a change it cannot yet read, and one that missed the notification
 * sees the new generation on its next check. Answers `null` (or false) for "no such skill".
 */
@Injectable()
export class SkillStoreRepository implements SkillVersionStore {
  constructor(@Inject(DATA_SOURCE) private readonly dataSource: DataSource) {}

  /** Stores a version's files and manifest; content already stored is not written again. */
  saveVersion(version: NewVersion): Promise<void> {
    return runQuery(() => this.dataSource.transaction((manager) => saveVersions(manager, [version], {})));
  }

  /**
   * Stores the versions and makes each current, in one transaction: all of them or none. Owners are locked first (so
   * concurrent installs count their quota one after the other), then the skills in one order (so two batches that
   * share skills wait for each other instead of deadlocking). A failure other than the database's absence names the
   * skill it happened at.
   */
  async installMany(installs: readonly VersionInstall[], options: InstallOptions): Promise<InstallMany> {
    assertDistinctKeys(installs);
    if (installs.length === 0) return { installed: [] };
    const at: { name?: string } = {};
    try {
      return await runQuery(() =>
        this.dataSource.transaction(async (manager): Promise<InstallMany> => {
          const quota = await overQuota(manager, installs, options.maxPersonal ?? Infinity);
          if (quota !== undefined) return { quotaReached: quota };
          const notOwned =
            options.publisher === undefined ? undefined : await firstNotOwned(manager, installs, options.publisher);
          if (notOwned !== undefined) return { notOwned };
          await saveVersions(
            manager,
            installs.map((install) => install.version),
            at,
          );
          const installed: InstallOutcome[] = new Array(installs.length);
          let changed = false;
          for (const index of lockOrder(installs)) {
            const { key, version, source } = installs[index];
            at.name = key.name;
            const outcome = await this.makeCurrent(manager, key, version.digest, source, options);
            installed[index] = outcome.result;
            changed ||= outcome.changed;
            if (outcome.changed && 'version' in outcome.result)
              await writeAudit(manager, {
                actor: options.actor ?? SYSTEM_ACTOR,
                action: 'skill.install',
                target: skillTarget(key.name, key.ownerId),
                details: {
                  version: outcome.result.version,
                  digest: version.digest,
                  created: outcome.result.created,
                  ...(source === undefined ? {} : { source }),
                },
              });
          }
          at.name = undefined;
          if (changed) await bumpGeneration(manager);
          return { installed };
        }),
      );
    } catch (error) {
      if (AppError.isInstance(error) || at.name === undefined) throw error;
      throw new Error(
        `Installing skill '${at.name}' failed, so none of the ${installs.length} skill(s) was installed: ` +
          `${(error as Error).message}`,
        { cause: error },
      );
    }
  }

  /**
   * Makes a stored version the current one of an installed skill (in the caller's transaction): a new numbered
   * version, or that version again when this content was installed before; `changed` when the current version moved.
   */
  private async makeCurrent(
    manager: EntityManager,
    key: InstallKey,
    digest: string,
    source: VersionSource | undefined,
    options: InstallOptions,
  ): Promise<{ result: InstallOutcome; changed: boolean }> {
    const id = await this.lockOrCreate(manager, key, key.scope === 'shared' ? options.publisher?.userId : undefined);
    const [existing] = await manager.query<{ version: number }[]>(
      'SELECT version FROM installed_skill_versions WHERE installed_id = $1 AND digest = $2',
      [id, digest],
    );
    const [current] = await manager.query<{ current_version: number; newest: number }[]>(
      'SELECT current_version, (SELECT COALESCE(max(version), 0)::int FROM installed_skill_versions WHERE ' +
        'installed_id = $1) AS newest FROM installed_skills WHERE id = $1',
      [id],
    );
    // Under the skill's row lock, so a rollback made meanwhile is seen.
    if (options.keepRolledBack === true && current.current_version < current.newest)
      return { result: { held: current.current_version }, changed: false };
    let version: number;
    let created = false;
    if (existing !== undefined) {
      version = existing.version;
    } else {
      version = current.newest + 1;
      created = true;
      await manager.query(
        'INSERT INTO installed_skill_versions (installed_id, version, digest, installed_by, source) VALUES ($1, ' +
          '$2, $3, $4, $5)',
        [id, version, digest, options.installedBy, source === undefined ? null : JSON.stringify(source)],
      );
    }
    const changed = created || current.current_version !== version;
    if (changed)
      await manager.query('UPDATE installed_skills SET current_version = $2, updated_at = now() WHERE id = $1', [
        id,
        version,
      ]);
    return { result: { version, created }, changed };
  }

  /**
   * The installed skill's id, locked for this transaction; created (at version 0, set by the caller) when new, owned by
   * `owningUserId` when given (an editor's new shared skill).
   */
  private async lockOrCreate(manager: EntityManager, key: InstallKey, owningUserId?: string): Promise<string> {
    const conflict =
      key.scope === 'shared' ? `(name) WHERE scope = 'shared'` : `(owner_id, name) WHERE scope = 'personal'`;
    // An uninstall may commit between the insert (which found the row) and the lock (which then
    // finds none): the insert is tried again, and this time makes the row.
    for (;;) {
      await manager.query(
        `INSERT INTO installed_skills (id, name, scope, owner_id, current_version, owning_user_id) VALUES ($1, $2, ` +
          `$3, $4, 0, $5) ON CONFLICT ${conflict} DO NOTHING`,
        [randomUUID(), key.name, key.scope, key.ownerId, owningUserId ?? null],
      );
      const [row] = await manager.query<{ id: string }[]>(
        `SELECT id FROM installed_skills WHERE ${whereKey(1)} FOR UPDATE`,
        keyParams(key),
      );
      if (row !== undefined) return row.id;
    }
  }

  /** How many personal skills a user has, and which of `names` they have. */
  personalCount(ownerId: string, names: readonly string[]): Promise<{ owned: number; existing: string[] }> {
    return runQuery(async () => {
      const [row] = await this.dataSource.query<{ owned: number; existing: string[] }[]>(PERSONAL_COUNT, [
        ownerId,
        names,
      ]);
      return row;
    });
  }

  history(key: InstallKey): Promise<VersionHistory | null> {
    return runQuery(async () => {
      const rows = await this.dataSource.query<
        {
          current_version: number;
          version: number;
          digest: string;
          installed_at: Date;
          installed_by: string | null;
          file_count: number;
          total_bytes: number;
          source: VersionSource | null;
        }[]
      >(
        `SELECT i.current_version, v.version, v.digest, v.installed_at, u.name AS installed_by, s.file_count, ` +
          `s.total_bytes, v.source
           FROM installed_skills i
           JOIN installed_skill_versions v ON v.installed_id = i.id
           JOIN skill_versions s ON s.digest = v.digest
           LEFT JOIN users u ON u.id = v.installed_by
          WHERE ${whereKey(1, 'i.')}
          ORDER BY v.version`,
        keyParams(key),
      );
      if (rows.length === 0) return null;
      return {
        key,
        current: rows[0].current_version,
        versions: rows.map((row) => ({
          version: row.version,
          digest: row.digest,
          installedAt: row.installed_at,
          installedBy: row.installed_by,
          fileCount: row.file_count,
          totalBytes: row.total_bytes,
          source: row.source,
        })),
      };
    });
  }

  /** 'rolled-back' (or 'unchanged' when it was current already), 'no-skill', 'no-version' or 'not-owned'. */
  rollback(
    key: InstallKey,
    version: number,
    options: { actor?: AuditActor; publisher?: Publisher } = {},
  ): Promise<
    { outcome: 'rolled-back' | 'unchanged'; digest: string } | { outcome: 'no-skill' | 'no-version' | 'not-owned' }
  > {
    return runQuery(() =>
      this.dataSource.transaction(async (manager) => {
        const [skill] = await manager.query<
          { id: string; current_version: number; owning_user_id: string | null; owning_group_id: string | null }[]
        >(
          `SELECT id, current_version, owning_user_id, owning_group_id FROM installed_skills WHERE ${whereKey(1)} ` +
            'FOR UPDATE',
          keyParams(key),
        );
        if (skill === undefined) return { outcome: 'no-skill' as const };
        if (options.publisher !== undefined && !mayPublish(skill, options.publisher))
          return { outcome: 'not-owned' as const };
        const [target] = await manager.query<{ digest: string }[]>(
          'SELECT digest FROM installed_skill_versions WHERE installed_id = $1 AND version = $2',
          [skill.id, version],
        );
        if (target === undefined) return { outcome: 'no-version' as const };
        if (skill.current_version === version) return { outcome: 'unchanged' as const, digest: target.digest };
        await manager.query('UPDATE installed_skills SET current_version = $2, updated_at = now() WHERE id = $1', [
          skill.id,
          version,
        ]);
        await writeAudit(manager, {
          actor: options.actor ?? SYSTEM_ACTOR,
          action: 'skill.rollback',
          target: skillTarget(key.name, key.ownerId),
          details: { from: skill.current_version, to: version, digest: target.digest },
        });
        await bumpGeneration(manager);
        return { outcome: 'rolled-back' as const, digest: target.digest };
      }),
    );
  }

  /**
   * True when the skill was installed and is gone (its history with it; the stored versions stay, content-addressed).
   */
  uninstall(key: InstallKey, actor: AuditActor): Promise<boolean> {
    return runQuery(() =>
      this.dataSource.transaction(async (manager) => {
        const [rows, affected] = await manager.query<[{ history: string[]; version: number }[], number]>(
          `DELETE FROM installed_skills i WHERE ${whereKey(1, 'i.')} RETURNING ARRAY(SELECT digest FROM ` +
            `installed_skill_versions v WHERE v.installed_id = i.id) AS history, i.current_version AS version`,
          keyParams(key),
        );
        if (affected === 0) return false;
        await writeAudit(manager, {
          actor,
          action: 'skill.uninstall',
          target: skillTarget(key.name, key.ownerId),
          details: { version: rows[0].version, versions: rows[0].history.length },
        });
        // Chats that activated a version of it read it no more, whatever takes the name next.
        await manager.query(
          'UPDATE chat_activated_skills SET version_digest = NULL WHERE skill_name = $1 AND version_digest = ' +
            'ANY($2::text[])',
          [key.name, rows[0].history],
        );
        await bumpGeneration(manager);
        return true;
      }),
    );
  }

  /** Every installed skill at its current version, with its manifest. */
  currentInstalls(): Promise<CurrentInstall[]> {
    return runQuery(async () => {
      const rows = await this.dataSource.query<
        {
          name: string;
          scope: StoreScope;
          owner_id: string | null;
          owner_name: string | null;
          version: number;
          digest: string;
          manifest: StoredManifestEntry[];
          history: string[];
          groups: string[] | null;
        }[]
      >(
        `SELECT i.name, i.scope, i.owner_id, u.name AS owner_name, i.current_version AS version, v.digest, ` +
          `s.manifest, CASE WHEN i.audience = 'groups' THEN ARRAY(SELECT g.group_id::text FROM ` +
          `installed_skill_groups g WHERE g.installed_id = i.id ORDER BY g.group_id) END AS groups,
                ARRAY(SELECT h.digest FROM installed_skill_versions h WHERE h.installed_id = i.id ORDER BY ` +
          `h.version) AS history
           FROM installed_skills i
           JOIN installed_skill_versions v ON v.installed_id = i.id AND v.version = i.current_version
           JOIN skill_versions s ON s.digest = v.digest
           LEFT JOIN users u ON u.id = i.owner_id
          ORDER BY i.name, i.scope, u.name`,
      );
      return rows.map((row) => ({
        name: row.name,
        scope: row.scope,
        ownerId: row.owner_id,
        ownerName: row.owner_name,
        version: row.version,
        digest: row.digest,
        manifest: row.manifest,
        history: row.history,
        ...(row.groups === null ? {} : { groups: row.groups }),
      }));
    });
  }

  /** A stored version's name and manifest, or null. */
  findVersion(digest: string): Promise<{ name: string; manifest: StoredManifestEntry[] } | null> {
    return runQuery(async () => {
      const [row] = await this.dataSource.query<{ name: string; manifest: StoredManifestEntry[] }[]>(
        'SELECT name, manifest FROM skill_versions WHERE digest = $1',
        [digest],
      );
      return row ?? null;
    });
  }

  /** File contents by digest; digests not stored are absent from the answer. */
  blobs(digests: readonly string[]): Promise<Map<string, Buffer>> {
    return runQuery(async () => {
      const rows = await this.dataSource.query<{ digest: string; content: Buffer }[]>(
        'SELECT digest, content FROM skill_blobs WHERE digest = ANY($1::text[])',
        [[...new Set(digests)]],
      );
      return new Map(rows.map((row) => [row.digest, row.content]));
    });
  }

  switches(): Promise<{ name: string; enabled: boolean }[]> {
    return runQuery(() =>
      this.dataSource.query<{ name: string; enabled: boolean }[]>(
        'SELECT name, enabled FROM skill_switches ORDER BY name',
      ),
    );
  }

  setSwitch(name: string, enabled: boolean, actor: AuditActor): Promise<void> {
    return runQuery(() =>
      this.dataSource.transaction(async (manager) => {
        await manager.query(
          `INSERT INTO skill_switches (name, enabled, updated_by) VALUES ($1, $2, $3)
           ON CONFLICT ON CONSTRAINT pk_skill_switches DO UPDATE SET enabled = EXCLUDED.enabled, updated_at = ` +
            `now(), updated_by = EXCLUDED.updated_by`,
          [name, enabled, actor.id],
        );
        await writeAudit(manager, { actor, action: 'skill.switch', target: `skill:${name}`, details: { enabled } });
        await bumpGeneration(manager);
      }),
    );
  }

  /** A shared skill's audience and owners, or null when no shared skill has the name. */
  access(name: string): Promise<SharedSkillAccess | null> {
    return runQuery(() => readAccess(this.dataSource.manager, name));
  }

  /**
   * Changes a shared skill's audience or owners under its row lock, writes the audit entry, and bumps the store's
   * generation (every instance rebuilds its catalogue: who sees the skill changed). Ids that name nothing change
   * nothing.
   */
  setAccess(name: string, change: AccessChange, actor: AuditActor): Promise<AccessOutcome> {
    return runQuery(() =>
      this.dataSource.transaction(async (manager) => {
        const before = await readAccess(manager, name, true);
        if (before === null) return null;
        const unknown = await unknownIds(manager, change);
        if (unknown !== undefined) return unknown;
        const [{ id }] = await manager.query<{ id: string }[]>(
          `SELECT id FROM installed_skills WHERE name = $1 AND scope = 'shared'`,
          [name],
        );
        await manager.query(
          `UPDATE installed_skills SET audience = COALESCE($2, audience),
                  owning_user_id = CASE WHEN $3 THEN $4::uuid ELSE owning_user_id END,
                  owning_group_id = CASE WHEN $5 THEN $6::uuid ELSE owning_group_id END,
                  updated_at = now()
            WHERE id = $1`,
          [
            id,
            change.audience ?? null,
            change.owningUserId !== undefined,
            change.owningUserId ?? null,
            change.owningGroupId !== undefined,
            change.owningGroupId ?? null,
          ],
        );
        if (change.audience !== undefined) {
          await manager.query('DELETE FROM installed_skill_groups WHERE installed_id = $1', [id]);
          if (change.audience === 'groups')
            await manager.query(
              'INSERT INTO installed_skill_groups (installed_id, group_id) SELECT $1, unnest($2::uuid[]) ON CONFLICT ' +
                'DO NOTHING',
              [id, [...new Set(change.groups ?? [])]],
            );
        }
        const after = (await readAccess(manager, name))!;
        await writeAudit(manager, {
          actor,
          action: 'skill.audience',
          target: skillTarget(name, null),
          details: { from: accessSummary(before), to: accessSummary(after) },
        });
        await bumpGeneration(manager);
        return { access: after };
      }),
    );
  }

  state(): Promise<StoreState> {
    return runQuery(async () => {
      const [row] = await this.dataSource.query<{ generation: string; reload_generation: string }[]>(
        'SELECT generation::text, reload_generation::text FROM skill_store_state WHERE id = 1',
      );
      return { generation: row.generation, reloadGeneration: row.reload_generation };
    });
  }

  /** Asks every instance to rescan its skill directories; the new reload generation. */
  requestReload(): Promise<string> {
    return runQuery(() =>
      this.dataSource.transaction(async (manager) => {
        // `[rows, affected]`, as TypeORM answers an UPDATE … RETURNING.
        const [[row]] = await manager.query<[{ reload_generation: string }[], number]>(
          'UPDATE skill_store_state SET reload_generation = reload_generation + 1 WHERE id = 1 RETURNING ' +
            'reload_generation::text',
        );
        await manager.query('SELECT pg_notify($1, $2)', [SKILL_STORE_CHANNEL, 'reload']);
        return row.reload_generation;
      }),
    );
  }
}

/** Whether an editor may publish a shared skill: they own it, or one of their groups does. */
function mayPublish(
  skill: { owning_user_id: string | null; owning_group_id: string | null },
  publisher: Publisher,
): boolean {
  return (
    skill.owning_user_id === publisher.userId ||
    (skill.owning_group_id !== null && publisher.groupIds.includes(skill.owning_group_id))
  );
}

/** The first existing shared skill of the install (in lock order) that the publisher may not publish. */
async function firstNotOwned(
  manager: EntityManager,
  installs: readonly VersionInstall[],
  publisher: Publisher,
): Promise<string | undefined> {
  for (const index of lockOrder(installs)) {
    const { key } = installs[index];
    if (key.scope !== 'shared') continue;
    const [skill] = await manager.query<{ owning_user_id: string | null; owning_group_id: string | null }[]>(
      `SELECT owning_user_id, owning_group_id FROM installed_skills WHERE name = $1 AND scope = 'shared' FOR UPDATE`,
      [key.name],
    );
    if (skill !== undefined && !mayPublish(skill, publisher)) return key.name;
  }
  return undefined;
}

/** A shared skill's access as stored (its row locked with `lock`), or null. */
async function readAccess(manager: EntityManager, name: string, lock = false): Promise<SharedSkillAccess | null> {
  const [row] = await manager.query<
    {
      id: string;
      audience: 'team' | 'groups';
      user_id: string | null;
      user_name: string | null;
      group_id: string | null;
      group_name: string | null;
    }[]
  >(
    `SELECT i.id, i.audience, i.owning_user_id AS user_id, u.name AS user_name, i.owning_group_id AS group_id,
            g.name AS group_name
       FROM installed_skills i
       LEFT JOIN users u ON u.id = i.owning_user_id
       LEFT JOIN groups g ON g.id = i.owning_group_id
      WHERE i.name = $1 AND i.scope = 'shared'${lock ? ' FOR UPDATE OF i' : ''}`,
    [name],
  );
  if (row === undefined) return null;
  const groups = await manager.query<{ id: string; name: string }[]>(
    `SELECT g.id, g.name FROM installed_skill_groups s JOIN groups g ON g.id = s.group_id WHERE s.installed_id = $1
      ORDER BY g.name, g.id`,
    [row.id],
  );
  return {
    name,
    audience: row.audience,
    groups: row.audience === 'groups' ? groups : [],
    owningUser: row.user_id === null ? null : { id: row.user_id, name: row.user_name ?? '' },
    owningGroup: row.group_id === null ? null : { id: row.group_id, name: row.group_name ?? '' },
  };
}

/** The group or user ids of a change that name nothing (undefined when every one names something). */
async function unknownIds(
  manager: EntityManager,
  change: AccessChange,
): Promise<{ unknownGroups: string[] } | { unknownUser: string } | undefined> {
  const wanted = [
    ...new Set([...(change.groups ?? []), ...(typeof change.owningGroupId === 'string' ? [change.owningGroupId] : [])]),
  ];
  if (wanted.length > 0) {
    const found = await manager.query<{ id: string }[]>('SELECT id FROM groups WHERE id = ANY($1::uuid[]) FOR SHARE', [
      wanted,
    ]);
    const known = new Set(found.map((row) => row.id));
    const missing = wanted.filter((id) => !known.has(id));
    if (missing.length > 0) return { unknownGroups: missing };
  }
  if (typeof change.owningUserId === 'string') {
    const [user] = await manager.query('SELECT id FROM users WHERE id = $1 FOR SHARE', [change.owningUserId]);
    if (user === undefined) return { unknownUser: change.owningUserId };
  }
  return undefined;
}

/** An access as the audit log records it: names beside ids, read back by people. */
function accessSummary(access: SharedSkillAccess): Record<string, unknown> {
  return {
    audience: access.audience,
    groups: access.groups,
    owningUser: access.owningUser,
    owningGroup: access.owningGroup,
  };
}

/** How many personal skills an owner has, and which of the names ($2) among them. */
const PERSONAL_COUNT =
  `SELECT count(*)::int AS owned, COALESCE(array_agg(name) FILTER (WHERE name = ANY($2::text[])), '{}') AS existing ` +
  `FROM installed_skills WHERE scope = 'personal' AND owner_id = $1`;

/**
 * The first owner (in lock order) whose new personal skills would pass `maxPersonal` together: their count and those
 * names. Every owner's row is locked first, so installs of one owner at once are counted one after the other.
 */
async function overQuota(
  manager: EntityManager,
  installs: readonly VersionInstall[],
  maxPersonal: number,
): Promise<{ owned: number; adding: string[] } | undefined> {
  const byOwner = new Map<string, string[]>();
  for (const { key } of installs)
    if (key.scope === 'personal' && key.ownerId !== null)
      byOwner.set(key.ownerId, [...(byOwner.get(key.ownerId) ?? []), key.name]);
  for (const ownerId of [...byOwner.keys()].sort()) {
    await manager.query('SELECT id FROM users WHERE id = $1 FOR UPDATE', [ownerId]);
    const names = byOwner.get(ownerId)!;
    const [{ owned, existing }] = await manager.query<{ owned: number; existing: string[] }[]>(PERSONAL_COUNT, [
      ownerId,
      names,
    ]);
    const adding = names.filter((name) => !existing.includes(name));
    if (adding.length > 0 && owned + adding.length > maxPersonal) return { owned, adding };
  }
  return undefined;
}

/**
 * Stores the versions not stored yet: their blobs, then the versions, each in digest order, so that two transactions
 * writing the same content wait for each other instead of deadlocking. `at.name` is the skill being written (errors
 * name it); content stored meanwhile by another transaction is left as it is.
 */
async function saveVersions(
  manager: EntityManager,
  versions: readonly NewVersion[],
  at: { name?: string },
): Promise<void> {
  const known = new Set(
    (
      await manager.query<{ digest: string }[]>('SELECT digest FROM skill_versions WHERE digest = ANY($1::text[])', [
        versions.map((version) => version.digest),
      ])
    ).map((row) => row.digest),
  );
  const fresh = new Map(versions.filter((version) => !known.has(version.digest)).map((v) => [v.digest, v]));
  const blobs = new Map<string, { bytes: Buffer; name: string }>();
  for (const version of fresh.values())
    for (const [digest, bytes] of version.blobs)
      if (!blobs.has(digest)) blobs.set(digest, { bytes, name: version.name });
  const stored = new Set(
    (
      await manager.query<{ digest: string }[]>('SELECT digest FROM skill_blobs WHERE digest = ANY($1::text[])', [
        [...blobs.keys()],
      ])
    ).map((row) => row.digest),
  );
  for (const [digest, { bytes, name }] of [...blobs].sort(byDigest)) {
    if (stored.has(digest)) continue;
    at.name = name;
    await manager.query(
      'INSERT INTO skill_blobs (digest, size, content) VALUES ($1, $2, $3) ON CONFLICT ON CONSTRAINT ' +
        'pk_skill_blobs DO NOTHING',
      [digest, bytes.length, bytes],
    );
  }
  for (const [digest, version] of [...fresh].sort(byDigest)) {
    at.name = version.name;
    await manager.query(
      `INSERT INTO skill_versions (digest, name, manifest, total_bytes, file_count) VALUES ($1, $2, ` +
        `$3::jsonb, $4, $5)
       ON CONFLICT ON CONSTRAINT pk_skill_versions DO NOTHING`,
      [digest, version.name, JSON.stringify(version.manifest), version.totalBytes, version.manifest.length],
    );
  }
}

function byDigest([a]: [string, unknown], [b]: [string, unknown]): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The installs' indexes in the order their skills are locked: by scope, owner and name. */
function lockOrder(installs: readonly VersionInstall[]): number[] {
  return installs
    .map(({ key }, index) => ({ index, sort: keyId(key) }))
    .sort((a, b) => (a.sort < b.sort ? -1 : a.sort > b.sort ? 1 : 0))
    .map((entry) => entry.index);
}

/** One string per installed skill, ordered by scope, owner and name. */
function keyId(key: InstallKey): string {
  return `${key.scope}\0${key.ownerId ?? ''}\0${key.name}`;
}

/** Two installs of one skill in one transaction would make two versions of it at once: a caller's mistake. */
function assertDistinctKeys(installs: readonly VersionInstall[]): void {
  const seen = new Set<string>();
  for (const { key } of installs) {
    const id = keyId(key);
    if (seen.has(id)) throw new Error(`installMany was given the ${key.scope} skill '${key.name}' twice.`);
    seen.add(id);
  }
}

/** TypeORM answers an UPDATE … RETURNING with `[rows, affected]`, not the rows alone. */
async function bumpGeneration(manager: EntityManager): Promise<void> {
  const [[row]] = await manager.query<[{ generation: string }[], number]>(
    'UPDATE skill_store_state SET generation = generation + 1 WHERE id = 1 RETURNING generation::text',
  );
  await manager.query('SELECT pg_notify($1, $2)', [SKILL_STORE_CHANNEL, `store ${row.generation}`]);
}

/** `name = $n AND scope = $n+1 AND owner_id IS NOT DISTINCT FROM $n+2` (one form for both scopes). */
function whereKey(first: number, prefix = ''): string {
  return (
    `${prefix}name = $${first} AND ${prefix}scope = $${first + 1} AND ${prefix}owner_id IS NOT DISTINCT FROM ` +
    `$${first + 2}::uuid`
  );
}

function keyParams(key: InstallKey): unknown[] {
  return [key.name, key.scope, key.ownerId];
}
