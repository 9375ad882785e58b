import { Injectable } from '@nestjs/common';
import { actorOf, type Principal } from '../../users/principal.js';
import { AppError, ErrorCode, findSkill, storeSource } from '@skillhost/core';
import type { AccessChange, Publisher, StoredSkillFilter, StoreScope } from './skill-version-store.js';
import { skillSourceLabel } from '../skill-source-label.js';
import { SkillRegistryService } from '@skillhost/nest';
import { type ImportResult, SkillImportService } from './skill-import.service.js';
import { type InstallResult, type InstallTarget, noHistory, SkillStoreService } from './skill-store.service.js';

/** What a filter answer holds: the filter as stored, and the skills it offers. */
export interface SkillFilterResult {
  include: string[] | null;
  exclude: string[] | null;
  offered: string[];
}

/**
 * The store's operations as the API offers them (REST and GraphQL alike): each change is made in
 * the store and read back into this instance's catalogue before it answers, so the caller's next
 * request sees it (other instances hear of it through PostgreSQL within moments).
 */
@Injectable()
export class SkillLifecycleService {
  constructor(
    private readonly store: SkillStoreService,
    private readonly registry: SkillRegistryService,
    private readonly importer: SkillImportService,
  ) {}

  /**
   * Installs an upload for the caller: shared (admins, and editors for the skills they or their groups own and new
   * ones) or the caller's personal skill. A clash it loses is a warning.
   */
  async install(
    body: NodeJS.ReadableStream,
    contentType: string,
    scope: StoreScope,
    principal: Principal,
  ): Promise<InstallResult> {
    const target = await this.targetOf(scope, principal);
    const result = await this.store.installUpload(body, contentType, target, principal.userId);
    await this.refreshAndWarn(target, [result]);
    return result;
  }

  /**
   * Imports every skill a source names (git repository, another server's index) for the caller, as `install` does;
   * `git+file://` sources for admins only, as they read this server's disk, and a member's import reaches public
   * hosts and `[app.skills.import] member_hosts` only.
   */
  async importFrom(
    sourceText: string,
    scope: StoreScope,
    principal: Principal,
    { submodules = false }: { submodules?: boolean } = {},
  ): Promise<ImportResult> {
    const target = await this.targetOf(scope, principal);
    const admin = principal.role === 'admin';
    const result = await this.importer.importFrom(sourceText, target, principal.userId, {
      localFiles: admin,
      member: !admin,
      submodules,
    });
    await this.refreshAndWarn(target, result.skills);
    return result;
  }

  /** Reads the store back into the catalogue; a new version that a clash loses gets a warning. */
  private async refreshAndWarn(target: InstallTarget, results: InstallResult[]): Promise<void> {
    const snapshot = await this.registry.refreshStore();
    const source = storeSource(target.scope, target.owner);
    for (const result of results)
      for (const collision of snapshot.collisions) {
        if (collision.name === result.name && collision.loser.source === source) {
          result.warnings.push(
            `A skill named '${result.name}' from ` +
              `${skillSourceLabel(collision.winner.source, snapshot.directories)}` +
              ` wins over this one: it is installed but not offered until that one is gone (see the admin view's ` +
              `collisions).`,
          );
        }
      }
  }

  /**
   * The versions of the skill the caller means by a name. A shared skill shared with groups the caller is not in is
   * SKILL_NOT_FOUND, as in their catalogue (admins read every one: the admin views show every shared skill).
   */
  async versions(name: string, principal: Principal, scope?: StoreScope) {
    const history = await this.store.historyFor(skillName(name), principal.userId, scope);
    if (history.key.scope === 'shared' && principal.role !== 'admin')
      await this.assertSharedWith(history.key.name, principal, scope);
    return { name: history.key.name, scope: history.key.scope, current: history.current, versions: history.versions };
  }

  /** Admins roll back any shared skill; editors the ones they or their groups own (FORBIDDEN for others). */
  async rollback(name: string, version: number, principal: Principal) {
    const key = { scope: 'shared' as const, ownerId: null, name: skillName(name) };
    const result = await this.store.rollback(key, version, {
      actor: actorOf(principal),
      ...(await this.publisherOf(principal)),
    });
    await this.registry.refreshStore();
    return { name: key.name, version, digest: result.digest, changed: result.changed };
  }

  /** A shared skill (admins; the route checks), or the caller's own personal one. */
  async uninstall(name: string, scope: StoreScope, principal: Principal): Promise<void> {
    await this.store.uninstall(
      { scope, ownerId: scope === 'shared' ? null : principal.userId, name: skillName(name) },
      actorOf(principal),
    );
    await this.registry.refreshStore();
  }

  /** Switches a skill any user or folder has by that name; a name no skill has is SKILL_NOT_FOUND. */
  async setEnabled(name: string, enabled: boolean, principal: Principal): Promise<{ name: string; enabled: boolean }> {
    const snapshot = this.registry.snapshot;
    const known =
      findSkill(snapshot.skills, name) ??
      findSkill(snapshot.disabled, name) ??
      findSkill(
        new Map([...snapshot.groupOnly.skills, ...snapshot.groupOnly.disabled].map((s) => [s.name, s])),
        name,
      ) ??
      [...snapshot.personal.values()]
        .map((own) => findSkill(own.skills, name) ?? findSkill(own.disabled, name))
        .find((skill) => skill !== undefined);
    const canonical = known?.name ?? this.registry.get(name).name;
    await this.store.setSwitch(canonical, enabled, actorOf(principal));
    await this.registry.refreshStore();
    return { name: canonical, enabled };
  }

  /** SKILL_NOT_FOUND, worded as for a name with no history, unless the skill's audience includes the caller. */
  private async assertSharedWith(name: string, principal: Principal, scope: StoreScope | undefined): Promise<void> {
    const access = await this.store.access(name);
    if (access.audience === 'team') return;
    const mine = new Set(await this.store.userGroups(principal.userId));
    if (access.groups.some((group) => mine.has(group.id))) return;
    throw noHistory(name, scope);
  }

  /** A shared skill's audience and owners (admins; the route checks). */
  access(name: string) {
    return this.store.access(skillName(name));
  }

  /** Changes a shared skill's audience or owners (admins; the route checks); every catalogue follows at once. */
  async setAccess(name: string, change: AccessChange, principal: Principal) {
    const access = await this.store.setAccess(skillName(name), change, actorOf(principal));
    await this.registry.refreshStore();
    return access;
  }

  /**
   * Where an install goes: for a shared one, FORBIDDEN unless the caller is an admin or an editor (an editor's install
   * carries what they may publish, checked against each skill's owners under its lock).
   */
  private async targetOf(scope: StoreScope, principal: Principal): Promise<InstallTarget> {
    const actor = actorOf(principal);
    if (scope === 'personal') return { scope, ownerId: principal.userId, owner: principal.name, actor };
    return { scope, ownerId: null, owner: null, actor, ...(await this.publisherOf(principal)) };
  }

  /** Nothing for an admin; for an editor, what they may publish; FORBIDDEN for a member. */
  private async publisherOf(principal: Principal): Promise<{ publisher?: Publisher }> {
    if (principal.role === 'admin') return {};
    if (principal.role === 'editor')
      return { publisher: { userId: principal.userId, groupIds: await this.store.userGroups(principal.userId) } };
    throw new AppError(
      ErrorCode.FORBIDDEN,
      'Only admins and editors publish or roll back shared skills; install it as your personal skill ' +
        '(POST /v1/skills), or ask an admin to make you an editor.',
    );
  }

  async userFilter(principal: Principal): Promise<SkillFilterResult> {
    return this.presentFilter(principal, await this.store.userFilter(principal.userId), null);
  }

  async setUserFilter(principal: Principal, filter: StoredSkillFilter): Promise<SkillFilterResult> {
    return this.presentFilter(principal, await this.store.setUserFilter(principal.userId, filter), null);
  }

  /** A filter (the user's, or a chat's over the user's), and what the two together offer. */
  async presentFilter(
    principal: Principal,
    filter: StoredSkillFilter | null,
    under: StoredSkillFilter | null,
  ): Promise<SkillFilterResult> {
    return {
      include: filter?.include ?? null,
      exclude: filter?.exclude ?? null,
      offered: [...(await this.registry.userView(principal.userId, [under, filter])).skills.keys()],
    };
  }
}

/**
 * A skill name from a request, as names are compared everywhere (trimmed, NFKC). One no skill can
 * have (a control character, past 64 characters) names no skill: SKILL_NOT_FOUND, before any query.
 */
export function skillName(raw: string): string {
  const name = raw.trim().normalize('NFKC');
  if (name === '' || name.length > 64 || /\p{Cc}/u.test(name))
    throw new AppError(ErrorCode.SKILL_NOT_FOUND, `No skill is named '${raw.replace(/\p{Cc}/gu, '?').slice(0, 80)}'.`, {
      name: raw.slice(0, 80),
    });
  return name;
}
