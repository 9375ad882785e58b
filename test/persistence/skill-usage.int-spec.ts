import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '../../src/config/app-config.js';
import type { UsageEvent } from '../../src/domain/skills/usage/skill-usage.js';
import { BufferedUsageRecorder } from '../../src/infra/database/buffered-usage-recorder.js';
import { createDataSource, runPendingMigrations } from '../../src/infra/database/data-source.js';
import { SkillUsageRepository } from '../../src/infra/database/skill-usage.repository.js';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';

function config(overrides: Partial<AppConfig['app']['skills']['usage']> = {}): AppConfig {
  const usage = { enabled: true, flushIntervalMs: 60_000, retentionDays: 400, ...overrides };
  return { app: { skills: { usage } } } as unknown as AppConfig;
}

const today = new Date().toISOString().slice(0, 10);
const zero = {
  offered: 0,
  activatedTool: 0,
  activatedSlash: 0,
  activatedCommand: 0,
  activatedMcp: 0,
  activatedGateway: 0,
  activatedApi: 0,
  resourcesRead: 0,
  scriptsRun: 0,
  errors: 0,
  turns: 0,
};

/**
 * The usage funnel's storage on a real database: counts gathered in memory, written in one upsert a flush and added
 * to what is stored; a flush the database refuses keeps its counts for the next; shutdown writes what is left; the
 * sweep deletes days past the retention.
 */
describe(BufferedUsageRecorder.name, () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let repository: SkillUsageRepository;
  let statements: number;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = createDataSource(db.url, { poolSize: 2 });
    await dataSource.initialize();
    await runPendingMigrations(dataSource);
    repository = new SkillUsageRepository(dataSource);
    const add = repository.add.bind(repository);
    repository.add = (rows) => {
      statements += 1;
      return add(rows);
    };
  });
  beforeEach(async () => {
    statements = 0;
    await query(db.url, 'DELETE FROM skill_usage_daily');
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  const turn = (skill: string, model: string): UsageEvent[] => [
    { skill, model, version: 'sha256:a', counter: 'offered' },
    { skill, model, version: 'sha256:a', counter: 'activatedTool' },
    { skill, model, version: 'sha256:a', counter: 'resourcesRead' },
    { skill, model, version: 'sha256:a', counter: 'turns' },
  ];

  it('adds each flush to the stored counts, in one statement a flush whatever the number of rows', async () => {
    const sut = new BufferedUsageRecorder(config(), repository);
    sut.record([...turn('pdf', 'm1'), ...turn('pdf', 'm2'), ...turn('docx', 'm1')]);
    sut.record(turn('pdf', 'm1'));
    expect(await query(db.url, 'SELECT * FROM skill_usage_daily')).toEqual([]);
    await sut.flush();
    expect(statements).toBe(1);
    sut.record([
      { skill: 'pdf', model: 'm1', version: 'sha256:a', counter: 'errors' },
      { skill: 'docx', version: 'sha256:a', counter: 'activatedApi' },
    ]);
    await sut.flush();
    await sut.flush();
    expect(statements).toBe(2);
    const bySkillAndModel = await repository.summary({ groupBy: ['model'] });
    expect(bySkillAndModel).toEqual([
      { skill: 'docx', model: '', ...zero, activatedApi: 1 },
      { skill: 'docx', model: 'm1', ...zero, offered: 1, activatedTool: 1, resourcesRead: 1, turns: 1 },
      { skill: 'pdf', model: 'm1', ...zero, offered: 2, activatedTool: 2, resourcesRead: 2, turns: 2, errors: 1 },
      { skill: 'pdf', model: 'm2', ...zero, offered: 1, activatedTool: 1, resourcesRead: 1, turns: 1 },
    ]);
    expect(await repository.summary({ skill: 'pdf', model: 'm2', groupBy: ['day', 'version'] })).toEqual([
      {
        skill: 'pdf',
        day: today,
        version: 'sha256:a',
        ...zero,
        offered: 1,
        activatedTool: 1,
        resourcesRead: 1,
        turns: 1,
      },
    ]);
    expect(await repository.summary({ from: '2000-01-01', to: '2000-12-31', groupBy: [] })).toEqual([]);
  });

  it('keeps the counts of a flush the database refused, and writes them with the next', async () => {
    const sut = new BufferedUsageRecorder(config(), repository);
    sut.record(turn('pdf', 'm1'));
    await query(db.url, 'ALTER TABLE skill_usage_daily RENAME TO skill_usage_away');
    try {
      await sut.flush();
    } finally {
      await query(db.url, 'ALTER TABLE skill_usage_away RENAME TO skill_usage_daily');
    }
    sut.record(turn('pdf', 'm1'));
    await sut.flush();
    expect(await repository.summary({ groupBy: [] })).toEqual([
      { skill: 'pdf', ...zero, offered: 2, activatedTool: 2, resourcesRead: 2, turns: 2 },
    ]);
  });

  it('writes what is left at a clean shutdown, and records nothing when turned off', async () => {
    const sut = new BufferedUsageRecorder(config(), repository);
    sut.onApplicationBootstrap();
    sut.record(turn('pdf', 'm1'));
    await sut.beforeApplicationShutdown();
    expect(await repository.summary({ groupBy: [] })).toEqual([
      { skill: 'pdf', ...zero, offered: 1, activatedTool: 1, resourcesRead: 1, turns: 1 },
    ]);
    const off = new BufferedUsageRecorder(config({ enabled: false }), repository);
    off.record(turn('docx', 'm1'));
    await off.beforeApplicationShutdown();
    expect((await repository.summary({ groupBy: [] })).map((row) => row.skill)).toEqual(['pdf']);
  });

  it('sweeps the days past the retention and keeps the rest', async () => {
    const sut = new BufferedUsageRecorder(config({ retentionDays: 30 }), repository);
    await query(
      db.url,
      "INSERT INTO skill_usage_daily (day, skill, offered) VALUES (current_date - 31, 'old', 1), " +
        "(current_date - 29, 'kept', 1), (current_date, 'today', 1)",
    );
    expect(await sut.sweep()).toBe(1);
    expect((await repository.summary({ groupBy: [] })).map((row) => row.skill)).toEqual(['kept', 'today']);
  });
});
