import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import pg from 'pg';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { postgresUrlOf } from '../../src/infra/database/data-source.js';
import { DATA_SOURCE } from '../../src/infra/database/persistence.tokens.js';
import { UsersService } from '../../src/domain/users/users.service.js';
import { createTestApp } from '../support/app.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';

let tree: TempTree;
beforeAll(() => {
  tree = tempTree();
  writeSkill(tree, 'skills', 'pdf');
});
afterAll(() => tree.cleanup());

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/**
 * A 429 as every client sees it: the common error body naming the limit, and Retry-After in whole seconds within the
 * minute.
 */
function expectRateLimited(res: request.Response, limit: string, max: number): void {
  expect({ status: res.status, code: res.body.code }).toEqual({ status: 429, code: 'RATE_LIMITED' });
  expect(res.body.message).toContain(`[app.limits] ${limit}`);
  expect(res.body.message).toContain(`at most ${max} a minute per user, counted together by every instance`);
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(res.body.details).toEqual({ limit, max, retryAfterSeconds: retryAfter });
}

describe('requests_per_minute (auth on: per user)', () => {
  let app: NestFastifyApplication;
  let alice: string;
  let bob: string;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    app = await createTestApp({ 'app.auth.mode': 'api_key', 'app.limits.requests_per_minute': 5 });
    const users = app.get(UsersService);
    alice = (await users.createKey((await users.createUser('alice', 'member')).id)).key;
    bob = (await users.createKey((await users.createUser('bob', 'member')).id)).key;
  });
  afterAll(async () => app?.close());

  it('the 6th request in a minute is 429 RATE_LIMITED with Retry-After; another user is not affected', async () => {
    for (let i = 0; i < 5; i++) await http().get('/v1/me').set(bearer(alice)).expect(200);
    // Every route shares one budget: a different route is refused too.
    expectRateLimited(await http().get('/v1/chats').set(bearer(alice)), 'requests_per_minute', 5);
    expectRateLimited(await http().get('/v1/me').set(bearer(alice)), 'requests_per_minute', 5);
    expect((await http().get('/v1/me').set(bearer(bob)).expect(200)).body.name).toBe('bob');
  });

  it('/health, /health/live and /health/ready are never limited', async () => {
    for (let i = 0; i < 12; i++) {
      await http().get('/health').expect(200);
      await http().get('/health/live').expect(200);
      await http().get('/health/ready').expect(200);
    }
  });

  it(
    'a GraphQL operation is one request however many root fields it has, and is refused as a whole ' + 'past the limit',
    async () => {
      const carol = await (async () => {
        const users = app.get(UsersService);
        return (await users.createKey((await users.createUser('carol', 'member')).id)).key;
      })();
      const query = { query: '{ me { name } chats { total } }' };
      for (let i = 0; i < 5; i++) {
        const res = await http().post('/graphql').set(bearer(carol)).send(query).expect(200);
        expect(res.body).toEqual({ data: { me: { name: 'carol' }, chats: { total: 0 } } });
      }
      const refused = await http().post('/graphql').set(bearer(carol)).send(query);
      expect(refused.body.data ?? null).toBeNull();
      const codes = refused.body.errors.map((e: { extensions: { code: string } }) => e.extensions.code);
      expect(codes.length).toBeGreaterThanOrEqual(1);
      expect(new Set(codes)).toEqual(new Set(['RATE_LIMITED']));
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      // And REST shares the same budget.
      expect((await http().get('/v1/me').set(bearer(carol))).status).toBe(429);
    },
  );
});

describe('turns_per_minute (REST and GraphQL turns share it; separate from requests)', () => {
  let ctx: ChatTestContext;
  let alice: string;
  let bob: string;
  const http = () => request(ctx.app.getHttpServer());

  beforeAll(async () => {
    ctx = await startChatApp([tree.path('skills')], {
      'app.auth.mode': 'api_key',
      'app.limits.turns_per_minute': 2,
      'app.limits.requests_per_minute': 50,
    });
    ctx.model.answerWith(() => ({ text: 'ok' }));
    const users = ctx.app.get(UsersService);
    alice = (await users.createKey((await users.createUser('alice', 'member')).id)).key;
    bob = (await users.createKey((await users.createUser('bob', 'member')).id)).key;
  });
  afterAll(async () => ctx?.close());

  it('the 3rd turn in a minute is refused (REST, then GraphQL); other requests and other users go on', async () => {
    const chat = (await http().post('/v1/chats').set(bearer(alice)).send({}).expect(201)).body.id as string;
    await http().post(`/v1/chats/${chat}/messages`).set(bearer(alice)).send({ content: 'one' }).expect(201);
    const mutation = {
      query: 'mutation($chatId: ID!) { sendMessage(chatId: $chatId, content: "two") { assistantMessage { content } } }',
      variables: { chatId: chat },
    };
    expect(
      (await http().post('/graphql').set(bearer(alice)).send(mutation).expect(200)).body.data.sendMessage
        .assistantMessage.content,
    ).toBe('ok');

    expectRateLimited(
      await http().post(`/v1/chats/${chat}/messages`).set(bearer(alice)).send({ content: 'three' }),
      'turns_per_minute',
      2,
    );
    const graphql = await http().post('/graphql').set(bearer(alice)).send(mutation);
    expect(graphql.body.errors[0].extensions).toMatchObject({ code: 'RATE_LIMITED', status: 429 });
    expect(graphql.body.errors[0].message).toContain('turns_per_minute');

    // The turn limit is not the request limit: alice can still read, and bob can still talk.
    expect((await http().get(`/v1/chats/${chat}/messages`).set(bearer(alice)).expect(200)).body.total).toBe(4);
    const bobChat = (await http().post('/v1/chats').set(bearer(bob)).send({}).expect(201)).body.id as string;
    await http().post(`/v1/chats/${bobChat}/messages`).set(bearer(bob)).send({ content: 'hi' }).expect(201);
  });

  it('a refused turn stores nothing and reaches no model', async () => {
    const before = ctx.model.requests.length;
    const chat = (await http().post('/v1/chats').set(bearer(alice)).send({}).expect(201)).body.id as string;
    expect((await http().post(`/v1/chats/${chat}/messages`).set(bearer(alice)).send({ content: 'again' })).status).toBe(
      429,
    );
    expect(ctx.model.requests.length).toBe(before);
    expect((await http().get(`/v1/chats/${chat}/messages`).set(bearer(alice)).expect(200)).body.total).toBe(0);
  });
});

describe('limits while auth is off: per client address', () => {
  let app: NestFastifyApplication;
  beforeAll(async () => {
    app = await createTestApp({ 'app.auth.mode': 'none', 'app.limits.requests_per_minute': 3 });
  });
  afterAll(async () => app?.close());

  it('counts every caller from one address together, and says so', async () => {
    for (let i = 0; i < 3; i++) await request(app.getHttpServer()).get('/v1/chats').expect(200);
    const res = await request(app.getHttpServer()).get('/v1/me').expect(429);
    expect(res.body.message).toContain('per client address');
    expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    await request(app.getHttpServer()).get('/health/ready').expect(200);
  });

  it('counts a request that carries a valid key against its user, not the address, and says so', async () => {
    const users = app.get(UsersService);
    const { key } = await users.createKey((await users.createUser('erin', 'member')).id);
    // The address's own allowance spent (or already spent by the test above).
    for (let i = 0; i < 4; i++) await request(app.getHttpServer()).get('/v1/chats');
    await request(app.getHttpServer()).get('/v1/chats').expect(429);
    for (let i = 0; i < 3; i++)
      expect((await request(app.getHttpServer()).get('/v1/me').set(bearer(key)).expect(200)).body.name).toBe('erin');
    const res = await request(app.getHttpServer()).get('/v1/me').set(bearer(key)).expect(429);
    expect(res.body.message).toContain('at most 3 a minute per user');
  });
});

describe('the rate limits fail open while their table cannot be reached', () => {
  let app: NestFastifyApplication;
  const lines: string[] = [];
  const keep = (message: unknown) => void lines.push(String(message));
  const http = () => request(app.getHttpServer());
  const metric = (text: string, name: string) => text.split('\n').find((line) => line.startsWith(name));

  beforeAll(async () => {
    app = await createTestApp(
      { 'app.auth.mode': 'none', 'app.limits.requests_per_minute': 3 },
      { log: keep, warn: keep, error: keep, debug: () => undefined, verbose: () => undefined },
    );
  });
  afterAll(async () => app?.close());

  it('a locked table: requests pass, counted, with one warning; once free the limit holds again', async () => {
    const locker = new pg.Client({ connectionString: postgresUrlOf(app.get<DataSource>(DATA_SOURCE)) });
    await locker.connect();
    try {
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE rate_limits IN ACCESS EXCLUSIVE MODE');
      for (let i = 0; i < 6; i++) await http().get('/v1/chats').expect(200);
      const metrics = (await http().get('/metrics').expect(200)).text;
      expect(metric(metrics, 'skillhost_rate_limit_store_errors_total')).toBe(
        'skillhost_rate_limit_store_errors_total 1',
      );
      expect(metric(metrics, 'skillhost_rate_limit_unchecked_total')).toBe(
        'skillhost_rate_limit_unchecked_total{limit="requests_per_minute"} 7',
      );
      const warnings = lines.filter((line) => line.startsWith('Rate limits are not being checked'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain('statement timeout');
    } finally {
      await locker.end();
    }
    // The store is asked again a few seconds after the failure; from then on the address's 3 a minute hold.
    const deadline = Date.now() + 15_000;
    let status = 200;
    while (status !== 429 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      status = (await http().get('/v1/chats')).status;
    }
    expect(status).toBe(429);
    expect(lines.filter((line) => line.startsWith('Rate limits are checked again'))).toHaveLength(1);
  }, 30_000);
});
