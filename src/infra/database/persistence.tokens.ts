export const DATA_SOURCE = Symbol('DATA_SOURCE');

/**
 * What the database's lifecycle tells the app, and hears from it (the server's LifecycleService
 * provides it; the CLI has none): a port of the persistence's own, so it imports nothing of ops.
 */
export const DATABASE_STATE = Symbol('SKILLHOST_DATABASE_STATE');

export interface DatabaseState {
  /** Aborted when shutdown stops waiting for turns: the pool closes at once. */
  readonly cutSignal: AbortSignal;
  markDatabaseDown(reason: string): void;
  markDatabaseUp(): void;
}
