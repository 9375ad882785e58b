import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { AppError, ErrorCode, type SkillRecord, versionOf } from '@skillhost/core';
import { configWith } from '../../../config/config-loader.js';
import { SYSTEM_ACTOR } from '../../shared/audit.js';
import type { ChatSkillFilters, UserSkillFilters } from './skill-filter-store.js';
import type {
  CurrentInstall,
  InstallKey,
  InstallOptions,
  NewVersion,
  SkillVersionStore,
  StoredSkillFilter,
  VersionHistory,
  VersionInstall,
} from './skill-version-store.js';
import { SkillStoreService } from './skill-store.service.js';

/** The service's ports, each faked below by a plain object. */
type StoreRecords = SkillVersionStore;
type UserRecords = UserSkillFilters;
type ChatRecords = ChatSkillFilters;

type Files = { path: string; bytes: Buffer }[];

const SHARED = { scope: 'shared' as const, ownerId: null, owner: null };
const ALICE = { scope: 'personal' as const, ownerId: 'alice-id', owner: 'alice' };

function skillMd(name: string, description = `Does ${name} things. Use when a test needs ${name}.`): string {
  return `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\nSteps.\n`;
}

/** A skill's files as an upload gives them (re-rooted at the skill folder). */
function skillFiles(name: string, extra: Record<string, string> = {}): Files {
  const files = { 'SKILL.md': skillMd(name), ...extra };
  return Object.entries(files).map(([path, text]) => ({ path, bytes: Buffer.from(text) }));
}

/** The store's tables in memory: versions and blobs as saved, everything else answered as overridden. */
function fakeRecords(overrides: Partial<StoreRecords> = {}) {
  const versions = new Map<string, NewVersion>();
  const blobs = new Map<string, Buffer>();
  const calls = {
    saveVersion: [] as NewVersion[],
    installMany: [] as [VersionInstall[], InstallOptions][],
    setSwitch: [] as unknown[][],
  };
  const records: StoreRecords = {
    saveVersion: async (version) => {
      calls.saveVersion.push(version);
      versions.set(version.digest, version);
      for (const [digest, bytes] of version.blobs) blobs.set(digest, bytes);
    },
    // Stores each version as the repository would, and makes each a new version 1.
    installMany: async (installs, options) => {
      calls.installMany.push([[...installs], options]);
      for (const { version } of installs) {
        versions.set(version.digest, version);
        for (const [digest, bytes] of version.blobs) blobs.set(digest, bytes);
      }
      return { installed: installs.map(() => ({ version: 1, created: true })) };
    },
    personalCount: async () => ({ owned: 0, existing: [] }),
    history: async () => null,
    rollback: async () => ({ outcome: 'no-skill' }),
    uninstall: async () => false,
    currentInstalls: async () => [],
    findVersion: async (digest) => {
      const version = versions.get(digest);
      return version === undefined ? null : { name: version.name, manifest: [...version.manifest] };
    },
    blobs: async (digests) => new Map(digests.flatMap((d) => (blobs.has(d) ? [[d, blobs.get(d)!] as const] : []))),
    switches: async () => [],
    setSwitch: async (...args) => {
      calls.setSwitch.push(args);
    },
    state: async () => ({ generation: '7', reloadGeneration: '3' }),
    requestReload: async () => '4',
    access: async () => null,
    setAccess: async () => null,
    ...overrides,
  };
  return { records, calls, versions };
}

function fakeUsers(overrides: Partial<UserRecords> = {}) {
  const saved: { userId: string; filter: StoredSkillFilter | null }[] = [];
  const users: UserRecords = {
    skillFilter: async () => null,
    setSkillFilter: async (userId, filter) => {
      saved.push({ userId, filter });
      return true;
    },
    groupIds: async () => [],
    ...overrides,
  };
  return { users, saved };
}

function fakeChats(found = true) {
  const saved: { chatId: string; ownerId: string; filter: StoredSkillFilter | null }[] = [];
  const chats: ChatRecords = {
    setSkillFilter: async (chatId, ownerId, filter) => {
      saved.push({ chatId, ownerId, filter });
      return found;
    },
  };
  return { chats, saved };
}

/** What an AppError-rejecting promise was rejected with: its code, message and details. */
async function failure(work: Promise<unknown> | (() => unknown)) {
  try {
    await (typeof work === 'function' ? work() : work);
  } catch (error) {
    if (AppError.isInstance(error)) return { code: error.code, message: error.message, details: error.details };
    throw error;
  }
  throw new Error('expected an AppError');
}

describe(SkillStoreService.name, () => {
  let root: string;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'skillhost-store-spec-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function build(
    options: {
      records?: StoreRecords;
      users?: UserRecords;
      chats?: ChatRecords;
      config?: Record<string, unknown>;
    } = {},
  ) {
    const config = configWith(
      {
        'app.skills.store_directory': join(root, 'cache'),
        'app.skills.max_personal_skills': 2,
        'app.skills.disabled': ['locked'],
        ...options.config,
      },
      root,
      root,
    );
    const records = options.records ?? fakeRecords().records;
    const sut = new SkillStoreService(
      records,
      options.users ?? fakeUsers().users,
      options.chats ?? fakeChats().chats,
      config,
    );
    return sut;
  }

  /** A disk skill as discovery records it, its folder written under the temp root. */
  function diskSkill(
    name: string,
    files: Record<string, string> = {},
    overrides: Partial<SkillRecord> = {},
  ): SkillRecord {
    const path = join(root, 'skills', name);
    for (const [file, text] of Object.entries({ 'SKILL.md': skillMd(name), ...files })) {
      mkdirSync(dirname(join(path, file)), { recursive: true });
      writeFileSync(join(path, file), text);
    }
    return {
      name,
      description: `Does ${name} things.`,
      path,
      skillFile: join(path, 'SKILL.md'),
      source: join(root, 'skills'),
      frontmatter: { name, description: `Does ${name} things.` },
      warnings: [],
      ...overrides,
    };
  }

  describe('install', () => {
    it('validates the files, stores the version, makes it current and unpacks it into the cache', async () => {
      const { records, calls } = fakeRecords();
      const sut = build({ records });
      const files = skillFiles('pdf', { 'references/forms.md': 'FORMS' });

      const result = await sut.install(files, 'pdf', SHARED, 'admin-id');

      const version = versionOf(files);
      expect(result).toEqual({
        name: 'pdf',
        scope: 'shared',
        owner: null,
        version: 1,
        digest: version.digest,
        files: version.files,
        created: true,
        warnings: [],
      });
      expect(calls.installMany).toHaveLength(1);
      const [[install], options] = calls.installMany[0];
      expect(install.key).toEqual({ scope: 'shared', ownerId: null, name: 'pdf' });
      expect(install.version).toMatchObject({ name: 'pdf', digest: version.digest, totalBytes: version.totalBytes });
      expect([...install.version.blobs.keys()].sort()).toEqual(version.files.map((f) => f.digest).sort());
      expect(options).toEqual({ installedBy: 'admin-id', maxPersonal: 2, keepRolledBack: false });
      const folder = sut.cache.folderOf(version.digest, 'pdf');
      expect(readFileSync(join(folder, 'references/forms.md'), 'utf8')).toBe('FORMS');
    });

    it('reports what the records say when this content was installed before (created false)', async () => {
      const { records } = fakeRecords({
        installMany: async (installs) => ({ installed: installs.map(() => ({ version: 3, created: false })) }),
      });
      const again = await build({ records }).install(skillFiles('pdf'), 'pdf', SHARED, null);
      expect([again.version, again.created]).toEqual([3, false]);
    });

    it('takes the name the SKILL.md declares when the upload has no top folder', async () => {
      const sut = build();
      expect((await sut.install(skillFiles('pdf'), undefined, SHARED, null)).name).toBe('pdf');
    });

    it('refuses a skill whose name is not its folder name (VALIDATION_FAILED), storing nothing', async () => {
      const { records, calls } = fakeRecords();
      const sut = build({ records });
      const error = await failure(sut.install(skillFiles('pdf'), 'docx', SHARED, null));
      expect(error.code).toBe(ErrorCode.VALIDATION_FAILED);
      expect(error.message).toContain('standard rules');
      expect(calls.installMany).toEqual([]);
    });

    it('refuses a SKILL.md without a description, naming the problem', async () => {
      const sut = build();
      const files = [{ path: 'SKILL.md', bytes: Buffer.from('---\nname: pdf\n---\n\nBody.\n') }];
      const error = await failure(sut.install(files, 'pdf', SHARED, null));
      expect(error.code).toBe(ErrorCode.VALIDATION_FAILED);
      expect(error.message).toMatch(/description/);
      expect((error.details as { problems: string[] }).problems.length).toBeGreaterThan(0);
    });

    it('refuses an upload without SKILL.md at its root (INVALID_ARCHIVE)', async () => {
      const sut = build();
      const files = [{ path: 'nested/SKILL.md', bytes: Buffer.from(skillMd('pdf')) }];
      expect((await failure(sut.install(files, 'pdf', SHARED, null))).code).toBe(ErrorCode.INVALID_ARCHIVE);
    });

    describe('personal quota', () => {
      it('refuses a new personal skill past max_personal_skills before storing anything', async () => {
        const { records, calls } = fakeRecords({ personalCount: async () => ({ owned: 2, existing: [] }) });
        const sut = build({ records });
        const error = await failure(sut.install(skillFiles('pdf'), 'pdf', ALICE, 'alice-id'));
        expect(error).toMatchObject({ code: ErrorCode.SKILL_QUOTA_EXCEEDED, details: { name: 'pdf', limit: 2 } });
        expect(error.message).toContain('alice has 2 personal skill(s)');
        expect(calls.installMany).toEqual([]);
      });

      it('lets a user install a new version of a personal skill they have, at the limit', async () => {
        const { records, calls } = fakeRecords({ personalCount: async () => ({ owned: 2, existing: ['pdf'] }) });
        const sut = build({ records });
        const result = await sut.install(skillFiles('pdf'), 'pdf', ALICE, 'alice-id');
        expect(result).toMatchObject({ scope: 'personal', owner: 'alice' });
        expect(calls.installMany[0][0][0].key).toEqual({ scope: 'personal', ownerId: 'alice-id', name: 'pdf' });
      });

      it('refuses the install when the records find the quota reached under their lock', async () => {
        const { records } = fakeRecords({ installMany: async () => ({ quotaReached: { owned: 2, adding: ['pdf'] } }) });
        const sut = build({ records });
        const error = await failure(sut.install(skillFiles('pdf'), 'pdf', ALICE, 'alice-id'));
        expect(error.code).toBe(ErrorCode.SKILL_QUOTA_EXCEEDED);
      });

      it('does not count shared skills', async () => {
        let counted = 0;
        const { records } = fakeRecords({
          personalCount: async () => {
            counted++;
            return { owned: 99, existing: [] };
          },
        });
        await build({ records }).install(skillFiles('pdf'), 'pdf', SHARED, null);
        expect(counted).toBe(0);
      });
    });
  });

  describe('installMany', () => {
    const imported = (name: string, folder = name) => ({
      files: skillFiles(name),
      folder,
      source: { url: 'file:///repo.git', path: `skills/${folder}` },
    });

    it('installs every skill in one call to the records, results in the order given', async () => {
      const { records, calls } = fakeRecords();
      const results = await build({ records }).installMany(
        [imported('pdf'), imported('docx')],
        SHARED,
        'admin-id',
        true,
      );
      expect(results.map((result) => [result.name, result.version, result.created])).toEqual([
        ['pdf', 1, true],
        ['docx', 1, true],
      ]);
      expect(calls.installMany).toHaveLength(1);
      const [installs, options] = calls.installMany[0];
      expect(installs.map((install) => [install.key.name, install.source?.path])).toEqual([
        ['pdf', 'skills/pdf'],
        ['docx', 'skills/docx'],
      ]);
      expect(options).toMatchObject({ keepRolledBack: true });
    });

    it(
      'refuses the lot when the third skill is not valid, naming it, before anything reaches the ' + 'records',
      async () => {
        const { records, calls } = fakeRecords();
        const error = await failure(
          build({ records }).installMany([imported('pdf'), imported('docx'), imported('xlsx', 'sheets')], SHARED, null),
        );
        expect(error.code).toBe(ErrorCode.VALIDATION_FAILED);
        expect(error.message).toContain("Skill 'skills/sheets' (3 of 3) was refused, so none of the 3 was installed");
        expect(error.details).toMatchObject({ skill: 'skills/sheets', problems: expect.any(Array) });
        expect(calls.installMany).toEqual([]);
      },
    );

    it('refuses two skills of one name (VALIDATION_FAILED naming both), storing nothing', async () => {
      const { records, calls } = fakeRecords();
      const twin = { ...imported('pdf'), source: { url: 'file:///repo.git', path: 'more/pdf' } };
      const error = await failure(build({ records }).installMany([imported('pdf'), twin], SHARED, null));
      expect(error).toMatchObject({ code: ErrorCode.VALIDATION_FAILED, details: { skill: 'more/pdf' } });
      expect(error.message).toContain("'skills/pdf' and 'more/pdf' are both named 'pdf'");
      expect(calls.installMany).toEqual([]);
    });

    it('counts the new personal skills together against the quota, naming the first that does not fit', async () => {
      const asked: string[][] = [];
      const { records, calls } = fakeRecords({
        personalCount: async (_owner, names) => {
          asked.push([...names]);
          return { owned: 1, existing: ['pdf'] };
        },
      });
      const error = await failure(
        build({ records }).installMany([imported('pdf'), imported('docx'), imported('xlsx')], ALICE, 'alice-id'),
      );
      expect(asked).toEqual([['pdf', 'docx', 'xlsx']]);
      expect(error).toMatchObject({
        code: ErrorCode.SKILL_QUOTA_EXCEEDED,
        details: { name: 'xlsx', names: ['docx', 'xlsx'], limit: 2 },
      });
      expect(error.message).toContain(
        'alice has 1 personal skill(s) and the import adds 2 new ones (docx, xlsx), more than the 2 that ' +
          "[app.skills] max_personal_skills allows: 'xlsx' is the first",
      );
      expect(calls.installMany).toEqual([]);
    });

    it('keeps a held skill held among installed ones', async () => {
      const { records } = fakeRecords({
        installMany: async () => ({ installed: [{ version: 2, created: true }, { held: 1 }] }),
      });
      const results = await build({ records }).installMany([imported('pdf'), imported('docx')], SHARED, null, true);
      expect(results.map((result) => [result.name, result.version, result.held ?? false])).toEqual([
        ['pdf', 2, false],
        ['docx', 1, true],
      ]);
    });

    it('asks the records for nothing when there is nothing to install', async () => {
      const { records, calls } = fakeRecords();
      expect(await build({ records }).installMany([], SHARED, null)).toEqual([]);
      expect(calls.installMany).toEqual([[[], { installedBy: null, maxPersonal: 2, keepRolledBack: false }]]);
    });
  });

  describe('historyFor', () => {
    const historyOf = (key: InstallKey): VersionHistory => ({ key, current: 1, versions: [] });

    it("without a scope: the user's personal skill when there is one, else the shared one", async () => {
      const asked: InstallKey[] = [];
      const { records } = fakeRecords({
        history: async (key) => {
          asked.push(key);
          return key.scope === 'shared' ? historyOf(key) : null;
        },
      });
      const sut = build({ records });
      expect((await sut.historyFor('pdf', 'alice-id')).key.scope).toBe('shared');
      expect(asked).toEqual([
        { scope: 'personal', ownerId: 'alice-id', name: 'pdf' },
        { scope: 'shared', ownerId: null, name: 'pdf' },
      ]);
    });

    it('prefers the personal skill of that name', async () => {
      const { records } = fakeRecords({ history: async (key) => historyOf(key) });
      expect((await build({ records }).historyFor('pdf', 'alice-id')).key.scope).toBe('personal');
    });

    it('with a scope: that one only', async () => {
      const asked: InstallKey[] = [];
      const { records } = fakeRecords({
        history: async (key) => {
          asked.push(key);
          return historyOf(key);
        },
      });
      await build({ records }).historyFor('pdf', 'alice-id', 'shared');
      expect(asked).toEqual([{ scope: 'shared', ownerId: null, name: 'pdf' }]);
    });

    it('is SKILL_NOT_FOUND for a skill the store does not hold, saying folder skills have no history', async () => {
      const error = await failure(build().historyFor('pdf', 'alice-id', 'personal'));
      expect(error.code).toBe(ErrorCode.SKILL_NOT_FOUND);
      expect(error.message).toContain("Skill 'pdf' is not installed in the store (personal)");
      expect(error.message).toContain('no version history');
    });
  });

  describe('rollback', () => {
    const key: InstallKey = { scope: 'shared', ownerId: null, name: 'pdf' };

    it('answers whether the current version changed, and its digest', async () => {
      const rolled = build({
        records: fakeRecords({ rollback: async () => ({ outcome: 'rolled-back', digest: 'd1' }) }).records,
      });
      expect(await rolled.rollback(key, 1)).toEqual({ changed: true, digest: 'd1' });
      const same = build({
        records: fakeRecords({ rollback: async () => ({ outcome: 'unchanged', digest: 'd2' }) }).records,
      });
      expect(await same.rollback(key, 2)).toEqual({ changed: false, digest: 'd2' });
    });

    it('is SKILL_NOT_FOUND for a skill not installed', async () => {
      expect((await failure(build().rollback(key, 1))).code).toBe(ErrorCode.SKILL_NOT_FOUND);
    });

    it('is SKILL_VERSION_NOT_FOUND for a version it does not have, naming the versions it has', async () => {
      const version = (n: number) => ({
        version: n,
        digest: `d${n}`,
        installedAt: new Date(0),
        installedBy: null,
        fileCount: 1,
        totalBytes: 1,
        source: null,
      });
      const { records } = fakeRecords({
        rollback: async () => ({ outcome: 'no-version' }),
        history: async () => ({ key, current: 2, versions: [version(1), version(2)] }),
      });
      const error = await failure(build({ records }).rollback(key, 9));
      expect(error).toMatchObject({
        code: ErrorCode.SKILL_VERSION_NOT_FOUND,
        message: "Skill 'pdf' has no version 9. Its versions: 1, 2.",
        details: { name: 'pdf', version: 9, versions: [1, 2] },
      });
    });
  });

  describe('uninstall', () => {
    it('is SKILL_NOT_FOUND when nothing was uninstalled, saying where it looked', async () => {
      const error = await failure(
        build().uninstall({ scope: 'personal', ownerId: 'alice-id', name: 'pdf' }, SYSTEM_ACTOR),
      );
      expect(error.code).toBe(ErrorCode.SKILL_NOT_FOUND);
      expect(error.message).toContain("as this user's personal skill");
    });

    it('resolves when the records removed it', async () => {
      const sut = build({ records: fakeRecords({ uninstall: async () => true }).records });
      await expect(
        sut.uninstall({ scope: 'shared', ownerId: null, name: 'pdf' }, SYSTEM_ACTOR),
      ).resolves.toBeUndefined();
    });
  });

  describe('setSwitch', () => {
    const ADMIN = { id: 'admin-id', name: 'admin' };
    it('persists a switch with who set it', async () => {
      const { records, calls } = fakeRecords();
      await build({ records }).setSwitch('pdf', false, ADMIN);
      expect(calls.setSwitch).toEqual([['pdf', false, ADMIN]]);
    });

    it('refuses to switch on a skill the configuration switches off (SKILL_SWITCH_LOCKED)', async () => {
      const { records, calls } = fakeRecords();
      const sut = build({ records });
      const error = await failure(() => sut.setSwitch('locked', true, ADMIN));
      expect(error.code).toBe(ErrorCode.SKILL_SWITCH_LOCKED);
      expect(error.message).toContain('[app.skills] disabled');
      expect(calls.setSwitch).toEqual([]);
      await sut.setSwitch('locked', false, ADMIN);
      expect(calls.setSwitch).toEqual([['locked', false, ADMIN]]);
    });
  });

  describe('filters', () => {
    it("stores a user's filter trimmed, NFKC-normalised and without duplicates, and tells the listeners", async () => {
      const { users, saved } = fakeUsers();
      const sut = build({ users });
      const heard: string[] = [];
      const stop = sut.onUserFilterChange((userId) => heard.push(userId));

      const stored = await sut.setUserFilter('alice-id', { include: [' pdf ', 'ｐｄｆ', 'docx'], exclude: [] });

      expect(stored).toEqual({ include: ['pdf', 'docx'], exclude: [] });
      expect(saved).toEqual([{ userId: 'alice-id', filter: stored }]);
      expect(heard).toEqual(['alice-id']);
      stop();
      await sut.setUserFilter('alice-id', {});
      expect(heard).toEqual(['alice-id']);
    });

    it('stores a filter with neither list as none', async () => {
      const { users, saved } = fakeUsers();
      expect(await build({ users }).setUserFilter('alice-id', {})).toBeNull();
      expect(saved).toEqual([{ userId: 'alice-id', filter: null }]);
    });

    it("reads a user's filter from the user records", async () => {
      const { users } = fakeUsers({
        skillFilter: async (userId) => (userId === 'alice-id' ? { exclude: ['pdf'] } : null),
      });
      expect(await build({ users }).userFilter('alice-id')).toEqual({ exclude: ['pdf'] });
    });

    it("stores a chat's filter for its owner, normalised, and says whether the chat was found", async () => {
      const { chats, saved } = fakeChats(false);
      const result = await build({ chats }).setChatFilter('chat-1', 'alice-id', { exclude: ['pdf', 'pdf'] });
      expect(result).toEqual({ found: false, filter: { exclude: ['pdf'] } });
      expect(saved).toEqual([{ chatId: 'chat-1', ownerId: 'alice-id', filter: { exclude: ['pdf'] } }]);
    });
  });

  describe('contents', () => {
    function install(files: Files, overrides: Partial<CurrentInstall> = {}): CurrentInstall {
      const version = versionOf(files);
      return {
        name: 'pdf',
        scope: 'shared',
        ownerId: null,
        ownerName: null,
        version: 1,
        digest: version.digest,
        manifest: [...version.files],
        history: [version.digest],
        ...overrides,
      };
    }

    it('unpacks every current install from the stored blobs, and maps the switches', async () => {
      const files = skillFiles('pdf');
      const stored = install(files);
      const { records } = fakeRecords({
        currentInstalls: async () => [stored],
        blobs: async () => new Map(versionOf(files).files.map((entry, i) => [entry.digest, files[i].bytes])),
        switches: async () => [{ name: 'pdf', enabled: false }],
      });
      const contents = await build({ records }).contents();
      expect(contents.entries).toEqual([{ install: stored, folder: expect.any(String) }]);
      expect(readFileSync(join(contents.entries[0].folder, 'SKILL.md'), 'utf8')).toBe(skillMd('pdf'));
      expect(contents.switches).toEqual(new Map([['pdf', false]]));
    });

    it('leaves out an install whose content the records no longer have, and goes on with the others', async () => {
      const good = skillFiles('docx');
      const { records } = fakeRecords({
        currentInstalls: async () => [install(skillFiles('pdf')), install(good, { name: 'docx' })],
        blobs: async () => new Map(versionOf(good).files.map((entry, i) => [entry.digest, good[i].bytes])),
      });
      const contents = await build({ records }).contents();
      expect(contents.entries.map((entry) => entry.install.name)).toEqual(['docx']);
    });
  });

  describe('keep', () => {
    it('keeps nothing for a programmatic skill', () => {
      const skill = diskSkill('pdf', {}, { programmatic: { resources: new Map() } });
      expect(build().keep(skill)).toBeUndefined();
    });

    it("answers a store skill's own digest without reading or storing anything", async () => {
      const { records, calls } = fakeRecords();
      const store = {
        scope: 'shared' as const,
        ownerId: null,
        owner: null,
        version: 1,
        history: new Set(['sha256:x']),
      };
      const skill = diskSkill('pdf', {}, { store, digest: 'sha256:x' });
      expect(await build({ records }).keep(skill)).toEqual({ digest: 'sha256:x' });
      expect(calls.saveVersion).toEqual([]);
    });

    it("stores a disk skill's folder as a version (once), whose digest keptDigest also gives", async () => {
      const { records, calls } = fakeRecords();
      const sut = build({ records });
      const skill = diskSkill('pdf', { 'references/a.md': 'A' });
      const expected = versionOf(skillFiles('pdf', { 'references/a.md': 'A' })).digest;

      expect(await sut.keep(skill)).toEqual({ digest: expected });
      expect(await sut.keep(skill)).toEqual({ digest: expected });
      expect(calls.saveVersion.map((version) => version.digest)).toEqual([expected]);
      expect(await sut.keptDigest(skill)).toBe(expected);
    });

    it('stores the new files after the folder changes on disk', async () => {
      const { records, calls } = fakeRecords();
      const sut = build({ records });
      const skill = diskSkill('pdf');
      await sut.keep(skill);
      writeFileSync(join(skill.path, 'extra.md'), 'more');
      const kept = await sut.keep(skill);
      expect(kept).toEqual({ digest: versionOf(skillFiles('pdf', { 'extra.md': 'more' })).digest });
      expect(calls.saveVersion).toHaveLength(2);
    });

    it('does not pin a folder past max_install_bytes: a warning instead, nothing stored', async () => {
      const { records, calls } = fakeRecords();
      const sut = build({ records, config: { 'app.skills.max_install_bytes': 1024 } });
      const kept = await sut.keep(diskSkill('pdf', { 'assets/big.bin': 'x'.repeat(2048) }));
      expect(kept).toEqual({ warning: expect.stringContaining("This version of 'pdf' is not pinned for the chat") });
      expect(calls.saveVersion).toEqual([]);
    });
  });

  describe('versionFolder', () => {
    it('is undefined for something that is not a digest, and for a digest the store does not hold', async () => {
      const sut = build();
      diskSkill('pdf'); // <root>/skills/pdf, beside the cache folder: a digest must not lead there
      expect(await sut.versionFolder('sha256:../skills', 'pdf')).toBeUndefined();
      expect(await sut.versionFolder(`sha256:${'0'.repeat(64)}`, 'pdf')).toBeUndefined();
    });

    it('unpacks a stored version under the name asked for', async () => {
      const { records } = fakeRecords();
      const sut = build({ records });
      const kept = await sut.keep(diskSkill('pdf'));
      const digest = (kept as { digest: string }).digest;
      rmSync(sut.cache.directory, { recursive: true, force: true });

      const folder = await sut.versionFolder(digest, 'pdf-copy');

      expect(folder).toBe(sut.cache.folderOf(digest, 'pdf-copy'));
      expect(existsSync(join(folder!, 'SKILL.md'))).toBe(true);
    });
  });

  it('reads the generations and asks for a reload through the records', async () => {
    const sut = build();
    expect(await sut.generations()).toEqual({ generation: '7', reloadGeneration: '3' });
    expect(await sut.requestReload()).toBe('4');
  });

  it("limits uploads to max_install_bytes and the store's file count", () => {
    expect(build({ config: { 'app.skills.max_install_bytes': 4096 } }).limits).toEqual({
      maxBytes: 4096,
      maxFiles: 1000,
    });
  });
});
