import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Client, createClient } from 'graphql-ws';
import pg from 'pg';
import WebSocket from 'ws';
import { CHAT_EVENTS_CHANNEL, CHAT_INTEREST_CHANNEL } from '../../src/domain/chats/chat-events.service.js';
import { query } from '../support/database.js';
import { buildServer, type Instances, startInstances } from '../support/instances.js';
import { ScriptedModelServer } from '../support/scripted-model-server.js';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { parseSse } from '../support/sse.js';
import { untilTurnEnds } from './graphql-test-app.js';
import type { WireJson } from '../support/wire-json.js';

/**
 * Two server processes on one database: a `chatEvents` subscriber on one hears the turns the
 * other runs, in order, large events included; a chat nobody watches costs no NOTIFY. A third,
 * raw PostgreSQL client listens on both channels to see what the instances send each other.
 */

interface ChatEventItem {
  event: string;
  data: WireJson;
}

const CHAT_EVENTS = 'subscription($chatId: ID!) { chatEvents(chatId: $chatId) { event data } }';

/** An answer well past PostgreSQL's 8000-byte payload limit, with multi-byte characters. */
const LONG_ANSWER = 'Grüße aus dem Norden — '.repeat(450).trim();
const TOOL_TURN = [
  { toolCalls: [{ name: 'skills_activate', arguments: { name: 'pdf' }, id: 'call_pdf' }] },
  { text: LONG_ANSWER },
];

interface Heard {
  channel: string;
  payload: Record<string, WireJson>;
}

describe('chatEvents across instances (two server processes, one database)', () => {
  const model = new ScriptedModelServer();
  let tree: TempTree;
  let cluster: Instances;
  let observer: pg.Client;
  const heard: Heard[] = [];
  const wsClients: Client[] = [];

  const [a, b] = [0, 1];
  const url = (instance: number, path: string) => `${cluster.baseUrls[instance]}${path}`;

  async function newChat(instance: number): Promise<string> {
    const response = await fetch(url(instance, '/v1/chats'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(201);
    return ((await response.json()) as { id: string }).id;
  }

  /** A streamed turn through REST; its SSE events. */
  async function streamedTurn(instance: number, chatId: string, content: string): Promise<ChatEventItem[]> {
    const response = await fetch(url(instance, `/v1/chats/${chatId}/messages`), {
      method: 'POST',
      headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
      body: JSON.stringify({ content }),
    });
    expect(response.status).toBe(200);
    return parseSse(await response.text()) as ChatEventItem[];
  }

  /** The instances (by their origin id) that announced interest in the chat so far. */
  const interestedIn = (chatId: string) =>
    new Set(
      heard
        .filter((h) => h.channel === CHAT_INTEREST_CHANNEL && h.payload.chatIds?.includes(chatId))
        .map((h) => h.payload.origin),
    );

  /**
   * The first subscriber of `instance` to the chat. Resolves once that instance's interest went
   * out (the raw client heard it, as the other instance does): a turn started afterwards is relayed.
   */
  async function subscribe(instance: number, chatId: string) {
    const before = interestedIn(chatId).size;
    const client = createClient({
      url: cluster.instances[instance].graphqlWsUrl,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      lazy: true,
    });
    wsClients.push(client);
    const subscription = client.iterate<{ chatEvents: ChatEventItem }>({ query: CHAT_EVENTS, variables: { chatId } });
    const events = untilTurnEnds(subscription);
    await until(() => interestedIn(chatId).size > before, `instance ${instance}'s interest in chat ${chatId}`);
    return { events, end: () => subscription.return?.() };
  }

  const relayedFor = (chatId: string) =>
    heard.filter((h) => h.channel === CHAT_EVENTS_CHANNEL && h.payload.chatId === chatId);

  beforeAll(async () => {
    buildServer();
    await model.start();
    tree = tempTree('skillhost-instances-e2e-');
    writeSkill(tree, 'skills', 'pdf', {
      description: 'Works with PDF files.',
      body: '# PDF\n\nPDF-BODY-MARKER steps.\n',
    });
    cluster = await startInstances(2, {
      overrides: {
        'app.skills.enabled': true,
        'app.skills.directories': [tree.path('skills')],
        'app.models': {
          scripted: {
            provider: 'openai-compatible',
            base_url: model.url,
            model: 'scripted-1',
            timeout_ms: 20_000,
            max_retries: 0,
          },
        },
      },
    });
    observer = new pg.Client({ connectionString: cluster.db.url });
    await observer.connect();
    observer.on('notification', (message) =>
      heard.push({ channel: message.channel, payload: JSON.parse(message.payload ?? 'null') }),
    );
    await observer.query(`LISTEN ${CHAT_EVENTS_CHANNEL}`);
    await observer.query(`LISTEN ${CHAT_INTEREST_CHANNEL}`);
  }, 180_000);
  afterAll(async () => {
    await Promise.all(wsClients.map((client) => client.dispose()));
    await observer?.end();
    await cluster?.close();
    await model.stop();
    tree?.cleanup();
  }, 60_000);

  it(
    'a subscriber on A hears, in order, every event of a turn sent through REST to B, a `done` over ' + '8 KB included',
    async () => {
      const chatId = await newChat(b);
      const subscriber = await subscribe(a, chatId);
      model.play(...TOOL_TURN);
      const streamed = await streamedTurn(b, chatId, 'fill the form');
      const events = await subscriber.events;
      await subscriber.end();

      expect(events).toEqual(streamed);
      const names = events.map((e) => e.event);
      expect(names.slice(0, 2)).toEqual(['tool-call', 'tool-result']);
      expect(names.slice(2, -1).every((name) => name === 'text-delta')).toBe(true);
      expect(names.at(-1)).toBe('done');
      expect(events[0].data).toEqual({ id: 'call_pdf', tool: 'skills.activate', args: { name: 'pdf' } });
      expect(
        events
          .filter((e) => e.event === 'text-delta')
          .map((e) => e.data.text)
          .join(''),
      ).toBe(LONG_ANSWER);
      const done = events.at(-1)!;
      expect(done.data.assistantMessage.content).toBe(LONG_ANSWER);
      expect(Buffer.byteLength(JSON.stringify(done))).toBeGreaterThan(8192);

      // Every event went out once, from B; the `done` as a reference to a stored row.
      await until(() => relayedFor(chatId).length >= events.length, 'the raw client to hear every relay');
      const relayed = relayedFor(chatId);
      expect(relayed).toHaveLength(events.length);
      expect(new Set(relayed.map((h) => h.payload.origin)).size).toBe(1);
      expect(relayed.slice(0, -1).every((h) => h.payload.event !== undefined)).toBe(true);
      expect(relayed.at(-1)!.payload).toEqual({ origin: relayed[0].payload.origin, chatId, ref: expect.any(String) });
      const [stored] = await query<{ json: string }>(
        cluster.db.url,
        "SELECT payload #>> '{}' AS json FROM chat_event_relay WHERE id = $1 AND chat_id = $2",
        [relayed.at(-1)!.payload.ref, chatId],
      );
      expect(JSON.parse(stored.json)).toEqual(done);
    },
  );

  it('works the other way round, with subscribers on both instances at once', async () => {
    const chatId = await newChat(a);
    const onB = await subscribe(b, chatId);
    const onA = await subscribe(a, chatId);
    model.play(
      { toolCalls: [{ name: 'skills_activate', arguments: { name: 'pdf' }, id: 'call_pdf' }] },
      { text: 'Short and sweet.' },
    );
    const streamed = await streamedTurn(a, chatId, 'hello');
    expect(streamed.map((e) => e.event)).toEqual(['tool-call', 'tool-result', 'text-delta', 'text-delta', 'done']);
    expect(await onB.events).toEqual(streamed);
    expect(await onA.events).toEqual(streamed);
    await Promise.all([onB.end(), onA.end()]);
    // A's own subscriber is served directly; B's through one relay per event, all small enough to go inline.
    await until(() => relayedFor(chatId).length >= streamed.length, 'the raw client to hear every relay');
    expect(relayedFor(chatId).map((h) => h.payload.event)).toEqual(streamed);
  });

  it('a chat nobody watches produces no NOTIFY on the events channel, whichever instance runs its turns', async () => {
    const unwatched = [await newChat(a), await newChat(b)];
    model.answerWith(() => ({ text: 'Nobody is listening, and that is fine.' }));
    await streamedTurn(a, unwatched[0], 'one');
    await streamedTurn(b, unwatched[1], 'two');
    // Each instance sends its notifications in order: once a later relay of each has arrived, an
    // earlier one for the unwatched chats would have too.
    for (const [runner, watcher] of [
      [a, b],
      [b, a],
    ]) {
      const marker = await newChat(runner);
      const subscriber = await subscribe(watcher, marker);
      const streamed = await streamedTurn(runner, marker, 'marker');
      expect(await subscriber.events).toEqual(streamed);
      await subscriber.end();
      await until(() => relayedFor(marker).length === streamed.length, `the relays of chat ${marker}`);
    }
    expect(unwatched.flatMap(relayedFor)).toEqual([]);
  });
});

async function until(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
