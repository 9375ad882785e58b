import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { query } from '../support/database.js';
import type { ScriptStep } from '../support/scripted-model-server.js';
import { parseSse } from '../support/sse.js';
import { usePdfSkillsFolder } from '../support/files/skill-tree.js';
import { type Answer, listen, RecordingLogger, type RawRequest } from './http-client.js';
import type { WireJson } from '../support/wire-json.js';

/**
 * Strings PostgreSQL cannot store, produced by the model after it has been paid for: NUL and
 * unpaired surrogates in its text, its tool names and its tool arguments. The turn succeeds (a
 * retry would pay again and fail again) and is stored with U+FFFD in their place; the answer is
 * what was stored.
 */
const R = '\ufffd';

const skillsFolder = usePdfSkillsFolder();

interface StoredMessage {
  role: string;
  content: string;
  tool_cards: { tool: string; args: unknown; status: string; output: string; summary: Record<string, unknown> }[];
}

describe('model output that PostgreSQL cannot store as it is', () => {
  let ctx: ChatTestContext;
  let send: (method: string, path: string, request?: RawRequest) => Promise<Answer>;
  const logger = new RecordingLogger();
  let chat = '';

  beforeAll(async () => {
    ctx = await startChatApp([skillsFolder()], {}, undefined, {}, logger);
    send = await listen(ctx.app);
  });
  afterAll(async () => ctx?.close());
  beforeEach(async () => {
    chat = (await send('POST', '/v1/chats', { json: {} })).body.id;
  });

  const stored = () =>
    query<StoredMessage>(
      ctx.db.url,
      'SELECT role, content, tool_cards FROM chat_messages WHERE chat_id = $1 ORDER BY seq',
      [chat],
    );

  /** The turn as JSON and, in a second chat, as SSE: both succeed; returns the stored assistant messages of both. */
  async function bothWays(
    steps: () => ScriptStep[],
  ): Promise<{ json: Answer; events: { event: string; data: WireJson }[]; assistant: StoredMessage[] }> {
    ctx.model.play(...steps());
    const json = await send('POST', `/v1/chats/${chat}/messages`, { json: { content: 'go' } });
    expect(json.status).toBe(201);
    const jsonRows = await stored();
    chat = (await send('POST', '/v1/chats', { json: {} })).body.id;
    ctx.model.play(...steps());
    const sse = await send('POST', `/v1/chats/${chat}/messages`, {
      json: { content: 'go' },
      headers: { accept: 'text/event-stream' },
    });
    expect(sse.status).toBe(200);
    const events = parseSse(sse.text) as { event: string; data: WireJson }[];
    expect(events.at(-1)?.event).toBe('done');
    const sseRows = await stored();
    expect(logger.errors).toEqual([]);
    return {
      json,
      events,
      assistant: [jsonRows, sseRows].map((rows) => rows.find((row) => row.role === 'assistant')!),
    };
  }

  it('text with NUL and unpaired surrogates: stored and answered with U+FFFD in their place', async () => {
    const { json, events, assistant } = await bothWays(() => [
      { text: 'Hello\u0000 world \ud800 and \udc00 but \u{1F600} stays' },
    ]);
    const expected = `Hello${R} world ${R} and ${R} but \u{1F600} stays`;
    expect(assistant.map((m) => m.content)).toEqual([expected, expected]);
    expect(json.body.assistantMessage.content).toBe(expected);
    expect(events.at(-1)?.data.assistantMessage.content).toBe(expected);
  });

  it('a tool name with NUL: a refused call, its card stored with the name cleaned', async () => {
    const { assistant } = await bothWays(() => [
      { toolCalls: [{ name: 'skills_\u0000activate', arguments: { name: 'pdf' } }] },
      { text: 'done' },
    ]);
    for (const message of assistant) {
      expect(message.content).toBe('done');
      expect(message.tool_cards).toEqual([
        expect.objectContaining({ tool: `skills_${R}activate`, status: 'error', args: { name: 'pdf' } }),
      ]);
    }
  });

  it(
    'tool arguments with NUL and unpaired surrogates, in values and keys: the tool runs, the card is stored ' +
      'cleaned',
    async () => {
      const { json, assistant } = await bothWays(() => [
        { toolCalls: [{ name: 'skills_activate', arguments: { name: 'pd\u0000f', '\u0000key': '\ud800' } }] },
        { toolCalls: [{ name: 'skills_activate', arguments: { name: 'pd\u0000f' } }] },
        { toolCalls: [{ name: 'skills_readResource', arguments: { name: 'pdf', path: 'references/\udfffforms.md' } }] },
        { text: 'done' },
      ]);
      for (const message of assistant) {
        expect(message.content).toBe('done');
        expect(message.tool_cards).toEqual([
          expect.objectContaining({
            tool: 'skills.activate',
            status: 'error',
            args: { name: `pd${R}f`, [`${R}key`]: R },
            output: expect.stringContaining(`unknown argument(s): ${R}key`),
          }),
          expect.objectContaining({
            tool: 'skills.activate',
            status: 'error',
            args: { name: `pd${R}f` },
            output: expect.stringContaining(`Skill 'pd${R}f' not found`),
          }),
          expect.objectContaining({
            tool: 'skills.readResource',
            status: 'error',
            args: { name: 'pdf', path: `references/${R}forms.md` },
          }),
        ]);
      }
      expect(json.body.assistantMessage.toolCards[0].args).toEqual({ name: `pd${R}f`, [`${R}key`]: R });
    },
  );

  it('tool arguments that are not JSON and hold NUL: a refused call, stored', async () => {
    const { assistant } = await bothWays(() => [
      { toolCalls: [{ name: 'skills_activate', arguments: '{"name": "pdf\u0000' }] },
      { text: 'done' },
    ]);
    for (const message of assistant) {
      expect(message.content).toBe('done');
      expect(message.tool_cards).toHaveLength(1);
      expect(message.tool_cards[0].status).toBe('error');
      expect(JSON.stringify(message.tool_cards)).not.toContain('\\u0000');
    }
  });

  it('a resource read through a path with NUL from the model stays RESOURCE_OUTSIDE_SKILL in its card', async () => {
    const { assistant } = await bothWays(() => [
      { toolCalls: [{ name: 'skills_readResource', arguments: { name: 'pdf', path: 'references/\u0000forms.md' } }] },
      { text: 'done' },
    ]);
    for (const message of assistant) {
      expect(message.tool_cards).toEqual([
        expect.objectContaining({
          status: 'error',
          args: { name: 'pdf', path: `references/${R}forms.md` },
          output: expect.stringContaining('RESOURCE_OUTSIDE_SKILL'),
        }),
      ]);
    }
  });

  it('the same through GraphQL', async () => {
    ctx.model.play({ text: 'a\u0000b\ud800' });
    const answer = await send('POST', '/graphql', {
      json: {
        query: 'mutation($c: ID!) { sendMessage(chatId: $c, content: "go") { assistantMessage { content } } }',
        variables: { c: chat },
      },
    });
    expect(answer.body).toEqual({ data: { sendMessage: { assistantMessage: { content: `a${R}b${R}` } } } });
    expect((await stored()).map((m) => m.content)).toEqual(['go', `a${R}b${R}`]);
  });

  it('the cleaned history goes back to the model on the next turn', async () => {
    ctx.model.play({ text: 'x\u0000y' }, { text: 'second' });
    await send('POST', `/v1/chats/${chat}/messages`, { json: { content: 'one' } });
    await send('POST', `/v1/chats/${chat}/messages`, { json: { content: 'two' } });
    expect(ctx.model.requests[1].body.messages.filter((m) => m.role === 'assistant').map((m) => m.content)).toEqual([
      `x${R}y`,
    ]);
  });
});
