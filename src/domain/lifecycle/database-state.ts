/**
 * What the database's lifecycle tells the app, and hears from it (the server's LifecycleService
 * provides it; the CLI has none): a port of the domain's, which the database adapter reports to.
 */
export const DATABASE_STATE = Symbol('SKILLHOST_DATABASE_STATE');

export interface DatabaseState {
  /** Aborted when shutdown stops waiting for turns: the pool closes at once. */
  readonly cutSignal: AbortSignal;
  markDatabaseDown(reason: string): void;
  markDatabaseUp(): void;
}
