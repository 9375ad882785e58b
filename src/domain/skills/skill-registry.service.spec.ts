import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { AppError, ErrorCode } from '@skillhost/core';
import { configWith } from '../../config/config-loader.js';
import { SkillRegistryService } from '@skillhost/nest';
import { skillsSettingsOf } from './skills-settings-of.js';

// Only the registry's public API is used here, with real skill folders in a temp directory, a fake
// store and a fake metrics object: the registry can move (into @skillhost/core) by changing the
// imports above.

type Settings = ConstructorParameters<typeof SkillRegistryService>[0];
type Metrics = NonNullable<ConstructorParameters<typeof SkillRegistryService>[1]>;
type Store = NonNullable<ConstructorParameters<typeof SkillRegistryService>[2]>;
type Snapshot = SkillRegistryService['snapshot'];

/** What the registry reads of the store. */
interface FakeStore {
  generations(): Promise<{ generation: string; reloadGeneration: string }>;
  contents(): Promise<{ entries: StoreEntry[]; switches: ReadonlyMap<string, boolean> }>;
  requestReload(): Promise<string>;
  userFilter(userId: string): Promise<{ include?: string[]; exclude?: string[] } | null>;
}

interface StoreEntry {
  install: {
    name: string;
    scope: 'shared' | 'personal';
    ownerId: string | null;
    ownerName: string | null;
    version: number;
    digest: string;
    manifest: { path: string; size: number; digest: string }[];
    history: string[];
  };
  folder: string;
}

function skillMd(name: string, options: { description?: string; extra?: string } = {}): string {
  const description = options.description ?? `Does ${name} things. Use when a test needs ${name}.`;
  return ['---', `name: ${name}`, `description: ${description}`, options.extra ?? '', '---', '', `# ${name}`, ''].join(
    '\n',
  );
}

async function failure(work: () => unknown) {
  try {
    await work();
  } catch (error) {
    if (AppError.isInstance(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected an AppError');
}

describe(SkillRegistryService.name, () => {
  let root: string;
  const skillsDir = () => join(root, 'skills');

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'skillhost-registry-spec-'));
    mkdirSync(skillsDir());
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function writeSkill(name: string, options: { description?: string; extra?: string; folder?: string } = {}): string {
    const folder = options.folder ?? join(skillsDir(), name);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, 'SKILL.md'), skillMd(name, options));
    return folder;
  }

  function settings(overrides: Record<string, unknown> = {}): Settings {
    const config = configWith(
      {
        'app.skills.enabled': true,
        'app.skills.directories': [skillsDir()],
        'app.commands.directories': [],
        ...overrides,
      },
      root,
      root,
    );
    return skillsSettingsOf(config);
  }

  function fakeMetrics() {
    const reports: { skills: number; invalid: number; catalogueBytes: number }[] = [];
    const metrics: Metrics = {
      observeSkillsReload: (snapshot, catalogueBytes) => {
        reports.push({
          skills: snapshot.skills.size,
          invalid: snapshot.invalid.length,
          catalogueBytes: catalogueBytes(),
        });
      },
    };
    return { metrics, reports };
  }

  /** A store whose state the test changes; it counts how often its contents are read. */
  function fakeStore() {
    const state = {
      generation: '1',
      reloadGeneration: '1',
      entries: [] as StoreEntry[],
      switches: new Map<string, boolean>(),
      filters: new Map<string, { include?: string[]; exclude?: string[] }>(),
      contentsRead: 0,
      failContents: undefined as Error | undefined,
      reloadsRequested: 0,
    };
    const store: FakeStore = {
      generations: async () => ({ generation: state.generation, reloadGeneration: state.reloadGeneration }),
      contents: async () => {
        state.contentsRead++;
        if (state.failContents !== undefined) throw state.failContents;
        return { entries: [...state.entries], switches: new Map(state.switches) };
      },
      requestReload: async () => {
        state.reloadsRequested++;
        state.reloadGeneration = String(Number(state.reloadGeneration) + 1);
        return state.reloadGeneration;
      },
      userFilter: async (userId) => state.filters.get(userId) ?? null,
    };
    return { store, state };
  }

  /** A store install unpacked into a real folder, as the store's cache holds it. */
  function storeEntry(name: string, scope: 'shared' | 'personal' = 'shared', owner?: { id: string; name: string }) {
    const digest = `sha256:${name
      .padEnd(64, '0')
      .slice(0, 64)
      .replace(/[^0-9a-f]/g, 'a')}`;
    const folder = writeSkill(name, { folder: join(root, 'store', `${scope}-${owner?.id ?? 'team'}`, name) });
    const entry: StoreEntry = {
      install: {
        name,
        scope,
        ownerId: owner?.id ?? null,
        ownerName: owner?.name ?? null,
        version: 1,
        digest,
        manifest: [],
        history: [digest],
      },
      folder,
    };
    return entry;
  }

  function build(options: { settings?: Settings; store?: FakeStore; metrics?: Metrics } = {}) {
    const store = options.store === undefined ? undefined : (options.store as unknown as Store);
    return new SkillRegistryService(options.settings ?? settings(), options.metrics, store);
  }

  /** A registry built and started without a store: its first scan is done when onModuleInit returns. */
  function started(options: { settings?: Settings; metrics?: Metrics } = {}): SkillRegistryService {
    const sut = build(options);
    void sut.onModuleInit();
    return sut;
  }

  const names = (snapshot: Snapshot) => [...snapshot.skills.keys()];

  describe('onModuleInit', () => {
    it('scans the folders before it returns (without a store), the skills in name order', () => {
      writeSkill('pdf');
      writeSkill('docx');
      const sut = build();
      const returned = sut.onModuleInit();
      expect(returned).toBeUndefined();
      expect(names(sut.snapshot)).toEqual(['docx', 'pdf']);
      expect(sut.get('pdf').description).toBe('Does pdf things. Use when a test needs pdf.');
    });

    it('reports the snapshot to the metrics, with a way to measure its catalogue', () => {
      writeSkill('pdf');
      mkdirSync(join(skillsDir(), 'broken'));
      writeFileSync(join(skillsDir(), 'broken', 'SKILL.md'), '---\nname: broken\n---\n');
      const { metrics, reports } = fakeMetrics();
      started({ metrics });
      expect(reports).toEqual([{ skills: 1, invalid: 1, catalogueBytes: expect.any(Number) }]);
      expect(reports[0].catalogueBytes).toBeGreaterThan(0);
    });

    it('with a store: reads its generations and contents first, and offers its shared skills', async () => {
      writeSkill('pdf');
      const { store, state } = fakeStore();
      state.generation = '5';
      state.reloadGeneration = '2';
      state.entries.push(storeEntry('notes'));
      const sut = build({ store });
      await sut.onModuleInit();
      expect(names(sut.snapshot)).toEqual(['notes', 'pdf']);
      expect(sut.get('notes').store).toMatchObject({ scope: 'shared', version: 1 });
      expect(sut.loadedGenerations).toEqual({ generation: '5', reloadGeneration: '2' });
    });

    it('with skills disabled reads nothing: the snapshot and reloads are SKILLS_DISABLED', async () => {
      writeSkill('pdf');
      const { store, state } = fakeStore();
      const { metrics, reports } = fakeMetrics();
      const sut = build({ settings: settings({ 'app.skills.enabled': false }), store, metrics });
      await sut.onModuleInit();
      expect(sut.enabled).toBe(false);
      expect((await failure(() => sut.snapshot)).code).toBe(ErrorCode.SKILLS_DISABLED);
      expect((await failure(() => sut.reload())).code).toBe(ErrorCode.SKILLS_DISABLED);
      expect(state.contentsRead).toBe(0);
      expect(reports).toEqual([]);
    });
  });

  describe('reload', () => {
    it('swaps in a whole new snapshot with what the folders hold now; the old one is left as it was', async () => {
      writeSkill('pdf');
      const sut = started();
      const before = sut.snapshot;
      writeSkill('docx');
      rmSync(join(skillsDir(), 'pdf'), { recursive: true });

      const after = await sut.reload();

      expect(sut.snapshot).toBe(after);
      expect(names(after)).toEqual(['docx']);
      expect(names(before)).toEqual(['pdf']);
    });

    it('runs a reload asked for while one runs once more after it; further asks join that one', async () => {
      writeSkill('pdf');
      const { metrics, reports } = fakeMetrics();
      const sut = started({ metrics });
      const first = sut.reload();
      const second = sut.reload();
      const third = sut.reload();
      expect(third).toBe(second);
      expect(second).not.toBe(first);
      expect(sut.busy).toBe(true);
      writeSkill('docx');

      await sut.settled();

      expect(sut.busy).toBe(false);
      expect(names(await second)).toEqual(['docx', 'pdf']);
      expect(reports).toHaveLength(3);
    });

    it('with a store: reads it again and adopts its generations', async () => {
      const { store, state } = fakeStore();
      const sut = build({ store });
      await sut.onModuleInit();
      state.entries.push(storeEntry('notes'));
      state.generation = '2';
      state.reloadGeneration = '9';
      await sut.reload();
      expect(names(sut.snapshot)).toEqual(['notes']);
      expect(sut.loadedGenerations).toEqual({ generation: '2', reloadGeneration: '9' });
    });

    it('keeps the snapshot and the generations it had when reading the store fails', async () => {
      writeSkill('pdf');
      const { store, state } = fakeStore();
      const sut = build({ store });
      await sut.onModuleInit();
      const before = sut.snapshot;
      state.generation = '2';
      state.failContents = new Error('connection lost');
      await expect(sut.reload()).rejects.toThrow('connection lost');
      expect(sut.snapshot).toBe(before);
      expect(sut.loadedGenerations).toEqual({ generation: '1', reloadGeneration: '1' });
      expect(sut.busy).toBe(false);
    });
  });

  describe('refreshStore', () => {
    it('reads the store again without rescanning the folders', async () => {
      writeSkill('pdf');
      const { store, state } = fakeStore();
      const sut = build({ store });
      await sut.onModuleInit();
      writeSkill('docx');
      state.entries.push(storeEntry('notes'));
      state.generation = '3';
      state.reloadGeneration = '7';

      await sut.refreshStore();

      expect(names(sut.snapshot)).toEqual(['notes', 'pdf']);
      expect(sut.loadedGenerations).toEqual({ generation: '3', reloadGeneration: '1' });
    });
  });

  describe('reloadEverywhere', () => {
    it('asks the other instances through the store, rescans, and answers what changed', async () => {
      writeSkill('pdf');
      writeSkill('docx');
      const { store, state } = fakeStore();
      const sut = build({ store });
      await sut.onModuleInit();
      writeSkill('xlsx');
      rmSync(join(skillsDir(), 'docx'), { recursive: true });

      const { snapshot, diff } = await sut.reloadEverywhere();

      expect(state.reloadsRequested).toBe(1);
      expect(sut.loadedGenerations.reloadGeneration).toBe('2');
      expect(names(snapshot)).toEqual(['pdf', 'xlsx']);
      expect(diff).toMatchObject({ added: [{ name: 'xlsx' }], removed: [{ name: 'docx' }], changed: [], unchanged: 1 });
    });
  });

  describe('store skills', () => {
    it("offers a personal skill in its owner's view only", async () => {
      const { store, state } = fakeStore();
      state.entries.push(storeEntry('diary', 'personal', { id: 'alice-id', name: 'alice' }));
      const sut = build({ store });
      await sut.onModuleInit();
      expect(names(sut.snapshot)).toEqual([]);
      expect(names(sut.viewFor('alice-id'))).toEqual(['diary']);
      expect(names(sut.viewFor('bob-id'))).toEqual([]);
      expect(sut.get('diary', sut.viewFor('alice-id')).store).toMatchObject({ owner: 'alice' });
    });

    it.each([
      ['last', '/skills', 'store'],
      ['first', 'store', '/skills'],
    ])('with store_precedence %s, a name clash goes to %s and is listed', async (precedence, winner, loser) => {
      writeSkill('pdf');
      const { store, state } = fakeStore();
      state.entries.push(storeEntry('pdf'));
      const sut = build({ settings: settings({ 'app.skills.store_precedence': precedence }), store });
      await sut.onModuleInit();
      const sourceOf = (source: string) => (source === 'store' ? 'store' : '/skills');
      expect(sut.snapshot.collisions.map((c) => [c.name, sourceOf(c.winner.source), sourceOf(c.loser.source)])).toEqual(
        [['pdf', winner, loser]],
      );
      expect(sourceOf(sut.get('pdf').source)).toBe(winner);
    });

    it("switches off a skill the store's switches turn off: SKILL_DISABLED, saying an admin did", async () => {
      writeSkill('pdf');
      const { store, state } = fakeStore();
      state.switches.set('pdf', false);
      const sut = build({ store });
      await sut.onModuleInit();
      expect(names(sut.snapshot)).toEqual([]);
      const error = await failure(() => sut.get('pdf'));
      expect(error).toEqual({
        code: ErrorCode.SKILL_DISABLED,
        message: "Skill 'pdf' is switched off on this server (by an admin); an operator can switch it on again.",
      });
    });
  });

  describe('get', () => {
    it('finds a skill by its NFKC-normalised name', () => {
      writeSkill('pdf');
      expect(started().get(' ｐｄｆ ').name).toBe('pdf');
    });

    it('is SKILL_NOT_FOUND naming the skills that exist', async () => {
      writeSkill('pdf');
      writeSkill('docx');
      const error = await failure(() => started().get('xlsx'));
      expect(error).toEqual({
        code: ErrorCode.SKILL_NOT_FOUND,
        message: "Skill 'xlsx' not found. Available: docx, pdf",
      });
    });

    it('says when there are no skills at all', async () => {
      const error = await failure(() => started().get('xlsx'));
      expect(error.message).toBe("Skill 'xlsx' not found. No skills are available.");
    });

    it('is SKILL_DISABLED for a skill the configuration switches off, naming the option', async () => {
      writeSkill('pdf');
      const sut = started({ settings: settings({ 'app.skills.disabled': ['pdf'] }) });
      expect(sut.configDisabled('pdf')).toBe(true);
      const error = await failure(() => sut.get('pdf'));
      expect(error.code).toBe(ErrorCode.SKILL_DISABLED);
      expect(error.message).toContain('SkillsModule option `disabled`');
    });

    it('names [app.skills] disabled when the server (with a store) switches it off', async () => {
      writeSkill('pdf');
      const sut = build({ settings: settings({ 'app.skills.disabled': ['pdf'] }), store: fakeStore().store });
      await sut.onModuleInit();
      expect((await failure(() => sut.get('pdf'))).message).toContain('([app.skills] disabled)');
    });
  });

  describe('register and unregister', () => {
    it('offers a programmatic skill at once, in a new snapshot', () => {
      writeSkill('pdf');
      const sut = started();
      const before = sut.snapshot;
      const record = sut.register({
        name: 'weather',
        description: 'Tells the weather.',
        instructions: 'Look outside.',
      });
      expect(record).toMatchObject({ name: 'weather', origin: 'programmatic', scope: 'workspace' });
      expect(sut.snapshot).not.toBe(before);
      expect(names(sut.snapshot)).toEqual(['pdf', 'weather']);
      expect(sut.get('weather').programmatic?.instructions).toBe('Look outside.');
    });

    it('keeps a skill registered before the first scan, and across reloads', async () => {
      const sut = build();
      sut.register({ name: 'weather', description: 'Tells the weather.', instructions: 'Look outside.' });
      void sut.onModuleInit();
      expect(names(sut.snapshot)).toEqual(['weather']);
      await sut.reload();
      expect(names(sut.snapshot)).toEqual(['weather']);
    });

    it('refuses an invalid skill (VALIDATION_FAILED), leaving the catalogue as it was', async () => {
      const sut = started();
      const before = sut.snapshot;
      const error = await failure(() => sut.register({ name: 'Not Valid', description: 'x' }));
      expect(error.code).toBe(ErrorCode.VALIDATION_FAILED);
      expect(error.message).toContain("Programmatic skill 'Not Valid' cannot be registered");
      expect(sut.snapshot).toBe(before);
    });

    it('lets a workspace skill win over a folder skill; unregistering it offers the folder one again', () => {
      const folder = writeSkill('pdf');
      const sut = started();
      sut.register({ name: 'pdf', description: 'The app’s own PDF skill.', instructions: 'In memory.' });
      expect(sut.get('pdf').origin).toBe('programmatic');

      expect(sut.unregister('pdf', 'bundled')).toBe(false);
      expect(sut.get('pdf').origin).toBe('programmatic');
      expect(sut.unregister(' pdf ')).toBe(true);
      expect(sut.get('pdf').path).toBe(folder);
      expect(sut.unregister('pdf')).toBe(false);
    });

    it('lets a folder skill win over a bundled programmatic skill of the same name', () => {
      writeSkill('pdf');
      const sut = started();
      sut.register({ name: 'pdf', description: 'A bundled default.', instructions: 'In memory.' }, 'bundled');
      expect(sut.get('pdf').origin).toBeUndefined();
    });
  });

  describe('setAvailableTools', () => {
    it('leaves out a skill needing a tool the chats lack, until the tool is offered', async () => {
      writeSkill('search', { extra: 'metadata:\n  tools_required: web_search' });
      writeSkill('pdf');
      const sut = started();
      expect(names(sut.snapshot)).toEqual(['pdf']);
      const error = await failure(() => sut.get('search'));
      expect(error.code).toBe(ErrorCode.SKILL_NOT_FOUND);
      expect(error.message).toContain("not offered: It needs tools the chats of this server do not have: 'web_search'");

      sut.setAvailableTools(['skills.activate', 'web_search']);
      expect(names(sut.snapshot)).toEqual(['pdf', 'search']);
    });
  });

  describe('onSwap', () => {
    it('tells each listener about every swap until it stops listening; a failing listener stops no one', async () => {
      writeSkill('pdf');
      const sut = started();
      const heard: Snapshot[] = [];
      sut.onSwap(() => {
        throw new Error('listener bug');
      });
      const stop = sut.onSwap((snapshot) => heard.push(snapshot));

      const reloaded = await sut.reload();
      sut.register({ name: 'weather', description: 'Tells the weather.', instructions: 'x' });
      expect(heard).toEqual([reloaded, sut.snapshot]);
      stop();
      await sut.reload();
      expect(heard).toHaveLength(2);
    });
  });

  describe('viewFor', () => {
    it('is the snapshot itself when there is nothing to narrow', () => {
      writeSkill('pdf');
      const sut = started();
      expect(sut.viewFor(undefined)).toBe(sut.snapshot);
      expect(sut.viewFor('alice-id', [null, undefined])).toBe(sut.snapshot);
    });

    it('narrows by the filters, the same object for the same inputs until the next swap', async () => {
      writeSkill('pdf');
      writeSkill('docx');
      writeSkill('xlsx');
      const sut = started();
      const view = sut.viewFor('alice-id', [{ exclude: ['docx'] }, { include: ['pdf', 'docx'] }]);
      expect(names(view)).toEqual(['pdf']);
      expect(sut.viewFor('alice-id', [{ exclude: ['docx'] }, { include: ['pdf', 'docx'] }])).toBe(view);
      await sut.reload();
      const again = sut.viewFor('alice-id', [{ exclude: ['docx'] }, { include: ['pdf', 'docx'] }]);
      expect(again).not.toBe(view);
      expect(names(again)).toEqual(['pdf']);
    });

    it('tells why a skill a filter leaves out cannot be found', async () => {
      writeSkill('pdf');
      writeSkill('docx');
      const sut = started();
      const error = await failure(() => sut.get('docx', sut.viewFor(undefined, [{ exclude: ['docx'] }])));
      expect(error.message).toBe(
        "Skill 'docx' not offered here: this user's or chat's skill filter leaves it out. Available: pdf",
      );
    });

    it("narrows a user's view by the filter the store holds for them", async () => {
      writeSkill('pdf');
      writeSkill('docx');
      const { store, state } = fakeStore();
      state.filters.set('alice-id', { exclude: ['pdf'] });
      const sut = build({ store });
      await sut.onModuleInit();
      expect(names(await sut.viewForUser('alice-id'))).toEqual(['docx']);
      expect(names(await sut.viewForUser('bob-id'))).toEqual(['docx', 'pdf']);
    });
  });
});
