import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { createApp } from '../../src/app/app.factory.js';
import { configWith } from '../../src/config/config-loader.js';
import { LifecycleService } from '../../src/domain/lifecycle/lifecycle.service.js';
import { DATA_SOURCE } from '../../src/infra/database/persistence.tokens.js';
import { createTestApp } from '../support/app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';

let tree: TempTree;
beforeAll(() => {
  tree = tempTree();
  writeSkill(tree, 'skills', 'pdf');
  writeSkill(tree, 'skills', 'docx');
});
afterAll(() => tree.cleanup());

describe('health probes (auth on)', () => {
  let app: NestFastifyApplication;
  const http = () => request(app.getHttpServer());
  beforeAll(async () => {
    app = await createTestApp({
      'app.auth.mode': 'api_key',
      'app.skills.enabled': true,
      'app.skills.directories': [tree.path('skills')],
    });
  });
  afterAll(async () => app?.close());

  it('GET /health answers as it always has, without a key', async () => {
    expect((await http().get('/health').expect(200)).body).toEqual({ status: 'ok', skills: 'enabled' });
  });

  it('GET /health/live: 200 without a key, never cached', async () => {
    const res = await http().get('/health/live').expect(200);
    expect(res.body).toEqual({ status: 'ok', info: {}, error: {}, details: {} });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('GET /health/ready: 200 naming each check (database, skills, lifecycle) without a key', async () => {
    const res = await http().get('/health/ready').expect(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.body).toMatchObject({
      status: 'ok',
      error: {},
      details: {
        database: { status: 'up', responseTimeMs: expect.any(Number) },
        skills: { status: 'up', enabled: true, loaded: 2, scannedAt: expect.any(String) },
        lifecycle: { status: 'up' },
      },
    });
    expect(Object.keys(res.body.info).sort()).toEqual(['database', 'lifecycle', 'skills']);
  });
});

describe('readiness when something is wrong', () => {
  let db: TestDatabase;
  let app: NestFastifyApplication | undefined;
  const http = () => request(app!.getHttpServer());
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });
  afterAll(async () => db?.drop());
  const start = (overrides: Record<string, unknown> = {}) =>
    createApp(configWith({ 'app.database.url': db.url, ...overrides }), { logger: false });

  it('while shutting down: 503 naming `lifecycle`, the other checks still up; liveness stays 200', async () => {
    app = await start();
    await http().get('/health/ready').expect(200);
    app.get(LifecycleService).beginShutdown();
    const res = await http().get('/health/ready').expect(503);
    expect(res.body).toMatchObject({
      status: 'error',
      error: { lifecycle: { status: 'down', message: 'This instance is shutting down.' } },
      info: { database: { status: 'up' }, skills: { status: 'up', enabled: false } },
    });
    expect(Object.keys(res.body.error)).toEqual(['lifecycle']);
    expect((await http().get('/health/live').expect(200)).body.status).toBe('ok');
    expect((await http().get('/health').expect(200)).body.status).toBe('ok');
  });

  it('database gone (its database dropped under it): 503 naming `database` with the reason', async () => {
    const doomed = await createTestDatabase();
    app = await createApp(configWith({ 'app.database.url': doomed.url }), { logger: false });
    await http().get('/health/ready').expect(200);
    await doomed.drop();
    const res = await http().get('/health/ready').expect(503);
    expect(res.body).toMatchObject({
      status: 'error',
      error: { database: { status: 'down', message: expect.stringMatching(/does not exist|terminat|connect/i) } },
    });
    expect(Object.keys(res.body.error)).toEqual(['database']);
    expect(res.body.info).toMatchObject({ skills: { status: 'up' }, lifecycle: { status: 'up' } });
    expect((await http().get('/health/live').expect(200)).body.status).toBe('ok');
  });

  it(
    'database frozen (every connection busy): 503 within the ping timeout, not after the statement ' + 'timeout',
    async () => {
      app = await start({ 'app.database.pool_size': 1 });
      const dataSource = app.get<DataSource>(DATA_SOURCE);
      const holding = dataSource.query('SELECT pg_sleep(3)').catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 100));
      // Waiting for the statement would have answered 200 once pg_sleep ended: the 503 and its message are the ping's
      // timeout.
      const res = await http().get('/health/ready').expect(503);
      expect(res.body.error).toEqual({ database: { status: 'down', message: 'no answer to SELECT 1 within 800 ms' } });
      await holding;
      await http().get('/health/ready').expect(200);
    },
  );

  it('the pool closed: 503 naming `database`', async () => {
    app = await start();
    await app.get<DataSource>(DATA_SOURCE).destroy();
    const res = await http().get('/health/ready').expect(503);
    expect(res.body.error.database).toMatchObject({ status: 'down', message: expect.any(String) });
  });
});
