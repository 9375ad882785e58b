import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../../migrations/index.js';
import { ChatActivatedSkillEntity } from './entities/chat-activated-skill.entity.js';
import { ChatMessageEntity } from './entities/chat-message.entity.js';
import { ApiKeyEntity } from './entities/api-key.entity.js';
import { ChatEntity } from './entities/chat.entity.js';
import { UserEntity } from './entities/user.entity.js';
import { TracedPgClient } from './traced-pg-client.js';

export const ENTITIES = [ChatEntity, ChatMessageEntity, ChatActivatedSkillEntity, UserEntity, ApiKeyEntity];

export interface DataSourceSettings {
  poolSize?: number;
  /**
   * Bounds every statement (server-side `statement_timeout`, and a client-side `query_timeout`
   * a second later for a server that does not answer at all) and the wait for a connection. Unset
   * (migrations): statements may take as long as they need, connecting still gives up after 5 s.
   */
  statementTimeoutMs?: number;
  /** Errors of idle pooled connections (the server went away); by default TypeORM logs each one. */
  onPoolError?: (error: Error) => void;
  /** Each statement is a span (`[app.telemetry]` is on): the pool's connections are TracedPgClient's. */
  traceStatements?: boolean;
}

/** Grace for the server's own statement_timeout to answer before the client stops waiting. */
const CLIENT_TIMEOUT_MARGIN_MS = 1000;

/** A DataSource for a URL; schema changes only through migrations, never `synchronize`. */
export function createDataSource(url: string, options: DataSourceSettings = {}): DataSource {
  const timeout = options.statementTimeoutMs;
  return new DataSource({
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    synchronize: false,
    migrationsRun: false,
    poolSize: options.poolSize ?? 20,
    connectTimeoutMS: timeout ?? 5000,
    extra: {
      connectionTimeoutMillis: timeout ?? 5000,
      ...(options.traceStatements === true ? { Client: TracedPgClient } : {}),
      ...(timeout === undefined
        ? {}
        : { statement_timeout: timeout, query_timeout: timeout + CLIENT_TIMEOUT_MARGIN_MS }),
    },
    ...(options.onPoolError ? { poolErrorHandler: options.onPoolError } : {}),
  });
}

/**
 * The URL the app's pool uses (DATABASE_URL, or the embedded server's, decided at start), for connections of their
 * own: the LISTEN connection, the rate limits' pool.
 */
export function postgresUrlOf(dataSource: DataSource): string {
  const { options } = dataSource;
  if (options.type !== 'postgres' || options.url === undefined)
    throw new Error('The data source has no PostgreSQL URL to open a connection of its own with.');
  return options.url;
}

/** `postgres://user:secret@host:5432/db` → `postgres://user@host:5432/db`, for logs. */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    return parsed.toString().replace(/:@/, '@');
  } catch {
    return '(unparseable database URL)';
  }
}

/** An arbitrary, fixed key: instances starting together on one database take turns to migrate. */
const MIGRATION_LOCK_KEY = 7_300_417_551;

/**
 * Applies pending migrations while holding a PostgreSQL advisory lock, so that instances started at
 * once on a fresh (or older) database migrate one after the other instead of racing to create the
 * same tables. `dataSource` must have a pool of one connection: the lock belongs to the session.
 */
export async function runPendingMigrations(dataSource: DataSource): Promise<{ name: string }[]> {
  await dataSource.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
  try {
    return await dataSource.runMigrations({ transaction: 'each' });
  } finally {
    await dataSource.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
  }
}
