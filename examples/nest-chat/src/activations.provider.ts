import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import pg from 'pg';
import { type ActivationStore, type NewSkillActivation, PostgresActivationStore, type StoredSkillActivation } from 'skillhost/nest';
import { EXAMPLE_CONFIG, type ExampleConfig } from './example-config.js';

/**
 * The chats' activated skills: Skillhost's PostgreSQL store on this app's own pool (the table is
 * created at start; an app with migrations runs `activationTableSql()` in one instead). Without a
 * database the chat still works, and remembers nothing.
 */
@Injectable()
export class Activations implements ActivationStore, OnApplicationShutdown {
  private readonly pool: pg.Pool | undefined;
  private readonly store: PostgresActivationStore | undefined;
  private ready: Promise<void> | undefined;

  constructor(@Inject(EXAMPLE_CONFIG) config: ExampleConfig) {
    if (config.databaseUrl === undefined) return;
    this.pool = new pg.Pool({ connectionString: config.databaseUrl, max: 4 });
    this.store = new PostgresActivationStore(this.pool, { table: 'example_activations' });
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
    await this.pool?.end();
  }
}
