import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import {
  type ActivationStore,
  type NewSkillActivation,
  type PgQueryable,
  PostgresActivationStore,
  type StoredSkillActivation,
} from '@skillhost/nest';
import postgres from 'postgres';
import { EXAMPLE_CONFIG, type ExampleConfig } from './example-config.js';

/**
 * The chats' activated skills: Skillhost's PostgreSQL store on this app's own pool (the table is
 * created at start; an app with migrations runs `activationTableSql()` in one instead). Without a
 * database the chat still works, and remembers nothing.
 *
 * The pool is postgres.js: the store only needs `query(text, values)` answering `{ rows }`, so any
 * client does with a few lines of adapter (`pg`'s Pool is one as it is).
 */
@Injectable()
export class Activations implements ActivationStore, OnApplicationShutdown {
  private readonly sql: postgres.Sql | undefined;
  private readonly store: PostgresActivationStore | undefined;
  private ready: Promise<void> | undefined;

  constructor(@Inject(EXAMPLE_CONFIG) config: ExampleConfig) {
    if (config.databaseUrl === undefined) return;
    const sql = postgres(config.databaseUrl, {
      max: 4,
      // CREATE TABLE IF NOT EXISTS on an existing table is a NOTICE, not for the console.
      onnotice: () => {},
      // As `pg` does: a string given for a json parameter is the JSON text itself (the store sends its rows so).
      types: {
        json: {
          to: 114,
          from: [114, 3802],
          serialize: (x: unknown) => (typeof x === 'string' ? x : JSON.stringify(x)),
          parse: (x: string) => JSON.parse(x),
        },
      },
    });
    const db: PgQueryable = {
      query: async (text, values = []) => ({
        rows: await sql.unsafe(text, values as postgres.ParameterOrJSON<never>[]),
      }),
    };
    this.sql = sql;
    this.store = new PostgresActivationStore(db, { table: 'example_activations' });
  }

  private schema(): Promise<void> {
    this.ready ??= this.store?.ensureSchema() ?? Promise.resolve();
    return this.ready;
  }

  async record(chatId: string, activations: readonly NewSkillActivation[]): Promise<void> {
    await this.schema();
    await this.store?.record(chatId, activations);
  }

  async activated(chatId: string): Promise<StoredSkillActivation[]> {
    await this.schema();
    return (await this.store?.activated(chatId)) ?? [];
  }

  async onApplicationShutdown(): Promise<void> {
    await this.sql?.end();
  }
}
