import { afterEach, describe, expect, it } from '@jest/globals';
import { AppError, ConfigError, ErrorCode } from '@skillhost/core';
import type { SkillRegistryService } from '@skillhost/nest';
import { configWith } from '../../../config/config-loader.js';
import { SINGLE_PROCESS, workerRole } from '../../../config/process-role.js';
import type { ImportResult, SkillImportService } from './skill-import.service.js';
import type { MirrorOutcome, NewMirror, SkillMirrorStore, StoredMirror } from './skill-mirror-store.js';
import { configuredMirrorProblems, SkillMirrorService } from './skill-mirror.service.js';

const mirrorOf = (overrides: Partial<StoredMirror> = {}): StoredMirror => ({
  name: 'team',
  origin: 'api',
  source: 'git+https://example.test/skills.git',
  intervalSeconds: 900,
  createdBy: null,
  createdAt: new Date(0),
  nextRunAt: new Date(0),
  running: false,
  lastRunAt: null,
  lastSuccessAt: null,
  lastErrorAt: null,
  lastError: null,
  lastResult: null,
  ...overrides,
});

/** The mirrors' table in memory: claims, outcomes and what the configuration wrote. */
function fakeStore(mirrors: StoredMirror[]) {
  const log = { configured: [] as NewMirror[][], finished: [] as [string, MirrorOutcome][], claims: 0 };
  let busyClaims = 0;
  const store: SkillMirrorStore = {
    list: async () => mirrors,
    find: async (name) => mirrors.find((mirror) => mirror.name === name) ?? null,
    add: async () => null,
    remove: async () => false,
    replaceConfigured: async (configured) => void log.configured.push([...configured]),
    claim: async (name) => {
      log.claims++;
      if (busyClaims > 0) {
        busyClaims--;
        return null;
      }
      return mirrors.find((mirror) => mirror.name === name) ?? null;
    },
    finish: async (name, outcome) => void log.finished.push([name, outcome]),
  };
  return { store, log, holdFor: (claims: number) => (busyClaims = claims) };
}

function sutWith(options: { mirrors?: StoredMirror[]; imports?: () => Promise<ImportResult>; worker?: number } = {}) {
  const config = configWith({
    'app.skills.enabled': true,
    'app.skills.mirrors': { configured: { source: 'git+https://example.test/c.git', interval: '2h' } },
  });
  const fake = fakeStore(options.mirrors ?? [mirrorOf()]);
  const importer = { importFrom: options.imports ?? (async () => ({ skills: [], warnings: [] })) };
  const registry = { refreshStore: async () => undefined };
  const sut = new SkillMirrorService(
    config,
    fake.store,
    importer as unknown as SkillImportService,
    registry as unknown as SkillRegistryService,
    options.worker === undefined ? SINGLE_PROCESS : workerRole(options.worker),
  );
  return { sut, ...fake };
}

describe(SkillMirrorService.name, () => {
  let stop: (() => Promise<void>) | undefined;
  afterEach(async () => stop?.());

  it('writes the configured mirrors only in the process that does the start-up work', async () => {
    const owner = sutWith({ worker: 1 });
    const other = sutWith({ worker: 2 });
    stop = async () => {
      await owner.sut.onApplicationShutdown();
      await other.sut.onApplicationShutdown();
    };
    await owner.sut.onApplicationBootstrap();
    await other.sut.onApplicationBootstrap();
    expect(owner.log.configured).toEqual([
      [{ name: 'configured', source: 'git+https://example.test/c.git', intervalSeconds: 7200 }],
    ]);
    expect(other.log.configured).toEqual([]);
  });

  it('writes the configured mirrors on a later tick when the database was away at start-up', async () => {
    const { sut, store, log } = sutWith();
    stop = () => sut.onApplicationShutdown();
    const write = store.replaceConfigured;
    store.replaceConfigured = async () => {
      throw new Error('connection refused');
    };
    await sut.onApplicationBootstrap();
    store.replaceConfigured = write;
    await sut.tick();
    expect(log.configured).toHaveLength(1);
  });

  it('records a failed run as the last error without throwing', async () => {
    const { sut, log } = sutWith({
      imports: async () => {
        throw new AppError(ErrorCode.IMPORT_SOURCE_UNREACHABLE, 'git could not read the repository');
      },
    });
    await sut.runNow('team');
    expect(log.finished).toEqual([['team', { ok: false, error: 'git could not read the repository' }]]);
  });

  it('waits for a run under way, then makes its own', async () => {
    const { sut, log, holdFor } = sutWith();
    holdFor(2);
    await sut.runNow('team');
    expect(log.claims).toBe(3);
    expect(log.finished).toEqual([['team', { ok: true, result: { skills: [], warnings: [] } }]]);
  });

  it(
    'answers SKILL_MIRROR_NOT_FOUND naming the mirrors there are, and refuses to remove a configured ' + 'one',
    async () => {
      const { sut } = sutWith({ mirrors: [mirrorOf(), mirrorOf({ name: 'configured', origin: 'config' })] });
      await expect(sut.runNow('nope')).rejects.toMatchObject({
        code: ErrorCode.SKILL_MIRROR_NOT_FOUND,
        details: { mirrors: ['team', 'configured'] },
      });
      await expect(sut.remove('configured')).rejects.toMatchObject({ code: ErrorCode.SKILL_MIRROR_CONFIGURED });
    },
  );

  it('refuses to start with a configured source the importer cannot read, naming the table, the key and why', () => {
    const config = configWith({
      'app.skills.mirrors': {
        good: { source: 'git+file:///srv/skills.git#main:skills' },
        ssh: { source: 'git+ssh://host/repo.git' },
        word: { source: 'skills' },
      },
    });
    const problems = configuredMirrorProblems(config);
    expect(problems).toEqual([
      expect.stringMatching(/^\[app\.skills\.mirrors\.ssh\] source: Cannot import from 'git\+ssh:.*not git\+ssh:\/\//),
      expect.stringMatching(/^\[app\.skills\.mirrors\.word\] source: Cannot import from 'skills': it is not a URL\./),
    ]);
    const sut = new SkillMirrorService(config, fakeStore([]).store, {} as SkillImportService);
    expect(() => sut.onModuleInit()).toThrow(ConfigError);
    expect(() => sut.onModuleInit()).toThrow(/\[app\.skills\.mirrors\.ssh\] source: /);
    expect(() => sutWith().sut.onModuleInit()).not.toThrow();
  });
});
