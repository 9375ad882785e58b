import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { query } from '../support/database.js';
import { parseSse } from '../support/sse.js';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { type Answer, listen, type RawRequest } from './http-client.js';
import type { WireJson } from '../support/wire-json.js';

/**
 * One cap on the model's answer, `app.tools.max_answer_bytes` (UTF-8 bytes), for the JSON and the
 * streamed turn alike: past it the answer is cut (never inside a character) and ends with a
 * notice; a stream relays no more than the cap and stops the model.
 */
const CAP = 2048;
const NOTICE =
  `\n\n[Truncated: the model's answer was longer than ${CAP} bytes (app.tools.max_answer_bytes); the rest was not ` +
  `kept.]`;

let tree: TempTree;
beforeAll(() => {
  tree = tempTree();
  writeSkill(tree, 'skills', 'pdf', { description: 'Works with PDF files.' });
});
afterAll(() => tree.cleanup());

describe('the answer cap', () => {
  let ctx: ChatTestContext;
  let send: (method: string, path: string, request?: RawRequest) => Promise<Answer>;
  let chat = '';

  beforeAll(async () => {
    ctx = await startChatApp([tree.path('skills')], { 'app.tools.max_answer_bytes': CAP });
    send = await listen(ctx.app);
  });
  afterAll(async () => ctx?.close());
  beforeEach(async () => {
    chat = (await send('POST', '/v1/chats', { json: {} })).body.id;
  });

  const storedAnswer = async () =>
    (
      await query<{ content: string }>(
        ctx.db.url,
        `SELECT content FROM chat_messages WHERE chat_id = $1 AND role = 'assistant'`,
        [chat],
      )
    )[0]?.content;

  const turn = (stream: boolean) =>
    send('POST', `/v1/chats/${chat}/messages`, {
      json: { content: 'write a lot' },
      headers: stream ? { accept: 'text/event-stream' } : {},
    });

  /** The streamed text deltas, and the answer the `done` event carries. */
  const streamed = (answer: Answer) => {
    const events = parseSse(answer.text) as { event: string; data: WireJson }[];
    expect(events.at(-1)?.event).toBe('done');
    return {
      text: events
        .filter((e) => e.event === 'text-delta')
        .map((e) => e.data.text)
        .join(''),
      done: events.at(-1)!.data.assistantMessage.content as string,
    };
  };

  it('cuts a JSON turn at the cap and says so', async () => {
    ctx.model.play({ text: 'a'.repeat(50_000) });
    const answer = await turn(false);
    expect(answer.status).toBe(201);
    expect(answer.body.assistantMessage.content).toBe(`${'a'.repeat(CAP)}${NOTICE}`);
    expect(await storedAnswer()).toBe(`${'a'.repeat(CAP)}${NOTICE}`);
  });

  it('cuts a streamed turn at the same cap: relays no more, stores the same, and stops reading the model', async () => {
    // The tool call after the text is never reached: the model's work ends at the cap.
    ctx.model.play(
      { text: 'b'.repeat(200_000), toolCalls: [{ name: 'skills_activate', arguments: { name: 'pdf' } }] },
      { text: 'never asked for' },
    );
    const answer = await turn(true);
    expect(answer.status).toBe(200);
    const { text, done } = streamed(answer);
    expect(text).toBe(`${'b'.repeat(CAP)}${NOTICE}`);
    expect(done).toBe(`${'b'.repeat(CAP)}${NOTICE}`);
    expect(await storedAnswer()).toBe(`${'b'.repeat(CAP)}${NOTICE}`);
    expect(ctx.model.requests).toHaveLength(1);
    expect(parseSse(answer.text).filter((e) => e.event === 'tool-result')).toEqual([]);
  });

  it.each([false, true])('never cuts inside a character (streamed: %s)', async (stream) => {
    // ü is two bytes, 😀 four: the cap falls inside one of them.
    ctx.model.play({ text: `${'ü'.repeat(1023)}x😀${'z'.repeat(5000)}` });
    const answer = await turn(stream);
    const content = stream ? streamed(answer).done : answer.body.assistantMessage.content;
    expect(content).toBe(`${'ü'.repeat(1023)}x${NOTICE}`);
    expect(await storedAnswer()).toBe(content);
  });

  it.each([false, true])('leaves an answer of exactly the cap whole (streamed: %s)', async (stream) => {
    ctx.model.play({ text: 'c'.repeat(CAP) });
    const answer = await turn(stream);
    expect(stream ? streamed(answer).done : answer.body.assistantMessage.content).toBe('c'.repeat(CAP));
  });

  it('counts the final answer alone: text of an earlier step that called a tool does not use up its cap', async () => {
    ctx.model.play(
      { text: 'thinking '.repeat(200), toolCalls: [{ name: 'skills_activate', arguments: { name: 'pdf' } }] },
      { text: 'd'.repeat(CAP) },
    );
    const answer = await turn(true);
    expect(streamed(answer).done).toBe('d'.repeat(CAP));
  });
});
