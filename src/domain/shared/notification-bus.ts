/** Short messages between the instances that share the database (PostgreSQL's LISTEN/NOTIFY, in infra). */
export interface NotificationBus {
  /** This instance's id, so it can tell its own messages from the others'. */
  readonly instanceId: string;
  /**
   * Calls `handler` with every message on `channel` (this instance's own included) until the returned function is
   * called; in effect once `ready()` resolves.
   */
  listen(channel: string, handler: (payload: string) => void): () => void;
  /** Resolves once the instance listens on every channel registered so far. */
  ready(): Promise<void>;
  /** Sends a message to every instance; payloads are small (send a reference for anything large). */
  notify(channel: string, payload: string): Promise<void>;
  /**
   * Calls `handler` each time the bus is back after it was lost (messages sent meanwhile were missed). Returns an
   * unsubscribe function.
   */
  onReconnect(handler: () => void): () => void;
}

export const NOTIFICATION_BUS = Symbol('NOTIFICATION_BUS');
