import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { withServices } from '../../src/cli/cli-context.js';
import { configWith } from '../../src/config/config-loader.js';
import { embeddedOwnerFolder, isAlive, type OwnerRecord } from '../../src/infra/database/embedded-postgres.owner.js';
import { buildServer, LISTENING_LINE } from '../support/instances.js';
import { freePort } from '../support/ports.js';
import { tempTree } from '../support/files/skill-tree.js';

/**
 * Real server processes (the built `dist/src/main.js`, as `npm start` runs it) on one embedded
 * data folder: one owns it; every other start is refused in one line naming the owner, and the
 * owner's PostgreSQL is not touched. A folder whose owner is gone is taken over.
 */

type Exit = { code: number | null; signal: NodeJS.Signals | null };

interface ServerRun {
  pid: number;
  stdout(): string;
  stderr(): string;
  exit: Promise<Exit>;
  /** Once it listens (its base URL) or exits before that. */
  settled: Promise<{ baseUrl: string } | { exited: Exit }>;
  /** SIGTERM, then its exit. */
  stop(): Promise<Exit>;
}

const ADVICE =
  'stop it first, or set app.database.embedded_dir (SKILLHOST_DATABASE_EMBEDDED_DIR) to another folder, or set ' +
  'DATABASE_URL.';

const postmasterPid = (dataDir: string) =>
  Number.parseInt(readFileSync(`${dataDir}/postmaster.pid`, 'utf8').split('\n')[0], 10);
const ownerRecords = (dataDir: string) =>
  readdirSync(embeddedOwnerFolder(dataDir)).map(
    (file) => JSON.parse(readFileSync(join(embeddedOwnerFolder(dataDir), file), 'utf8')) as OwnerRecord,
  );

async function health(baseUrl: string): Promise<number> {
  return (await fetch(`${baseUrl}/health`)).status;
}

describe('one Skillhost per embedded data folder', () => {
  const tree = tempTree('skillhost-embedded-owner-');
  // As root the embedded server runs as `postgres`, which must be able to reach its data folders.
  chmodSync(tree.root, 0o755);
  const children: ChildProcess[] = [];
  const dataDirs: string[] = [];

  /** A fresh data folder (not created yet) with its PostgreSQL port. */
  async function dataFolder(name: string): Promise<{ dataDir: string; pgPort: number }> {
    const dataDir = tree.path(name, 'postgres');
    dataDirs.push(dataDir);
    return { dataDir, pgPort: await freePort() };
  }

  function configFor(name: string, dataDir: string, pgPort: number, httpPort = 0): string {
    return tree.write(
      `${name}.toml`,
      `[app]\nport = ${httpPort}\nhost = "127.0.0.1"\n[app.auth]\nmode = "none"\n[app.logging]\nformat = "json"\n` +
        `[app.database]\nembedded_dir = "${dataDir}"\nembedded_port = ${pgPort}\n`,
    );
  }

  function launch(config: string): ServerRun {
    const child = spawn(process.execPath, [`${process.cwd()}/dist/src/main.js`], {
      cwd: tree.root,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, SKILLHOST_CONFIG: config },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    // 'close', not 'exit': by then everything it wrote has been read.
    const exit = new Promise<Exit>((resolve) =>
      child.once('close', (code: number | null, signal: NodeJS.Signals | null) => resolve({ code, signal })),
    );
    const settled = new Promise<{ baseUrl: string } | { exited: Exit }>((resolve) => {
      child.stdout!.on('data', () => {
        const listening = LISTENING_LINE.exec(stdout);
        if (listening) resolve({ baseUrl: listening[1] });
      });
      void exit.then((exited) => resolve({ exited }));
    });
    return {
      pid: child.pid!,
      stdout: () => stdout,
      stderr: () => stderr,
      exit,
      settled,
      stop: () => {
        child.kill('SIGTERM');
        return exit;
      },
    };
  }

  async function started(config: string): Promise<ServerRun & { baseUrl: string }> {
    const run = launch(config);
    const settled = await run.settled;
    if (!('baseUrl' in settled))
      throw new Error(
        `the server exited before listening (${JSON.stringify(settled.exited)}):\n${run.stdout()}${run.stderr()}`,
      );
    return { ...run, baseUrl: settled.baseUrl };
  }

  /** The one line a refused start prints on stderr, for an owner that is a server. */
  const refusedBy = (dataDir: string, owner: ServerRun & { baseUrl: string }) =>
    `skillhost: cannot start: The embedded PostgreSQL in ${dataDir} belongs to Skillhost (pid ${owner.pid}, ` +
    `serving ${owner.baseUrl}): ${ADVICE}\n`;

  beforeAll(() => buildServer(), 120_000);
  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    // A test that failed half-way may leave a PostgreSQL behind whose owner was killed.
    for (const dataDir of dataDirs) {
      if (!existsSync(`${dataDir}/postmaster.pid`)) continue;
      const pid = postmasterPid(dataDir);
      if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    }
    tree.cleanup();
  });

  it('a second start (on another HTTP port, then on the same one) exits 1 with one line naming the first, which ' +
    'keeps serving on the same PostgreSQL', async () => {
    const { dataDir, pgPort } = await dataFolder('second');
    const httpPort = await freePort();
    const first = await started(configFor('first', dataDir, pgPort, httpPort));
    const postmaster = postmasterPid(dataDir);

    for (const config of [configFor('other-port', dataDir, pgPort), configFor('first', dataDir, pgPort, httpPort)]) {
      const second = launch(config);
      expect(await second.settled).toEqual({ exited: { code: 1, signal: null } });
      expect(second.stderr()).toBe(refusedBy(dataDir, first));
      expect(second.stdout()).toBe('');
      expect(await health(first.baseUrl)).toBe(200);
      expect(postmasterPid(dataDir)).toBe(postmaster);
      expect(isAlive(postmaster)).toBe(true);
    }

    // The CLI still works through the running server's PostgreSQL, and leaves it running.
    const cli = await promisify(execFile)(
      process.execPath,
      [`${process.cwd()}/bin/skillhost.js`, 'users', 'add', 'carol', '--config', configFor('cli', dataDir, pgPort)],
      {
        cwd: tree.root,
        env: { PATH: process.env.PATH, HOME: process.env.HOME },
      },
    );
    expect(cli.stdout).toMatch(/^Created member 'carol'/);
    expect(postmasterPid(dataDir)).toBe(postmaster);
    expect(await health(first.baseUrl)).toBe(200);

    expect(await first.stop()).toEqual({ code: 0, signal: null });
    expect(isAlive(postmaster)).toBe(false);
    expect(existsSync(embeddedOwnerFolder(dataDir))).toBe(false);
  }, 120_000);

  it('a start after its owner was killed (SIGKILL, its PostgreSQL left running) stops that PostgreSQL as orphaned ' +
    'and starts', async () => {
    const { dataDir, pgPort } = await dataFolder('killed');
    const config = configFor('killed', dataDir, pgPort);
    const killed = await started(config);
    const orphan = postmasterPid(dataDir);
    process.kill(killed.pid, 'SIGKILL');
    await killed.exit;
    expect(isAlive(orphan)).toBe(true);

    const next = await started(config);
    expect(next.stdout()).toContain(`Stopping an orphaned embedded PostgreSQL (pid ${orphan}) left on ${dataDir}`);
    expect(isAlive(orphan)).toBe(false);
    expect(postmasterPid(dataDir)).not.toBe(orphan);
    expect(ownerRecords(dataDir)).toEqual([
      expect.objectContaining({ pid: next.pid, name: 'Skillhost', address: next.baseUrl }),
    ]);
    expect(await health(next.baseUrl)).toBe(200);
    expect(await next.stop()).toEqual({ code: 0, signal: null });
  }, 120_000);

  (existsSync('/proc/self/stat') ? it : it.skip)(
    'an owner record whose pid now belongs to another process (another start time) is taken over',
    async () => {
      const { dataDir, pgPort } = await dataFolder('reused');
      const config = configFor('reused', dataDir, pgPort);
      const killed = await started(config);
      const orphan = postmasterPid(dataDir);
      process.kill(killed.pid, 'SIGKILL');
      await killed.exit;
      // The killed owner's pid, handed to another program: a live pid that is not the owner.
      const other = spawn('sleep', ['600'], { stdio: 'ignore' });
      children.push(other);
      const [file] = readdirSync(embeddedOwnerFolder(dataDir));
      writeFileSync(
        join(embeddedOwnerFolder(dataDir), file),
        JSON.stringify({ pid: other.pid, startTime: '1', name: 'Skillhost', address: killed.baseUrl }),
      );

      const next = await started(config);
      expect(next.stdout()).toContain(`Stopping an orphaned embedded PostgreSQL (pid ${orphan})`);
      expect(isAlive(other.pid!)).toBe(true);
      expect(ownerRecords(dataDir)).toEqual([expect.objectContaining({ pid: next.pid })]);
      expect(await health(next.baseUrl)).toBe(200);
      await next.stop();
    },
    120_000,
  );

  it('two starts racing on a fresh folder: exactly one initialises and serves, the other is refused ' +
    'naming it', async () => {
    const { dataDir, pgPort } = await dataFolder('race');
    const runs = [launch(configFor('race-a', dataDir, pgPort)), launch(configFor('race-b', dataDir, pgPort))];
    const outcomes = await Promise.all(runs.map((run) => run.settled));
    const winners = runs.filter((_, i) => 'baseUrl' in outcomes[i]);
    expect(winners).toHaveLength(1);
    const [winner] = winners;
    const loser = runs.find((run) => run !== winner)!;
    expect(await loser.exit).toEqual({ code: 1, signal: null });
    // The loser may have looked before the winner listened: then the line has no address yet.
    expect(loser.stderr()).toMatch(
      new RegExp(
        `^skillhost: cannot start: The embedded PostgreSQL in ${dataDir} belongs to Skillhost \\(pid ` +
          `${winner.pid}(, serving http://127\\.0\\.0\\.1:\\d+)?\\): stop it first[^\\n]*\\n$`,
      ),
    );
    const { baseUrl } = outcomes[runs.indexOf(winner)] as { baseUrl: string };
    expect(await health(baseUrl)).toBe(200);
    expect(await winner.stop()).toEqual({ code: 0, signal: null });
  }, 120_000);

  it('while a skillhost command runs its own PostgreSQL, a server start is refused naming the command; once it is ' +
    'done, the server starts', async () => {
    const { dataDir, pgPort } = await dataFolder('cli');
    const config = configFor('cli-server', dataDir, pgPort);
    const during = await withServices(
      configWith({ 'app.database.embedded_dir': dataDir, 'app.database.embedded_port': pgPort }),
      async ({ users }) => {
        await users.createUser('dave', 'member');
        const server = launch(config);
        return { settled: await server.settled, stderr: server.stderr() };
      },
    );
    expect(during).toEqual({
      settled: { exited: { code: 1, signal: null } },
      stderr:
        `skillhost: cannot start: The embedded PostgreSQL in ${dataDir} belongs to a skillhost command (pid ` +
        `${process.pid}): ${ADVICE}\n`,
    });
    expect(existsSync(`${dataDir}/postmaster.pid`)).toBe(false);

    const server = await started(config);
    expect(await health(server.baseUrl)).toBe(200);
    await server.stop();
  }, 120_000);

  it('the owner record itself: of six processes racing for it, fresh or stale, exactly one wins and the rest name ' +
    'it', async () => {
    const racer = `
      import { EmbeddedPostgresOwner } from ${JSON.stringify(
        `${process.cwd()}/dist/src/infra/database/embedded-postgres.owner.js`,
      )};
      process.stdout.write('ready\\n');
      process.stdin.once('data', () => {
        let owner;
        try {
          owner = EmbeddedPostgresOwner.acquire(process.env.DATA_DIR, 'racer');
          process.stdout.write(JSON.stringify({ won: process.pid }) + '\\n');
        } catch (error) {
          process.stdout.write(JSON.stringify({ refused: error.owner?.pid ?? error.message }) + '\\n');
        }
        process.stdin.once('end', () => owner?.release()).resume();
      });`;
    const { dataDir } = await dataFolder('record-race');
    mkdirSync(join(dataDir, '..'), { recursive: true });
    const gone = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
    await new Promise((resolve) => gone.once('exit', resolve));
    for (let round = 0; round < 8; round++) {
      if (round % 2 === 1) {
        mkdirSync(embeddedOwnerFolder(dataDir));
        writeFileSync(
          join(embeddedOwnerFolder(dataDir), `${gone.pid}-stale.json`),
          JSON.stringify({ pid: gone.pid, name: 'Skillhost' }),
        );
      }
      const racers = Array.from({ length: 6 }, () => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', racer], {
          env: { ...process.env, DATA_DIR: dataDir },
          stdio: ['pipe', 'pipe', 'inherit'],
        });
        children.push(child);
        const lines: string[] = [];
        child.stdout
          .setEncoding('utf8')
          .on('data', (chunk: string) => lines.push(...chunk.split('\n').filter(Boolean)));
        const exit = new Promise((resolve) => child.once('exit', resolve));
        const answered = async (count: number) => {
          while (lines.length < count) await new Promise((resolve) => setTimeout(resolve, 5));
        };
        return { child, lines, exit, answered };
      });
      await Promise.all(racers.map((r) => r.answered(1)));
      for (const r of racers) r.child.stdin.write('go\n');
      await Promise.all(racers.map((r) => r.answered(2)));
      const results = racers.map((r) => JSON.parse(r.lines[1]) as { won?: number; refused?: number });
      const winners = results.filter((r) => r.won !== undefined);
      expect(winners).toHaveLength(1);
      expect(results.filter((r) => r.refused !== undefined)).toEqual(Array(5).fill({ refused: winners[0].won }));
      for (const r of racers) r.child.stdin.end();
      await Promise.all(racers.map((r) => r.exit));
      expect(readdirSync(join(dataDir, '..'))).toEqual([]);
    }
  }, 120_000);
});
