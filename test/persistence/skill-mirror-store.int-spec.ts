import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { createDataSource, runPendingMigrations } from '../../src/infra/database/data-source.js';
import { SkillMirrorRepository } from '../../src/infra/database/skill-mirror.repository.js';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';

/**
 * The mirrors' table on a real database, with repositories over DataSources of their own as several instances would
 * have them: one run at a time per mirror, the schedule after a run, and what the configuration writes.
 */
describe(SkillMirrorRepository.name, () => {
  let db: TestDatabase;
  const dataSources: DataSource[] = [];
  const instances: SkillMirrorRepository[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    for (let i = 0; i < 4; i++) {
      const dataSource = createDataSource(db.url, { poolSize: 1 });
      await dataSource.initialize();
      dataSources.push(dataSource);
      instances.push(new SkillMirrorRepository(dataSource));
    }
    await runPendingMigrations(dataSources[0]);
  });
  afterAll(async () => {
    for (const dataSource of dataSources) await dataSource.destroy();
    await db?.drop();
  });

  it('lets one instance of several claim a due mirror; the others find none until its lease is over', async () => {
    const [first] = instances;
    await first.add({ name: 'team', source: 'git+https://example.test/s.git', intervalSeconds: 900 }, null);
    const claims = await Promise.all(instances.map((instance) => instance.claim(undefined, 600)));
    expect(claims.filter((claim) => claim !== null).map((claim) => claim?.name)).toEqual(['team']);
    expect(await first.claim('team', 600)).toBeNull();
    expect((await first.find('team'))?.running).toBe(true);

    await first.finish('team', { ok: false, error: 'unreachable' });
    const after = await first.find('team');
    expect(after).toMatchObject({ running: false, lastError: 'unreachable', lastSuccessAt: null });
    // Not due again until an interval has passed; a run asked for by name is free at once.
    expect(await first.claim(undefined, 600)).toBeNull();
    expect((after?.nextRunAt.getTime() ?? 0) - (after?.lastRunAt?.getTime() ?? 0)).toBeGreaterThanOrEqual(899_000);
    expect((await first.claim('team', 600))?.name).toBe('team');
    await first.finish('team', { ok: true, result: { skills: [], warnings: [] } });
    expect(await first.find('team')).toMatchObject({ lastError: 'unreachable', lastResult: { skills: [] } });
  });

  it('takes back a lease a dead run left once it is over', async () => {
    const [first, second] = instances;
    await first.add({ name: 'lease', source: 'git+https://example.test/l.git', intervalSeconds: 900 }, null);
    expect((await first.claim('lease', 600))?.name).toBe('lease');
    await query(db.url, "UPDATE skill_mirrors SET claimed_until = now() - interval '1 second' WHERE name = 'lease'");
    expect((await second.claim('lease', 600))?.name).toBe('lease');
  });

  it('writes the configured mirrors: takes over a name, keeps an unchanged schedule, removes what left', async () => {
    const [first] = instances;
    await first.add({ name: 'docs', source: 'git+https://example.test/d.git', intervalSeconds: 60 }, null);
    await first.replaceConfigured([
      { name: 'docs', source: 'git+https://example.test/d2.git', intervalSeconds: 3600 },
      { name: 'old', source: 'git+https://example.test/o.git', intervalSeconds: 3600 },
    ]);
    expect(await first.find('docs')).toMatchObject({ origin: 'config', source: 'git+https://example.test/d2.git' });
    expect(await first.remove('docs', 'api')).toBe(false);
    await first.replaceConfigured([{ name: 'docs', source: 'git+https://example.test/d2.git', intervalSeconds: 3600 }]);
    expect(await first.find('old')).toBeNull();
    expect((await first.list()).map((mirror) => [mirror.name, mirror.origin])).toEqual([
      ['docs', 'config'],
      ['lease', 'api'],
      ['team', 'api'],
    ]);
    expect(await first.add({ name: 'docs', source: 'x', intervalSeconds: 60 }, null)).toBeNull();
  });
});
