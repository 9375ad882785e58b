import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import type { LimitSpec } from '../../src/domain/limits/rate-limit-store.js';
import { createDataSource, runPendingMigrations } from '../../src/infra/database/data-source.js';
import { RATE_LIMIT_APPLICATION_NAME, RateLimitRepository } from '../../src/infra/database/rate-limit.repository.js';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';

/**
 * The rate limits' store on a real database, two repositories over DataSources of their own as two instances would
 * have them: grants never add up to more than the budget, a partial or refused take leaves the count as if it had
 * asked for what it got, and a locked table or killed connections fail fast.
 */
describe(RateLimitRepository.name, () => {
  let db: TestDatabase;
  const dataSources: DataSource[] = [];
  const repositories: RateLimitRepository[] = [];
  const requests = (max: number): LimitSpec => ({ name: 'requests_per_minute', max, windowMs: 60_000 });

  async function instance(): Promise<RateLimitRepository> {
    const dataSource = createDataSource(db.url, { poolSize: 1 });
    await dataSource.initialize();
    dataSources.push(dataSource);
    const sut = new RateLimitRepository(dataSource);
    repositories.push(sut);
    return sut;
  }

  const counted = async (key: string) =>
    (await query<{ points: number }>(db.url, 'SELECT points FROM rate_limits WHERE key = $1', [key]))[0]?.points;

  beforeAll(async () => {
    db = await createTestDatabase();
    const migrator = createDataSource(db.url, { poolSize: 1 });
    await migrator.initialize();
    await runPendingMigrations(migrator);
    await migrator.destroy();
  });
  afterEach(async () => {
    for (const repository of repositories.splice(0)) await repository.onApplicationShutdown();
    for (const dataSource of dataSources.splice(0)) await dataSource.destroy();
  });
  afterAll(async () => db?.drop());

  it('grants up to what is left in the window; a partial take gives the excess back', async () => {
    const [a, b] = [await instance(), await instance()];
    const first = await a.take(requests(10), 'user:u1', 8);
    expect(first).toMatchObject({ granted: 8, remaining: 2 });
    expect(first.msBeforeNext).toBeGreaterThan(55_000);
    expect(first.msBeforeNext).toBeLessThanOrEqual(60_000);
    expect(await b.take(requests(10), 'user:u1', 5)).toMatchObject({ granted: 2, remaining: 0 });
    expect(await counted('requests_per_minute:user:u1')).toBe(10);
    const refused = await a.take(requests(10), 'user:u1', 1);
    expect(refused).toMatchObject({ granted: 0, remaining: 0 });
    expect(refused.msBeforeNext).toBeGreaterThan(0);
    expect(await counted('requests_per_minute:user:u1')).toBe(10);
  });

  it('concurrent takes of two instances never add up to more than the budget, nor waste any of it', async () => {
    const [a, b] = [await instance(), await instance()];
    const sizes = Array.from({ length: 60 }, (_, i) => 1 + (i % 7));
    const grants = await Promise.all(sizes.map((size, i) => (i % 2 ? a : b).take(requests(100), 'user:u2', size)));
    expect(grants.reduce((sum, grant) => sum + grant.granted, 0)).toBe(100);
    expect(await counted('requests_per_minute:user:u2')).toBe(100);
  });

  it('keeps each limit and each caller apart', async () => {
    const a = await instance();
    await a.take(requests(3), 'user:u3', 3);
    expect((await a.take(requests(3), 'user:u3', 1)).granted).toBe(0);
    expect((await a.take({ name: 'turns_per_minute', max: 3, windowMs: 60_000 }, 'user:u3', 1)).granted).toBe(1);
    expect((await a.take(requests(3), 'ip:127.0.0.1', 1)).granted).toBe(1);
  });

  it('starts a new window with the whole budget once the last one ends', async () => {
    const a = await instance();
    const short: LimitSpec = { name: 'requests_per_minute', max: 2, windowMs: 1000 };
    expect((await a.take(short, 'user:u4', 2)).granted).toBe(2);
    const refused = await a.take(short, 'user:u4', 1);
    expect(refused.granted).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, refused.msBeforeNext + 10));
    expect(await a.take(short, 'user:u4', 2)).toMatchObject({ granted: 2, remaining: 0 });
  });

  it('fails fast while the table is locked, and answers again once it is free', async () => {
    const a = await instance();
    await a.take(requests(10), 'user:u5', 1);
    const locker = new pg.Client({ connectionString: db.url });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE rate_limits IN ACCESS EXCLUSIVE MODE');
      await expect(a.take(requests(10), 'user:u5', 1)).rejects.toThrow(/statement timeout/);
      await locker.query('ROLLBACK');
      expect((await a.take(requests(10), 'user:u5', 1)).granted).toBe(1);
    } finally {
      await locker.end();
    }
  });

  it('recovers by itself when the server ends its connections', async () => {
    const a = await instance();
    await a.take(requests(10), 'user:u6', 1);
    const dbName = new URL(db.url).pathname.slice(1);
    const ended = await query<{ ended: boolean }>(
      db.url,
      'SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE datname = $1 AND application_name = $2',
      [dbName, RATE_LIMIT_APPLICATION_NAME],
    );
    expect(ended).toEqual([{ ended: true }]);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await a.take(requests(10), 'user:u6', 1)).granted).toBe(1);
    expect(await counted('requests_per_minute:user:u6')).toBe(2);
  });
});
