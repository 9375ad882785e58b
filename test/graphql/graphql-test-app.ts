import type { AddressInfo } from 'node:net';
import { jest } from '@jest/globals';
import { ClientError, GraphQLClient } from 'graphql-request';
import { type Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { ChatEventsService } from '../../src/domain/chats/chat-events.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import type { WireJson } from '../support/wire-json.js';

/** The real app (scripted model, fresh database) listening on 127.0.0.1 at a random port, for real GraphQL clients. */
export interface GraphqlTestContext extends ChatTestContext {
  /** `http://127.0.0.1:<port>`. */
  baseUrl: string;
  /** A graphql-request client for /graphql, with `Authorization: Bearer <key>` when a key is given. */
  client(key?: string): GraphQLClient;
  /** A graphql-ws client for ws://…/graphql; `connectionParams` is the `connection_init` payload. */
  wsClient(connectionParams?: Record<string, unknown>): Client;
  /** Every subscription the server made to a chat's events (a spy on ChatEventsService.subscribe). */
  subscriptions: jest.SpiedFunction<ChatEventsService['subscribe']>;
}

export async function startGraphqlApp(
  skillDirectories: string[],
  overrides: Record<string, unknown> = {},
): Promise<GraphqlTestContext> {
  const chat = await startChatApp(skillDirectories, overrides);
  await chat.app.listen(0, '127.0.0.1');
  const { port } = chat.app.getHttpServer().address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  const wsClients: Client[] = [];
  const closeChat = chat.close.bind(chat);
  return Object.assign(chat, {
    subscriptions: jest.spyOn(chat.app.get(ChatEventsService), 'subscribe'),
    baseUrl,
    client: (key?: string) =>
      new GraphQLClient(`${baseUrl}/graphql`, { headers: key ? { authorization: `Bearer ${key}` } : {} }),
    wsClient(connectionParams?: Record<string, unknown>) {
      const client = createClient({
        url: `ws://127.0.0.1:${port}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams,
        retryAttempts: 0,
        lazy: true,
      });
      wsClients.push(client);
      return client;
    },
    async close() {
      await Promise.all(wsClients.map((client) => client.dispose()));
      await closeChat();
    },
  });
}

/** The GraphQL response of a request that failed: its HTTP status, data and errors. */
export async function failure(request: Promise<unknown>): Promise<{
  status: number;
  data: unknown;
  errors: { message: string; path?: unknown[]; extensions?: Record<string, unknown> }[];
}> {
  try {
    await request;
  } catch (error) {
    if (!(error instanceof ClientError)) throw error;
    return {
      status: error.response.status,
      data: error.response.data ?? null,
      errors: (error.response.errors ?? []) as never,
    };
  }
  throw new Error('The request succeeded; a failure was expected.');
}

export interface ChatEventItem {
  event: string;
  data: WireJson;
}

export const CHAT_EVENTS = 'subscription($chatId: ID!) { chatEvents(chatId: $chatId) { event data } }';

/** `chatEvents(chatId)` over graphql-ws, as an async iterator of results. */
export function chatEvents(
  client: Client,
  chatId: string,
): AsyncIterableIterator<{ data?: { chatEvents: ChatEventItem } | null; errors?: unknown }> {
  return client.iterate({ query: CHAT_EVENTS, variables: { chatId } }) as AsyncIterableIterator<{
    data?: { chatEvents: ChatEventItem } | null;
  }>;
}

/**
 * Resolves once the server has subscribed `count` subscribers to the chat since the app started
 * (graphql-ws does not acknowledge a subscribe, so a test must wait before starting a turn).
 */
export async function subscribed(ctx: GraphqlTestContext, chatId: string, count = 1): Promise<void> {
  const deadline = Date.now() + 5000;
  while (ctx.subscriptions.mock.calls.filter(([id]) => id === chatId).length < count) {
    if (Date.now() > deadline) throw new Error(`fewer than ${count} subscriber(s) for chat ${chatId} after 5 s`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Events of a subscription up to and including `done` or `error`, failing on a GraphQL error. */
export async function untilTurnEnds(
  iterator: AsyncIterator<{ data?: { chatEvents: ChatEventItem } | null; errors?: unknown }>,
): Promise<ChatEventItem[]> {
  const events: ChatEventItem[] = [];
  for (;;) {
    const next = await iterator.next();
    if (next.done)
      throw new Error(
        `the subscription ended before the turn did, after ${JSON.stringify(events.map((e) => e.event))}`,
      );
    if (next.value.errors) throw new Error(`subscription error: ${JSON.stringify(next.value.errors)}`);
    const item = next.value.data!.chatEvents;
    events.push(item);
    if (item.event === 'done' || item.event === 'error') return events;
  }
}

/** The GraphQL errors a subscription ended with (graphql-ws rejects with them). */
export async function subscriptionErrors(iterator: AsyncIterator<unknown>): Promise<unknown> {
  try {
    const next = await iterator.next();
    throw new Error(`the subscription did not fail: ${JSON.stringify(next)}`);
  } catch (error) {
    if (Array.isArray(error)) return error;
    throw error;
  }
}

/**
 * How the server closed the connection of a subscription it refused at `connection_init`: its close code and reason.
 */
export async function connectionRefusal(iterator: AsyncIterator<unknown>): Promise<{ code: number; reason: string }> {
  try {
    const next = await iterator.next();
    throw new Error(`the subscription was not refused: ${JSON.stringify(next)}`);
  } catch (error) {
    const { code, reason } = error as { code?: unknown; reason?: unknown };
    if (typeof code === 'number') return { code, reason: String(reason) };
    throw error;
  }
}
