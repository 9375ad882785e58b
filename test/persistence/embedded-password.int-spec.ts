import { chmodSync, existsSync, type FSWatcher, mkdirSync, readdirSync, readFileSync, statSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { redactDatabaseUrl } from '../../src/infra/database/data-source.js';
import { embeddedPasswordFile, EmbeddedPostgresServer } from '../../src/infra/database/embedded-postgres.server.js';
import { freePort } from '../support/ports.js';
import { tempTree } from '../support/files/skill-tree.js';

/** Names of files that appear in the temp folder while `work` runs, even ones removed again. */
async function tempFilesDuring<T>(work: () => Promise<T>): Promise<{ result: T; seen: string[] }> {
  const seen = new Set<string>();
  const watcher: FSWatcher = watch(tmpdir(), (_event, name) => name && seen.add(String(name)));
  try {
    const result = await work();
    await new Promise((resolve) => setTimeout(resolve, 100));
    return { result, seen: [...seen] };
  } finally {
    watcher.close();
  }
}

async function loginFails(port: number, password: string): Promise<string | undefined> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' });
  try {
    await client.connect();
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code;
  } finally {
    await client.end().catch(() => undefined);
  }
}

describe('the embedded PostgreSQL: its password and its folders', () => {
  const tree = tempTree('skillhost-embedded-pw-');
  // As root the server runs as `postgres`, which must be able to reach its data folder.
  chmodSync(tree.root, 0o755);
  afterAll(() => tree.cleanup());

  it('generates a random password per data folder, kept beside it with mode 0600, never in the temp folder, the ' +
    'log or a redacted URL', async () => {
    const logs: string[] = [];
    const [portA, portB] = [await freePort(), await freePort()];
    const servers = [
      new EmbeddedPostgresServer({
        dataDir: tree.path('a', 'data'),
        port: portA,
        log: (m) => logs.push(m),
        warn: (m) => logs.push(m),
      }),
      new EmbeddedPostgresServer({
        dataDir: tree.path('b', 'data'),
        port: portB,
        log: (m) => logs.push(m),
        warn: (m) => logs.push(m),
      }),
    ];
    const tempBefore = readdirSync(tmpdir());
    const { result: urls, seen } = await tempFilesDuring(() => Promise.all(servers.map((s) => s.start())));
    try {
      const passwords = [tree.path('a', 'data'), tree.path('b', 'data')].map((dataDir) => {
        const file = embeddedPasswordFile(dataDir);
        expect(file).toBe(`${dataDir}.password`);
        expect(statSync(file).mode & 0o777).toBe(0o600);
        return readFileSync(file, 'utf8').trim();
      });
      for (const password of passwords) expect(password).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(passwords[0]).not.toBe(passwords[1]);
      expect(urls.map((url) => new URL(url).password)).toEqual(passwords);

      // The URL logs in; the old fixed password does not.
      const client = new pg.Client({ connectionString: urls[0] });
      await client.connect();
      expect((await client.query('SELECT current_database() AS db')).rows).toEqual([{ db: 'skillhost' }]);
      await client.end();
      expect(await loginFails(portA, 'postgres')).toBe('28P01');

      const shown = [...logs, ...urls.map(redactDatabaseUrl)].join('\n');
      for (const password of passwords) expect(shown).not.toContain(password);
      // embedded-postgres's own initialise() writes `pg-password-*` there for initdb.
      expect(seen.filter((name) => /pass/i.test(name))).toEqual([]);
      expect(readdirSync(tmpdir()).filter((name) => !tempBefore.includes(name) && /pass/i.test(name))).toEqual([]);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }

    // A restart keeps the data folder's password.
    const again = new EmbeddedPostgresServer({ dataDir: tree.path('a', 'data'), port: portA });
    try {
      expect(await again.start()).toBe(urls[0]);
    } finally {
      await again.stop();
    }
  }, 60_000);

  it('as root, stops with one line naming a data folder the `postgres` user cannot reach, and the fixes', async () => {
    if (process.getuid?.() !== 0) return;
    const locked = tree.path('locked');
    mkdirSync(locked, { mode: 0o700 });
    const dataDir = tree.path('locked', 'skillhost', 'data');
    const sut = new EmbeddedPostgresServer({ dataDir, port: await freePort() });
    const error = (await sut.start().catch((e: unknown) => e)) as Error;
    expect(error).toBeInstanceOf(Error);
    expect(error.message).not.toContain('\n');
    expect(error.message).toContain(`cannot reach its data folder ${dataDir} (${locked} lets it not through)`);
    expect(error.message).toMatch(/embedded_dir.*DATABASE_URL|DATABASE_URL.*embedded_dir/);
    expect(existsSync(dataDir)).toBe(false);
    expect(sut.startedHere).toBe(false);
  });
});
