import { Injectable, Logger, type OnApplicationShutdown, type Provider } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { createDataSource, redactDatabaseUrl } from './data-source.js';
import { EmbeddedPostgresServer } from './embedded-postgres.server.js';
import { DATA_SOURCE } from './persistence.tokens.js';

/** What was started for this app, so shutdown can undo it in reverse order. */
@Injectable()
export class DatabaseLifecycle implements OnApplicationShutdown {
  dataSource: DataSource | undefined;
  embedded: EmbeddedPostgresServer | undefined;

  async onApplicationShutdown(): Promise<void> {
    if (this.dataSource?.isInitialized) await this.dataSource.destroy();
    await this.embedded?.stop();
  }
}

/**
 * Connects to DATABASE_URL, or starts the embedded PostgreSQL when none is set, then runs the
 * migrations: the app never starts on a schema older than its code.
 */
export const dataSourceProvider: Provider = {
  provide: DATA_SOURCE,
  inject: [APP_CONFIG, DatabaseLifecycle],
  useFactory: async (config: AppConfig, lifecycle: DatabaseLifecycle): Promise<DataSource> => {
    const logger = new Logger('Database');
    const settings = config.app.database;
    let url = settings.url;
    if (url === '') {
      lifecycle.embedded = new EmbeddedPostgresServer({ dataDir: settings.embeddedDir, port: settings.embeddedPort, log: (m) => logger.log(m) });
      url = await lifecycle.embedded.start();
      logger.log(`Using the embedded PostgreSQL at ${redactDatabaseUrl(url)} (data in ${settings.embeddedDir})`);
    } else {
      logger.log(`Using PostgreSQL at ${redactDatabaseUrl(url)} (DATABASE_URL)`);
    }
    const dataSource = createDataSource(url, { poolSize: settings.poolSize });
    try {
      await dataSource.initialize();
      lifecycle.dataSource = dataSource;
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      if (applied.length > 0) logger.log(`Applied migrations: ${applied.map((m) => m.name).join(', ')}`);
      return dataSource;
    } catch (error) {
      // The app will not start, so no shutdown hook runs: undo what was started here.
      await lifecycle.onApplicationShutdown();
      throw new Error(`Cannot use the database at ${redactDatabaseUrl(url)}: ${error instanceof Error ? error.message : String(error)}`);
    }
  },
};

