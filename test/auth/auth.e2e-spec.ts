import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { LoggerService } from '@nestjs/common';
import request from 'supertest';
import { KEY_CACHE_TTL_MS } from '../../src/domain/users/auth.service.js';
import { UsersService } from '../../src/domain/users/users.service.js';
import { createApp } from '../../src/app/app.factory.js';
import { configWith } from '../../src/config/config-loader.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { query } from '../support/database.js';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';

let tree: TempTree;
beforeAll(() => {
  tree = tempTree();
  writeSkill(tree, 'skills', 'pdf', { description: 'Works with PDF files.' });
});
afterAll(() => tree.cleanup());

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

describe('API keys and users (auth mode api_key)', () => {
  let ctx: ChatTestContext;
  let users: UsersService;
  const http = () => request(ctx.app.getHttpServer());
  let adminKey: string;
  beforeAll(async () => {
    ctx = await startChatApp([tree.path('skills')], { 'app.auth.mode': 'api_key' });
    users = ctx.app.get(UsersService);
    const root = await users.createUser('root', 'admin');
    adminKey = (await users.createKey(root.id, { label: 'bootstrap' })).key;
  });
  afterAll(async () => ctx?.close());

  it('an admin creates a user and a key for it; the key is shown once and only its SHA-256 is stored', async () => {
    const created = await http()
      .post('/v1/admin/users')
      .set('authorization', `Bearer ${adminKey}`)
      .send({ name: 'carol' })
      .expect(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'carol',
      role: 'member',
      disabled: false,
      createdAt: expect.any(String),
    });
    const key = await http()
      .post(`/v1/admin/users/${created.body.id}/keys`)
      .set('authorization', `Bearer ${adminKey}`)
      .send({ label: 'ci' })
      .expect(201);
    expect(key.body).toEqual({
      id: expect.any(String),
      user: 'carol',
      label: 'ci',
      prefix: key.body.key.slice(0, 10),
      key: expect.stringMatching(/^skh_[A-Za-z0-9_-]{43}$/),
      createdAt: expect.any(String),
      lastUsedAt: null,
      revokedAt: null,
      expiresAt: null,
    });
    const rows = await query<Record<string, unknown>>(ctx.db.url, 'SELECT * FROM api_keys WHERE id = $1', [
      key.body.id,
    ]);
    expect(rows[0].key_hash).toBe(sha256(key.body.key));
    expect(JSON.stringify(rows)).not.toContain(key.body.key);
    const me = await http().get('/v1/me').set('x-api-key', key.body.key).expect(200);
    expect(me.body).toMatchObject({ name: 'carol', role: 'member', authMode: 'api_key', keyId: key.body.id });
    const listed = await http().get('/v1/me/keys').set('authorization', `bearer ${key.body.key}`).expect(200);
    expect(listed.body.items).toEqual([
      expect.objectContaining({ id: key.body.id, prefix: key.body.prefix, label: 'ci' }),
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(key.body.key);
  });

  it.each([
    ['no header', {}, 'An API key is required'],
    ['another scheme', { authorization: 'Basic dXNlcjpwYXNz' }, 'malformed'],
    ['a key of the wrong shape', { authorization: 'Bearer skh_short' }, 'malformed'],
    ['a huge header', { authorization: `Bearer ${'x'.repeat(8000)}` }, 'malformed'],
    ['a well-formed unknown key', { authorization: `Bearer skh_${'A'.repeat(43)}` }, 'not valid'],
  ])('%s → 401 UNAUTHENTICATED with WWW-Authenticate', async (_, headers, message) => {
    const res = await http()
      .get('/v1/me')
      .set(headers as Record<string, string>)
      .expect(401);
    expect(res.body).toEqual({ code: 'UNAUTHENTICATED', message: expect.stringContaining(message) });
    // RFC 6750: `invalid_token` when a key was sent, and the message (printable ASCII without `"`) either way.
    const description = res.body.message
      .replace(/"/g, "'")
      .replace(/…/g, '...')
      .replace(/[^\x20-\x7e]/g, '?');
    const error = _ === 'no header' ? '' : ', error="invalid_token"';
    expect(res.headers['www-authenticate']).toBe(
      `Bearer realm="skillhost"${error}, error_description="${description}"`,
    );
  });

  it(
    'a revoked key stops working at once on the instance that revoked it, even though it was just ' + 'cached',
    async () => {
      const dave = await users.createUser('dave', 'member');
      const { key, apiKey } = await users.createKey(dave.id);
      await http().get('/v1/me').set('authorization', `Bearer ${key}`).expect(200);
      await http().delete(`/v1/me/keys/${apiKey.id}`).set('authorization', `Bearer ${key}`).expect(204);
      const res = await http().get('/v1/me').set('authorization', `Bearer ${key}`).expect(401);
      expect(res.body.message).toBe('The API key has been revoked.');
      // Revoking again, or someone else's key, is simply not found for a member.
      const other = await users.createKey((await users.createUser('erin', 'member')).id);
      await http().delete(`/v1/me/keys/${apiKey.id}`).set('authorization', `Bearer ${other.key}`).expect(404);
    },
  );

  it('a revocation reaches another instance on the same database within 5 s', async () => {
    const second = await createApp(configWith({ 'app.database.url': ctx.db.url, 'app.auth.mode': 'api_key' }), {
      logger: false,
    });
    try {
      const frank = await users.createUser('frank', 'member');
      const { key, apiKey } = await users.createKey(frank.id);
      await request(second.getHttpServer()).get('/v1/me').set('authorization', `Bearer ${key}`).expect(200);
      const revokedAt = Date.now();
      await http().delete(`/v1/admin/keys/${apiKey.id}`).set('authorization', `Bearer ${adminKey}`).expect(204);
      let status = 200;
      while (status === 200 && Date.now() - revokedAt < 5000) {
        status = (await request(second.getHttpServer()).get('/v1/me').set('authorization', `Bearer ${key}`)).status;
        if (status === 200) await new Promise((r) => setTimeout(r, 100));
      }
      expect(status).toBe(401);
      expect(KEY_CACHE_TTL_MS).toBeLessThan(5000);
    } finally {
      await second.close();
    }
  });

  it('last_used_at is written on first use and not again within the minute', async () => {
    const gina = await users.createUser('gina', 'member');
    const { key, apiKey } = await users.createKey(gina.id);
    const lastUsed = async () =>
      (
        await query<{ last_used_at: Date | null }>(ctx.db.url, 'SELECT last_used_at FROM api_keys WHERE id = $1', [
          apiKey.id,
        ])
      )[0].last_used_at;
    expect(await lastUsed()).toBeNull();
    await http().get('/v1/me').set('authorization', `Bearer ${key}`).expect(200);
    let first: Date | null = null;
    for (let i = 0; i < 50 && first === null; i++) {
      first = await lastUsed();
      if (first === null) await new Promise((r) => setTimeout(r, 20));
    }
    expect(first).toBeInstanceOf(Date);
    await query(ctx.db.url, "UPDATE api_keys SET last_used_at = now() - interval '30 seconds' WHERE id = $1", [
      apiKey.id,
    ]);
    const marked = await lastUsed();
    // A second app has no memory of the first use: only the database's once-a-minute rule holds it back.
    const second = await createApp(configWith({ 'app.database.url': ctx.db.url, 'app.auth.mode': 'api_key' }), {
      logger: false,
    });
    try {
      await request(second.getHttpServer()).get('/v1/me').set('authorization', `Bearer ${key}`).expect(200);
      await new Promise((r) => setTimeout(r, 200));
      expect(await lastUsed()).toEqual(marked);
    } finally {
      await second.close();
    }
  });

  it('disabling a user or changing its role takes effect at once on this instance', async () => {
    const hal = await users.createUser('hal', 'member');
    const { key } = await users.createKey(hal.id);
    await http().get('/v1/admin/users').set('authorization', `Bearer ${key}`).expect(403);
    await http()
      .patch(`/v1/admin/users/${hal.id}`)
      .set('authorization', `Bearer ${adminKey}`)
      .send({ role: 'admin' })
      .expect(200);
    await http().get('/v1/admin/users').set('authorization', `Bearer ${key}`).expect(200);
    const disabled = await http()
      .patch(`/v1/admin/users/${hal.id}`)
      .set('authorization', `Bearer ${adminKey}`)
      .send({ disabled: true })
      .expect(200);
    expect(disabled.body).toMatchObject({ name: 'hal', role: 'admin', disabled: true });
    expect((await http().get('/v1/me').set('authorization', `Bearer ${key}`).expect(401)).body.message).toBe(
      "The user 'hal' is disabled.",
    );
    await http()
      .patch(`/v1/admin/users/${hal.id}`)
      .set('authorization', `Bearer ${adminKey}`)
      .send({ disabled: false })
      .expect(200);
    // null is "not sent": nothing changes, nothing fails.
    const unchanged = await http()
      .patch(`/v1/admin/users/${hal.id}`)
      .set('authorization', `Bearer ${adminKey}`)
      .send({ role: null, disabled: null })
      .expect(200);
    expect(unchanged.body).toMatchObject({ role: 'admin', disabled: false });
    await http().get('/v1/me').set('authorization', `Bearer ${key}`).expect(200);
  });

  it('refuses bad user and key input with stable codes', async () => {
    const auth = { authorization: `Bearer ${adminKey}` };
    const badName = await http().post('/v1/admin/users').set(auth).send({ name: 'Bad Name' }).expect(400);
    expect(badName.body.code).toBe('VALIDATION_FAILED');
    expect(badName.body.details.problems).toEqual([
      "name: name must be 1–64 lowercase letters, digits, '.', '_' or '-', starting with a letter or digit",
    ]);
    const badRole = await http().post('/v1/admin/users').set(auth).send({ name: 'ivy', role: 'root' }).expect(400);
    expect(badRole.body.details.problems).toEqual(['role: role must be one of admin, editor, member']);
    await http().post('/v1/admin/users').set(auth).send({ name: 'ivy' }).expect(201);
    expect((await http().post('/v1/admin/users').set(auth).send({ name: 'ivy' }).expect(409)).body).toEqual({
      code: 'USER_NAME_TAKEN',
      message: "A user named 'ivy' already exists.",
      details: { name: 'ivy' },
    });
    expect(
      (
        await http()
          .patch('/v1/admin/users/00000000-0000-4000-8000-00000000dead')
          .set(auth)
          .send({ role: 'admin' })
          .expect(404)
      ).body.code,
    ).toBe('USER_NOT_FOUND');
    expect(
      (await http().patch('/v1/admin/users/not-a-uuid').set(auth).send({ role: 'admin' }).expect(404)).body.code,
    ).toBe('USER_NOT_FOUND');
    expect((await http().delete('/v1/admin/keys/not-a-uuid').set(auth).expect(404)).body.code).toBe(
      'API_KEY_NOT_FOUND',
    );
    const past = await http().post('/v1/me/keys').set(auth).send({ expiresAt: '2000-01-01T00:00:00Z' }).expect(400);
    expect(past.body.details.problems).toEqual(['expiresAt: must be in the future']);
    for (const expiresAt of ['tomorrow', 4102444800000, true, '2030-02-30T00:00:00Z', '+099999-01-01T00:00:00Z']) {
      const notADate = await http().post('/v1/me/keys').set(auth).send({ expiresAt }).expect(400);
      expect(notADate.body.details.problems).toEqual(['expiresAt: expiresAt must be an ISO 8601 date-time']);
    }
    const extra = await http().post('/v1/me/keys').set(auth).send({ userId: 'x' }).expect(400);
    expect(extra.body.details.problems).toEqual(['userId: property userId should not exist']);
  });

  it('a key with an expiry works until then, and not a moment longer (the cache does not extend it)', async () => {
    const jay = await users.createUser('jay', 'member');
    const expiresAt = new Date(Date.now() + 1500);
    const { key } = await users.createKey(jay.id, { expiresAt });
    await http().get('/v1/me').set('authorization', `Bearer ${key}`).expect(200);
    await new Promise((r) => setTimeout(r, expiresAt.getTime() - Date.now() + 50));
    expect((await http().get('/v1/me').set('authorization', `Bearer ${key}`).expect(401)).body.message).toBe(
      'The API key has expired.',
    );
  });

  it('chats are private: each user lists and reaches only their own; operators list them all with owners', async () => {
    const kim = await users.createUser('kim', 'member');
    const lee = await users.createUser('lee', 'member');
    const kimKey = (await users.createKey(kim.id)).key;
    const leeKey = (await users.createKey(lee.id)).key;
    const kimChat = (
      await http().post('/v1/chats').set('authorization', `Bearer ${kimKey}`).send({ title: 'kim’s' }).expect(201)
    ).body;
    const leeChat = (
      await http().post('/v1/chats').set('authorization', `Bearer ${leeKey}`).send({ title: 'lee’s' }).expect(201)
    ).body;
    const kimList = (await http().get('/v1/chats').set('authorization', `Bearer ${kimKey}`).expect(200)).body;
    expect(kimList).toMatchObject({ total: 1, items: [{ id: kimChat.id }] });
    const missing = (
      await http()
        .get('/v1/chats/00000000-0000-4000-8000-000000000000')
        .set('authorization', `Bearer ${leeKey}`)
        .expect(404)
    ).body;
    const others = (await http().get(`/v1/chats/${kimChat.id}`).set('authorization', `Bearer ${leeKey}`).expect(404))
      .body;
    // Exactly as a missing one: same code, same shape.
    expect(others).toEqual({
      code: 'CHAT_NOT_FOUND',
      message: `Chat '${kimChat.id}' not found.`,
      details: { id: kimChat.id },
    });
    expect(Object.keys(others)).toEqual(Object.keys(missing));
    // Streaming a turn into someone else's chat fails before any stream starts.
    const sse = await http()
      .post(`/v1/chats/${kimChat.id}/messages`)
      .set('authorization', `Bearer ${leeKey}`)
      .set('accept', 'text/event-stream')
      .send({ content: 'hi' })
      .expect(404);
    expect(sse.body.code).toBe('CHAT_NOT_FOUND');
    await http().delete(`/v1/chats/${kimChat.id}`).set('authorization', `Bearer ${leeKey}`).expect(404);
    await http().get(`/v1/chats/${kimChat.id}`).set('authorization', `Bearer ${kimKey}`).expect(200);
    const all = (await http().get('/v1/admin/chats?limit=200').set('authorization', `Bearer ${adminKey}`).expect(200))
      .body;
    expect(all.items).toEqual(
      expect.arrayContaining([
        {
          id: kimChat.id,
          title: 'kim’s',
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
          owner: { id: kim.id, name: 'kim' },
        },
        {
          id: leeChat.id,
          title: 'lee’s',
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
          owner: { id: lee.id, name: 'lee' },
        },
      ]),
    );
  });
});

describe('auth modes', () => {
  const start = async (overrides: Record<string, unknown>, logger?: LoggerService) =>
    startChatApp([tree.path('skills')], overrides, undefined, {}, logger);

  it('auto on a loopback address: no key needed, every request acts as the admin local', async () => {
    const ctx = await start({ 'app.auth.mode': 'auto', 'app.host': '127.0.0.1' });
    try {
      const me = await request(ctx.app.getHttpServer()).get('/v1/me').expect(200);
      expect(me.body).toMatchObject({
        id: '00000000-0000-4000-8000-000000000001',
        name: 'local',
        role: 'admin',
        authMode: 'none',
        keyId: null,
      });
      await request(ctx.app.getHttpServer()).get('/v1/admin/users').expect(200);
    } finally {
      await ctx.close();
    }
  });

  it(
    'auto on a loopback address still checks a key that is sent: a valid one acts as its user, any ' + 'other is 401',
    async () => {
      const ctx = await start({ 'app.auth.mode': 'auto', 'app.host': '127.0.0.1' });
      try {
        const users = ctx.app.get(UsersService);
        const carol = await users.createUser('carol', 'member');
        const { key } = await users.createKey(carol.id);
        const http = () => request(ctx.app.getHttpServer());
        const me = await http().get('/v1/me').set('authorization', `Bearer ${key}`).expect(200);
        expect(me.body).toMatchObject({ name: 'carol', role: 'member', authMode: 'none', keyId: expect.any(String) });
        expect((await http().get('/v1/me').set('x-api-key', key).expect(200)).body.name).toBe('carol');
        // The key's user, not `local`: a member is refused on admin routes and owns what it makes.
        expect((await http().get('/v1/admin/users').set('authorization', `Bearer ${key}`).expect(403)).body.code).toBe(
          'FORBIDDEN',
        );
        const chat = (
          await http().post('/v1/chats').set('authorization', `Bearer ${key}`).send({ title: 'carol’s' }).expect(201)
        ).body;
        await http().get(`/v1/chats/${chat.id}`).expect(404);
        for (const wrong of ['Bearer skh_garbage', `Bearer skh_${'A'.repeat(43)}`, 'Basic Zm9vOmJhcg==']) {
          const refused = await http().get('/v1/me').set('authorization', wrong).expect(401);
          expect(refused.body.code).toBe('UNAUTHENTICATED');
          expect(refused.headers['www-authenticate']).toContain('Bearer');
        }
        expect((await http().get('/v1/me').set('x-api-key', 'nonsense').expect(401)).body.code).toBe('UNAUTHENTICATED');
        await users.revokeKey(me.body.keyId, carol.id);
        expect((await http().get('/v1/me').set('authorization', `Bearer ${key}`).expect(401)).body.message).toBe(
          'The API key has been revoked.',
        );
        // No key at all: still `local`.
        expect((await http().get('/v1/me').expect(200)).body.name).toBe('local');
      } finally {
        await ctx.close();
      }
    },
  );

  it('auto on a non-loopback address requires keys', async () => {
    const ctx = await start({ 'app.auth.mode': 'auto', 'app.host': '0.0.0.0' });
    try {
      await request(ctx.app.getHttpServer()).get('/v1/me').expect(401);
      await request(ctx.app.getHttpServer()).get('/health').expect(200);
    } finally {
      await ctx.close();
    }
  });

  it('none on a non-loopback address runs, acting as local, and warns loudly', async () => {
    const warnings: string[] = [];
    const logger: LoggerService = {
      log: () => undefined,
      error: () => undefined,
      warn: (message: unknown) => void warnings.push(String(message)),
    };
    const ctx = await start({ 'app.auth.mode': 'none', 'app.host': '0.0.0.0' }, logger);
    try {
      expect((await request(ctx.app.getHttpServer()).get('/v1/me').expect(200)).body.name).toBe('local');
      expect(warnings.join('\n')).toContain(
        "AUTH IS OFF on a non-loopback address (0.0.0.0): anyone who can reach this server acts as the admin 'local'.",
      );
    } finally {
      await ctx.close();
    }
  });
});
