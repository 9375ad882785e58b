import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Inject, Injectable, Logger, type OnApplicationShutdown, Optional, type Provider } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig, type DatabaseConfig } from '../../config/app-config.js';
import { PROCESS_ROLE, type ProcessRole } from '../../config/process-role.js';
import { createDataSource, redactDatabaseUrl, runPendingMigrations } from './data-source.js';
import { EmbeddedPostgresServer, type EmbeddedPostgresWatcher } from './embedded-postgres.server.js';
import { DATABASE_STATE, type DatabaseState } from '../../domain/lifecycle/database-state.js';
import { DATA_SOURCE } from './persistence.tokens.js';

/**
 * What was started for this app, so shutdown can undo it in reverse order. The lifecycle (absent
 * in the CLI) hears when the embedded server is down, and cuts the pool when shutdown stops
 * waiting for turns. The HTTP server (absent in the CLI) tells the embedded server where the app
 * answers once it listens.
 */
@Injectable()
export class DatabaseLifecycle implements OnApplicationShutdown {
  dataSource: DataSource | undefined;
  embedded: EmbeddedPostgresServer | undefined;
  /** Which database this app uses, without its password: for the start-up summary. */
  description = '';
  private poolClosed: Promise<void> | undefined;

  constructor(
    @Optional() @Inject(DATABASE_STATE) readonly app?: DatabaseState,
    @Optional() private readonly http?: HttpAdapterHost,
  ) {
    app?.cutSignal.addEventListener('abort', () => void this.closePool(), { once: true });
  }

  /** A second start on the embedded data folder then names this app's address (see `EmbeddedPostgresOwner`). */
  noteAddressOnListen(): void {
    const server = this.http?.httpAdapter?.getHttpServer() as Server | undefined;
    server?.once('listening', () => {
      const address = server.address();
      if (address !== null && typeof address === 'object') this.embedded?.noteAddress(httpAddressOf(address));
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.closePool();
    await this.embedded?.stop();
  }

  /** Once: the cut and the shutdown may both ask. */
  private closePool(): Promise<void> {
    this.poolClosed ??= this.dataSource?.isInitialized ? this.dataSource.destroy() : undefined;
    return this.poolClosed ?? Promise.resolve();
  }
}

/** The database a server uses, once it is there and its schema current. */
export interface PreparedDatabase {
  url: string;
  /** The embedded server started for it, when no URL was configured. */
  embedded: EmbeddedPostgresServer | undefined;
  /** Which database, without its password: for the start-up summary. */
  description: string;
}

/**
 * Starts the embedded PostgreSQL when no URL is configured (kept running: `watcher` hears when it is down and up
 * again), then, when `migrations` says so, applies the pending migrations: the app never starts on a schema older
 * than its code. A single process does this for itself; a cluster's primary does it for its workers.
 */
export async function prepareDatabase(
  settings: DatabaseConfig,
  options: { logger: Logger; migrations: boolean; watcher?: EmbeddedPostgresWatcher },
): Promise<PreparedDatabase> {
  const { logger } = options;
  if (settings.url !== '') {
    const description = `PostgreSQL at ${redactDatabaseUrl(settings.url)}`;
    logger.debug(`Using ${description}`);
    try {
      if (options.migrations) await migrate(settings.url, logger);
    } catch (error) {
      throw new Error(`Cannot use the database at ${redactDatabaseUrl(settings.url)}: ${messageOf(error)}`);
    }
    return { url: settings.url, embedded: undefined, description };
  }
  const embedded = new EmbeddedPostgresServer({
    dataDir: settings.embeddedDir,
    port: settings.embeddedPort,
    log: (m) => logger.log(m),
    warn: (m) => logger.warn(m),
  });
  try {
    const url = await embedded.start();
    if (options.watcher !== undefined) embedded.keepRunning(options.watcher);
    const description = `embedded PostgreSQL on 127.0.0.1:${new URL(url).port}, data in ${settings.embeddedDir}`;
    logger.debug(`Using ${description}`);
    if (options.migrations) await migrate(url, logger);
    return { url, embedded, description };
  } catch (error) {
    await embedded.stop();
    throw new Error(messageOf(error));
  }
}

/**
 * Connects to DATABASE_URL, or starts the embedded PostgreSQL when none is set, then runs the migrations (see
 * `prepareDatabase`; a cluster's worker is given the URL and a schema its primary brought up to date).
 */
export const dataSourceProvider: Provider = {
  provide: DATA_SOURCE,
  inject: [APP_CONFIG, DatabaseLifecycle, PROCESS_ROLE],
  useFactory: async (config: AppConfig, started: DatabaseLifecycle, role: ProcessRole): Promise<DataSource> => {
    const logger = new Logger('Database');
    const settings = config.app.database;
    const database = await prepareDatabase(settings, {
      logger,
      migrations: role.runsMigrations,
      watcher: {
        down: (reason) =>
          started.app?.markDatabaseDown(`the embedded PostgreSQL stopped (${reason}) and is restarting`),
        up: () => started.app?.markDatabaseUp(),
      },
    });
    started.embedded = database.embedded;
    started.description = database.description;
    if (database.embedded !== undefined) started.noteAddressOnListen();
    try {
      const dataSource = createDataSource(database.url, {
        poolSize: settings.poolSize,
        statementTimeoutMs: settings.statementTimeoutMs,
        // A server that goes away fails every idle connection at once: readiness and the 503s tell it.
        onPoolError: (error) => logger.debug(`A pooled database connection failed: ${error.message}`),
        traceStatements: config.app.telemetry.endpoint !== '',
      });
      await dataSource.initialize();
      started.dataSource = dataSource;
      return dataSource;
    } catch (error) {
      // The app will not start, so no shutdown hook runs: undo what was started here.
      await started.onApplicationShutdown();
      throw new Error(
        settings.url === ''
          ? messageOf(error)
          : `Cannot use the database at ${redactDatabaseUrl(database.url)}: ${messageOf(error)}`,
      );
    }
  },
};

/**
 * Migrations run on their own connection, without the statement timeout: a schema change may take longer than any
 * request should.
 */
async function migrate(url: string, logger: Logger): Promise<void> {
  const dataSource = createDataSource(url, { poolSize: 1 });
  await dataSource.initialize();
  try {
    const applied = await runPendingMigrations(dataSource);
    if (applied.length > 0) {
      logger.log(`Applied ${applied.length} database migration(s)`);
      logger.debug(`Applied migrations: ${applied.map((m) => m.name).join(', ')}`);
    }
  } finally {
    await dataSource.destroy();
  }
}

function httpAddressOf({ address, family, port }: AddressInfo): string {
  return `http://${family === 'IPv6' ? `[${address}]` : address}:${port}`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
