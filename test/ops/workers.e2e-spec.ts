import { chmodSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { stringify } from 'smol-toml';
import {
  type AppInstance,
  buildServer,
  type Instances,
  startInstances,
  startServerProcess,
} from '../support/instances.js';
import { query } from '../support/database.js';
import { generateApiKey } from '../../src/domain/users/api-key.js';
import { freePort } from '../support/ports.js';
import { tempTree } from '../support/files/skill-tree.js';

/**
 * `[app] workers = 2`: the built server (`dist/src/main.js`, as `npm start` runs it) as a primary and two worker
 * processes on one port, with a real PostgreSQL (the test server, and the embedded one).
 */

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** One request on a connection of its own, so the cluster hands each to the next worker. */
function send(url: string, method = 'GET', body?: unknown): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      // A connection handed to the worker just killed is never answered: give up on it.
      { method, agent: false, timeout: 5000, headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`no answer from ${url}`)));
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** The worker pids that answered `GET /health` over `tries` fresh connections. */
async function answeringPids(baseUrl: string, tries = 12): Promise<Set<number>> {
  const pids = new Set<number>();
  for (let i = 0; i < tries; i++) {
    const { body } = await send(`${baseUrl}/health`);
    pids.add((body.worker as { pid: number }).pid);
  }
  return pids;
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function parentOf(pid: number): number {
  // /proc/PID/stat: "pid (comm) state ppid …"; comm may hold spaces, so read after its closing parenthesis.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pids of the processes whose command line mentions `text`. */
function processesMentioning(text: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text);
      } catch {
        return false;
      }
    })
    .map(Number);
}

function linesOf(instance: AppInstance): Record<string, unknown>[] {
  return instance
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('[app] workers = 2 on the test PostgreSQL', () => {
  let cluster: Instances;
  let server: AppInstance;

  beforeAll(async () => {
    buildServer();
    const bootstrapKey = generateApiKey().key;
    cluster = await startInstances(1, {
      overrides: { 'app.workers': 2, 'app.auth.bootstrap_admin_key': bootstrapKey },
    });
    server = cluster.instances[0];
  }, 180_000);

  afterAll(() => cluster?.close());

  it(
    'answers on one port from two worker processes of the primary, which alone ran the migrations; the first ' +
      'worker alone registered the bootstrap admin key',
    async () => {
      const pids = await answeringPids(server.baseUrl);
      expect(pids.size).toBe(2);
      for (const pid of pids) expect(parentOf(pid)).toBe(server.pid);
      const applied = linesOf(server).filter((line) => /Applied \d+ database migration/.test(String(line.msg)));
      expect(applied).toHaveLength(1);
      expect(applied[0].pid).toBe(server.pid);
      // Each migration is recorded once.
      const rows = await query<{ name: string; copies: string }>(
        cluster.db.url,
        'SELECT name, count(*) AS copies FROM migrations GROUP BY name HAVING count(*) > 1',
      );
      expect(rows).toEqual([]);
      expect(server.output()).toMatch(/Workers: 2 processes on one port \(pids \d+, \d+\)/);
      // Every outcome of registering names the key in one line: had the second worker tried too, it would say so.
      const told = linesOf(server).filter((line) => /bootstrap admin key/i.test(String(line.msg)));
      expect(told.map((line) => [line.worker, String(line.msg).split(' (')[0]])).toEqual([
        [1, 'Registered the bootstrap admin key'],
      ]);
      const keys = await query(cluster.db.url, "SELECT id FROM api_keys WHERE label = 'bootstrap'");
      expect(keys).toHaveLength(1);
    },
  );

  it('shares the database between the workers: a chat made through one is read through the other', async () => {
    const made = await send(`${server.baseUrl}/v1/chats`, 'POST', {});
    expect(made.status).toBe(201);
    const reads = await Promise.all(
      Array.from({ length: 4 }, () => send(`${server.baseUrl}/v1/chats/${made.body.id as string}`)),
    );
    expect(reads.map((read) => [read.status, read.body.id])).toEqual(Array(4).fill([200, made.body.id]));
  });

  it('replaces a worker that is killed, on the same port', async () => {
    const before = [...(await answeringPids(server.baseUrl))];
    process.kill(before[0], 'SIGKILL');
    await until(
      async () => {
        const now = await answeringPids(server.baseUrl, 8).catch(() => new Set<number>());
        return now.size === 2 && !now.has(before[0]);
      },
      'a replacement worker to answer',
      90_000,
    );
    expect(server.output()).toContain(`(pid ${before[0]}) exited unexpectedly on SIGKILL`);
  }, 120_000);

  it('stops every process on SIGTERM, exiting 0', async () => {
    const workers = [...(await answeringPids(server.baseUrl))];
    expect(await server.stop()).toEqual({ code: 0, signal: null });
    for (const pid of workers) expect(isRunning(pid)).toBe(false);
    const stopped = linesOf(server).filter((line) => line.msg === 'Stopped');
    expect(stopped.map((line) => line.pid).sort()).toEqual([...workers, server.pid].sort());
  }, 60_000);
});

describe('[app] workers = 2 with the embedded PostgreSQL', () => {
  const tree = tempTree('skillhost-workers-');
  // As root the embedded server runs as `postgres`, which must be able to reach its data folder.
  chmodSync(tree.root, 0o755);
  let server: AppInstance | undefined;

  afterAll(async () => {
    await server?.stop();
    tree.cleanup();
  });

  it('starts the database once in the primary, gives the workers its address, and stops it last', async () => {
    buildServer();
    const dataDir = tree.path('pg');
    const config = tree.write(
      'config.toml',
      stringify({
        app: {
          port: 0,
          workers: 2,
          logging: { format: 'json' },
          database: { embedded_dir: dataDir, embedded_port: await freePort() },
        },
      }),
    );
    server = await startServerProcess(['node', `${process.cwd()}/dist/src/main.js`], {
      cwd: tree.root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SKILLHOST_CONFIG: config },
    });
    const postgres = processesMentioning(dataDir);
    expect(postgres.length).toBeGreaterThan(0);
    expect(postgres.some((pid) => parentOf(pid) === server!.pid)).toBe(true);
    expect(await answeringPids(server.baseUrl)).toHaveProperty('size', 2);
    expect(server.output()).toMatch(/Database: embedded PostgreSQL on 127\.0\.0\.1:\d+/);
    expect(await server.stop()).toEqual({ code: 0, signal: null });
    expect(processesMentioning(dataDir)).toEqual([]);
  }, 180_000);
});

describe('[app] workers = 2 that cannot listen', () => {
  let blocker: Server;

  beforeAll(async () => {
    buildServer();
    blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  }, 180_000);

  afterAll(() => new Promise<void>((resolve) => blocker.close(() => resolve())));

  it('stops the server with exit 1 and says which worker failed and why', async () => {
    const port = (blocker.address() as { port: number }).port;
    const failed = startInstances(1, { overrides: { 'app.workers': 2, 'app.port': port } });
    const error = (await failed.catch((e: unknown) => e)) as Error;
    expect(error.message).toContain('exited before listening');
    expect(error.message).toMatch(/cannot start: .*EADDRINUSE/);
    expect(error.message).toMatch(/Stopping the server: worker \d \(pid \d+\) exited with code 1 before it listened/);
  }, 120_000);
});
