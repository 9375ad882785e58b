import pg, { type PoolClient } from 'pg';
import type { DataSource } from 'typeorm';
import { databaseUnavailable } from './database-errors.js';

export interface PreparedStatement {
  /** Names the statement on each connection, so PostgreSQL parses and plans it once per connection. */
  name: string;
  text: string;
}

/**
 * Runs a named prepared statement on a connection of the pool TypeORM manages, borrowed through
 * TypeORM's public QueryRunner (TypeORM's own `query()` cannot name a statement).
 */
export async function runPrepared<T>(
  dataSource: DataSource,
  statement: PreparedStatement,
  values: unknown[],
): Promise<T[]> {
  // A destroyed data source (the app is shutting down) has no pool left to borrow from.
  if (!dataSource.isInitialized) throw databaseUnavailable();
  const runner = dataSource.createQueryRunner('master');
  try {
    const client = (await runner.connect()) as PoolClient;
    try {
      return (await client.query({ name: statement.name, text: statement.text, values })).rows as T[];
    } catch (error) {
      // The server never answered (query_timeout): the statement may still be pending on this
      // connection, so it is ended and the pool drops it instead of lending it out stuck.
      if ((error as Error).message === 'Query read timeout' && client instanceof pg.Client)
        void client.end().catch(() => undefined);
      throw error;
    }
  } finally {
    await runner.release();
  }
}
