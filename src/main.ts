import 'reflect-metadata';
import cluster from 'node:cluster';
import { ConsoleLogger, Logger, type LogLevel as NestLogLevel } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { closeGracefully, createApp } from './app/app.factory.js';
import type { AppConfig, LogLevel } from './config/app-config.js';
import { ConfigError, loadConfig } from './config/config-loader.js';
import { packageVersion } from './config/package-version.js';
import { AuthService } from './domain/users/auth.service.js';
import { listeningLine, type StartupFacts, startupSummary } from './app/startup-summary.js';
import { DatabaseLifecycle } from './infra/database/database.provider.js';
import { SkillRegistryService } from '@skillhost/nest';
import { isWorkerStop, runClusterPrimary, type StopSignals, type WorkerReady } from './app/cluster-primary.js';
import { type ProcessRole, SINGLE_PROCESS, workerRole } from './config/process-role.js';

/**
 * Past the grace period, how long closing (the pool, the embedded PostgreSQL) may take before the process exits anyway.
 */
const CLOSE_MARGIN_MS = 30_000;

/** How much longer than a worker the primary waits before it exits anyway: the workers' own deadline comes first. */
const WORKER_EXIT_MARGIN_MS = 5000;

const SIGNAL_NUMBERS = { SIGINT: 2, SIGTERM: 15 } as const;
type StopSignal = keyof typeof SIGNAL_NUMBERS;

async function bootstrap(): Promise<void> {
  const config = loadConfigOrExit();
  // Listening before anything starts, so a signal during start-up is acted on once it is up.
  const signals = listenForStopSignals();
  if (cluster.isPrimary && config.app.workers > 1) {
    void signals.first.then(() => exitIfStuck(config.app.shutdownGraceMs + WORKER_EXIT_MARGIN_MS));
    return runClusterPrimary(config, signals);
  }
  const role = cluster.worker === undefined ? SINGLE_PROCESS : workerRole(cluster.worker.id);
  // What Nest logs before the app's own logger takes over (start-up and its failures) goes here.
  Logger.overrideLogger(new StartupLogger(config.app.logging.level));
  const { app, addresses } = await startOrExit(config, role);
  const logger = new Logger('Skillhost');
  const facts = startupFacts(app, config);
  if (role.worker === undefined) for (const line of startupSummary(facts)) logger.log(line);
  else process.send?.({ type: 'skillhost:ready', addresses, facts } satisfies WorkerReady);

  const signal = await signals.first;
  const graceMs = config.app.shutdownGraceMs;
  // Whatever happens below, the process ends: a hung close must not keep it alive forever.
  exitIfStuck(graceMs);
  logger.log(
    `${signal}: refusing new connections and turns; waiting up to ` +
      `${graceMs} ms (app.shutdown_grace_ms) for the turns in flight`,
  );
  try {
    const cut = await closeGracefully(
      app,
      graceMs,
      signals.second.then((again) => logger.warn(`${again} again: not waiting for the turns in flight any longer`)),
    );
    if (cut > 0)
      logger.warn(
        `Cut ${cut} turn(s) still running at the end of the grace period: their connections were reset and they ` +
          `were not stored`,
      );
  } catch (error) {
    logger.error(`Shutdown failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
  logger.log('Stopped');
  process.exit(0);
}

/** Past the grace period and the margin for closing, the process exits whatever is still under way. */
function exitIfStuck(graceMs: number): void {
  setTimeout(() => {
    console.error(`skillhost: shutdown did not finish within ${graceMs + CLOSE_MARGIN_MS} ms; exiting anyway`);
    process.exit(1);
  }, graceMs + CLOSE_MARGIN_MS).unref();
}

/** The facts of the start-up summary, from the running app. */
function startupFacts(app: NestFastifyApplication, config: AppConfig): StartupFacts {
  const { host, skills, mcp, models, defaultModel } = config.app;
  const snapshot = skills.enabled ? app.get(SkillRegistryService, { strict: false }).snapshot : undefined;
  return {
    authMode: app.get(AuthService, { strict: false }).mode,
    host,
    database: app.get(DatabaseLifecycle, { strict: false }).description,
    skills: snapshot && {
      loaded: snapshot.skills.size,
      invalid: snapshot.invalid.length,
      directories: snapshot.directories,
    },
    mcp: mcp.enabled,
    models: Object.keys(models),
    defaultModel,
  };
}

function loadConfigOrExit(): AppConfig {
  try {
    return loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const problem of error.problems) console.error(`config: ${problem}`);
    process.exit(1);
  }
}

/** Start-up failures are one line on stderr (the stack only at debug level), then exit 1. */
async function startOrExit(
  config: AppConfig,
  role: ProcessRole,
): Promise<{ app: NestFastifyApplication; addresses: string[] }> {
  let app: NestFastifyApplication | undefined;
  const addresses: string[] = [];
  try {
    app = await createApp(config, { role });
    // Fastify's own line for each address is the summary's first: `app.port = 0` picks a free port. A worker's is not:
    // the primary says where the cluster listens once every worker does.
    await app.listen({
      port: config.app.port,
      host: config.app.host,
      listenTextResolver: (address) => {
        addresses.push(address);
        return role.worker === undefined
          ? listeningLine(packageVersion(), address)
          : `Worker ${role.worker} (pid ${process.pid}) answers at ${address}`;
      },
    });
    return { app, addresses };
  } catch (error) {
    console.error(`skillhost: cannot start: ${error instanceof Error ? error.message : String(error)}`);
    if (error instanceof Error) new Logger('Skillhost').debug(error.stack);
    await app?.close().catch(() => undefined);
    process.exit(1);
  }
}

/**
 * The process's one SIGTERM/SIGINT handler. The first signal starts the graceful stop; a second
 * cuts the wait for turns short; a third exits at once (128 + the signal's number). A cluster's
 * worker also hears the signals its primary received, counted with its own: Ctrl-C in a terminal
 * reaches both, and is still one signal.
 */
function listenForStopSignals(): StopSignals & { second: Promise<StopSignal> } {
  const received: StopSignal[] = [];
  const listeners: ((signal: NodeJS.Signals, nth: number) => void)[] = [];
  let onFirst: (signal: StopSignal) => void = () => undefined;
  let onSecond: (signal: StopSignal) => void = () => undefined;
  const first = new Promise<StopSignal>((resolve) => (onFirst = resolve));
  const second = new Promise<StopSignal>((resolve) => (onSecond = resolve));
  const handle = (signal: StopSignal) => {
    received.push(signal);
    for (const listener of listeners) listener(signal, received.length);
    if (received.length === 1) onFirst(signal);
    else if (received.length === 2) onSecond(signal);
    else process.exit(128 + SIGNAL_NUMBERS[signal]);
  };
  for (const signal of Object.keys(SIGNAL_NUMBERS) as StopSignal[]) process.on(signal, handle);
  if (cluster.isWorker)
    process.on('message', (message: unknown) => {
      if (!isWorkerStop(message)) return;
      const signal = message.signal in SIGNAL_NUMBERS ? (message.signal as StopSignal) : 'SIGTERM';
      while (received.length < message.nth) handle(signal);
    });
  return { first, second, onEach: (listener) => listeners.push(listener) };
}

const NEST_LEVELS: Record<LogLevel, NestLogLevel[]> = {
  fatal: ['fatal'],
  error: ['fatal', 'error'],
  warn: ['fatal', 'error', 'warn'],
  info: ['fatal', 'error', 'warn', 'log'],
  debug: ['fatal', 'error', 'warn', 'log', 'debug'],
  trace: ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'],
};

/**
 * Where what Nest logs during start-up lands when start-up fails (the app's own logger takes over
 * the lines of one that succeeds): its progress lines and the error its ExceptionHandler reports
 * (with the whole stack) are debug lines, so a failed start prints the one line main writes.
 */
class StartupLogger extends ConsoleLogger {
  constructor(level: LogLevel) {
    super({ logLevels: NEST_LEVELS[level] });
  }

  override log(message: unknown, ...rest: unknown[]): void {
    super.debug(message, ...rest);
  }

  override error(message: unknown, ...rest: unknown[]): void {
    if (rest[rest.length - 1] === 'ExceptionHandler') {
      this.debug(message instanceof Error ? (message.stack ?? message.message) : message, 'ExceptionHandler');
      return;
    }
    super.error(message, ...rest);
  }
}

void bootstrap();
