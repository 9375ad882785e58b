import { Readable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import {
  AppError,
  type CatalogueSnapshot,
  ErrorCode,
  type PersonalSkills,
  type SkillCollision,
  type SkillFilter,
  type SkillRecord,
} from '@skillhost/core';
import type {
  InstallKey,
  StoredSkillFilter,
  StoreScope,
  VersionHistory,
  SharedSkillAccess,
} from './skill-version-store.js';
import type { Principal } from '../../users/principal.js';
import type { AuditActor } from '../../shared/audit.js';
import type { SkillRegistryService } from '@skillhost/nest';
import { configWith } from '../../../config/config-loader.js';
import { SkillImportService } from './skill-import.service.js';
import { SkillLifecycleService, skillName } from './skill-lifecycle.service.js';
import type { InstallResult, SkillStoreService } from './skill-store.service.js';

type Target = { scope: StoreScope; ownerId: string | null; owner: string | null };

/** The store as the lifecycle service uses it (it takes the class; no port exists). */
interface StorePort {
  installUpload(
    body: NodeJS.ReadableStream,
    contentType: string,
    target: Target,
    installedBy: string | null,
  ): Promise<InstallResult>;
  historyFor(name: string, userId: string, scope?: StoreScope): Promise<VersionHistory>;
  rollback(key: InstallKey, version: number): Promise<{ changed: boolean; digest: string }>;
  uninstall(key: InstallKey): Promise<void>;
  setSwitch(name: string, enabled: boolean, by: AuditActor): Promise<void>;
  userGroups(userId: string): Promise<readonly string[]>;
  access(name: string): Promise<SharedSkillAccess>;
  userFilter(userId: string): Promise<StoredSkillFilter | null>;
  setUserFilter(userId: string, filter: StoredSkillFilter): Promise<StoredSkillFilter | null>;
}

/** The registry as the lifecycle service uses it. */
interface RegistryPort {
  readonly snapshot: CatalogueSnapshot;
  refreshStore(): Promise<CatalogueSnapshot>;
  get(name: string): SkillRecord;
  viewFor(ownerId: string | undefined, filters?: readonly (SkillFilter | null | undefined)[]): CatalogueSnapshot;
  userView(userId: string, filters?: readonly (SkillFilter | null | undefined)[]): Promise<CatalogueSnapshot>;
}

const ALICE: Principal = { userId: 'alice-id', name: 'alice', role: 'member', keyId: 'key-1' };
const ADMIN_PRINCIPAL: Principal = { userId: 'admin-id', name: 'admin', role: 'admin', keyId: 'key-0' };
const ERIN: Principal = { userId: 'erin-id', name: 'erin', role: 'editor', keyId: 'key-2' };

function skill(name: string, overrides: Partial<SkillRecord> = {}): SkillRecord {
  return {
    name,
    description: `Does ${name} things.`,
    path: `/skills/${name}`,
    skillFile: `/skills/${name}/SKILL.md`,
    source: '/skills',
    frontmatter: { name, description: `Does ${name} things.` },
    warnings: [],
    ...overrides,
  };
}

const byName = (skills: SkillRecord[]) => new Map(skills.map((entry) => [entry.name, entry]));

/** The parts of a snapshot the service reads; the rest is never touched. */
function snapshot(
  overrides: {
    skills?: SkillRecord[];
    disabled?: SkillRecord[];
    personal?: Map<string, PersonalSkills>;
    collisions?: SkillCollision[];
  } = {},
): CatalogueSnapshot {
  return {
    skills: byName(overrides.skills ?? []),
    disabled: byName(overrides.disabled ?? []),
    personal: overrides.personal ?? new Map(),
    groupOnly: { skills: [], disabled: [], unavailable: [] },
    collisions: overrides.collisions ?? [],
    directories: [{ configured: '/skills', path: '/skills', exists: true, skills: 1, invalid: 0 }],
  } as unknown as CatalogueSnapshot;
}

function installResult(overrides: Partial<InstallResult> = {}): InstallResult {
  return {
    name: 'pdf',
    scope: 'shared',
    owner: null,
    version: 1,
    digest: 'sha256:d',
    files: [],
    created: true,
    warnings: [],
    ...overrides,
  };
}

/** A store that records every call (in order, with the registry's refreshes) and answers as overridden. */
function fakeStore(log: string[], overrides: Partial<StorePort> = {}): StorePort {
  return {
    installUpload: async (_body, contentType, target, installedBy) => {
      log.push(`installUpload ${contentType} ${JSON.stringify(target)} by ${installedBy}`);
      return installResult({ scope: target.scope, owner: target.owner });
    },
    historyFor: async (name, userId, scope) => {
      log.push(`historyFor ${name} ${userId} ${scope}`);
      return { key: { scope: 'shared', ownerId: null, name }, current: 2, versions: [] };
    },
    rollback: async (key, version) => {
      log.push(`rollback ${JSON.stringify(key)} ${version}`);
      return { changed: true, digest: 'sha256:v1' };
    },
    uninstall: async (key) => {
      log.push(`uninstall ${JSON.stringify(key)}`);
    },
    setSwitch: async (name, enabled, by) => {
      log.push(`setSwitch ${name} ${enabled} by ${by.id}`);
    },
    userGroups: async (userId) => (userId === 'erin-id' ? ['team-a'] : []),
    access: async (name) => ({ name, audience: 'team', groups: [], owningUser: null, owningGroup: null }),
    userFilter: async () => ({ exclude: ['docx'] }),
    setUserFilter: async (_userId, filter) => filter,
    ...overrides,
  };
}

function fakeRegistry(log: string[], current = snapshot(), overrides: Partial<RegistryPort> = {}) {
  const views: { ownerId: string | undefined; filters: unknown }[] = [];
  const registry: RegistryPort = {
    snapshot: current,
    refreshStore: async () => {
      log.push('refreshStore');
      return current;
    },
    get: (name) => {
      const found = current.skills.get(name);
      if (found === undefined) throw new AppError(ErrorCode.SKILL_NOT_FOUND, `Skill '${name}' not found.`, { name });
      return found;
    },
    viewFor: (ownerId, filters) => {
      views.push({ ownerId, filters });
      return snapshot({ skills: [skill('pdf'), skill('xlsx')] });
    },
    userView: async (ownerId, filters) => {
      views.push({ ownerId, filters });
      return snapshot({ skills: [skill('pdf'), skill('xlsx')] });
    },
    ...overrides,
  };
  return { registry, views };
}

function build(options: { store?: Partial<StorePort>; snapshot?: CatalogueSnapshot } = {}) {
  const log: string[] = [];
  const { registry, views } = fakeRegistry(log, options.snapshot);
  const sut = new SkillLifecycleService(
    fakeStore(log, options.store) as unknown as SkillStoreService,
    registry as unknown as SkillRegistryService,
    new SkillImportService(fakeStore(log, options.store) as unknown as SkillStoreService, configWith({})),
  );
  return { sut, log, views };
}

const upload = () => Readable.from([Buffer.from('zip')]);

async function failure(work: () => unknown) {
  try {
    await work();
  } catch (error) {
    if (AppError.isInstance(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected an AppError');
}

describe(SkillLifecycleService.name, () => {
  describe('install', () => {
    it('installs a shared skill without an owner, by the caller, then reads the store into the catalogue', async () => {
      const { sut, log } = build();
      const result = await sut.install(upload(), 'application/zip', 'shared', ADMIN_PRINCIPAL);
      expect(result).toMatchObject({ name: 'pdf', scope: 'shared', warnings: [] });
      expect(log).toEqual([
        'installUpload application/zip {"scope":"shared","ownerId":null,"owner":null,"actor":{"id":"admin-id",' +
          '"name":"admin"}} by admin-id',
        'refreshStore',
      ]);
    });

    it("gives an editor's shared install what they may publish: their id and their groups", async () => {
      const { sut, log } = build();
      await sut.install(upload(), 'application/zip', 'shared', ERIN);
      expect(log[0]).toBe(
        'installUpload application/zip {"scope":"shared","ownerId":null,"owner":null,"actor":{"id":"erin-id",' +
          '"name":"erin"},"publisher":{"userId":"erin-id","groupIds":["team-a"]}} by erin-id',
      );
    });

    it("refuses a member's shared install (FORBIDDEN) before reading the upload", async () => {
      const { sut, log } = build();
      const error = await failure(() => sut.install(upload(), 'application/zip', 'shared', ALICE));
      expect(error.code).toBe(ErrorCode.FORBIDDEN);
      expect(error.message).toContain('POST /v1/skills');
      expect(log).toEqual([]);
    });

    it("installs a personal skill as the caller's own", async () => {
      const { sut, log } = build();
      await sut.install(upload(), 'application/zip', 'personal', ALICE);
      expect(log[0]).toBe(
        'installUpload application/zip {"scope":"personal","ownerId":"alice-id","owner":"alice","actor":' +
          '{"id":"alice-id","name":"alice"}} by alice-id',
      );
    });

    it('warns when the installed skill loses a name clash, naming the winner', async () => {
      const collisions: SkillCollision[] = [
        {
          name: 'pdf',
          winner: { path: '/skills/pdf', source: '/skills' },
          loser: { path: '/cache/pdf', source: 'store' },
        },
      ];
      const { sut } = build({ snapshot: snapshot({ collisions }) });
      const result = await sut.install(upload(), 'application/zip', 'shared', ADMIN_PRINCIPAL);
      expect(result.warnings).toEqual([
        "A skill named 'pdf' from shared folder 1 wins over this one: it is installed but not offered until that one " +
          "is gone (see the admin view's collisions).",
      ]);
    });

    it('does not warn for a clash it wins, or a clash of another source or name', async () => {
      const collisions: SkillCollision[] = [
        {
          name: 'pdf',
          winner: { path: '/cache/pdf', source: 'store' },
          loser: { path: '/skills/pdf', source: '/skills' },
        },
        {
          name: 'pdf',
          winner: { path: '/skills/pdf', source: '/skills' },
          loser: { path: '/p', source: 'store:personal:bob' },
        },
        { name: 'docx', winner: { path: '/skills/docx', source: '/skills' }, loser: { path: '/c', source: 'store' } },
      ];
      const { sut } = build({ snapshot: snapshot({ collisions }) });
      expect((await sut.install(upload(), 'application/zip', 'shared', ADMIN_PRINCIPAL)).warnings).toEqual([]);
    });

    it('does not touch the catalogue when the store refuses the install', async () => {
      const refused = new AppError(ErrorCode.VALIDATION_FAILED, 'not valid');
      const { sut, log } = build({ store: { installUpload: () => Promise.reject(refused) } });
      expect((await failure(() => sut.install(upload(), 'application/zip', 'shared', ADMIN_PRINCIPAL))).code).toBe(
        ErrorCode.VALIDATION_FAILED,
      );
      expect(log).not.toContain('refreshStore');
    });
  });

  describe('versions', () => {
    it("asks the store for the caller's skill of that name (normalised) and answers its history", async () => {
      const { sut, log } = build();
      expect(await sut.versions(' pdf ', ALICE, 'shared')).toEqual({
        name: 'pdf',
        scope: 'shared',
        current: 2,
        versions: [],
      });
      expect(log).toEqual(['historyFor pdf alice-id shared']);
    });
  });

  describe('rollback', () => {
    it('rolls the shared skill back, then reads the store into the catalogue', async () => {
      const { sut, log } = build();
      expect(await sut.rollback('pdf', 1, ADMIN_PRINCIPAL)).toEqual({
        name: 'pdf',
        version: 1,
        digest: 'sha256:v1',
        changed: true,
      });
      expect(log).toEqual(['rollback {"scope":"shared","ownerId":null,"name":"pdf"} 1', 'refreshStore']);
    });
  });

  describe('uninstall', () => {
    it("uninstalls a shared skill, or the caller's own personal one, then refreshes the catalogue", async () => {
      const { sut, log } = build();
      await sut.uninstall('pdf', 'shared', ALICE);
      await sut.uninstall('pdf', 'personal', ALICE);
      expect(log).toEqual([
        'uninstall {"scope":"shared","ownerId":null,"name":"pdf"}',
        'refreshStore',
        'uninstall {"scope":"personal","ownerId":"alice-id","name":"pdf"}',
        'refreshStore',
      ]);
    });
  });

  describe('setEnabled', () => {
    it('switches a loaded skill by its canonical name, by the caller, then refreshes the catalogue', async () => {
      const { sut, log } = build({ snapshot: snapshot({ skills: [skill('pdf')] }) });
      expect(await sut.setEnabled('ｐｄｆ', false, ALICE)).toEqual({ name: 'pdf', enabled: false });
      expect(log).toEqual(['setSwitch pdf false by alice-id', 'refreshStore']);
    });

    it("finds a skill that is switched off, or only some user's personal skill", async () => {
      const personal = new Map<string, PersonalSkills>([
        ['bob-id', { skills: byName([skill('notes')]), disabled: byName([skill('diary')]), unavailable: [] }],
      ]);
      const { sut, log } = build({ snapshot: snapshot({ disabled: [skill('pdf')], personal }) });
      await sut.setEnabled('pdf', true, ALICE);
      await sut.setEnabled('notes', false, ALICE);
      await sut.setEnabled('diary', true, ALICE);
      expect(log.filter((line) => line.startsWith('setSwitch'))).toEqual([
        'setSwitch pdf true by alice-id',
        'setSwitch notes false by alice-id',
        'setSwitch diary true by alice-id',
      ]);
    });

    it('is SKILL_NOT_FOUND for a name no skill has, switching nothing', async () => {
      const { sut, log } = build({ snapshot: snapshot({ skills: [skill('pdf')] }) });
      expect((await failure(() => sut.setEnabled('nope', false, ALICE))).code).toBe(ErrorCode.SKILL_NOT_FOUND);
      expect(log).toEqual([]);
    });
  });

  describe('filters', () => {
    it("answers the user's filter and what the user's view offers under it", async () => {
      const { sut, views } = build();
      expect(await sut.userFilter(ALICE)).toEqual({ include: null, exclude: ['docx'], offered: ['pdf', 'xlsx'] });
      expect(views).toEqual([{ ownerId: 'alice-id', filters: [null, { exclude: ['docx'] }] }]);
    });

    it('answers the filter as the store saved it', async () => {
      const { sut } = build({ store: { setUserFilter: async () => ({ include: ['pdf'] }) } });
      expect(await sut.setUserFilter(ALICE, { include: [' pdf '] })).toMatchObject({ include: ['pdf'], exclude: null });
    });

    it("presents a chat's filter over the user's", async () => {
      const { sut, views } = build();
      const result = await sut.presentFilter(ALICE, { include: ['pdf'] }, { exclude: ['xlsx'] });
      expect(result).toEqual({ include: ['pdf'], exclude: null, offered: ['pdf', 'xlsx'] });
      expect(views).toEqual([{ ownerId: 'alice-id', filters: [{ exclude: ['xlsx'] }, { include: ['pdf'] }] }]);
    });
  });
});

describe(skillName.name, () => {
  it('trims and NFKC-normalises a name, as names are compared', () => {
    expect(skillName('  ｐｄｆ ')).toBe('pdf');
  });

  it.each([[''], ['   '], ['a'.repeat(65)], ['pdf\u0000'], ['pd\nf']])(
    'is SKILL_NOT_FOUND for a name no skill can have (%j)',
    async (raw) => {
      const error = await failure(() => skillName(raw));
      expect(error.code).toBe(ErrorCode.SKILL_NOT_FOUND);
      expect(error.message).not.toMatch(/\p{Cc}/u);
    },
  );
});
