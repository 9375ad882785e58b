import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { generateApiKey } from '../../src/domain/users/api-key.js';
import { BootstrapAdminService } from '../../src/domain/users/bootstrap-admin.service.js';
import { type BootstrapKeyOutcome, UsersService } from '../../src/domain/users/users.service.js';
import { createApp } from '../../src/app/app.factory.js';
import { configWith } from '../../src/config/config-loader.js';
import { ApiKeyRepository } from '../../src/infra/database/api-key.repository.js';
import { UserRepository } from '../../src/infra/database/user.repository.js';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';

/**
 * Every line pino writes. One capture for the whole file: Nest's `Logger` is process-wide (each
 * app's `useLogger` replaces it for every app), so apps running at once may write through each
 * other's logger; with one destination every line is kept whichever app wrote it.
 */
class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    this.lines.push(
      ...chunk
        .toString('utf8')
        .split('\n')
        .filter((line) => line !== ''),
    );
    done();
  }
  /** The `msg` of each line from the `Auth` context written since line `from`. */
  auth(from = 0): string[] {
    return this.lines
      .slice(from)
      .map((line) => JSON.parse(line) as { context?: string; msg: string })
      .filter((r) => r.context === 'Auth')
      .map((r) => r.msg);
  }
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** `call`, its first `count` calls each held until all of them have answered: a race made certain. */
function heldTogether<A extends unknown[], R>(
  count: number,
  call: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  let answered = 0;
  let release: () => void = () => undefined;
  const allAnswered = new Promise<void>((resolve) => (release = resolve));
  return async (...args) => {
    const result = await call(...args);
    if (answered < count) {
      if (++answered === count) release();
      await allAnswered;
    }
    return result;
  };
}

describe(BootstrapAdminService.name, () => {
  let db: TestDatabase;
  const apps: NestFastifyApplication[] = [];
  const logs = new LogCapture();
  /** Keys used in the file so far: none may ever show in a log line. */
  const secrets: string[] = [];
  let key: string;

  /**
   * The app as a container starts it: keys required, the bootstrap key from the environment, every log line kept (at
   * trace level).
   */
  async function start(
    env: Record<string, string> = { SKILLHOST_BOOTSTRAP_ADMIN_KEY: key },
  ): Promise<{ app: NestFastifyApplication; log: { auth(): string[] } }> {
    const from = logs.lines.length;
    const config = configWith(
      {
        'app.database.url': db.url,
        'app.auth.mode': 'api_key',
        'app.logging.format': 'json',
        'app.logging.level': 'trace',
      },
      process.cwd(),
      process.cwd(),
      env,
    );
    const app = await createApp(config, { logDestination: logs });
    apps.push(app);
    return { app, log: { auth: () => logs.auth(from) } };
  }
  /** A start and a stop, as a restart of a container does. */
  async function startAndStop(env?: Record<string, string>): Promise<void> {
    const { app } = await start(env);
    apps.splice(apps.indexOf(app), 1);
    await app.close();
  }
  const me = (app: NestFastifyApplication, presented = key) =>
    request(app.getHttpServer()).get('/v1/me').set('authorization', `Bearer ${presented}`);
  const rows = () =>
    query<{ name: string; role: string; disabled: boolean; label: string; revoked: boolean }>(
      db.url,
      'SELECT u.name, u.role, u.disabled, k.label, k.revoked_at IS NOT NULL AS revoked FROM api_keys k JOIN ' +
        'users u ON u.id = k.user_id WHERE k.key_hash = $1',
      [sha256(key)],
    );

  beforeEach(async () => {
    db = await createTestDatabase();
    key = generateApiKey().key;
    secrets.push(key);
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    await db.drop();
  });
  afterAll(() => {
    jest.restoreAllMocks();
    // Whatever the tests did (at trace level, with requests carrying the keys), no line holds a key, nor its secret
    // part.
    const text = logs.lines.join('\n');
    expect(logs.lines.length).toBeGreaterThan(50);
    for (const secret of secrets) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(secret.slice(4));
    }
  });

  it(
    'on a fresh database registers the key for a new admin `admin`, labelled bootstrap, and the key answers as ' +
      'that admin',
    async () => {
      const { app, log } = await start();
      expect(await rows()).toEqual([
        { name: 'admin', role: 'admin', disabled: false, label: 'bootstrap', revoked: false },
      ]);
      const [{ id }] = await query<{ id: string }>(db.url, 'SELECT id FROM api_keys WHERE key_hash = $1', [
        sha256(key),
      ]);
      expect(log.auth()).toContain(
        `Registered the bootstrap admin key (SKILLHOST_BOOTSTRAP_ADMIN_KEY (app.auth.bootstrap_admin_key)) as API ` +
          `key ${id} of the admin 'admin'`,
      );
      const answer = await me(app).expect(200);
      expect(answer.body).toMatchObject({ name: 'admin', role: 'admin', authMode: 'api_key', keyId: id });
      // The admin can make the team's users and keys from here.
      await request(app.getHttpServer())
        .post('/v1/admin/users')
        .set('authorization', `Bearer ${key}`)
        .send({ name: 'alice' })
        .expect(201);
    },
  );

  it(
    'is idempotent across restarts: the same user and key, nothing added, and it says the key is ' + 'registered',
    async () => {
      await startAndStop();
      const before = await query(
        db.url,
        'SELECT u.id AS user_id, k.id AS key_id, k.created_at FROM users u JOIN api_keys k ON k.user_id = u.id ' +
          'ORDER BY k.id',
      );
      const { app, log } = await start();
      expect(
        await query(
          db.url,
          'SELECT u.id AS user_id, k.id AS key_id, k.created_at FROM users u JOIN api_keys k ON k.user_id = u.id ' +
            'ORDER BY k.id',
        ),
      ).toEqual(before);
      expect(log.auth()).toContain(
        `The bootstrap admin key is registered: API key ${
          (before[0] as { key_id: string }).key_id
        } of the admin 'admin'`,
      );
      await me(app).expect(200);
    },
  );

  it(
    'with several instances starting at once on one database, and more registrations racing, makes one user and ' +
      'one key; a racing insert counts as done',
    async () => {
      const [first] = await Promise.all([start(), start(), start()]);
      expect(await rows()).toHaveLength(1);
      // Eight registrations at once on a second key: each looks up and finds nothing (held until all
      // eight have, so the race is certain), then inserts; all but one insert lose to the unique constraint.
      const racing = generateApiKey().key;
      secrets.push(racing);
      const repository = first.app.get(ApiKeyRepository);
      const lookUp = repository.findOwnerByHash.bind(repository);
      const lookUps = jest.spyOn(repository, 'findOwnerByHash').mockImplementation(heldTogether(8, lookUp));
      const keyInserts = jest.spyOn(repository, 'createIfAbsent');
      const users = first.app.get(UsersService);
      const outcomes = await Promise.all(Array.from({ length: 8 }, () => users.registerBootstrapKey(racing)));
      const lost = await Promise.all(keyInserts.mock.results.map((r) => r.value as Promise<unknown>));
      keyInserts.mockRestore();
      lookUps.mockRestore();
      expect(lost.filter((created) => created === null)).toHaveLength(7);
      expect(outcomes.map((o: BootstrapKeyOutcome) => o.kind).sort()).toEqual([
        'registered',
        ...Array<string>(7).fill('stored'),
      ]);
      expect(await query(db.url, "SELECT name FROM users WHERE name = 'admin'")).toHaveLength(1);
      expect(await query(db.url, 'SELECT id FROM api_keys WHERE key_hash = $1', [sha256(racing)])).toHaveLength(1);
      await me(first.app, racing).expect(200);
    },
  );

  it(
    'creates the user `admin` only once when instances race for the name, and a name another instance took counts ' +
      'as done',
    async () => {
      const { app } = await start({});
      // Each of the six looks for `admin` and finds none (held until all six have), then creates it.
      const repository = app.get(UserRepository);
      const findByName = repository.findByName.bind(repository);
      const lookUps = jest.spyOn(repository, 'findByName').mockImplementation(heldTogether(6, findByName));
      const userInserts = jest.spyOn(repository, 'create');
      const keys = Array.from({ length: 6 }, () => generateApiKey().key);
      secrets.push(...keys);
      const outcomes = await Promise.all(keys.map((k) => app.get(UsersService).registerBootstrapKey(k)));
      const created = await Promise.all(userInserts.mock.results.map((r) => r.value as Promise<unknown>));
      userInserts.mockRestore();
      lookUps.mockRestore();
      expect(created.filter((user) => user === null)).toHaveLength(5);
      expect(outcomes.map((o) => o.kind)).toEqual(Array(6).fill('registered'));
      expect(await query(db.url, "SELECT count(*)::int AS n FROM users WHERE name = 'admin'")).toEqual([{ n: 1 }]);
      for (const k of keys) await me(app, k).expect(200);
    },
  );

  it('never brings a revoked key back: it stays revoked after a restart, answers 401, and start-up warns', async () => {
    const { app } = await start();
    const [{ id }] = await query<{ id: string }>(db.url, 'SELECT id FROM api_keys WHERE key_hash = $1', [sha256(key)]);
    // Over the API the last admin key cannot be revoked (LAST_ADMIN); the CLI (`skillhost keys revoke`) can.
    await request(app.getHttpServer()).delete(`/v1/me/keys/${id}`).set('authorization', `Bearer ${key}`).expect(409);
    await app.get(UsersService).revokeKey(id, undefined, { keepAnAdmin: false });
    apps.splice(apps.indexOf(app), 1);
    await app.close();

    const restarted = await start();
    expect(await rows()).toEqual([
      { name: 'admin', role: 'admin', disabled: false, label: 'bootstrap', revoked: true },
    ]);
    expect(await query(db.url, 'SELECT count(*)::int AS n FROM api_keys')).toEqual([{ n: 1 }]);
    expect((await me(restarted.app).expect(401)).body.message).toBe('The API key has been revoked.');
    expect(restarted.log.auth()).toContainEqual(
      expect.stringMatching(
        new RegExp(
          `^The bootstrap admin key \\(API key ${id} of 'admin'\\) was revoked: it stays revoked and is not ` +
            `registered again\\.`,
        ),
      ),
    );
  });

  it.each([
    ['a member', 'member', false, 'a member'],
    ['a disabled admin', 'admin', true, 'disabled'],
  ] as const)(
    'refuses to promote or re-enable an existing `admin` who is %s: the key is not registered, and one warning ' +
      'says what to do',
    async (_, role, disabled, described) => {
      await startAndStop({});
      const [{ id }] = await query<{ id: string }>(
        db.url,
        "INSERT INTO users (id, name, role, disabled) VALUES (gen_random_uuid(), 'admin', $1, $2) RETURNING id",
        [role, disabled],
      );
      const { app, log } = await start();
      expect(await rows()).toEqual([]);
      expect(await query(db.url, "SELECT role, disabled FROM users WHERE name = 'admin'")).toEqual([
        { role, disabled },
      ]);
      expect(log.auth().filter((line) => line.includes('bootstrap'))).toEqual([
        `The bootstrap admin key was not registered: the user 'admin' exists and is ${described}, and start-up ` +
          `neither promotes nor re-enables a user. Make it an enabled admin (PATCH /v1/admin/users/${id}), or ` +
          `run \`skillhost users add NAME --admin\` then \`skillhost keys create --user NAME\`.`,
      ]);
      expect((await me(app).expect(401)).body.message).toBe('The API key is not valid.');
    },
  );

  it(
    "leaves a registered key's owner as an admin changed it (disabled), and warns instead of " + 're-enabling',
    async () => {
      const first = await start();
      const [{ id: userId }] = await query<{ id: string }>(db.url, "SELECT id FROM users WHERE name = 'admin'");
      // Another admin with a working key first: the last one cannot be disabled (LAST_ADMIN).
      const users = first.app.get(UsersService);
      await users.createKey((await users.createUser('root', 'admin')).id);
      await users.updateUser(userId, { disabled: true });
      apps.splice(apps.indexOf(first.app), 1);
      await first.app.close();
      const { app, log } = await start();
      expect(await rows()).toEqual([
        { name: 'admin', role: 'admin', disabled: true, label: 'bootstrap', revoked: false },
      ]);
      expect(log.auth()).toContainEqual(
        expect.stringMatching(
          /^The bootstrap admin key \(API key [0-9a-f-]{36}\) belongs to 'admin', who is disabled now; left so\./,
        ),
      );
      expect((await me(app).expect(401)).body.message).toBe("The user 'admin' is disabled.");
    },
  );

  it(
    'without a bootstrap key, with keys required, says how to make a first admin while no admin has a working ' +
      'key, and not once one has',
    async () => {
      const hint = expect.stringMatching(
        /^No admin has a working API key, so nobody can administer this server: set SKILLHOST_BOOTSTRAP_ADMIN_KEY/,
      );
      const { app, log } = await start({});
      expect(log.auth()).toContainEqual(hint);
      const users = app.get(UsersService);
      await users.createKey((await users.createUser('root', 'admin')).id);
      const again = await start({});
      expect(again.log.auth()).not.toContainEqual(hint);
    },
  );
});
