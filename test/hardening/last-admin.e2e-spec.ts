import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import pg from 'pg';
import { createApp } from '../../src/app/app.factory.js';
import { UsersService } from '../../src/domain/users/users.service.js';
import { configWith } from '../../src/config/config-loader.js';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';
import { type Answer, listen, type RawRequest } from './http-client.js';
import { waitForLockWaiters } from './skill-store-attacks.js';

/**
 * The server must keep someone able to administer it over the API: an enabled admin with a
 * working key. Every door that could take the last one away refuses with 409 LAST_ADMIN, also when
 * two admins act at once; the CLI on the server's machine remains the way back in.
 */

interface Account {
  id: string;
  key: string;
  keyId: string;
}

let db: TestDatabase;
let app: NestFastifyApplication;
let users: UsersService;
let send: (method: string, path: string, request?: RawRequest) => Promise<Answer>;

beforeEach(async () => {
  db = await createTestDatabase();
  app = await createApp(configWith({ 'app.database.url': db.url, 'app.auth.mode': 'api_key' }), { logger: false });
  users = app.get(UsersService);
  send = await listen(app);
});
afterEach(async () => {
  await app?.close();
  await db?.drop();
});

async function account(name: string, role: 'admin' | 'member', withKey = true): Promise<Account> {
  const user = await users.createUser(name, role);
  if (!withKey) return { id: user.id, key: '', keyId: '' };
  const created = await users.createKey(user.id);
  return { id: user.id, key: created.key, keyId: created.apiKey.id };
}

const by = (who: Account, request: RawRequest = {}): RawRequest => ({
  ...request,
  headers: { authorization: `Bearer ${who.key}` },
});

/** Enabled admins holding a working key, by name. */
const workingAdmins = async () =>
  (
    await query<{ name: string }>(
      db.url,
      `SELECT DISTINCT u.name FROM users u JOIN api_keys k ON k.user_id = u.id
        WHERE u.role = 'admin' AND NOT u.disabled AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR ` +
        `k.expires_at > now()) ORDER BY u.name`,
    )
  ).map((row) => row.name);

describe('the last enabled admin with a working key', () => {
  // Regression, fixed since this pass found it. Was: 200 to each of these, after which only the CLI could administer
  // the server.
  it('cannot be demoted, disabled, or lose its key through any door; nothing changes and it still works', async () => {
    const root = await account('root', 'admin');
    const refusals = [
      ['demoted', 'PATCH', `/v1/admin/users/${root.id}`, { json: { role: 'member' } }],
      ['disabled', 'PATCH', `/v1/admin/users/${root.id}`, { json: { disabled: true } }],
      ['demoted and disabled', 'PATCH', `/v1/admin/users/${root.id}`, { json: { role: 'member', disabled: true } }],
      ['its key revoked by itself', 'DELETE', `/v1/me/keys/${root.keyId}`, {}],
      ['its key revoked as an admin', 'DELETE', `/v1/admin/keys/${root.keyId}`, {}],
    ] as const;
    for (const [what, method, path, request] of refusals) {
      const answer = await send(method, path, by(root, request));
      expect({ what, status: answer.status, code: answer.body.code }).toEqual({
        what,
        status: 409,
        code: 'LAST_ADMIN',
      });
      expect(answer.body.message).toMatch(
        new RegExp(
          'would leave no enabled admin with a working API key, and nobody able to administer the ' +
            'server over the API\\. Make another admin a key first',
        ),
      );
    }
    expect(await workingAdmins()).toEqual(['root']);
    expect((await send('GET', '/v1/admin/users', by(root))).status).toBe(200);
  });

  it(
    'an admin without a key, or a disabled one, does not count; once another admin has a key, the ' + 'first may go',
    async () => {
      const root = await account('root', 'admin');
      const ops = await account('ops', 'admin', false);
      const old = await account('old', 'admin');
      expect((await send('PATCH', `/v1/admin/users/${old.id}`, by(root, { json: { disabled: true } }))).status).toBe(
        200,
      );
      expect(
        (await send('PATCH', `/v1/admin/users/${root.id}`, by(root, { json: { role: 'member' } }))).body.code,
      ).toBe('LAST_ADMIN');
      const opsKey = await send('POST', `/v1/admin/users/${ops.id}/keys`, by(root, { json: {} }));
      expect(opsKey.status).toBe(201);
      const demoted = await send('PATCH', `/v1/admin/users/${root.id}`, by(root, { json: { role: 'member' } }));
      expect({ status: demoted.status, role: demoted.body.role }).toEqual({ status: 200, role: 'member' });
      expect(await workingAdmins()).toEqual(['ops']);
      // Now ops is the last: its own key is as protected.
      expect(
        (
          await send('DELETE', `/v1/me/keys/${opsKey.body.id}`, {
            headers: { authorization: `Bearer ${opsKey.body.key}` },
          })
        ).body.code,
      ).toBe('LAST_ADMIN');
    },
  );

  it(
    'of two keys of the last admin, one may be revoked, not the other; a member and a key that is not the last ' +
      'are unaffected',
    async () => {
      const root = await account('root', 'admin');
      const spare = await users.createKey(root.id, { label: 'spare' });
      const ann = await account('ann', 'member');
      expect((await send('DELETE', `/v1/admin/keys/${spare.apiKey.id}`, by(root))).status).toBe(204);
      expect((await send('DELETE', `/v1/admin/keys/${root.keyId}`, by(root))).body.code).toBe('LAST_ADMIN');
      expect((await send('DELETE', `/v1/admin/keys/${ann.keyId}`, by(root))).status).toBe(204);
      expect((await send('PATCH', `/v1/admin/users/${ann.id}`, by(root, { json: { disabled: true } }))).status).toBe(
        200,
      );
    },
  );

  it(
    'two admins demoting each other at the same moment: one is demoted, the other is refused, and one admin ' +
      'remains',
    async () => {
      // Regression, fixed since this pass found it. Was: both demotions checked "another admin remains" before either
      // committed, and both went through.
      const alice = await account('alice', 'admin');
      const bob = await account('bob', 'admin');
      const answers = await together(() => [
        send('PATCH', `/v1/admin/users/${bob.id}`, by(alice, { json: { role: 'member' } })),
        send('PATCH', `/v1/admin/users/${alice.id}`, by(bob, { json: { role: 'member' } })),
      ]);
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
      expect(answers.find((answer) => answer.status === 409)?.body.code).toBe('LAST_ADMIN');
      expect(await workingAdmins()).toHaveLength(1);
    },
  );

  it(
    'an admin revoking its last key while demoting the other admin at the same moment: one of the ' + 'two is refused',
    async () => {
      const alice = await account('alice', 'admin');
      const bob = await account('bob', 'admin');
      const answers = await together(() => [
        send('DELETE', `/v1/me/keys/${alice.keyId}`, by(alice)),
        send('PATCH', `/v1/admin/users/${bob.id}`, by(alice, { json: { role: 'member' } })),
      ]);
      expect(answers.map((answer) => answer.status).filter((status) => status === 409)).toHaveLength(1);
      expect(await workingAdmins()).toHaveLength(1);
    },
  );
});

/**
 * Sends the requests so that they meet at the same point: behind a transaction holding the admins'
 * rows until every one of them waits for it, then let go together.
 */
async function together(requests: () => Promise<Answer>[]): Promise<Answer[]> {
  const holder = new pg.Client({ connectionString: db.url });
  await holder.connect();
  try {
    await holder.query('BEGIN');
    await holder.query("SELECT id FROM users WHERE role = 'admin' ORDER BY id FOR UPDATE");
    const sent = requests();
    await waitForLockWaiters(db.url, sent.length);
    await holder.query('COMMIT');
    return await Promise.all(sent);
  } finally {
    await holder.end();
  }
}
