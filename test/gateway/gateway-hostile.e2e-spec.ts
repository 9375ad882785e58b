import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { UsersService } from '../../src/domain/users/users.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { useChatSkillsTree } from '../support/files/skill-tree.js';

/**
 * The OpenAI-compatible gateway against what a hostile or broken client sends, and what a broken model answers: every
 * refusal is a 4xx in OpenAI's error shape (`{error: {message, type, code, param}}`), never a 5xx, and a refused
 * request leaves nothing behind (no chat, no model call).
 */
const chatSkills = useChatSkillsTree();
const MAX_MESSAGES = 1500;
const MAX_BODY_BYTES = 1024 * 1024;

let ctx: ChatTestContext;
const keys: Record<'ann' | 'eve', string> = { ann: '', eve: '' };

type Api = 'chat/completions' | 'responses';

/** A raw request to the gateway: `body` as an object (sent as JSON) or as the exact text to send. */
function post(path: Api, body: unknown, headers: Record<string, string> = {}, user: 'ann' | 'eve' = 'eve') {
  const sent = request(ctx.app.getHttpServer())
    .post(`/openai/v1/${path}`)
    .set('authorization', `Bearer ${keys[user]}`)
    .set('content-type', 'application/json');
  for (const [name, value] of Object.entries(headers)) sent.set(name, value);
  return sent.send(typeof body === 'string' ? body : JSON.stringify(body));
}

/** The smallest valid body of each API, with `extra` fields over it. */
function valid(api: Api, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return api === 'chat/completions'
    ? { model: 'scripted', messages: [{ role: 'user', content: 'hi' }], ...extra }
    : { model: 'scripted', input: 'hi', ...extra };
}

interface OpenAIErrorBody {
  error: { message: string; type: string; code: string; param: string | null };
}

/** An error in OpenAI's shape, with the status, Skillhost's code (lower case) and the field it names. */
function expectOpenAIError(
  response: request.Response,
  status: number,
  code: string,
  param?: string | null,
): OpenAIErrorBody['error'] {
  expect({ status: response.status, body: response.body }).toMatchObject({ status, body: { error: { code } } });
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const { error } = response.body as OpenAIErrorBody;
  expect(error).toEqual(
    expect.objectContaining({
      message: expect.any(String),
      type: expect.any(String),
      code,
    }),
  );
  if (param !== undefined) expect(error.param).toBe(param);
  // `param` names a field (`messages.0.content`), or is null: never a sentence.
  else if (error.param !== null) expect(error.param).toMatch(/^[\w.-]+$/);
  expect(error.message.length).toBeGreaterThan(0);
  if (status >= 400 && status < 500 && status !== 401 && status !== 403 && status !== 404 && status !== 429)
    expect(error.type).toBe('invalid_request_error');
  return error;
}

async function chatCount(user: 'ann' | 'eve' = 'eve'): Promise<number> {
  const chats = await request(ctx.app.getHttpServer())
    .get('/v1/chats')
    .set('authorization', `Bearer ${keys[user]}`)
    .expect(200);
  return chats.body.total as number;
}

/** A refused request made no model call and left no chat behind. */
async function expectNothingStored(): Promise<void> {
  expect(ctx.model.requests).toHaveLength(0);
  expect(await chatCount()).toBe(0);
}

beforeAll(async () => {
  ctx = await startChatApp([chatSkills().path('skills')], {
    'app.auth.mode': 'api_key',
    'app.gateway.max_messages': MAX_MESSAGES,
    'app.gateway.max_body_bytes': MAX_BODY_BYTES,
    // Every refused request counts too: this suite sends a few hundred a minute (the limit has its own app below).
    'app.limits.requests_per_minute': 1_000_000,
    'app.limits.turns_per_minute': 1_000_000,
  });
  const users = ctx.app.get(UsersService);
  for (const name of ['ann', 'eve'] as const)
    keys[name] = (await users.createKey((await users.createUser(name, 'member')).id)).key;
});

afterAll(async () => ctx?.close());

beforeEach(() => {
  ctx.model.play();
});

describe('too much', () => {
  it('refuses a history over max_messages, on both APIs, naming the field', async () => {
    const messages = Array.from({ length: MAX_MESSAGES + 1 }, (_, index) => ({
      role: index % 2 === 0 ? 'user' : 'assistant',
      content: `message ${index}`,
    }));
    const chat = expectOpenAIError(
      await post('chat/completions', valid('chat/completions', { messages })),
      400,
      'validation_failed',
      'messages',
    );
    expect(chat.message).toContain(`at most ${MAX_MESSAGES} messages`);
    const input = messages.map((message) => ({ type: 'message', ...message }));
    const responses = expectOpenAIError(
      await post('responses', valid('responses', { input })),
      400,
      'validation_failed',
      'input',
    );
    expect(responses.message).toContain(`at most ${MAX_MESSAGES} items`);
    await expectNothingStored();
  });

  // Regression, fixed since the hostile gateway pass found it. Was: every gateway body met the REST routes' JSON limits
  // (1,000 members in one array, 5,000 values in all), so a history of 1,001 messages (max_messages is 2,000 by
  // default) or a few hundred messages with tool calls was refused with a message naming no setting, and 10,000 tools
  // got a sentence in `param`.
  it('answers a long history within max_messages, with tool calls in it', async () => {
    ctx.model.play({ text: 'Read it all.' });
    const messages: Record<string, unknown>[] = [];
    for (let turn = 0; messages.length < MAX_MESSAGES - 4; turn++)
      messages.push(
        { role: 'user', content: `question ${turn}` },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: `call_${turn}`, type: 'function', function: { name: 'lookup', arguments: `{"q":${turn}}` } },
          ],
        },
        { role: 'tool', tool_call_id: `call_${turn}`, content: `result ${turn}` },
        { role: 'assistant', content: `answer ${turn}` },
      );
    messages.push({ role: 'user', content: 'the last question' });
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }];
    const answer = await post('chat/completions', valid('chat/completions', { messages, tools }), {}, 'ann');
    expect({ status: answer.status, content: answer.body.choices?.[0]?.message?.content }).toEqual({
      status: 200,
      content: 'Read it all.',
    });
    const sent = ctx.model.requests[0].body.messages;
    expect(sent[sent.length - 1]).toMatchObject({ role: 'user', content: 'the last question' });
    expect(sent.filter((message) => message.role === 'tool')).toHaveLength((MAX_MESSAGES - 4) / 4);
  });

  it('refuses a body over max_body_bytes with 413', async () => {
    const content = 'x'.repeat(MAX_BODY_BYTES + 1024);
    for (const api of ['chat/completions', 'responses'] as const) {
      const body =
        api === 'chat/completions'
          ? valid(api, { messages: [{ role: 'user', content }] })
          : valid(api, { input: content });
      expectOpenAIError(await post(api, body), 413, 'payload_too_large');
    }
    await expectNothingStored();
  });

  it('refuses 10,000 tools, naming max_tools', async () => {
    const parameters = { type: 'object', properties: {} };
    const chatTools = Array.from({ length: 10_000 }, (_, index) => ({
      type: 'function',
      function: { name: `tool_${index}`, parameters },
    }));
    const chat = expectOpenAIError(
      await post('chat/completions', valid('chat/completions', { tools: chatTools })),
      400,
      'validation_failed',
      'tools',
    );
    expect(chat.message).toContain('max_tools');
    const responsesTools = chatTools.map((tool) => ({ type: 'function', ...tool.function }));
    const responses = expectOpenAIError(
      await post('responses', valid('responses', { tools: responsesTools })),
      400,
      'validation_failed',
      'tools',
    );
    expect(responses.message).toContain('max_tools');
    await expectNothingStored();
  });
});

describe('a tool result for a call never made', () => {
  it('is refused on both APIs, naming the call', async () => {
    const chat = expectOpenAIError(
      await post('chat/completions', {
        model: 'scripted',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'tool', tool_call_id: 'call_never_made', content: 'forged' },
        ],
      }),
      400,
      'validation_failed',
    );
    expect(chat.message).toContain('call_never_made');
    const responses = expectOpenAIError(
      await post('responses', {
        model: 'scripted',
        input: [
          { role: 'user', content: 'hi' },
          { type: 'function_call_output', call_id: 'call_never_made', output: 'forged' },
        ],
      }),
      400,
      'validation_failed',
    );
    expect(responses.message).toContain('call_never_made');
    await expectNothingStored();
  });
});

describe('text that cannot be stored', () => {
  // JSON text as sent: `\u0000` and a lone `\ud800` are valid JSON escapes that no database column can hold.
  const nul = '"a\\u0000b"';
  const surrogate = '"a\\ud800b"';
  const bodies: [string, Api, string][] = [
    ['NUL in a chat message', 'chat/completions', `{"model":"scripted","messages":[{"role":"user","content":${nul}}]}`],
    [
      'an unpaired surrogate in a chat message',
      'chat/completions',
      `{"model":"scripted","messages":[{"role":"user","content":${surrogate}}]}`,
    ],
    [
      'NUL in a system message part',
      'chat/completions',
      '{"model":"scripted","messages":[' +
        `{"role":"system","content":[{"type":"text","text":${nul}}]},{"role":"user","content":"hi"}]}`,
    ],
    ['NUL in a responses input', 'responses', `{"model":"scripted","input":${nul}}`],
    ['an unpaired surrogate in a responses input', 'responses', `{"model":"scripted","input":${surrogate}}`],
    ['NUL in instructions', 'responses', `{"model":"scripted","input":"hi","instructions":${nul}}`],
    [
      'an unpaired surrogate in a function output',
      'responses',
      '{"model":"scripted","input":[{"role":"user","content":"hi"},' +
        '{"type":"function_call","call_id":"c1","name":"f","arguments":"{}"},' +
        `{"type":"function_call_output","call_id":"c1","output":${surrogate}}]}`,
    ],
    [
      'NUL in a key',
      'chat/completions',
      `{"model":"scripted","messages":[{"role":"user","content":"hi"}],"metadata":{${nul}:"x"}}`,
    ],
  ];
  it.each(bodies)('%s is refused', async (_name, api, body) => {
    expectOpenAIError(await post(api, body), 400, 'validation_failed');
    await expectNothingStored();
  });
});

describe('malformed requests', () => {
  // Regression, fixed since the hostile gateway pass found it. Was: `param` held whatever came before the first colon
  // of the problem, here a sentence ("The body is not valid JSON"), not a field.
  it.each(['{"model": "scripted", "messages": [', 'not json at all', '', '[1, 2, 3]', 'null', '"a string"'])(
    'refuses the body %j',
    async (body) => {
      for (const api of ['chat/completions', 'responses'] as const)
        expectOpenAIError(await post(api, body), 400, 'validation_failed');
      await expectNothingStored();
    },
  );

  it('refuses a body that is not JSON by its content type', async () => {
    const response = await request(ctx.app.getHttpServer())
      .post('/openai/v1/chat/completions')
      .set('authorization', `Bearer ${keys.eve}`)
      .set('content-type', 'text/plain')
      .send('hello');
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
    expect(response.body.error).toEqual(
      expect.objectContaining({ message: expect.any(String), code: expect.any(String) }),
    );
    await expectNothingStored();
  });

  it('refuses tool parameters nested deeper than JSON bodies may be', async () => {
    let schema: Record<string, unknown> = { type: 'string' };
    for (let depth = 0; depth < 40; depth++) schema = { type: 'object', properties: { deeper: schema } };
    const tools = [{ type: 'function', function: { name: 'deep', parameters: schema } }];
    const error = expectOpenAIError(
      await post('chat/completions', valid('chat/completions', { tools })),
      400,
      'validation_failed',
      null,
    );
    expect(error.message).toContain('nested more than 64');
    await expectNothingStored();
  });

  const wrongTypes: [string, Api, Record<string, unknown>, string][] = [
    [
      'messages not an array',
      'chat/completions',
      { model: 'scripted', messages: { role: 'user', content: 'hi' } },
      'messages',
    ],
    ['messages empty', 'chat/completions', { model: 'scripted', messages: [] }, 'messages'],
    [
      'content a number',
      'chat/completions',
      { model: 'scripted', messages: [{ role: 'user', content: 42 }] },
      'messages.0.content',
    ],
    [
      'an unknown role',
      'chat/completions',
      { model: 'scripted', messages: [{ role: 'wizard', content: 'hi' }] },
      'messages.0.role',
    ],
    ['model a number', 'chat/completions', { model: 7, messages: [{ role: 'user', content: 'hi' }] }, 'model'],
    ['temperature a string', 'chat/completions', valid('chat/completions', { temperature: 'hot' }), 'temperature'],
    ['stream a string', 'chat/completions', valid('chat/completions', { stream: 'yes' }), 'stream'],
    ['tools not an array', 'chat/completions', valid('chat/completions', { tools: 'all of them' }), 'tools'],
    [
      'a tool that is not a function',
      'chat/completions',
      valid('chat/completions', { tools: [{ type: 'web_search' }] }),
      'tools.0.type',
    ],
    [
      'a tool without a name',
      'chat/completions',
      valid('chat/completions', { tools: [{ type: 'function', function: { parameters: {} } }] }),
      'tools.0.function.name',
    ],
    [
      'a tool name with spaces',
      'chat/completions',
      valid('chat/completions', { tools: [{ type: 'function', function: { name: 'rm -rf' } }] }),
      'tools.0.function.name',
    ],
    [
      'tool_choice naming an unknown tool',
      'chat/completions',
      valid('chat/completions', { tool_choice: { type: 'function', function: { name: 'nowhere' } } }),
      'tool_choice.function.name',
    ],
    ['n: 2', 'chat/completions', valid('chat/completions', { n: 2 }), 'n'],
    [
      'image content',
      'chat/completions',
      {
        model: 'scripted',
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }],
      },
      'messages.0.content.0.type',
    ],
    ['input a number', 'responses', { model: 'scripted', input: 42 }, 'input'],
    [
      'a responses tool that is not a function',
      'responses',
      valid('responses', { tools: [{ type: 'made_up_tool' }] }),
      'tools.0.type',
    ],
    ['tools not objects', 'responses', valid('responses', { tools: ['x'] }), 'tools.0'],
    [
      'tool_choice naming an unknown tool (responses)',
      'responses',
      valid('responses', { tool_choice: { type: 'function', name: 'nowhere' } }),
      'tool_choice.name',
    ],
    [
      'image input',
      'responses',
      {
        model: 'scripted',
        input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'https://x/y.png' }] }],
      },
      'input.0.content.0.type',
    ],
  ];
  it.each(wrongTypes)('refuses %s, naming the field', async (_name, api, body, param) => {
    expectOpenAIError(await post(api, body), 400, 'validation_failed', param);
    await expectNothingStored();
  });
});

describe('conversations that are not the caller’s', () => {
  it('an unknown previous_response_id is not found', async () => {
    const error = expectOpenAIError(
      await post('responses', valid('responses', { previous_response_id: 'resp_does_not_exist' })),
      404,
      'response_not_found',
    );
    expect(error.type).toBe('not_found_error');
    await expectNothingStored();
  });

  it("an item_reference to another user's response, or to no item, is refused by its id", async () => {
    ctx.model.play({ text: 'Ann only.' });
    const annResponse = await post('responses', valid('responses'), {}, 'ann').expect(200);
    const annItem = annResponse.body.output[0].id as string;
    ctx.model.play();
    for (const id of [annItem, 'msg_0123abcd_0', `${annItem.slice(0, -1)}9`, 'not an item id'.repeat(10)]) {
      const input = [
        { type: 'item_reference', id },
        { role: 'user', content: 'go on' },
      ];
      const error = expectOpenAIError(await post('responses', valid('responses', { input })), 400, 'validation_failed');
      expect(error.param).toBe('input');
      expect(error.message).toContain(`item_reference '${id.slice(0, 100)}'`);
      expect(error.message).not.toContain('Ann only.');
    }
    await expectNothingStored();
  });

  it("another user's X-Skillhost-Conversation is not found, on both APIs, and nothing is added to it", async () => {
    ctx.model.play({ text: 'Ann only.' });
    const mine = await post('chat/completions', valid('chat/completions'), {}, 'ann').expect(200);
    const annChat = mine.headers['x-skillhost-conversation'] as string;
    ctx.model.play();
    for (const api of ['chat/completions', 'responses'] as const)
      expectOpenAIError(
        await post(api, valid(api), { 'X-Skillhost-Conversation': annChat }),
        404,
        'conversation_not_found',
      );
    await expectNothingStored();
    const messages = await request(ctx.app.getHttpServer())
      .get(`/v1/chats/${annChat}/messages`)
      .set('authorization', `Bearer ${keys.ann}`)
      .expect(200);
    expect(messages.body.items).toHaveLength(2);
  });

  it.each([
    ['not a UUID', 'not-a-uuid'],
    ['SQL', "'; drop table chats; --"],
    ['5000 characters long', 'x'.repeat(5000)],
    ['the nil UUID', '00000000-0000-0000-0000-000000000000'],
  ])('a conversation id that is %s is not found', async (_name, id) => {
    for (const api of ['chat/completions', 'responses'] as const)
      expectOpenAIError(await post(api, valid(api), { 'X-Skillhost-Conversation': id }), 404, 'conversation_not_found');
    expectOpenAIError(
      await post(
        'chat/completions',
        valid('chat/completions', { metadata: { skillhost_conversation: id.slice(0, 500) } }),
      ),
      404,
      'conversation_not_found',
    );
    await expectNothingStored();
  });
});

describe('malformed tool calls from the model', () => {
  const weather = {
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } } },
  };
  const toolsFor = (api: Api) =>
    api === 'chat/completions' ? [{ type: 'function', function: weather }] : [{ type: 'function', ...weather }];

  /** What the client got, whole or streamed, in either API: the answer's text and the tool calls given back to it. */
  function answerOf(api: Api, response: request.Response): { text: string; calls: unknown[]; finished: boolean } {
    if (api === 'chat/completions' && response.headers['content-type']?.startsWith('application/json')) {
      const { message, finish_reason: finish } = response.body.choices[0];
      return { text: message.content ?? '', calls: message.tool_calls ?? [], finished: finish === 'stop' };
    }
    if (api === 'responses' && response.headers['content-type']?.startsWith('application/json'))
      return outputOf(response.body);
    const events = response.text
      .split('\n\n')
      .filter((block) => block.includes('data: '))
      .map((block) => block.slice(block.indexOf('data: ') + 'data: '.length));
    if (api === 'chat/completions') {
      const chunks = events.filter((data) => data !== '[DONE]').map((data) => JSON.parse(data));
      return {
        text: chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''),
        calls: chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []),
        finished: events[events.length - 1] === '[DONE]' && chunks.some((c) => c.choices[0]?.finish_reason === 'stop'),
      };
    }
    const completed = events.map((data) => JSON.parse(data)).find((event) => event.type === 'response.completed');
    return outputOf(completed.response);
  }

  function outputOf(response: { status: string; output: { type: string; content?: { text: string }[] }[] }) {
    return {
      text: response.output
        .flatMap((item) => item.content ?? [])
        .map((part) => part.text)
        .join(''),
      calls: response.output.filter((item) => item.type === 'function_call'),
      finished: response.status === 'completed',
    };
  }

  const variants = (['chat/completions', 'responses'] as const).flatMap((api) =>
    [false, true].map((stream) => [`${api}${stream ? ', streamed' : ''}`, api, stream] as const),
  );

  describe.each(variants)('%s', (_name, api, stream) => {
    it.each([
      ['arguments that are not JSON', 'get_weather', '{"city": "Oslo', 'Invalid input for tool get_weather'],
      [
        'a tool nobody offered',
        'nobody_offered',
        '{}',
        "unavailable tool 'nobody_offered'. Available tools: skills_activate",
      ],
    ])(
      'a client tool call with %s: the model reads the error and answers; the client gets no call',
      async (_case, name, args, error) => {
        ctx.model.play({ toolCalls: [{ name, arguments: args, id: 'call_bad' }] }, { text: 'Recovered.' });
        const response = await post(api, valid(api, { tools: toolsFor(api), stream }), {}, 'ann');
        expect(response.status).toBe(200);
        expect(answerOf(api, response)).toEqual({ text: 'Recovered.', calls: [], finished: true });
        // Skillhost answered the broken call itself, as a tool error the model could read, and asked again.
        expect(ctx.model.requests).toHaveLength(2);
        const result = ctx.model.requests[1].body.messages.find((message) => message.role === 'tool');
        expect(result).toMatchObject({ tool_call_id: 'call_bad' });
        expect(String(result?.content)).toContain(error);
      },
    );

    it('a tool call with an empty name is never given to the client', async () => {
      ctx.model.play({ toolCalls: [{ name: '', arguments: '{}', id: 'call_bad' }] }, { text: 'Recovered.' });
      const response = await post(api, valid(api, { tools: toolsFor(api), stream }), {}, 'ann');
      expect(response.status).toBe(200);
      const answer = answerOf(api, response);
      expect(answer.calls).toEqual([]);
      expect(answer.finished).toBe(true);
      if (stream) {
        // Streamed, the AI SDK's OpenAI-compatible provider drops a call without a name: the turn ends on the
        // empty step.
        expect(answer.text).toBe('');
        expect(ctx.model.requests).toHaveLength(1);
      } else {
        expect(answer.text).toBe('Recovered.');
        const result = ctx.model.requests[1].body.messages.find((message) => message.role === 'tool');
        expect(String(result?.content)).toContain("unavailable tool ''");
      }
    });
  });
});

/** An app of its own, with `overrides`, and a user's key. */
function separateApp(overrides: Record<string, unknown>) {
  const app = { ctx: undefined as unknown as ChatTestContext, key: '' };
  beforeAll(async () => {
    app.ctx = await startChatApp([chatSkills().path('skills')], { 'app.auth.mode': 'api_key', ...overrides });
    const users = app.ctx.app.get(UsersService);
    app.key = (await users.createKey((await users.createUser('ann', 'member')).id)).key;
  });
  afterAll(async () => app.ctx?.close());
  return app;
}

describe('the gateway disabled', () => {
  const app = separateApp({ 'app.gateway.enabled': false });

  it('answers every gateway route with 404 GATEWAY_DISABLED in OpenAI shape', async () => {
    const server = () => request(app.ctx.app.getHttpServer());
    const auth = `Bearer ${app.key}`;
    const answers = [
      await server().get('/openai/v1/models').set('authorization', auth),
      await server().get('/openai/v1/models/scripted').set('authorization', auth),
      await server().post('/openai/v1/chat/completions').set('authorization', auth).send(valid('chat/completions')),
      await server().post('/openai/v1/responses').set('authorization', auth).send(valid('responses')),
      await server().get('/openai/v1/responses/resp_x').set('authorization', auth),
    ];
    for (const answer of answers) {
      const error = expectOpenAIError(answer, 404, 'gateway_disabled', null);
      expect(error.type).toBe('not_found_error');
      expect(error.message).toContain('[app.gateway] enabled');
    }
    expect(app.ctx.model.requests).toHaveLength(0);
  });
});

describe('the rate limit', () => {
  const LIMIT = 3;
  const app = separateApp({ 'app.limits.requests_per_minute': LIMIT });

  it('answers past requests_per_minute with 429 in OpenAI shape and Retry-After, before the model runs', async () => {
    app.ctx.model.answerWith(() => ({ text: 'Within the limit.' }));
    const server = () => request(app.ctx.app.getHttpServer());
    const auth = `Bearer ${app.key}`;
    // The minute is fixed: if one ends between two requests the count starts again, so within 2 × LIMIT + 1
    // requests one is refused whenever the test runs.
    async function untilRefused(send: () => Promise<request.Response>): Promise<request.Response> {
      let answer: request.Response | undefined;
      for (let sent = 0; sent <= 2 * LIMIT && answer?.status !== 429; sent++) {
        const modelCalls = app.ctx.model.requests.length;
        answer = await send();
        expect(answer.status).toBeLessThan(500);
        // A refused request never reaches the model.
        if (answer.status === 429) expect(app.ctx.model.requests).toHaveLength(modelCalls);
      }
      return answer!;
    }
    const refusals = [
      await untilRefused(() => server().get('/openai/v1/models').set('authorization', auth)),
      ...(await Promise.all(
        (['chat/completions', 'responses'] as const).map((api) =>
          untilRefused(() => server().post(`/openai/v1/${api}`).set('authorization', auth).send(valid(api))),
        ),
      )),
    ];
    for (const refused of refusals) {
      const error = expectOpenAIError(refused, 429, 'rate_limited', null);
      expect(error.type).toBe('rate_limit_error');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    }
  });
});

describe('text from the model that cannot be stored', () => {
  // Eleven letters first: the scripted server sends 12 UTF-16 units a piece, so the emoji's pair is split across two.
  const written = 'elevenchars\u{1F600} a NUL \u0000 and a lone \ud800 here';
  const stored = 'elevenchars\u{1F600} a NUL \uFFFD and a lone \uFFFD here';

  // Regression, fixed since the hostile gateway pass found it. Was: streamed, a NUL or an unpaired surrogate the model
  // wrote went to the client as it was (whole, it got U+FFFD, as stored), so the history it sent next was refused with
  // 400 and the conversation could not go on.
  it.each([false, true])('streamed %s: the client gets the answer as stored, and can send it back', async (stream) => {
    ctx.model.play({ text: written }, { text: 'Next.' });
    const first = await post('chat/completions', valid('chat/completions', { stream }), {}, 'ann');
    expect(first.status).toBe(200);
    const text = stream
      ? first.text
          .split('\n\n')
          .filter((block) => block.startsWith('data: {'))
          .map((block) => JSON.parse(block.slice('data: '.length)).choices[0]?.delta.content ?? '')
          .join('')
      : first.body.choices[0].message.content;
    expect(text).toBe(stored);
    const messages = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: text },
      { role: 'user', content: 'and then?' },
    ];
    const second = await post('chat/completions', valid('chat/completions', { messages }), {}, 'ann');
    expect(second.status).toBe(200);
    expect(second.body.choices[0].message.content).toBe('Next.');
    // The same conversation: the resent history is the one stored.
    expect(second.headers['x-skillhost-conversation']).toBe(first.headers['x-skillhost-conversation']);
  });

  it('streamed on the responses API, the deltas and the completed response agree with what is stored', async () => {
    ctx.model.play({ text: written });
    const response = await post('responses', valid('responses', { stream: true }), {}, 'ann');
    const events = response.text
      .split('\n\n')
      .filter((block) => block.includes('data: '))
      .map((block) => JSON.parse(block.slice(block.indexOf('data: ') + 'data: '.length)));
    const deltas = events.filter((event) => event.type === 'response.output_text.delta').map((event) => event.delta);
    expect(deltas.join('')).toBe(stored);
    const completed = events.find((event) => event.type === 'response.completed');
    expect(completed.response.output[0].content[0].text).toBe(stored);
  });
});

describe('a model that answers garbage', () => {
  it.each([false, true])(
    'streamed %s: 502 model_error in OpenAI shape (an error event once streaming), and no conversation kept',
    async (stream) => {
      for (const api of ['chat/completions', 'responses'] as const) {
        ctx.model.play({ garbage: 'this is not JSON {' });
        const response = await post(api, valid(api, { stream }));
        if (!stream) {
          expect(expectOpenAIError(response, 502, 'model_error', null).type).toBe('api_error');
          continue;
        }
        // Streaming has begun (200): the error is the stream's last event, in OpenAI's shape.
        expect(response.status).toBe(200);
        const errors = response.text
          .split('\n\n')
          .filter((block) => block.includes('"model_error"'))
          .map((block) => JSON.parse(block.slice(block.indexOf('data: ') + 'data: '.length)));
        expect(errors).toEqual([
          api === 'chat/completions'
            ? { error: expect.objectContaining({ type: 'api_error', code: 'model_error', param: null }) }
            : expect.objectContaining({ type: 'api_error', code: 'model_error', param: null }),
        ]);
      }
      expect(await chatCount()).toBe(0);
    },
  );
});
