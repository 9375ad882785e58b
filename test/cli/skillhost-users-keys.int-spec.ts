import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { NestFactory } from '@nestjs/core';
import { AuthService } from '../../src/domain/users/auth.service.js';
import { CliModule } from '../../src/cli/cli-context.js';
import { configWith } from '../../src/config/config-loader.js';
import { isAlive } from '../../src/infra/database/embedded-postgres.owner.js';
import { EmbeddedPostgresServer } from '../../src/infra/database/embedded-postgres.server.js';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';
import { buildServer } from '../support/instances.js';
import { tempTree } from '../support/files/skill-tree.js';
import { run } from './run-cli.js';
import { freePort } from '../support/ports.js';

const KEY = /^skh_[A-Za-z0-9_-]{43}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** What the server would make of a request carrying `key`, with a fresh key cache. */
async function authenticate(url: string, key: string) {
  const context = await NestFactory.createApplicationContext(
    CliModule.forConfig(configWith({ 'app.database.url': url, 'app.auth.mode': 'api_key' })),
    { logger: false },
  );
  try {
    return await context.get(AuthService).authenticate({ authorization: `Bearer ${key}` });
  } finally {
    await context.close();
  }
}

describe('skillhost users / keys', () => {
  const tree = tempTree('skillhost-cli-users-');
  let db: TestDatabase;
  /** `skillhost ARGS --config cfg.toml`, against this file's fresh database. */
  const cli = (...argv: string[]) => run([...argv, '--config', 'cfg.toml'], tree.root);

  beforeAll(async () => {
    db = await createTestDatabase();
    tree.write('cfg.toml', `[app.database]\nurl = "${db.url}"\n`);
    tree.write('unreachable.toml', '[app.database]\nurl = "postgres://postgres:secret@127.0.0.1:1/nowhere"\n');
  });
  afterAll(async () => {
    await db.drop();
    tree.cleanup();
  });

  describe('users', () => {
    it('adds a member, or an admin with --admin, on a fresh database (migrated first)', async () => {
      const member = await cli('users', 'add', 'alice');
      expect(member).toEqual({
        code: 0,
        out: expect.stringMatching(/^Created member 'alice' \(id [0-9a-f-]{36}\)\.$/),
        err: '',
      });

      const admin = await cli('users', 'add', 'root', '--admin', '--json');
      expect(admin.code).toBe(0);
      expect(JSON.parse(admin.out)).toEqual({
        id: expect.stringMatching(UUID),
        name: 'root',
        role: 'admin',
        disabled: false,
        createdAt: expect.stringMatching(ISO),
      });

      expect(await query(db.url, "SELECT name, role FROM users WHERE name IN ('alice', 'root') ORDER BY name")).toEqual(
        [
          { name: 'alice', role: 'member' },
          { name: 'root', role: 'admin' },
        ],
      );
    });

    it('lists every user, as JSON or as a table', async () => {
      const json = await cli('users', 'list', '--json');
      expect(json.code).toBe(0);
      const users = JSON.parse(json.out) as { name: string; role: string }[];
      expect(users.map((u) => [u.name, u.role])).toEqual([
        ['alice', 'member'],
        ['local', 'admin'],
        ['root', 'admin'],
      ]);

      const text = (await cli('users', 'list')).out.split('\n');
      expect(text[0]).toMatch(/^NAME +ROLE +STATUS +CREATED +ID$/);
      expect(text[1]).toMatch(/^alice +member +active +\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z +[0-9a-f-]{36}$/);
      expect(text).toHaveLength(4);
    });

    it('refuses a taken name or an invalid one with exit 1 and one line on stderr', async () => {
      expect(await cli('users', 'add', 'alice')).toEqual({
        code: 1,
        out: '',
        err: "A user named 'alice' already exists.",
      });
      expect(await cli('users', 'add', 'Bob')).toEqual({
        code: 1,
        out: '',
        err:
          "Invalid request: name: 'Bob' is not allowed; use 1–64 lowercase letters, digits, '.', '_' or '-', " +
          'starting with a letter or digit',
      });
      expect(await query(db.url, "SELECT count(*)::int AS n FROM users WHERE name IN ('alice', 'Bob')")).toEqual([
        { n: 1 },
      ]);
    });
  });

  describe('keys', () => {
    let key: string;
    let keyId: string;

    it('create prints only the key on stdout; the row holds its SHA-256, never the key', async () => {
      const created = await cli('keys', 'create', '--user', 'alice', '--label', 'laptop');
      expect(created.code).toBe(0);
      expect(created.out).toMatch(KEY);
      key = created.out;
      expect(created.err).toMatch(
        /^Created API key [0-9a-f-]{36} \(skh_.{6}…\) for 'alice'\. It is shown this once; keep it somewhere safe\.$/,
      );

      const rows = await query<Record<string, unknown>>(
        db.url,
        "SELECT k.* FROM api_keys k JOIN users u ON u.id = k.user_id WHERE u.name = 'alice'",
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        label: 'laptop',
        prefix: key.slice(0, 10),
        key_hash: sha256(key),
        revoked_at: null,
        expires_at: null,
      });
      expect(JSON.stringify(rows[0])).not.toContain(key.slice(10));
      keyId = rows[0].id as string;
    });

    it('the printed key authenticates as its user', async () => {
      expect(await authenticate(db.url, key)).toEqual({
        userId: expect.stringMatching(UUID),
        name: 'alice',
        role: 'member',
        keyId,
      });
    });

    it('create --json answers the key with its metadata, and follows --expires-at', async () => {
      const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
      const created = await cli('keys', 'create', '--user', 'root', '--expires-at', expiresAt, '--json');
      expect(created.code).toBe(0);
      expect(created.err).toBe('');
      const body = JSON.parse(created.out);
      expect(body).toEqual({
        id: expect.stringMatching(UUID),
        user: 'root',
        label: null,
        prefix: body.key.slice(0, 10),
        key: expect.stringMatching(KEY),
        createdAt: expect.stringMatching(ISO),
        lastUsedAt: null,
        revokedAt: null,
        expiresAt,
      });
      expect(await query(db.url, 'SELECT key_hash FROM api_keys WHERE id = $1', [body.id])).toEqual([
        { key_hash: sha256(body.key) },
      ]);
    });

    it(
      'create refuses a past expiry (exit 1), a malformed one or an over-long label (exit 2), and no --user (exit ' +
        '2)',
      async () => {
        expect(await cli('keys', 'create', '--user', 'alice', '--expires-at', '2001-01-01T00:00:00Z')).toEqual({
          code: 1,
          out: '',
          err: 'Invalid request: expiresAt: must be in the future',
        });
        const malformed = await cli('keys', 'create', '--user', 'alice', '--expires-at', 'next tuesday');
        expect(malformed.code).toBe(2);
        expect(malformed.err.split('\n')[0]).toBe('--expires-at: expiresAt must be an ISO 8601 date-time');
        const long = await cli('keys', 'create', '--user', 'alice', '--label', 'x'.repeat(201));
        expect(long.code).toBe(2);
        expect(long.err.split('\n')[0]).toBe('--label: label must be shorter than or equal to 200 characters');
        expect((await cli('keys', 'create')).err.split('\n')[0]).toBe('keys create needs --user NAME.');
        expect(await query(db.url, 'SELECT count(*)::int AS n FROM api_keys')).toEqual([{ n: 2 }]);
      },
    );

    it('create and list refuse an unknown user with exit 1', async () => {
      expect(await cli('keys', 'create', '--user', 'bob')).toEqual({
        code: 1,
        out: '',
        err: "No user is named 'bob'.",
      });
      expect(await cli('keys', 'list', '--user', 'bob')).toEqual({ code: 1, out: '', err: "No user is named 'bob'." });
    });

    it('list shows prefix, label and dates of every key, or of one user, never a key or a hash', async () => {
      // The server records use at most once a minute, off the request's path: set it here instead.
      await query(db.url, "UPDATE api_keys SET last_used_at = '2030-01-02T03:04:05Z' WHERE id = $1", [keyId]);
      const all = await cli('keys', 'list', '--json');
      expect(all.code).toBe(0);
      const listed = JSON.parse(all.out) as Record<string, unknown>[];
      expect(listed.map((k) => [k.user, k.label])).toEqual([
        ['alice', 'laptop'],
        ['root', null],
      ]);
      expect(Object.keys(listed[0]).sort()).toEqual([
        'createdAt',
        'expiresAt',
        'id',
        'label',
        'lastUsedAt',
        'prefix',
        'revokedAt',
        'user',
      ]);
      expect(listed[0]).toMatchObject({
        id: keyId,
        prefix: key.slice(0, 10),
        lastUsedAt: '2030-01-02T03:04:05.000Z',
        revokedAt: null,
      });
      expect(all.out).not.toContain(key.slice(10));
      expect(all.out).not.toContain(sha256(key));

      const alices = JSON.parse((await cli('keys', 'list', '--user', 'alice', '--json')).out) as { id: string }[];
      expect(alices.map((k) => k.id)).toEqual([keyId]);

      const text = (await cli('keys', 'list', '--user', 'alice')).out.split('\n');
      expect(text).toHaveLength(2);
      expect(text[0]).toMatch(/^ID +USER +PREFIX +LABEL +CREATED +LAST USED +EXPIRES +REVOKED$/);
      expect(text[1]).toMatch(
        new RegExp(`^${keyId} +alice +${key.slice(0, 10)} +laptop +\\d{4}-\\S+Z +2030-01-02T03:04:05Z +- +-$`),
      );
    });

    it('revoke stops the key working and shows in the list; unknown ids exit 1', async () => {
      const revoked = await cli('keys', 'revoke', keyId);
      expect(revoked).toEqual({
        code: 0,
        out: expect.stringMatching(new RegExp(`^Revoked API key ${keyId} \\(skh_.{6}…\\) of 'alice' at \\S+Z\\.$`)),
        err: '',
      });
      await expect(authenticate(db.url, key)).rejects.toThrow('The API key has been revoked.');
      const [listed] = JSON.parse((await cli('keys', 'list', '--user', 'alice', '--json')).out);
      expect(listed.revokedAt).toMatch(ISO);

      expect(await cli('keys', 'revoke', '00000000-0000-4000-8000-00000000dead')).toEqual({
        code: 1,
        out: '',
        err: "API key '00000000-0000-4000-8000-00000000dead' not found.",
      });
      expect(await cli('keys', 'revoke', 'not-an-id')).toEqual({
        code: 1,
        out: '',
        err: "API key 'not-an-id' not found.",
      });
    });
  });

  describe('keys generate', () => {
    it(
      'prints a new well-formed key alone on stdout, one the configuration accepts as the bootstrap admin key, ' +
        'with no database at all',
      async () => {
        // A configuration whose database does not answer, and one that is not even valid: neither is read.
        tree.write('broken/config.toml', '[app.database]\npool_size = 0\n');
        const env = { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/nowhere' };
        const [first, second] = [
          await run(['keys', 'generate'], tree.path('broken'), env),
          await run(['keys', 'generate'], tree.path('broken'), env),
        ];
        expect(first).toEqual({
          code: 0,
          out: expect.stringMatching(KEY),
          err: expect.stringContaining('SKILLHOST_BOOTSTRAP_ADMIN_KEY'),
        });
        expect(second.out).toMatch(KEY);
        expect(second.out).not.toBe(first.out);
        expect(
          configWith({}, tree.root, tree.root, { SKILLHOST_BOOTSTRAP_ADMIN_KEY: first.out }).app.auth.bootstrapAdminKey,
        ).toBe(first.out);
        expect(
          await query(db.url, 'SELECT count(*)::int AS n FROM api_keys WHERE key_hash = $1', [sha256(first.out)]),
        ).toEqual([{ n: 0 }]);
      },
    );
  });

  describe('failures before any work', () => {
    it('reports bad usage with exit 2 without touching the database', async () => {
      const usage = (...argv: string[]) => run([...argv, '--config', 'unreachable.toml'], tree.root);
      for (const [argv, message] of [
        [['users'], 'Give a users command: add or list.'],
        [['users', 'remove', 'x'], "Unknown users command 'remove'; expected add or list."],
        [['users', 'add'], 'users add takes one NAME; got 0.'],
        [['users', 'add', 'a', 'b'], 'users add takes one NAME; got 2.'],
        [['users', 'list', '--admin'], "Unknown option '--admin'"],
        [['keys'], 'Give a keys command: create, list, revoke or generate.'],
        [['keys', 'generate', 'extra'], "Unexpected argument 'extra'"],
        [['keys', 'revoke'], 'keys revoke takes one key ID (see `skillhost keys list`); got 0.'],
        [['keys', 'list', 'alice'], "Unexpected argument 'alice'"],
      ] as const) {
        const result = await usage(...argv);
        expect({ argv, code: result.code, out: result.out }).toEqual({ argv, code: 2, out: '' });
        expect(result.err).toContain(message);
        expect(result.err).toContain('skillhost keys create --user NAME');
      }
    });

    it('reports an unreachable database as one line naming it without its password, exit 1', async () => {
      const result = await run(['users', 'list', '--config', 'unreachable.toml'], tree.root);
      expect(result.code).toBe(1);
      expect(result.out).toBe('');
      expect(result.err).toMatch(
        /^Cannot use the database at postgres:\/\/postgres@127\.0\.0\.1:1\/nowhere: .*ECONNREFUSED[^\n]*$/,
      );
    });

    it('reports configuration problems one line each, exit 2', async () => {
      tree.write('bad.toml', '[app.database]\npool_size = 0\n');
      expect(await run(['keys', 'list', '--config', 'bad.toml'], tree.root)).toEqual({
        code: 2,
        out: '',
        err: expect.stringMatching(/^config: app\.database\.pool_size: [^\n]+$/),
      });
    });
  });
});

describe('skillhost users / keys with the embedded PostgreSQL', () => {
  const tree = tempTree('skillhost-cli-embedded-');
  // As root the server runs as `postgres`, which must be able to reach its data folder.
  chmodSync(tree.root, 0o755);
  const dataDir = tree.path('pg', 'data');
  beforeAll(async () =>
    tree.write('cfg.toml', `[app.database]\nembedded_dir = "${dataDir}"\nembedded_port = ${await freePort()}\n`),
  );
  /** No DATABASE_URL in the environment: the configured embedded server's data folder is used. */
  const cli = (...argv: string[]) => run([...argv, '--config', 'cfg.toml'], tree.root, {});
  const postmasterPid = () =>
    existsSync(`${dataDir}/postmaster.pid`)
      ? Number.parseInt(readFileSync(`${dataDir}/postmaster.pid`, 'utf8').split('\n')[0], 10)
      : undefined;
  afterAll(() => tree.cleanup());

  it('starts the server for the command and stops it afterwards; the data stays', async () => {
    expect(await cli('users', 'add', 'carol')).toMatchObject({
      code: 0,
      out: expect.stringContaining("Created member 'carol'"),
      err: '',
    });
    expect(postmasterPid()).toBeUndefined();
    expect(await cli('users', 'add', 'carol')).toEqual({
      code: 1,
      out: '',
      err: "A user named 'carol' already exists.",
    });
    expect(postmasterPid()).toBeUndefined();
  }, 120_000);

  it('uses the server already running on the data folder (its own port) and leaves it running', async () => {
    const server = new EmbeddedPostgresServer({ dataDir, port: await freePort() });
    const url = await server.start();
    try {
      const pid = postmasterPid()!;
      const key = await cli('keys', 'create', '--user', 'carol');
      expect(key).toMatchObject({ code: 0, out: expect.stringMatching(KEY) });
      expect(await cli('users', 'add', 'dave', '--admin')).toMatchObject({ code: 0 });
      expect(isAlive(pid)).toBe(true);
      expect(postmasterPid()).toBe(pid);
      expect(
        await query(url, 'SELECT u.name FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.key_hash = $1', [
          sha256(key.out),
        ]),
      ).toEqual([{ name: 'carol' }]);
      expect(await query(url, "SELECT role FROM users WHERE name = 'dave'")).toEqual([{ role: 'admin' }]);
    } finally {
      await server.stop();
    }
  }, 120_000);
});

describe('the built skillhost command (spawned)', () => {
  const tree = tempTree('skillhost-cli-spawned-');
  chmodSync(tree.root, 0o755);
  let db: TestDatabase;
  /** `node bin/skillhost.js ARGV` with no DATABASE_URL in its environment; `preload` runs first (`--import`). */
  const skillhost = (argv: string[], preload?: string) =>
    spawnSync(
      process.execPath,
      [...(preload ? ['--import', preload] : []), `${process.cwd()}/bin/skillhost.js`, ...argv],
      {
        cwd: tree.root,
        env: { PATH: process.env.PATH, HOME: process.env.HOME },
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
  // A resolve hook that refuses the `embedded-postgres` package: importing it installs exit handlers.
  const hook =
    'export async function resolve(s, c, next) { if (s === "embedded-postgres") throw new ' +
    'Error("embedded-postgres was imported"); return next(s, c); }';
  const refuseEmbedded = `data:text/javascript,import { register } from "node:module"; register(${JSON.stringify(
    `data:text/javascript,${hook}`,
  )});`;

  beforeAll(async () => {
    db = await createTestDatabase();
    tree.write('url.toml', `[app.database]\nurl = "${db.url}"\n`);
    tree.write(
      'embedded.toml',
      `[app.database]\nembedded_dir = "${tree.path('pg', 'data')}"\nembedded_port = ${await freePort()}\n`,
    );
    buildServer();
  }, 120_000);
  afterAll(async () => {
    await db.drop();
    tree.cleanup();
  });

  it('prints only the key on stdout, so KEY=$(skillhost keys create --user NAME) works, and exits', () => {
    expect(skillhost(['users', 'add', 'eve', '--config', 'url.toml'])).toMatchObject({
      status: 0,
      stdout: expect.stringMatching(/^Created member 'eve' \(id [0-9a-f-]{36}\)\.\n$/),
      stderr: '',
    });
    const created = skillhost(['keys', 'create', '--user', 'eve', '--config', 'url.toml']);
    expect(created.status).toBe(0);
    expect(created.stdout).toMatch(/^skh_[A-Za-z0-9_-]{43}\n$/);
    expect(created.stderr).toContain("for 'eve'");
    expect(skillhost(['keys', 'create', '--user', 'nobody', '--config', 'url.toml'])).toMatchObject({
      status: 1,
      stdout: '',
      stderr: "No user is named 'nobody'.\n",
    });
  }, 60_000);

  it('does not load embedded-postgres when a database URL is configured', () => {
    expect(skillhost(['users', 'list', '--json', '--config', 'url.toml'], refuseEmbedded)).toMatchObject({
      status: 0,
      stderr: '',
    });
    // The hook is in force: the embedded path does need the package.
    expect(skillhost(['users', 'list', '--config', 'embedded.toml'], refuseEmbedded)).toMatchObject({
      status: 1,
      stderr: expect.stringContaining('embedded-postgres was imported'),
    });
  }, 60_000);

  it('keeps a failure exit code when it started the embedded server (whose exit hooks would turn it into 0)', () => {
    expect(skillhost(['users', 'add', 'frank', '--config', 'embedded.toml'])).toMatchObject({ status: 0, stderr: '' });
    expect(skillhost(['users', 'add', 'frank', '--config', 'embedded.toml'])).toMatchObject({
      status: 1,
      stdout: '',
      stderr: "A user named 'frank' already exists.\n",
    });
    expect(existsSync(tree.path('pg', 'data', 'postmaster.pid'))).toBe(false);
  }, 120_000);
});
