import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import type { NotificationBus } from '../shared/notification-bus.js';
import type { ChatEventRelay } from './chat-event-relay.js';
import {
  CHAT_EVENTS_CHANNEL,
  CHAT_INTEREST_CHANNEL,
  type ChatEvent,
  ChatEventsService,
  INTEREST_REFRESH_MS,
  INTEREST_TTL_MS,
} from './chat-events.service.js';

/**
 * The relay logic on an in-memory stand-in for LISTEN/NOTIFY (delivery in send order, to every
 * listener, the sender included) and for the relay table; the real database is in
 * test/graphql/chat-events-instances.e2e-spec.ts.
 */
class FakeBus {
  readonly sent: { channel: string; payload: string }[] = [];
  readonly rows = new Map<string, { chatId: string; json: string }>();
  /** While set, relays fail as they would with the database down. */
  relaysFail = false;
  private readonly handlers = new Map<string, Set<(payload: string) => void>>();
  private readonly reconnectHandlers = new Set<() => void>();
  private delivery = Promise.resolve();
  private lastRowId = 0;

  instance(): NotificationBus {
    const bus = this;
    return {
      instanceId: randomUUID(),
      listen(channel: string, handler: (payload: string) => void) {
        if (!bus.handlers.has(channel)) bus.handlers.set(channel, new Set());
        bus.handlers.get(channel)!.add(handler);
        return () => void bus.handlers.get(channel)!.delete(handler);
      },
      notify(channel: string, payload: string) {
        if (bus.relaysFail && channel === CHAT_EVENTS_CHANNEL)
          return Promise.reject(new Error('The database is unavailable'));
        bus.sent.push({ channel, payload });
        bus.delivery = bus.delivery.then(() => {
          for (const handler of bus.handlers.get(channel) ?? []) handler(payload);
        });
        return bus.delivery;
      },
      ready: () => Promise.resolve(),
      onReconnect(handler: () => void) {
        bus.reconnectHandlers.add(handler);
        return () => void bus.reconnectHandlers.delete(handler);
      },
    };
  }

  /**
   * A relay table whose writes and reads take a while, so small events sent after a large one
   * would overtake it if they could; `keep: false` loses every row (as if removed before it is read).
   */
  store({ writeMs = 0, readMs = 0, keep = true } = {}): ChatEventRelay {
    const rows = this.rows;
    const bus = this;
    return {
      async store(chatId: string, json: string) {
        await new Promise((resolve) => setTimeout(resolve, writeMs));
        const id = String(++bus.lastRowId);
        if (keep) rows.set(id, { chatId, json });
        return id;
      },
      async find(id: string, chatId: string) {
        await new Promise((resolve) => setTimeout(resolve, readMs));
        const row = rows.get(id);
        return row?.chatId === chatId ? row.json : null;
      },
    };
  }

  reconnect(): void {
    for (const handler of this.reconnectHandlers) handler();
  }

  relays(): { origin: string; chatId: string; event?: ChatEvent; ref?: string }[] {
    return this.sent.filter((m) => m.channel === CHAT_EVENTS_CHANNEL).map((m) => JSON.parse(m.payload));
  }

  interests(): { origin: string; chatIds?: string[]; ask?: true }[] {
    return this.sent.filter((m) => m.channel === CHAT_INTEREST_CHANNEL).map((m) => JSON.parse(m.payload));
  }

  /** Lets queued deliveries run. */
  async settle(): Promise<void> {
    for (let i = 0; i < 5; i++) await this.delivery;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const CHAT = '11111111-1111-4111-8111-111111111111';
const OTHER_CHAT = '22222222-2222-4222-8222-222222222222';
const delta = (text: string): ChatEvent => ({ event: 'text-delta', data: { text } });

async function take(iterator: AsyncIterator<ChatEvent>, count: number): Promise<ChatEvent[]> {
  const events: ChatEvent[] = [];
  while (events.length < count) events.push((await iterator.next()).value as ChatEvent);
  return events;
}

describe(ChatEventsService.name, () => {
  const started: ChatEventsService[] = [];
  let bus: FakeBus;

  /** An instance on the bus, started as Nest would start it. */
  function instance(store: Parameters<FakeBus['store']>[0] = {}): ChatEventsService {
    const sut = new ChatEventsService(bus.instance(), bus.store(store));
    sut.onModuleInit();
    started.push(sut);
    return sut;
  }

  beforeEach(() => {
    bus = new FakeBus();
  });
  afterEach(async () => {
    for (const sut of started.splice(0)) await sut.beforeApplicationShutdown();
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  describe('without PostgreSQL notifications', () => {
    it(
      'fans a chat’s events out to its subscribers in this process, and forgets a subscriber that ' + 'stopped',
      async () => {
        const sut = new ChatEventsService();
        const first = await sut.subscribe(CHAT);
        const second = await sut.subscribe(CHAT);
        const other = await sut.subscribe(OTHER_CHAT);
        expect(sut.hasSubscribers(CHAT)).toBe(true);
        sut.publish(CHAT, delta('a'));
        sut.publish(CHAT, { event: 'done', data: { ok: true } });
        expect(await take(first, 2)).toEqual([delta('a'), { event: 'done', data: { ok: true } }]);
        expect(await take(second, 2)).toEqual([delta('a'), { event: 'done', data: { ok: true } }]);
        await first.return!();
        await second.return!();
        expect(sut.hasSubscribers(CHAT)).toBe(false);
        expect(
          await Promise.race([
            other.next().then(() => 'heard'),
            new Promise((resolve) => setImmediate(() => resolve('nothing'))),
          ]),
        ).toBe('nothing');
      },
    );
  });

  describe('across instances', () => {
    it('relays nothing for a chat no other instance watches', async () => {
      const [a, b] = [instance(), instance()];
      const local = await a.subscribe(CHAT);
      b.publish(OTHER_CHAT, delta('unwatched'));
      a.publish(CHAT, delta('only local'));
      expect(await take(local, 1)).toEqual([delta('only local')]);
      await bus.settle();
      expect(bus.relays()).toEqual([]);
      expect(b.hasSubscribers(OTHER_CHAT)).toBe(false);
    });

    it(
      'announces interest before subscribe() resolves; the other instance then relays the chat’s events, in ' +
        'order, large ones by reference',
      async () => {
        // Storing and reading take a while: the small events after a large one must still arrive after it.
        const [a, b] = [instance({ readMs: 30 }), instance({ writeMs: 30 })];
        await bus.settle();
        const subscriber = await a.subscribe(CHAT);
        expect(bus.interests().filter((m) => m.chatIds)).toEqual([{ origin: expect.any(String), chatIds: [CHAT] }]);
        await bus.settle();
        expect(b.hasSubscribers(CHAT)).toBe(true);

        const large: ChatEvent = { event: 'tool-result', data: { output: 'ü'.repeat(5000) } };
        const sent = [
          delta('1'),
          large,
          delta('2'),
          delta('3'),
          { event: 'done', data: { answer: 'x'.repeat(9000) } } as ChatEvent,
        ];
        for (const event of sent) b.publish(CHAT, event);
        expect(await take(subscriber, sent.length)).toEqual(sent);
        expect(bus.relays().map((m) => (m.ref ? 'ref' : m.event!.event))).toEqual([
          'text-delta',
          'ref',
          'text-delta',
          'text-delta',
          'ref',
        ]);
        expect(bus.relays().every((m) => m.chatId === CHAT)).toBe(true);
        expect(bus.sent.every((m) => Buffer.byteLength(m.payload) <= 7000)).toBe(true);
      },
    );

    it('serves its own subscribers once: its own relays and announcements are ignored', async () => {
      const [a, b] = [instance(), instance()];
      const onA = await a.subscribe(CHAT);
      await b.subscribe(CHAT);
      await bus.settle();
      a.publish(CHAT, delta('once'));
      a.publish(CHAT, { event: 'done', data: {} });
      expect(await take(onA, 2)).toEqual([delta('once'), { event: 'done', data: {} }]);
      await bus.settle();
      expect(
        await Promise.race([
          onA.next().then(() => 'again'),
          new Promise((resolve) => setImmediate(() => resolve('nothing'))),
        ]),
      ).toBe('nothing');
    });

    it(
      'keeps interest alive by refreshing it while subscribers remain, and lets it expire after they ' + 'left',
      async () => {
        jest.useFakeTimers({ doNotFake: ['setImmediate', 'queueMicrotask', 'nextTick'] });
        const [a, b] = [instance(), instance()];
        const subscriber = await a.subscribe(CHAT);
        await bus.settle();
        await jest.advanceTimersByTimeAsync(INTEREST_TTL_MS * 3);
        await bus.settle();
        expect(b.hasSubscribers(CHAT)).toBe(true);
        expect(bus.interests().filter((m) => m.chatIds).length).toBeGreaterThanOrEqual(
          1 + (INTEREST_TTL_MS * 3) / INTEREST_REFRESH_MS,
        );

        await subscriber.return!();
        const announcements = bus.interests().length;
        await jest.advanceTimersByTimeAsync(INTEREST_TTL_MS - 1);
        expect(b.hasSubscribers(CHAT)).toBe(true);
        await jest.advanceTimersByTimeAsync(2);
        expect(b.hasSubscribers(CHAT)).toBe(false);
        expect(bus.interests()).toHaveLength(announcements);
      },
    );

    it('an instance that starts later asks, and learns the chats already watched at once', async () => {
      const a = instance();
      await a.subscribe(CHAT);
      const late = instance();
      await bus.settle();
      expect(bus.interests().filter((m) => m.ask)).toHaveLength(2);
      expect(late.hasSubscribers(CHAT)).toBe(true);
    });

    it('after its LISTEN connection came back, announces its chats again and asks the others for theirs', async () => {
      const a = instance();
      await a.subscribe(CHAT);
      await a.subscribe(OTHER_CHAT);
      await bus.settle();
      bus.sent.length = 0;
      bus.reconnect();
      await bus.settle();
      const interests = bus.interests();
      expect(interests.filter((m) => m.ask)).toHaveLength(1);
      expect(interests.flatMap((m) => m.chatIds ?? []).sort()).toEqual([CHAT, OTHER_CHAT]);
    });

    it(
      'while relaying fails: warns once, tries at most once a second and drops the events between, then says it ' +
        'works again',
      async () => {
        jest.useFakeTimers({ doNotFake: ['setImmediate', 'queueMicrotask', 'nextTick'] });
        const warnings = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
        const logs = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
        const [a, b] = [instance(), instance()];
        const subscriber = await a.subscribe(CHAT);
        await bus.settle();
        bus.relaysFail = true;
        for (let i = 0; i < 100; i++) b.publish(CHAT, delta(`lost ${i}`));
        await bus.settle();
        expect(warnings.mock.calls).toEqual([
          [
            expect.stringMatching(
              new RegExp(`^Could not relay an event of chat ${CHAT} .*: The database is unavailable$`),
            ),
          ],
        ]);
        bus.relaysFail = false;
        b.publish(CHAT, delta('dropped: within a second of the failure'));
        await jest.advanceTimersByTimeAsync(1000);
        b.publish(CHAT, delta('back'));
        expect(await take(subscriber, 1)).toEqual([delta('back')]);
        expect(logs.mock.calls).toEqual([
          ['Relaying chat events to the other instances works again (101 event(s) were not relayed)'],
        ]);
        expect(warnings).toHaveBeenCalledTimes(1);
      },
    );

    it(
      'a stored event that is gone by the time it is read is skipped with a warning; the events after it still ' +
        'arrive',
      async () => {
        const warnings = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
        const [a, b] = [instance(), instance({ keep: false })];
        const subscriber = await a.subscribe(CHAT);
        await bus.settle();
        b.publish(CHAT, { event: 'done', data: { answer: 'x'.repeat(8000) } });
        b.publish(CHAT, delta('after'));
        expect(await take(subscriber, 1)).toEqual([delta('after')]);
        expect(warnings.mock.calls).toEqual([
          [
            expect.stringMatching(
              new RegExp(`^A relayed event of chat ${CHAT} \\(chat_event_relay 1\\) is gone or unreadable`),
            ),
          ],
        ]);
      },
    );
  });
});
