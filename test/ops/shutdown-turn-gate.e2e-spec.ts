import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { LifecycleService } from '../../src/domain/lifecycle/lifecycle.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { query } from '../support/database.js';

async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('turns refused with 503 BUSY: at max_concurrent_turns, and once shutdown began', () => {
  let ctx: ChatTestContext;
  const http = () => request(ctx.app.getHttpServer());
  const newChat = async () => (await http().post('/v1/chats').send({}).expect(201)).body.id as string;
  const messagesIn = async (chatId: string) =>
    (
      await query<{ n: number }>(ctx.db.url, 'SELECT count(*)::int AS n FROM chat_messages WHERE chat_id = $1', [
        chatId,
      ])
    )[0].n;

  beforeAll(async () => {
    ctx = await startChatApp([], {
      'app.limits.max_concurrent_turns': 2,
      'app.limits.turns_per_minute': 100_000,
      'app.default_model': 'scripted',
    });
  });
  afterAll(async () => ctx?.close());

  it(
    'one turn past max_concurrent_turns answers 503 BUSY (JSON and SSE alike) without reaching the model; a slot ' +
      'frees when a turn ends',
    async () => {
      const [a, b, c] = [await newChat(), await newChat(), await newChat()];
      ctx.model.answerWith(() => ({ text: 'slow answer', delayMs: 800 }));
      const running = [a, b].map((chatId) => http().post(`/v1/chats/${chatId}/messages`).send({ content: 'slow' }));
      const done = Promise.all(running.map((r) => r.then((res) => res.status)));
      await until(() => ctx.model.requests.length === 2, 'two turns at the model');

      const busy = {
        code: 'BUSY',
        message:
          'This Skillhost instance is already running 2 turns (app.limits.max_concurrent_turns); send the turn ' +
          'again in a moment.',
        details: { reason: 'max_concurrent_turns', limit: 2 },
      };
      expect((await http().post(`/v1/chats/${c}/messages`).send({ content: 'one too many' }).expect(503)).body).toEqual(
        busy,
      );
      const streamed = await http()
        .post(`/v1/chats/${c}/messages`)
        .set('accept', 'text/event-stream')
        .send({ content: 'one too many' })
        .expect(503);
      expect(streamed.headers['content-type']).toMatch(/^application\/json/);
      expect(streamed.body).toEqual(busy);

      expect(await done).toEqual([201, 201]);
      ctx.model.answerWith(() => ({ text: 'now there is room' }));
      expect(
        (await http().post(`/v1/chats/${c}/messages`).send({ content: 'again' }).expect(201)).body.assistantMessage
          .content,
      ).toBe('now there is room');
      expect(ctx.model.requests).toHaveLength(1);
      expect(await messagesIn(c)).toBe(2);
    },
  );

  it(
    'once shutdown began, a turn answers 503 BUSY naming it; other requests are still answered, asking the client ' +
      'to close the connection',
    async () => {
      const chatId = await newChat();
      ctx.app.get(LifecycleService).beginShutdown();
      const refused = await http().post(`/v1/chats/${chatId}/messages`).send({ content: 'too late' }).expect(503);
      expect(refused.body).toMatchObject({ code: 'BUSY', details: { reason: 'shutting_down' } });
      expect(refused.body.message).toMatch(/shutting down/);
      expect(refused.headers.connection).toBe('close');
      const streamed = await http()
        .post(`/v1/chats/${chatId}/messages`)
        .set('accept', 'text/event-stream')
        .send({ content: 'too late' })
        .expect(503);
      expect(streamed.body).toMatchObject({ code: 'BUSY', details: { reason: 'shutting_down' } });
      const listed = await http().get('/v1/chats').expect(200);
      expect(listed.headers.connection).toBe('close');
      expect(await messagesIn(chatId)).toBe(0);
    },
  );
});
