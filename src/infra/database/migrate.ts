import 'reflect-metadata';
import { ConfigError, loadConfig } from '../../config/config-loader.js';
import { createDataSource, redactDatabaseUrl, runPendingMigrations } from './data-source.js';
import { EmbeddedPostgresServer } from './embedded-postgres.server.js';

/**
 * `npm run migration:run` / `npm run migration:revert`: applies pending migrations or reverts the
 * last one, on DATABASE_URL (or the configured one), else on the embedded PostgreSQL.
 */
export async function migrate(url: string, direction: 'run' | 'revert', log: (line: string) => void): Promise<void> {
  const dataSource = createDataSource(url, { poolSize: 1 });
  await dataSource.initialize();
  try {
    if (direction === 'run') {
      const applied = await runPendingMigrations(dataSource);
      log(applied.length === 0 ? 'No pending migrations.' : `Applied: ${applied.map((m) => m.name).join(', ')}`);
    } else {
      const before = await dataSource.query('SELECT name FROM migrations ORDER BY id DESC LIMIT 1').catch(() => []);
      await dataSource.undoLastMigration({ transaction: 'each' });
      log(before.length === 0 ? 'No migration to revert.' : `Reverted: ${before[0].name}`);
    }
  } finally {
    await dataSource.destroy();
  }
}

async function main(): Promise<void> {
  const direction = process.argv[2];
  if (direction !== 'run' && direction !== 'revert') {
    console.error('Usage: node dist/src/infra/database/migrate.js run|revert');
    process.exitCode = 2;
    return;
  }
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    for (const problem of error.problems) console.error(`config: ${problem}`);
    process.exitCode = 1;
    return;
  }
  const settings = config.app.database;
  const embedded =
    settings.url === ''
      ? new EmbeddedPostgresServer({
          dataDir: settings.embeddedDir,
          port: settings.embeddedPort,
          ownerName: 'a migration command',
        })
      : undefined;
  const url = embedded ? await embedded.connectOrStart() : settings.url;
  console.log(`Database: ${redactDatabaseUrl(url)}${embedded ? ' (embedded)' : ''}`);
  try {
    await migrate(url, direction, (line) => console.log(line));
  } finally {
    await embedded?.stop();
  }
}

if (process.argv[1]?.endsWith('migrate.js')) void main();
