import { randomUUID } from 'node:crypto';
import { type BeforeApplicationShutdown, Inject, Injectable, Logger } from '@nestjs/common';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import type { NotificationBus } from '../../domain/shared/notification-bus.js';
import { runQuery } from './database-errors.js';
import { postgresUrlOf } from './data-source.js';
import { DATA_SOURCE } from './persistence.tokens.js';
import { type PreparedStatement, runPrepared } from './prepared-statement.js';

/** Channels are fixed identifiers of ours, so they can be written into LISTEN unquoted. */
const CHANNEL_PATTERN = /^[a-z_][a-z0-9_]{0,62}$/;
/**
 * PostgreSQL refuses a NOTIFY payload of 8000 bytes or more (https://www.postgresql.org/docs/current/sql-notify.html).
 */
export const MAX_NOTIFY_PAYLOAD_BYTES = 7999;
/** How the LISTEN connection shows in pg_stat_activity. */
export const LISTEN_APPLICATION_NAME = 'skillhost-listen';

const RECONNECT_FIRST_DELAY_MS = 100;
const RECONNECT_MAX_DELAY_MS = 5000;
const CONNECT_TIMEOUT_MS = 5000;
/** A listener that only receives never writes, so only TCP keepalive notices a peer that vanished. */
const KEEPALIVE_DELAY_MS = 10_000;
/** How long shutdown waits for the server to acknowledge the LISTEN connection's end. */
const CLOSE_TIMEOUT_MS = 2000;

const NOTIFY: PreparedStatement = { name: 'skillhost_notify', text: 'SELECT pg_notify($1, $2)' };

/** One `listen()` or `onReconnect()` call: the same handler may be registered twice and removed once. */
interface Registration<H> {
  handler: H;
}

/**
 * PostgreSQL LISTEN/NOTIFY between the instances that share one database.
 *
 * Listening uses one dedicated connection (not from the pool: a pooled connection is handed to
 * others between queries and forgets its LISTENs), opened on the first `listen()`, so a process
 * that never listens (the CLI) never opens it. When it fails or ends it is reopened with back-off,
 * every channel is listened to again, and the `onReconnect` handlers run: whatever was sent in
 * between is lost, so they re-check their state.
 *
 * Sending goes through the pool, one NOTIFY at a time in call order: each commits before the next
 * is sent, and PostgreSQL delivers notifications in commit order, so a receiver sees them in the
 * order this instance sent them.
 */
@Injectable()
export class PgNotificationsService implements NotificationBus, BeforeApplicationShutdown {
  /** Random per process: a receiver compares it with a payload's origin to skip its own messages. */
  readonly instanceId = randomUUID();

  private readonly logger = new Logger(PgNotificationsService.name);
  private readonly channels = new Map<string, Set<Registration<(payload: string) => void>>>();
  private readonly reconnectHandlers = new Set<Registration<() => void>>();
  /** The open connection, once every channel registered so far is listened to on it. */
  private client: pg.Client | undefined;
  /** Resolved whenever `client` is set; replaced when it is lost. */
  private connected = settable();
  /** The last LISTEN/UNLISTEN sent on `client`: the connection answers in order. */
  private lastCommand: Promise<unknown> = Promise.resolve();
  private started = false;
  private closed = false;
  private wake: (() => void) | undefined;
  private backoffTimer: NodeJS.Timeout | undefined;
  private notifyTail: Promise<unknown> = Promise.resolve();

  constructor(@Inject(DATA_SOURCE) private readonly dataSource: DataSource) {}

  /**
   * Calls `handler` with the payload of every notification on `channel` (this instance's own
   * included) until the returned function is called. Takes effect once `ready()` resolves.
   */
  listen(channel: string, handler: (payload: string) => void): () => void {
    assertChannel(channel);
    if (this.closed) throw new Error(`Cannot listen on '${channel}': the application is shutting down.`);
    let registrations = this.channels.get(channel);
    if (registrations === undefined) {
      this.channels.set(channel, (registrations = new Set()));
      this.command(`LISTEN ${channel}`);
    }
    const registration = { handler };
    registrations.add(registration);
    this.start();
    return () => {
      if (!registrations.delete(registration) || registrations.size > 0 || this.channels.get(channel) !== registrations)
        return;
      this.channels.delete(channel);
      this.command(`UNLISTEN ${channel}`);
    };
  }

  /**
   * Resolves once the LISTEN connection is open and listens on every channel registered so far
   * (waiting through reconnects); rejects when the application shuts down first.
   */
  async ready(): Promise<void> {
    for (;;) {
      if (this.closed) throw new Error('The LISTEN connection is closed: the application is shutting down.');
      const client = this.client;
      if (client !== undefined) {
        await this.lastCommand;
        if (this.client === client) return;
        continue;
      }
      await this.connected.promise;
    }
  }

  /**
   * Sends `payload` on `channel`, after every earlier `notify()` of this instance; resolves when
   * it is sent (committed). Throws at once for an invalid channel or a payload PostgreSQL would
   * refuse: send a reference (a row's id) for anything large.
   */
  notify(channel: string, payload: string): Promise<void> {
    assertChannel(channel);
    const bytes = Buffer.byteLength(payload, 'utf8');
    if (bytes > MAX_NOTIFY_PAYLOAD_BYTES) {
      throw new Error(
        `A notification on '${channel}' may carry at most ${MAX_NOTIFY_PAYLOAD_BYTES} bytes (PostgreSQL's ` +
          `limit); this one has ${bytes}: store the data in a table and notify its id instead.`,
      );
    }
    if (this.closed)
      return Promise.reject(new Error(`Cannot notify on '${channel}': the application is shutting down.`));
    const sent = this.notifyTail.then(() => runQuery(() => runPrepared(this.dataSource, NOTIFY, [channel, payload])));
    this.notifyTail = sent.catch(() => undefined);
    return sent.then(() => undefined);
  }

  /** Calls `handler` each time the LISTEN connection is back after it was lost. Returns an unsubscribe function. */
  onReconnect(handler: () => void): () => void {
    const registration = { handler };
    this.reconnectHandlers.add(registration);
    return () => void this.reconnectHandlers.delete(registration);
  }

  /**
   * Before the pool closes (DatabaseLifecycle, on application shutdown): stop listening, let the sends already queued
   * finish.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.closed = true;
    clearTimeout(this.backoffTimer);
    this.wake?.();
    const client = this.client;
    this.client = undefined;
    this.connected.resolve();
    if (client !== undefined) await endClient(client);
    await this.notifyTail;
  }

  private start(): void {
    if (this.started) return;
    this.started = true;
    void this.connectLoop(false);
  }

  /** Sent now when connected; otherwise the next connection listens to every registered channel. */
  private command(sql: string): void {
    if (this.client === undefined) return;
    // A failure here is the connection's, which its `error`/`end` events report.
    this.lastCommand = this.client.query(sql).catch(() => undefined);
  }

  /** Opens the connection, retrying with doubling delays; logs the first failure only. */
  private async connectLoop(reconnecting: boolean): Promise<void> {
    let failures = 0;
    for (let attempt = 0; !this.closed; attempt++) {
      if (reconnecting || attempt > 0)
        await this.backoff(Math.min(RECONNECT_MAX_DELAY_MS, RECONNECT_FIRST_DELAY_MS * 2 ** attempt));
      if (this.closed) return;
      try {
        await this.open();
      } catch (error) {
        if (failures++ === 0 && !reconnecting)
          this.logger.warn(`Cannot open the LISTEN connection (${messageOf(error)}); retrying with back-off`);
        else this.logger.debug(`Opening the LISTEN connection failed again: ${messageOf(error)}`);
        continue;
      }
      const attempts = failures > 0 ? ` after ${failures + 1} attempts` : '';
      if (reconnecting) this.logger.log(`The LISTEN connection is back${attempts}`);
      else if (failures > 0) this.logger.log(`The LISTEN connection is open${attempts}`);
      if (reconnecting) this.runReconnectHandlers();
      return;
    }
  }

  /** One attempt: connect, LISTEN on every channel, then make the connection current. */
  private async open(): Promise<void> {
    let lost = false;
    const client = new pg.Client({
      connectionString: postgresUrlOf(this.dataSource),
      application_name: LISTEN_APPLICATION_NAME,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      keepAlive: true,
      keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
    });
    const onLost = (reason: string) => {
      lost = true;
      this.lose(client, reason);
    };
    client.on('error', (error) => onLost(error.message));
    client.on('end', () => onLost('the server closed it'));
    client.on('notification', (message) => this.dispatch(message.channel, message.payload ?? ''));
    try {
      await client.connect();
      // The live map: channels registered while this runs are listened to as well.
      for (const channel of this.channels.keys()) await client.query(`LISTEN ${channel}`);
    } catch (error) {
      await endClient(client);
      throw error;
    }
    if (lost || this.closed) {
      await endClient(client);
      throw new Error(this.closed ? 'shutting down' : 'the connection was lost while it was being set up');
    }
    this.client = client;
    this.lastCommand = Promise.resolve();
    this.connected.resolve();
  }

  /** The current connection failed or ended: log it once, and reconnect unless shutting down. */
  private lose(client: pg.Client, reason: string): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.connected = settable();
    void endClient(client);
    if (this.closed) return;
    this.logger.warn(
      `The LISTEN connection was lost (${reason}); reconnecting with back-off. Notifications sent meanwhile are ` +
        `missed.`,
    );
    void this.connectLoop(true);
  }

  private backoff(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
      this.backoffTimer = setTimeout(resolve, ms);
    });
  }

  private dispatch(channel: string, payload: string): void {
    for (const { handler } of this.channels.get(channel) ?? []) {
      try {
        handler(payload);
      } catch (error) {
        this.logger.error(`A handler of notifications on '${channel}' failed: ${messageOf(error)}`);
      }
    }
  }

  private runReconnectHandlers(): void {
    for (const { handler } of this.reconnectHandlers) {
      try {
        handler();
      } catch (error) {
        this.logger.error(`A reconnect handler failed: ${messageOf(error)}`);
      }
    }
  }
}

function assertChannel(channel: string): void {
  if (!CHANNEL_PATTERN.test(channel)) {
    throw new Error(
      `Invalid notification channel ${JSON.stringify(channel)}: use 1-63 lowercase letters, digits and ` +
        `underscores, not starting with a digit.`,
    );
  }
}

/** Ends a connection without waiting long for a server that does not answer. */
async function endClient(client: pg.Client): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    client.end().catch(() => undefined),
    new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_TIMEOUT_MS))),
  ]);
  clearTimeout(timer);
}

function settable(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
