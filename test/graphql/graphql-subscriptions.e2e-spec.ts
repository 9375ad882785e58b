import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ChatEventsService } from '../../src/domain/chats/chat-events.service.js';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { parseSse } from '../support/sse.js';
import { gql } from './documents.js';
import {
  chatEvents,
  type ChatEventItem,
  type GraphqlTestContext,
  startGraphqlApp,
  subscribed,
  untilTurnEnds,
} from './graphql-test-app.js';

/** A turn that calls a tool, then answers in several text pieces. */
const TOOL_TURN = [
  { toolCalls: [{ name: 'skills_activate', arguments: { name: 'pdf' }, id: 'call_pdf' }] },
  { text: 'The PDF skill is active; filling the form now.' },
];

describe('GraphQL subscription chatEvents (graphql-ws, graphql-transport-ws)', () => {
  let tree: TempTree;
  let ctx: GraphqlTestContext;
  const newChat = async () =>
    (await ctx.client().request<{ createChat: { id: string } }>('mutation { createChat { id } }')).createChat.id;

  beforeAll(async () => {
    tree = tempTree();
    writeSkill(tree, 'skills', 'pdf', {
      description: 'Works with PDF files.',
      body: '# PDF\n\nPDF-BODY-MARKER steps.\n',
    });
    ctx = await startGraphqlApp([tree.path('skills')]);
  });
  afterAll(async () => {
    await ctx?.close();
    tree?.cleanup();
  });

  /** Subscribes to the chat, runs `turn`, and answers what the subscription heard and what the turn answered. */
  async function hear<T>(
    chatId: string,
    turn: () => Promise<T>,
    subscribers = 1,
  ): Promise<{ events: ChatEventItem[]; answer: T }> {
    const subscription = chatEvents(ctx.wsClient(), chatId);
    const events = untilTurnEnds(subscription);
    await subscribed(ctx, chatId, subscribers);
    const answer = await turn();
    const heard = await events;
    await subscription.return?.();
    return { events: heard, answer };
  }

  function expectToolTurnOrder(events: ChatEventItem[]): void {
    const names = events.map((e) => e.event);
    expect(names[0]).toBe('tool-call');
    expect(names[1]).toBe('tool-result');
    expect(names.slice(2, -1).every((name) => name === 'text-delta')).toBe(true);
    expect(names.length).toBeGreaterThan(4);
    expect(names.at(-1)).toBe('done');
    expect(events[0].data).toEqual({ id: 'call_pdf', tool: 'skills.activate', args: { name: 'pdf' } });
    expect(events[1].data).toMatchObject({
      id: 'call_pdf',
      tool: 'skills.activate',
      status: 'ok',
      summary: { skill: 'pdf', truncated: false },
    });
    expect(
      events
        .filter((e) => e.event === 'text-delta')
        .map((e) => e.data.text)
        .join(''),
    ).toBe('The PDF skill is active; filling the form now.');
  }

  it(
    'a turn started through REST (streamed): the subscription hears exactly the events of the SSE ' +
      'stream, in order',
    async () => {
      const id = await newChat();
      ctx.model.play(...TOOL_TURN);
      const { events, answer } = await hear(id, async () => {
        const response = await fetch(`${ctx.baseUrl}/v1/chats/${id}/messages`, {
          method: 'POST',
          headers: { accept: 'text/event-stream', 'content-type': 'application/json' },
          body: JSON.stringify({ content: 'fill the form' }),
        });
        return parseSse(await response.text());
      });
      expectToolTurnOrder(events);
      expect(events).toEqual(answer);
    },
  );

  it(
    'a turn started through REST (plain JSON): the same events, ending with `done` carrying the JSON ' + 'answer',
    async () => {
      const id = await newChat();
      ctx.model.play(...TOOL_TURN);
      const { events, answer } = await hear(id, async () => {
        const response = await fetch(`${ctx.baseUrl}/v1/chats/${id}/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ content: 'fill the form' }),
        });
        expect(response.status).toBe(201);
        return response.json();
      });
      expectToolTurnOrder(events);
      expect(events.at(-1)!.data).toEqual(answer);
    },
  );

  it(
    'a turn started by the sendMessage mutation: the same events, `done` carrying what the mutation ' + 'answered',
    async () => {
      const id = await newChat();
      ctx.model.play(...TOOL_TURN);
      const { events, answer } = await hear(id, () =>
        ctx
          .client()
          .request<{ sendMessage: unknown }>(
            gql('mutation($id: ID!) { sendMessage(chatId: $id, content: "fill the form") { ...TurnFields } }'),
            { id },
          ),
      );
      expectToolTurnOrder(events);
      expect(events.at(-1)!.data).toEqual(answer.sendMessage);
    },
  );

  it('a turn that fails ends with `error` carrying {code, message}', async () => {
    const id = await newChat();
    ctx.model.play({ status: 500 });
    const { events, answer } = await hear(id, async () => {
      const response = await fetch(`${ctx.baseUrl}/v1/chats/${id}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ content: 'hi' }),
      });
      expect(response.status).toBe(502);
      return response.json();
    });
    expect(events).toEqual([{ event: 'error', data: answer }]);
    expect(answer).toMatchObject({ code: 'MODEL_ERROR', message: expect.any(String) });
  });

  it('hears only its own chat, and every subscriber of a chat hears its turns', async () => {
    const [id, other] = [await newChat(), await newChat()];
    const second = chatEvents(ctx.wsClient(), id);
    const secondHeard = untilTurnEnds(second);
    await subscribed(ctx, id);
    const otherSubscription = chatEvents(ctx.wsClient(), other);
    const otherHeard = otherSubscription.next();
    await subscribed(ctx, other);
    ctx.model.play({ text: 'Only here.' });
    const { events } = await hear(
      id,
      () =>
        ctx
          .client()
          .request(gql('mutation($id: ID!) { sendMessage(chatId: $id, content: "hi") { invokedSkill } }'), { id }),
      2,
    );
    expect(events.map((e) => e.event)).toEqual(['text-delta', 'done']);
    expect(await secondHeard).toEqual(events);
    await second.return?.();
    // The other chat's subscriber heard nothing; ending it releases it.
    const pending = await Promise.race([
      otherHeard.then(() => 'heard'),
      new Promise((resolve) => setTimeout(() => resolve('nothing'), 200)),
    ]);
    expect(pending).toBe('nothing');
    await otherSubscription.return?.();
    const events$ = ctx.app.get(ChatEventsService);
    for (let i = 0; i < 50 && (events$.hasSubscribers(id) || events$.hasSubscribers(other)); i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect([events$.hasSubscribers(id), events$.hasSubscribers(other)]).toEqual([false, false]);
  });

  it('an invalid subscription document is refused with VALIDATION_FAILED before anything subscribes', async () => {
    const id = await newChat();
    const iterator = ctx.wsClient().iterate({
      query: 'subscription($chatId: ID!) { chatEvents(chatId: $chatId) { event nope } }',
      variables: { chatId: id },
    });
    await expect(iterator.next()).rejects.toEqual([
      {
        message: 'Invalid request: Cannot query field "nope" on type "ChatEvent".',
        extensions: {
          code: 'VALIDATION_FAILED',
          status: 400,
          details: { problems: ['Cannot query field "nope" on type "ChatEvent".'] },
        },
      },
    ]);
    expect(ctx.app.get(ChatEventsService).hasSubscribers(id)).toBe(false);
  });
});
