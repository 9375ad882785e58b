import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnModuleInit,
  Optional,
} from '@nestjs/common';
import { NOTIFICATION_BUS, type NotificationBus } from '../shared/notification-bus.js';
import { CHAT_EVENT_RELAY, type ChatEventRelay } from './chat-event-relay.js';

/**
 * The events of a turn, exactly as the SSE stream sends them: `tool-call`, `tool-result`,
 * `text-delta`, then `done` (the turn's answer) or `error` (`{code, message}`).
 */
export interface ChatEvent {
  event: 'tool-call' | 'tool-result' | 'text-delta' | 'done' | 'error';
  data: unknown;
}

/**
 * An instance announces here which chats its subscribers watch (`{origin, chatIds}`), or asks the others to (`{origin,
 * ask: true}`).
 */
export const CHAT_INTEREST_CHANNEL = 'skillhost_chat_interest';
/**
 * A turn's events for the instances that announced interest: `{origin, chatId, event}`, or `{origin, chatId, ref}` for
 * a stored one.
 */
export const CHAT_EVENTS_CHANNEL = 'skillhost_chat_events';
/** While an instance has subscribers to a chat it announces so this often… */
export const INTEREST_REFRESH_MS = 10_000;
/** …and the others forget its interest this long after the last announcement (several refreshes may be missed). */
export const INTEREST_TTL_MS = 30_000;
/**
 * A relayed event whose notification would be larger goes through `chat_event_relay` (PostgreSQL refuses 8000 bytes).
 */
export const MAX_INLINE_RELAY_BYTES = 7000;
/**
 * While relaying fails, an event is tried at most this often; the ones in between are dropped rather than queued behind
 * timeouts.
 */
const RELAY_RETRY_MS = 1000;
/** Chat ids per interest announcement: 150 uuids stay well under the payload limit. */
const CHATS_PER_ANNOUNCEMENT = 150;
/** How long `subscribe()` waits for its interest announcement before it goes on with local events only. */
const ANNOUNCE_WAIT_MS = 5000;

/** A subscriber that falls this far behind is ended rather than let the queue grow without bound. */
const MAX_QUEUED_EVENTS = 10_000;

interface Subscriber {
  push(event: ChatEvent): void;
}

type InterestMessage = { origin: string; chatIds: string[] } | { origin: string; ask: true };
type RelayMessage =
  | { origin: string; chatId: string; event: ChatEvent }
  | { origin: string; chatId: string; ref: string };

/**
 * Per-chat fan-out of turn events to live subscribers (GraphQL `chatEvents`), whichever API and
 * whichever instance runs the turn.
 *
 * Subscribers on this instance are served directly. Across instances (PostgreSQL LISTEN/NOTIFY):
 * an instance with subscribers to a chat announces its interest when the first one arrives and
 * every INTEREST_REFRESH_MS while any remain; the instance running a turn relays the chat's events
 * only while some other instance's interest is fresh, so a chat nobody watches costs no NOTIFY.
 * Relayed events keep their order (one queue per instance, and one delivery queue per chat on the
 * receiving side); an event too large for a notification is stored and its id sent instead.
 *
 * Without a NOTIFICATION_BUS (a unit test building this service alone) it is in-process only.
 */
@Injectable()
export class ChatEventsService implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger(ChatEventsService.name);
  private readonly subscribers = new Map<string, Set<Subscriber>>();
  /** Chat id → when the freshest remote interest in it expires (ms since the epoch). */
  private readonly remoteInterest = new Map<string, number>();
  /** Chat id → its first interest announcement, awaited by every `subscribe()` while the chat has subscribers. */
  private readonly announced = new Map<string, Promise<void>>();
  /** Chat id → relayed events still being delivered in order (a stored event is being read). */
  private readonly deliveries = new Map<string, Promise<void>>();
  private relayTail: Promise<void> = Promise.resolve();
  /** Set while relaying fails: when it last failed, and how many events were not relayed since it began. */
  private relayOutage: { lastFailureAt: number; missed: number } | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;
  private refreshing = false;
  private lastPruned = 0;
  private readonly unlisten: (() => void)[] = [];
  private stopped = false;

  constructor(
    @Optional() @Inject(NOTIFICATION_BUS) private readonly notifications?: NotificationBus,
    @Optional() @Inject(CHAT_EVENT_RELAY) private readonly relayStore?: ChatEventRelay,
  ) {}

  onModuleInit(): void {
    const bus = this.notifications;
    if (bus === undefined) return;
    this.unlisten.push(
      bus.listen(CHAT_INTEREST_CHANNEL, (payload) => this.onInterest(payload)),
      bus.listen(CHAT_EVENTS_CHANNEL, (payload) => this.onRelayed(payload)),
      bus.onReconnect(() => this.afterReconnect()),
    );
    // An instance that starts while others' subscribers watch chats learns of them now, not at their next refresh.
    void bus
      .ready()
      .then(() => this.send(CHAT_INTEREST_CHANNEL, { origin: bus.instanceId, ask: true }))
      .catch((error: unknown) =>
        this.warnUnlessStopped(`Could not ask the other instances which chats they watch: ${messageOf(error)}`),
      );
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.refreshTimer);
    this.refreshTimer = undefined;
    for (const unlisten of this.unlisten.splice(0)) unlisten();
    await this.relayTail;
  }

  /** Whether anyone may be listening to the chat: a subscriber here, or another instance's fresh interest. */
  hasSubscribers(chatId: string): boolean {
    return this.hasLocalSubscribers(chatId) || this.hasRemoteInterest(chatId);
  }

  publish(chatId: string, event: ChatEvent): void {
    this.deliverLocally(chatId, event);
    if (this.hasRemoteInterest(chatId)) this.relay(chatId, event);
  }

  /**
   * The chat's events from now on, until the consumer stops iterating (or falls too far behind).
   * Resolves once the other instances have been told this one listens (or that failed, logged):
   * a turn any of them starts afterwards reaches this subscriber.
   */
  async subscribe(chatId: string): Promise<AsyncIterableIterator<ChatEvent>> {
    const iterator = this.addSubscriber(chatId);
    const announced = this.announced.get(chatId);
    if (announced !== undefined) await withTimeout(announced, ANNOUNCE_WAIT_MS);
    return iterator;
  }

  private hasLocalSubscribers(chatId: string): boolean {
    return (this.subscribers.get(chatId)?.size ?? 0) > 0;
  }

  private hasRemoteInterest(chatId: string): boolean {
    const until = this.remoteInterest.get(chatId);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.remoteInterest.delete(chatId);
    return false;
  }

  private deliverLocally(chatId: string, event: ChatEvent): void {
    for (const subscriber of this.subscribers.get(chatId) ?? []) subscriber.push(event);
  }

  private addSubscriber(chatId: string): AsyncIterableIterator<ChatEvent> {
    const queue: ChatEvent[] = [];
    let waiting: ((result: IteratorResult<ChatEvent>) => void) | undefined;
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const set = this.subscribers.get(chatId);
      set?.delete(subscriber);
      if (set?.size === 0) this.removeChat(chatId);
      waiting?.({ value: undefined, done: true });
      waiting = undefined;
    };
    const subscriber: Subscriber = {
      push(event) {
        if (ended) return;
        if (waiting !== undefined) {
          const resolve = waiting;
          waiting = undefined;
          resolve({ value: event, done: false });
        } else if (queue.length >= MAX_QUEUED_EVENTS) {
          end();
        } else {
          queue.push(event);
        }
      },
    };
    let set = this.subscribers.get(chatId);
    if (set === undefined) {
      this.subscribers.set(chatId, (set = new Set()));
      this.addChat(chatId);
    }
    set.add(subscriber);
    const iterator: AsyncIterableIterator<ChatEvent> = {
      next() {
        if (queue.length > 0) return Promise.resolve({ value: queue.shift()!, done: false });
        if (ended) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve) => (waiting = resolve));
      },
      return() {
        end();
        return Promise.resolve({ value: undefined, done: true });
      },
      [Symbol.asyncIterator]() {
        return iterator;
      },
    };
    return iterator;
  }

  /** The chat's first local subscriber: announce interest now, and keep announcing while any remain. */
  private addChat(chatId: string): void {
    if (this.notifications === undefined || this.stopped) return;
    this.announced.set(chatId, this.announce([chatId]));
    this.refreshTimer ??= setInterval(() => this.refreshInterest(), INTEREST_REFRESH_MS).unref();
  }

  private removeChat(chatId: string): void {
    this.subscribers.delete(chatId);
    this.announced.delete(chatId);
    if (this.subscribers.size === 0) {
      clearInterval(this.refreshTimer);
      this.refreshTimer = undefined;
    }
  }

  /** Skipped while the previous refresh still waits (for a LISTEN connection that is reconnecting). */
  private refreshInterest(): void {
    if (this.refreshing) return;
    this.refreshing = true;
    void this.announce([...this.subscribers.keys()]).finally(() => (this.refreshing = false));
  }

  /**
   * Tells the other instances this one listens to `chatIds`, once it hears their relays. Never rejects: failures are
   * logged.
   */
  private async announce(chatIds: string[]): Promise<void> {
    const bus = this.notifications;
    if (bus === undefined || chatIds.length === 0) return;
    try {
      await bus.ready();
      const sends: Promise<void>[] = [];
      for (let i = 0; i < chatIds.length; i += CHATS_PER_ANNOUNCEMENT) {
        sends.push(
          this.send(CHAT_INTEREST_CHANNEL, {
            origin: bus.instanceId,
            chatIds: chatIds.slice(i, i + CHATS_PER_ANNOUNCEMENT),
          }),
        );
      }
      await Promise.all(sends);
    } catch (error) {
      this.warnUnlessStopped(
        `Could not tell the other instances which chats this one's subscribers watch (turns they run may not ` +
          `reach them): ${messageOf(error)}`,
      );
    }
  }

  /** Whatever was announced or relayed while the connection was down is lost: announce again, and ask the others to. */
  private afterReconnect(): void {
    const bus = this.notifications!;
    void this.announce([...this.subscribers.keys()]);
    this.send(CHAT_INTEREST_CHANNEL, { origin: bus.instanceId, ask: true }).catch((error: unknown) =>
      this.warnUnlessStopped(`Could not ask the other instances which chats they watch: ${messageOf(error)}`),
    );
  }

  private onInterest(payload: string): void {
    const message = parseInterest(payload);
    if (message === undefined || message.origin === this.notifications!.instanceId) return;
    if ('ask' in message) {
      void this.announce([...this.subscribers.keys()]);
      return;
    }
    const now = Date.now();
    for (const chatId of message.chatIds) this.remoteInterest.set(chatId, now + INTEREST_TTL_MS);
    if (now - this.lastPruned >= INTEREST_REFRESH_MS) this.forgetExpiredInterest();
  }

  /** Chats whose interest expired and that ran no turn here since would otherwise stay in the map. */
  private forgetExpiredInterest(): void {
    const now = Date.now();
    this.lastPruned = now;
    for (const [chatId, until] of this.remoteInterest) if (until <= now) this.remoteInterest.delete(chatId);
  }

  /** Queued behind every earlier relay, so a stored (large) event is not overtaken by the small ones after it. */
  private relay(chatId: string, event: ChatEvent): void {
    const bus = this.notifications!;
    const origin = bus.instanceId;
    const inline = JSON.stringify({ origin, chatId, event } satisfies RelayMessage);
    const send =
      Buffer.byteLength(inline, 'utf8') <= MAX_INLINE_RELAY_BYTES
        ? () => bus.notify(CHAT_EVENTS_CHANNEL, inline)
        : async () => {
            if (this.relayStore === undefined)
              throw new Error(
                `a ${event.event} event of ` +
                  `${Buffer.byteLength(inline, 'utf8')} bytes is too large to notify and no relay table is available`,
              );
            const ref = await this.relayStore.store(chatId, JSON.stringify(event));
            await this.send(CHAT_EVENTS_CHANNEL, { origin, chatId, ref } satisfies RelayMessage);
          };
    this.relayTail = this.relayTail.then(() => this.relayOne(chatId, send));
  }

  /**
   * Sends one relay; while the database fails, logs once and drops events between attempts (all of them once stopping).
   */
  private async relayOne(chatId: string, send: () => Promise<void>): Promise<void> {
    const outage = this.relayOutage;
    if (outage !== undefined && (this.stopped || Date.now() - outage.lastFailureAt < RELAY_RETRY_MS)) {
      outage.missed++;
      return;
    }
    try {
      await send();
    } catch (error) {
      if (outage !== undefined) {
        outage.lastFailureAt = Date.now();
        outage.missed++;
        return;
      }
      this.relayOutage = { lastFailureAt: Date.now(), missed: 1 };
      this.warnUnlessStopped(
        `Could not relay an event of chat ${chatId} to the other instances' subscribers; retrying at most once ` +
          `a second, dropping the events in between: ${messageOf(error)}`,
      );
      return;
    }
    if (outage === undefined) return;
    this.relayOutage = undefined;
    this.logger.log(
      `Relaying chat events to the other instances works again (${outage.missed} event(s) were not relayed)`,
    );
  }

  /** Delivered in the order received, per chat: a stored event is read before the events after it are delivered. */
  private onRelayed(payload: string): void {
    const message = parseRelay(payload);
    if (
      message === undefined ||
      message.origin === this.notifications!.instanceId ||
      !this.hasLocalSubscribers(message.chatId)
    )
      return;
    const { chatId } = message;
    const pending = this.deliveries.get(chatId);
    if (pending === undefined && 'event' in message) {
      this.deliverLocally(chatId, message.event);
      return;
    }
    const delivered = (pending ?? Promise.resolve()).then(async () => {
      const event = 'event' in message ? message.event : await this.readStored(chatId, message.ref);
      if (event !== undefined) this.deliverLocally(chatId, event);
    });
    this.deliveries.set(chatId, delivered);
    void delivered.finally(() => {
      if (this.deliveries.get(chatId) === delivered) this.deliveries.delete(chatId);
    });
  }

  private async readStored(chatId: string, ref: string): Promise<ChatEvent | undefined> {
    try {
      const json = await this.relayStore?.find(ref, chatId);
      const event = json === null || json === undefined ? undefined : parseEvent(parseObject(json));
      if (event === undefined)
        this.logger.warn(
          `A relayed event of chat ${chatId} (chat_event_relay ` +
            `${ref}) is gone or unreadable; its subscribers here miss it`,
        );
      return event;
    } catch (error) {
      this.logger.warn(
        `Could not read a relayed event of chat ${chatId} (chat_event_relay ${ref}); its subscribers here miss ` +
          `it: ${messageOf(error)}`,
      );
      return undefined;
    }
  }

  private send(channel: string, message: InterestMessage | RelayMessage): Promise<void> {
    return this.notifications!.notify(channel, JSON.stringify(message));
  }

  private warnUnlessStopped(message: string): void {
    if (!this.stopped) this.logger.warn(message);
  }
}

const EVENT_NAMES = new Set<string>(['tool-call', 'tool-result', 'text-delta', 'done', 'error']);

/** Another instance's message, or undefined for anything else on the channel. */
function parseInterest(payload: string): InterestMessage | undefined {
  const value = parseObject(payload);
  if (typeof value?.origin !== 'string') return undefined;
  if (value.ask === true) return { origin: value.origin, ask: true };
  const { chatIds } = value;
  if (!Array.isArray(chatIds) || !chatIds.every((id): id is string => typeof id === 'string')) return undefined;
  return { origin: value.origin, chatIds };
}

function parseRelay(payload: string): RelayMessage | undefined {
  const value = parseObject(payload);
  if (typeof value?.origin !== 'string' || typeof value.chatId !== 'string') return undefined;
  if (typeof value.ref === 'string') return { origin: value.origin, chatId: value.chatId, ref: value.ref };
  const event = parseEvent(value.event);
  return event && { origin: value.origin, chatId: value.chatId, event };
}

function parseEvent(value: unknown): ChatEvent | undefined {
  if (!isObject(value) || typeof value.event !== 'string' || !EVENT_NAMES.has(value.event)) return undefined;
  return { event: value.event as ChatEvent['event'], data: value.data };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Waits for `promise`, but no longer than `ms`. */
async function withTimeout(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
