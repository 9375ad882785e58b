import cluster, { type Worker } from 'node:cluster';
import { type AddressInfo, createServer } from 'node:net';
import { Logger } from '@nestjs/common';
import type { AppConfig } from '../config/app-config.js';
import { packageVersion } from '../config/package-version.js';
import { prepareDatabase, type PreparedDatabase } from '../infra/database/database.provider.js';
import { createAppLogger } from '../infra/observability/logging.js';
import { PinoNestLogger } from '../infra/observability/nest-logger.js';
import { listeningLine, type StartupFacts, startupSummary } from './startup-summary.js';

/** What a worker tells the primary once it listens: its addresses and its start-up facts. */
export interface WorkerReady {
  type: 'skillhost:ready';
  addresses: string[];
  facts: StartupFacts;
}

/** What the primary tells its workers: the `nth` stop signal it received (the first drains, the second hurries). */
export interface WorkerStop {
  type: 'skillhost:stop';
  signal: NodeJS.Signals;
  nth: number;
}

export function isWorkerStop(message: unknown): message is WorkerStop {
  return typeof message === 'object' && message !== null && (message as WorkerStop).type === 'skillhost:stop';
}

function isWorkerReady(message: unknown): message is WorkerReady {
  return typeof message === 'object' && message !== null && (message as WorkerReady).type === 'skillhost:ready';
}

/** Crashes within this window count towards a crash loop; each one doubles the wait before the next restart. */
const CRASH_WINDOW_MS = 60_000;
const CRASH_LOOP_LIMIT = 5;
const FIRST_RESTART_DELAY_MS = 500;
const MAX_RESTART_DELAY_MS = 30_000;

/** How the process's stop signals reach the primary (main.ts listens for them before anything starts). */
export interface StopSignals {
  first: Promise<NodeJS.Signals>;
  /** Every signal received, in order, from the first on. */
  onEach(listener: (signal: NodeJS.Signals, nth: number) => void): void;
}

/**
 * `[app] workers` above 1: this process holds the database (starts the embedded PostgreSQL when no URL is set, runs the
 * migrations), then starts the workers (node:cluster: they share its port, connections handed out in turn) and
 * watches them. A worker that crashes is replaced after a back-off; a crash loop stops the server. A stop signal is
 * passed to every worker, which drains as a single process does; once all have exited the database stops.
 */
export async function runClusterPrimary(config: AppConfig, signals: StopSignals): Promise<never> {
  Logger.overrideLogger(new PinoNestLogger(createAppLogger(config.app.logging)));
  const logger = new Logger('Cluster');
  const { database, port } = await prepare(config).catch((error: unknown) => {
    console.error(`skillhost: cannot start: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
  const supervisor = new WorkerSupervisor(config.app.workers, port, database, logger);
  signals.onEach((signal, nth) => supervisor.stop(signal, nth));
  const exitCode = await Promise.race([
    supervisor.started.then(() => announce(database, supervisor)).then(() => supervisor.stopped),
    supervisor.stopped,
  ]);
  logger.log(`Workers stopped${exitCode === 0 ? '' : ' (not all cleanly)'}`);
  await database.embedded?.stop();
  logger.log('Stopped');
  process.exit(exitCode);
}

/** The database ready and migrated, and the port every worker listens on. */
async function prepare(config: AppConfig): Promise<{ database: PreparedDatabase; port: number }> {
  const database = await prepareDatabase(config.app.database, {
    logger: new Logger('Database'),
    migrations: true,
    watcher: { down: () => undefined, up: () => undefined },
  });
  try {
    return { database, port: await chosenPort(config.app.port, config.app.host) };
  } catch (error) {
    await database.embedded?.stop();
    throw error;
  }
}

/** The start-up summary, once, for the whole cluster: the first worker's facts with the primary's database. */
function announce(database: PreparedDatabase, supervisor: WorkerSupervisor): void {
  const ready = supervisor.firstReady!;
  const logger = new Logger('Skillhost');
  for (const address of ready.addresses) logger.log(listeningLine(packageVersion(), address));
  const facts = { ...ready.facts, database: database.description };
  for (const line of startupSummary(facts)) logger.log(line);
  logger.log(
    `Workers: ${supervisor.count} processes on one port (pids ${supervisor.pids.join(', ')}), started and watched by ` +
      `pid ${process.pid}; /metrics counts per worker`,
  );
  if (ready.addresses[0] !== undefined) database.embedded?.noteAddress(ready.addresses[0]);
}

/**
 * `port = 0` picks a free port here, once, for every worker: a replacement started while no other worker listens would
 * otherwise get a port of its own, and one started beside them could not bind a port named after theirs.
 */
function chosenPort(port: number, host: string): Promise<number> {
  if (port !== 0) return Promise.resolve(port);
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const chosen = (probe.address() as AddressInfo).port;
      probe.close(() => resolve(chosen));
    });
  });
}

/** Starts the workers, replaces crashed ones, and stops them all. */
class WorkerSupervisor {
  /** Resolves once every first worker listens; a worker that exits before that stops the server. */
  readonly started: Promise<void>;
  /** Resolves with the exit code once every worker has exited after a stop (or a failure). */
  readonly stopped: Promise<number>;
  firstReady: WorkerReady | undefined;
  private readonly workers = new Map<number, Worker>();
  private readonly ready = new Set<number>();
  private readonly crashes: number[] = [];
  private stopping: { signal: NodeJS.Signals | undefined; nth: number } | undefined;
  private failed = false;
  private onStarted: () => void = () => undefined;
  private onStopped: (code: number) => void = () => undefined;
  private restartTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly count: number,
    private readonly port: number,
    private readonly database: PreparedDatabase,
    private readonly logger: Logger,
  ) {
    this.started = new Promise((resolve) => (this.onStarted = resolve));
    this.stopped = new Promise((resolve) => (this.onStopped = resolve));
    for (let slot = 0; slot < count; slot++) this.fork();
  }

  get pids(): number[] {
    return [...this.workers.values()].map((worker) => worker.process.pid!);
  }

  /** Passes the `nth` stop signal on to every worker; the first also ends restarts. */
  stop(signal: NodeJS.Signals | undefined, nth: number): void {
    if (this.stopping === undefined && signal !== undefined)
      this.logger.log(`${signal}: stopping ${this.workers.size} worker(s); each drains its turns in flight`);
    this.stopping = { signal, nth };
    clearTimeout(this.restartTimer);
    for (const worker of this.workers.values()) this.tell(worker);
    this.settleIfDone();
  }

  private tell(worker: Worker): void {
    if (this.stopping === undefined || !worker.isConnected()) return;
    // A worker still starting acts on it once it listens (main.ts hears signals from its first line on).
    const message: WorkerStop = {
      type: 'skillhost:stop',
      signal: this.stopping.signal ?? 'SIGTERM',
      nth: this.stopping.nth,
    };
    worker.send(message);
  }

  private fork(): void {
    const worker = cluster.fork(this.workerEnv());
    this.workers.set(worker.id, worker);
    worker.on('message', (message: unknown) => this.heard(worker, message));
    worker.once('exit', (code, signal) => this.exited(worker, code, signal));
    this.tell(worker);
  }

  /** The workers use the database this process prepared (the embedded one's URL, or the configured one). */
  private workerEnv(): Record<string, string> {
    const env: Record<string, string> = { SKILLHOST_PORT: String(this.port) };
    if (this.database.embedded !== undefined) env.DATABASE_URL = this.database.url;
    return env;
  }

  private heard(worker: Worker, message: unknown): void {
    if (!isWorkerReady(message)) return;
    this.ready.add(worker.id);
    this.firstReady ??= message;
    this.logger.debug(`Worker ${worker.id} (pid ${worker.process.pid}) listens`);
    if (this.ready.size >= this.count && this.stopping === undefined) this.onStarted();
  }

  private exited(worker: Worker, code: number | null, signal: string | null): void {
    this.workers.delete(worker.id);
    const wasReady = this.ready.delete(worker.id);
    const how = signal === null ? `with code ${code}` : `on ${signal}`;
    if (this.stopping !== undefined) {
      if (code !== 0) this.failed = true;
      this.logger.debug(`Worker ${worker.id} (pid ${worker.process.pid}) exited ${how}`);
      this.settleIfDone();
      return;
    }
    if (!wasReady && this.firstReady === undefined) {
      this.fail(`worker ${worker.id} (pid ${worker.process.pid}) exited ${how} before it listened`);
      return;
    }
    this.restartAfterCrash(worker, how);
  }

  private restartAfterCrash(worker: Worker, how: string): void {
    const now = Date.now();
    this.crashes.push(now);
    while (this.crashes.length > 0 && this.crashes[0] < now - CRASH_WINDOW_MS) this.crashes.shift();
    if (this.crashes.length >= CRASH_LOOP_LIMIT) {
      this.fail(
        `workers crashed ${this.crashes.length} times within ${CRASH_WINDOW_MS / 1000} s (the last: worker ` +
          `${worker.id}, pid ${worker.process.pid}, exited ${how}); see the lines above for why`,
      );
      return;
    }
    const delay = Math.min(MAX_RESTART_DELAY_MS, FIRST_RESTART_DELAY_MS * 2 ** (this.crashes.length - 1));
    this.logger.warn(
      `Worker ${worker.id} (pid ${worker.process.pid}) exited unexpectedly ${how}; starting another in ${delay} ms`,
    );
    this.restartTimer = setTimeout(() => {
      if (this.stopping === undefined) this.fork();
    }, delay);
  }

  /** Stops the server: the other workers drain, then the process exits 1. */
  private fail(reason: string): void {
    this.logger.error(`Stopping the server: ${reason}`);
    this.failed = true;
    this.stop(undefined, 1);
  }

  private settleIfDone(): void {
    if (this.stopping !== undefined && this.workers.size === 0) this.onStopped(this.failed ? 1 : 0);
  }
}
