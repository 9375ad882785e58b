import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { createDataSource } from '../../src/infra/database/data-source.js';
import {
  LISTEN_APPLICATION_NAME,
  MAX_NOTIFY_PAYLOAD_BYTES,
  PgNotificationsService,
} from '../../src/infra/database/pg-notifications.service.js';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';

/**
 * Two services on one real database, each over its own DataSource, as two instances would be:
 * messages in order, the payload limit, a LISTEN connection killed by the server, and shutdown.
 */

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe(PgNotificationsService.name, () => {
  let db: TestDatabase;
  let dbName: string;
  /** The server's `postgres` database: reachable while the test database refuses connections. */
  let adminUrl: string;
  const dataSources: DataSource[] = [];
  const services: PgNotificationsService[] = [];

  /** A service over a DataSource of its own (an instance); closed after each test. */
  async function instance(): Promise<PgNotificationsService> {
    const dataSource = createDataSource(db.url, { poolSize: 2 });
    await dataSource.initialize();
    dataSources.push(dataSource);
    const sut = new PgNotificationsService(dataSource);
    services.push(sut);
    return sut;
  }

  /** The backends of LISTEN connections on the test database. */
  const listeners = () =>
    query<{ pid: number }>(adminUrl, 'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = $2', [
      dbName,
      LISTEN_APPLICATION_NAME,
    ]).then((rows) => rows.map((r) => r.pid));

  beforeAll(async () => {
    db = await createTestDatabase();
    const url = new URL(db.url);
    dbName = url.pathname.slice(1);
    url.pathname = '/postgres';
    adminUrl = url.toString();
  });
  afterEach(async () => {
    jest.restoreAllMocks();
    for (const service of services.splice(0)) await service.beforeApplicationShutdown();
    for (const dataSource of dataSources.splice(0)) await dataSource.destroy();
  });
  afterAll(async () => db?.drop());

  it('delivers one instance’s notifications to another in the order sent, and to itself', async () => {
    const [a, b] = [await instance(), await instance()];
    const heardByA: string[] = [];
    const heardByB: string[] = [];
    a.listen('skillhost_test', (payload) => heardByA.push(payload));
    b.listen('skillhost_test', (payload) => heardByB.push(payload));
    await Promise.all([a.ready(), b.ready()]);

    const sent = Array.from({ length: 200 }, (_, i) => JSON.stringify({ origin: b.instanceId, n: i }));
    // Not awaited one by one: the order is the calls', whatever the pool does.
    await Promise.all(sent.map((payload) => b.notify('skillhost_test', payload)));
    await until(() => heardByA.length === 200 && heardByB.length === 200, '200 notifications on both');
    expect(heardByA).toEqual(sent);
    // An instance hears its own messages: the payload's origin tells them apart.
    expect(heardByB).toEqual(sent);
    expect(a.instanceId).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.instanceId).not.toBe(b.instanceId);
  });

  it('opens no LISTEN connection until something listens; one for all channels after', async () => {
    const [a, b] = [await instance(), await instance()];
    await b.notify('skillhost_test', 'nobody listens yet');
    expect(await listeners()).toEqual([]);
    const heard: string[] = [];
    a.listen('skillhost_one', (payload) => heard.push(`one:${payload}`));
    a.listen('skillhost_two', (payload) => heard.push(`two:${payload}`));
    await a.ready();
    expect(await listeners()).toHaveLength(1);
    await b.notify('skillhost_two', 'x');
    await b.notify('skillhost_one', 'y');
    await until(() => heard.length === 2, 'two notifications');
    expect(heard).toEqual(['two:x', 'one:y']);
  });

  it('stops calling a handler once unsubscribed; the channel’s other handlers go on', async () => {
    const [a, b] = [await instance(), await instance()];
    const first: string[] = [];
    const second: string[] = [];
    const stopFirst = a.listen('skillhost_test', (payload) => first.push(payload));
    a.listen('skillhost_test', (payload) => second.push(payload));
    await a.ready();
    await b.notify('skillhost_test', '1');
    await until(() => second.length === 1, 'the first notification');
    stopFirst();
    await b.notify('skillhost_test', '2');
    await until(() => second.length === 2, 'the second notification');
    expect(first).toEqual(['1']);
    expect(second).toEqual(['1', '2']);
  });

  it(
    'refuses a payload PostgreSQL would refuse, and a channel that is not a plain identifier, saying ' + 'what to do',
    async () => {
      const [a, b] = [await instance(), await instance()];
      const heard: string[] = [];
      a.listen('skillhost_test', (payload) => heard.push(payload));
      await a.ready();
      expect(() => b.notify('skillhost_test', 'x'.repeat(MAX_NOTIFY_PAYLOAD_BYTES + 1))).toThrow(
        `A notification on 'skillhost_test' may carry at most 7999 bytes (PostgreSQL's limit); this one has 8000: ` +
          `store the data in a table and notify its id instead.`,
      );
      // Bytes, not characters: 4000 × "é" is 8000 bytes.
      expect(() => b.notify('skillhost_test', 'é'.repeat(4000))).toThrow(/this one has 8000/);
      for (const channel of ['', 'Upper', '1digit', 'with-dash', 'x; DROP TABLE chats', 'a'.repeat(64)]) {
        expect(() => b.notify(channel, 'x')).toThrow(/Invalid notification channel/);
        expect(() => a.listen(channel, () => undefined)).toThrow(/Invalid notification channel/);
      }
      const largest = `${'é'.repeat(3999)}x`;
      await b.notify('skillhost_test', largest);
      await until(() => heard.length === 1, 'the largest allowed payload');
      expect(heard).toEqual([largest]);
    },
  );

  it(
    'survives the server ending its LISTEN connection: reconnects, listens again, tells onReconnect, and messages ' +
      'flow again',
    async () => {
      const [a, b] = [await instance(), await instance()];
      const warnings = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      const logs = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
      jest.spyOn(Logger.prototype, 'debug').mockImplementation(() => undefined);
      const heard: string[] = [];
      let reconnects = 0;
      a.listen('skillhost_test', (payload) => heard.push(payload));
      a.onReconnect(() => reconnects++);
      await a.ready();
      await b.notify('skillhost_test', 'before');
      await until(() => heard.length === 1, 'the first notification');

      const [pid] = await listeners();
      await query(db.url, 'SELECT pg_terminate_backend($1)', [pid]);
      await until(() => reconnects === 1, 'onReconnect');
      const [newPid] = await listeners();
      expect(newPid).not.toBe(pid);
      await b.notify('skillhost_test', 'after');
      await until(() => heard.length === 2, 'a notification after the reconnect');
      expect(heard).toEqual(['before', 'after']);
      expect(warnings.mock.calls.map(([message]) => message)).toEqual([
        expect.stringMatching(/^The LISTEN connection was lost \(.*terminat.*\); reconnecting with back-off/),
      ]);
      expect(logs.mock.calls.map(([message]) => message)).toEqual(['The LISTEN connection is back']);
    },
  );

  it('keeps trying while the database refuses connections, logging the loss and the return once each', async () => {
    const [a, b] = [await instance(), await instance()];
    const warnings = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const logs = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const debug = jest.spyOn(Logger.prototype, 'debug').mockImplementation(() => undefined);
    const heard: string[] = [];
    let reconnects = 0;
    a.listen('skillhost_test', (payload) => heard.push(payload));
    a.onReconnect(() => reconnects++);
    await a.ready();
    // b's pool keeps its open connection: only new connections are refused.
    await b.notify('skillhost_test', 'warm-up');
    await until(() => heard.length === 1, 'the warm-up notification');

    await query(adminUrl, `ALTER DATABASE ${dbName} WITH ALLOW_CONNECTIONS false`);
    try {
      const [pid] = await listeners();
      await query(adminUrl, 'SELECT pg_terminate_backend($1)', [pid]);
      await until(() => debug.mock.calls.length >= 3, 'three refused attempts');
      // Sent while a is away: missed, which is why onReconnect exists.
      await b.notify('skillhost_test', 'missed');
    } finally {
      await query(adminUrl, `ALTER DATABASE ${dbName} WITH ALLOW_CONNECTIONS true`);
    }
    await until(() => reconnects === 1, 'onReconnect');
    await b.notify('skillhost_test', 'back');
    await until(() => heard.length === 2, 'a notification after the reconnect');
    expect(heard).toEqual(['warm-up', 'back']);
    expect(warnings.mock.calls).toEqual([[expect.stringMatching(/^The LISTEN connection was lost/)]]);
    expect(logs.mock.calls).toEqual([[expect.stringMatching(/^The LISTEN connection is back after \d+ attempts$/)]]);
  });

  it(
    'shutdown closes the LISTEN connection and stops reconnecting; queued notifications are still sent, later ' +
      'ones refused',
    async () => {
      const [a, b] = [await instance(), await instance()];
      const heard: string[] = [];
      b.listen('skillhost_test', (payload) => heard.push(payload));
      a.listen('skillhost_test', () => undefined);
      await Promise.all([a.ready(), b.ready()]);
      expect(await listeners()).toHaveLength(2);

      const queued = Array.from({ length: 20 }, (_, i) => a.notify('skillhost_test', `queued ${i}`));
      await a.beforeApplicationShutdown();
      await Promise.all(queued);
      await until(() => heard.length === 20, 'the queued notifications');
      expect(heard).toEqual(Array.from({ length: 20 }, (_, i) => `queued ${i}`));
      expect(await listeners()).toHaveLength(1);
      await expect(a.notify('skillhost_test', 'late')).rejects.toThrow(
        "Cannot notify on 'skillhost_test': the application is shutting down.",
      );
      await expect(a.ready()).rejects.toThrow(/shutting down/);
      expect(() => a.listen('skillhost_test', () => undefined)).toThrow(/shutting down/);
    },
  );

  it('shutdown while reconnecting ends the back-off: nothing is left running', async () => {
    const a = await instance();
    const warnings = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    a.listen('skillhost_test', () => undefined);
    await a.ready();
    const [pid] = await listeners();
    await query(adminUrl, 'SELECT pg_terminate_backend($1)', [pid]);
    await until(() => warnings.mock.calls.length === 1, 'the loss to be noticed');
    const waiting = a.ready();
    await a.beforeApplicationShutdown();
    await expect(waiting).rejects.toThrow(/shutting down/);
    // Longer than the first back-off delays: had a timer survived, a connection would reappear.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await listeners()).toEqual([]);
  });
});
