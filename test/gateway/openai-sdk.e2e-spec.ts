import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import OpenAI from 'openai';
import request from 'supertest';
import { UsersService } from '../../src/domain/users/users.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { type RecordedRequest, ScriptedModelServer } from '../support/scripted-model-server.js';
import { useChatSkillsTree } from '../support/files/skill-tree.js';

/**
 * The OpenAI-compatible gateway through the official `openai` SDK, against the real app with API keys and the
 * scripted model behind it: what the model is sent (the catalogue, the skill tools beside the client's), what the
 * client gets (only the answer, or its own tool calls), and what Skillhost keeps (the conversation as a chat, its
 * activations across requests, stored responses).
 */
const chatSkills = useChatSkillsTree();
const PDF_BODY_MARKER = 'PDF-BODY-MARKER';

let ctx: ChatTestContext;
let base: string;
const keys: Record<'ann' | 'bob', string> = { ann: '', bob: '' };

function client(user: 'ann' | 'bob' = 'ann', headers: Record<string, string> = {}): OpenAI {
  return new OpenAI({ apiKey: keys[user], baseURL: `${base}/openai/v1`, maxRetries: 0, defaultHeaders: headers });
}

const system = (sent: RecordedRequest) => ScriptedModelServer.systemPrompt(sent);
const toolNames = (sent: RecordedRequest) => (sent.body.tools ?? []).map((tool) => tool.function.name);

async function activations(user: 'ann' | 'bob', chatId: string): Promise<string[]> {
  const chat = await request(ctx.app.getHttpServer())
    .get(`/v1/chats/${chatId}`)
    .set('authorization', `Bearer ${keys[user]}`)
    .expect(200);
  return chat.body.activatedSkills.map((skill: { name: string }) => skill.name);
}

beforeAll(async () => {
  ctx = await startChatApp([chatSkills().path('skills')], { 'app.auth.mode': 'api_key' });
  const users = ctx.app.get(UsersService);
  for (const name of ['ann', 'bob'] as const)
    keys[name] = (await users.createKey((await users.createUser(name, 'member')).id)).key;
  await ctx.app.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;
});

afterAll(async () => ctx?.close());

beforeEach(() => {
  ctx.model.play();
});

describe('GET /openai/v1/models', () => {
  it('lists the configured models in OpenAI shape, and retrieves one', async () => {
    const list = await client().models.list();
    expect(list.data.map((model) => model.id)).toEqual(['scripted']);
    expect(list.data[0]).toMatchObject({ object: 'model', owned_by: 'skillhost' });
    expect(await client().models.retrieve('scripted')).toMatchObject({ id: 'scripted', object: 'model' });
  });
});

describe('chat completions', () => {
  it('adds the catalogue and the skill tools, and answers only the text', async () => {
    ctx.model.play({ text: 'Hello from the model.' });
    const { data, response } = await client()
      .chat.completions.create({
        model: 'scripted',
        messages: [
          { role: 'system', content: 'CLIENT-SYSTEM' },
          { role: 'user', content: 'hi' },
        ],
      })
      .withResponse();
    expect(data.choices[0].message).toMatchObject({ role: 'assistant', content: 'Hello from the model.' });
    expect(data.choices[0].finish_reason).toBe('stop');
    expect(data.usage).toEqual({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
    expect(data).not.toHaveProperty('skillhost');
    const sent = ctx.model.requests[0];
    // Skillhost's prompt first (the catalogue), the client's own system message after it.
    expect(system(sent)).toContain('pdf');
    expect(system(sent)).toContain('Works with PDF files.');
    expect(sent.body.messages.map((message) => message.role)).toEqual(['system', 'system', 'user']);
    expect(sent.body.messages[1].content).toBe('CLIENT-SYSTEM');
    expect(toolNames(sent)).toContain('skills_activate');
    // The conversation is a chat of the key's user, visible in the API.
    const chatId = response.headers.get('x-skillhost-conversation')!;
    const messages = await request(ctx.app.getHttpServer())
      .get(`/v1/chats/${chatId}/messages`)
      .set('authorization', `Bearer ${keys.ann}`)
      .expect(200);
    expect(messages.body.items.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', 'hi'],
      ['assistant', 'Hello from the model.'],
    ]);
  });

  it('asks the provider for JSON as response_format (chat completions) and text.format (responses) say', async () => {
    const schema = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] };
    ctx.model.play({ text: '{"ok":true}' }, { text: '{"ok":true}' }, { text: '{"ok":true}' });
    await client().chat.completions.create({
      model: 'scripted',
      messages: [{ role: 'user', content: 'json please' }],
      response_format: { type: 'json_schema', json_schema: { name: 'verdict', description: 'A verdict.', schema } },
    });
    await client().chat.completions.create({
      model: 'scripted',
      messages: [{ role: 'user', content: 'any json' }],
      response_format: { type: 'json_object' },
    });
    const answer = await client().responses.create({
      model: 'scripted',
      input: 'json again',
      text: { format: { type: 'json_schema', name: 'verdict', schema, strict: false } },
    });
    expect(answer.output_text).toBe('{"ok":true}');
    // The openai-compatible provider (the scripted model's) is asked for a JSON object; it sends no schema, as the AI
    // SDK does for providers not marked as taking structured outputs.
    const formats = ctx.model.requests.map((sent) => (sent.body as { response_format?: unknown }).response_format);
    expect(formats).toEqual([{ type: 'json_object' }, { type: 'json_object' }, { type: 'json_object' }]);
    // Text asks for none.
    ctx.model.play({ text: 'plain' });
    await client().chat.completions.create({
      model: 'scripted',
      messages: [{ role: 'user', content: 'text' }],
      response_format: { type: 'text' },
    });
    expect((ctx.model.requests[0].body as { response_format?: unknown }).response_format).toBeUndefined();
  });

  it('streams the answer in chunks, with the usage last when asked', async () => {
    ctx.model.play({ text: 'A streamed answer in pieces.' });
    const stream = await client().chat.completions.create({
      model: 'scripted',
      messages: [{ role: 'user', content: 'stream please' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null = null;
    let usage: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('A streamed answer in pieces.');
    expect(finish).toBe('stop');
    expect(usage).toEqual({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 });
  });

  it("runs the model's skill calls itself and keeps the activation for the rest of the conversation", async () => {
    ctx.model.play(
      { toolCalls: [{ name: 'skills_activate', arguments: { name: 'pdf' } }] },
      { text: 'Following the PDF skill.' },
      { text: 'Second answer.' },
      { text: 'Third answer.' },
    );
    const openai = client();
    const history: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'fill the form' }];
    const first = await openai.chat.completions.create({ model: 'scripted', messages: history }).withResponse();
    expect(first.data.choices[0].message.content).toBe('Following the PDF skill.');
    expect(first.data.choices[0].message.tool_calls).toBeUndefined();
    // The model read the instructions from the activation's result.
    expect(JSON.stringify(ctx.model.requests[1].body.messages)).toContain(PDF_BODY_MARKER);
    const chatId = first.response.headers.get('x-skillhost-conversation')!;
    expect(await activations('ann', chatId)).toEqual(['pdf']);

    // A stateless client resends only what it saw: the server recognises the conversation and keeps the skill.
    history.push({ role: 'assistant', content: 'Following the PDF skill.' }, { role: 'user', content: 'and now?' });
    const second = await openai.chat.completions.create({ model: 'scripted', messages: history }).withResponse();
    expect(second.response.headers.get('x-skillhost-conversation')).toBe(chatId);
    expect(system(ctx.model.requests[2])).toContain(PDF_BODY_MARKER);

    history.push({ role: 'assistant', content: 'Second answer.' }, { role: 'user', content: 'once more' });
    const third = await openai.chat.completions.create({ model: 'scripted', messages: history }).withResponse();
    expect(third.response.headers.get('x-skillhost-conversation')).toBe(chatId);
    expect(system(ctx.model.requests[3])).toContain(PDF_BODY_MARKER);

    // An edited history is another conversation: nothing activated there.
    ctx.model.play({ text: 'Fresh.' });
    const edited = await openai.chat.completions
      .create({
        model: 'scripted',
        messages: [
          { role: 'user', content: 'fill the form' },
          { role: 'assistant', content: 'Something else entirely.' },
          { role: 'user', content: 'and now?' },
        ],
      })
      .withResponse();
    expect(edited.response.headers.get('x-skillhost-conversation')).not.toBe(chatId);
    expect(system(ctx.model.requests[0])).not.toContain(PDF_BODY_MARKER);
  });

  it("returns the client's own tool calls and continues the turn with their results", async () => {
    ctx.model.play(
      { toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' }, id: 'call_w1' }] },
      { text: 'It is sunny in Oslo.' },
    );
    const tools: OpenAI.Chat.ChatCompletionTool[] = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'The weather in a city.',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      },
    ];
    const openai = client();
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: 'user', content: 'weather in Oslo?' }];
    const first = await openai.chat.completions.create({ model: 'scripted', messages, tools }).withResponse();
    const choice = first.data.choices[0];
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.tool_calls).toEqual([
      { id: 'call_w1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
    ]);
    // The client's tool beside Skillhost's.
    expect(toolNames(ctx.model.requests[0])).toEqual(expect.arrayContaining(['skills_activate', 'get_weather']));

    messages.push(choice.message, { role: 'tool', tool_call_id: 'call_w1', content: 'sunny, 21 C' });
    const second = await openai.chat.completions.create({ model: 'scripted', messages, tools }).withResponse();
    expect(second.data.choices[0].message.content).toBe('It is sunny in Oslo.');
    expect(second.response.headers.get('x-skillhost-conversation')).toBe(
      first.response.headers.get('x-skillhost-conversation'),
    );
    const toolMessage = ctx.model.requests[1].body.messages.find((message) => message.role === 'tool');
    expect(toolMessage).toMatchObject({ tool_call_id: 'call_w1', content: 'sunny, 21 C' });
  });

  it('activates a skill the user names with /name before the model runs', async () => {
    ctx.model.play({ text: 'Using it.' });
    await client().chat.completions.create({
      model: 'scripted',
      messages: [{ role: 'user', content: '/pdf fill the form' }],
    });
    const sent = ctx.model.requests[0];
    expect(JSON.stringify(sent.body.messages)).toContain(PDF_BODY_MARKER);
    expect(sent.body.messages[sent.body.messages.length - 1]).toMatchObject({ role: 'tool' });
  });

  it('shows the conversation, the activations and the tool cards in `skillhost` when asked', async () => {
    ctx.model.play({ toolCalls: [{ name: 'skills_activate', arguments: { name: 'pdf' } }] }, { text: 'Done.' });
    const answer = (await client('ann', { 'X-Skillhost-Show-Work': 'true' }).chat.completions.create({
      model: 'scripted',
      messages: [{ role: 'user', content: 'a pdf' }],
    })) as OpenAI.Chat.ChatCompletion & { skillhost: Record<string, unknown> };
    expect(answer.skillhost).toMatchObject({
      notice: 'Skills activated: pdf.',
      activated_skills: ['pdf'],
      tool_cards: [expect.objectContaining({ tool: 'skills.activate', status: 'ok' })],
    });
  });
});

describe('responses', () => {
  it('keeps the conversation and its skill over three requests with previous_response_id', async () => {
    ctx.model.play(
      { toolCalls: [{ name: 'skills_activate', arguments: { name: 'pdf' } }] },
      { text: 'One.' },
      { text: 'Two.' },
      { text: 'Three.' },
    );
    const openai = client();
    const first = await openai.responses.create({ model: 'scripted', instructions: 'Be brief.', input: 'a pdf task' });
    expect(first.output_text).toBe('One.');
    expect(first).toMatchObject({ object: 'response', status: 'completed', instructions: 'Be brief.' });
    const second = await openai.responses.create({
      model: 'scripted',
      input: 'next',
      previous_response_id: first.id,
    });
    expect(second.output_text).toBe('Two.');
    // The earlier turns come from the stored response, and the skill's instructions stay in the prompt.
    const sent = ctx.model.requests[2];
    expect(system(sent)).toContain(PDF_BODY_MARKER);
    // A response's instructions are its own: the next response, sent without any, has none.
    expect(JSON.stringify(ctx.model.requests[0].body.messages)).toContain('Be brief.');
    expect(JSON.stringify(sent.body.messages)).not.toContain('Be brief.');
    expect(sent.body.messages.map((message) => [message.role, message.content])).toEqual(
      expect.arrayContaining([
        ['user', 'a pdf task'],
        ['assistant', 'One.'],
        ['user', 'next'],
      ]),
    );
    const third = await openai.responses.create({ model: 'scripted', input: 'last', previous_response_id: second.id });
    expect(third.output_text).toBe('Three.');
    expect(system(ctx.model.requests[3])).toContain(PDF_BODY_MARKER);
    // Stored: read back as answered.
    expect((await openai.responses.retrieve(third.id)).output_text).toBe('Three.');
    // Another user's response is not found, to read or to continue.
    await expect(client('bob').responses.retrieve(third.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(
      client('bob').responses.create({ model: 'scripted', input: 'x', previous_response_id: third.id }),
    ).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('streams events and ends with the whole response', async () => {
    ctx.model.play({ text: 'Streamed response text.' });
    const stream = client().responses.stream({ model: 'scripted', input: 'go' });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (event) => deltas.push(event.delta));
    const final = await stream.finalResponse();
    expect(deltas.join('')).toBe('Streamed response text.');
    expect(final.output_text).toBe('Streamed response text.');
    expect(final.status).toBe('completed');
  });

  it("returns the client's function calls as items and continues with their outputs", async () => {
    ctx.model.play({ toolCalls: [{ name: 'lookup', arguments: { q: 'x' }, id: 'call_l1' }] }, { text: 'Found it.' });
    const openai = client();
    const tools: OpenAI.Responses.Tool[] = [
      { type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} }, strict: false },
    ];
    const first = await openai.responses.create({ model: 'scripted', input: 'look it up', tools });
    expect(first.output).toEqual([
      expect.objectContaining({ type: 'function_call', call_id: 'call_l1', name: 'lookup', arguments: '{"q":"x"}' }),
    ]);
    const second = await openai.responses.create({
      model: 'scripted',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: 'call_l1', output: 'the thing' }],
      tools,
    });
    expect(second.output_text).toBe('Found it.');
  });

  it(
    'leaves out the built-in tools no function can stand for (web_search, custom, local_shell…) and offers the ' +
      'function tools beside them; refuses an unknown type, naming the field',
    async () => {
      ctx.model.play({ text: 'Only functions here.' });
      const lookup: OpenAI.Responses.FunctionTool = {
        type: 'function',
        name: 'lookup',
        parameters: { type: 'object', properties: {} },
        strict: false,
      };
      // As Codex 0.171.0 sends them (test/agents/codex-gateway.agents-spec.ts).
      const builtIns = [
        { type: 'web_search', external_web_access: false },
        { type: 'custom', name: 'apply_patch', description: 'Edit files.', format: { type: 'grammar' } },
        { type: 'local_shell' },
        { type: 'file_search', vector_store_ids: ['vs_1'] },
      ] as unknown as OpenAI.Responses.Tool[];
      const answer = await client().responses.create({ model: 'scripted', input: 'x', tools: [...builtIns, lookup] });
      expect(answer.output_text).toBe('Only functions here.');
      expect(toolNames(ctx.model.requests[0])).toEqual(expect.arrayContaining(['lookup', 'skills_activate']));
      expect(toolNames(ctx.model.requests[0])).not.toContain('apply_patch');

      const refused = await client()
        .responses.create({
          model: 'scripted',
          input: 'x',
          tools: [lookup, { type: 'hologram' } as unknown as OpenAI.Responses.Tool],
        })
        .catch((caught: unknown) => caught);
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('tools.1.type');
      expect((refused as Error).message).toContain("'hologram' tools are not supported by this gateway");
      expect(ctx.model.requests).toHaveLength(1);
    },
  );

  it(
    "offers a namespace's functions as <namespace>__<name> and answers their calls with the namespace, as Codex " +
      'sends its MCP servers and agents',
    async () => {
      ctx.model.play(
        { toolCalls: [{ name: 'multi_agent_v1__spawn_agent', arguments: { task: 'x' }, id: 'call_n1' }] },
        { text: 'Spawned.' },
      );
      const namespace = {
        type: 'namespace',
        name: 'multi_agent_v1',
        description: 'Agents.',
        tools: [{ type: 'function', name: 'spawn_agent', parameters: { type: 'object', properties: {} } }],
      } as unknown as OpenAI.Responses.Tool;
      const first = await client().responses.create({ model: 'scripted', input: 'spawn one', tools: [namespace] });
      expect(toolNames(ctx.model.requests[0])).toContain('multi_agent_v1__spawn_agent');
      expect(first.output).toEqual([
        expect.objectContaining({
          type: 'function_call',
          call_id: 'call_n1',
          name: 'spawn_agent',
          namespace: 'multi_agent_v1',
          arguments: '{"task":"x"}',
        }),
      ]);
      // A stateless client sends the call back as it got it, namespace and all, with its output.
      const second = await client().responses.create({
        model: 'scripted',
        store: false,
        tools: [namespace],
        input: [
          { role: 'user', content: 'spawn one' },
          {
            type: 'function_call',
            call_id: 'call_n1',
            name: 'spawn_agent',
            namespace: 'multi_agent_v1',
            arguments: '{"task":"x"}',
          } as OpenAI.Responses.ResponseFunctionToolCall,
          { type: 'function_call_output', call_id: 'call_n1', output: 'agent 7' },
        ],
      });
      expect(second.output_text).toBe('Spawned.');
      const resent = ctx.model.requests[1].body.messages;
      expect(resent.find((message) => message.role === 'assistant')?.tool_calls).toEqual([
        expect.objectContaining({ function: { name: 'multi_agent_v1__spawn_agent', arguments: '{"task":"x"}' } }),
      ]);
    },
  );

  it('store: false keeps no response', async () => {
    ctx.model.play({ text: 'Not kept.' });
    const answer = await client().responses.create({ model: 'scripted', input: 'x', store: false });
    await expect(client().responses.retrieve(answer.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe('errors in OpenAI shape', () => {
  it('answers a missing or wrong key as an authentication error', async () => {
    const anonymous = new OpenAI({ apiKey: 'skh_wrong', baseURL: `${base}/openai/v1`, maxRetries: 0 });
    const error = await anonymous.models.list().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((error as InstanceType<typeof OpenAI.AuthenticationError>).error).toMatchObject({
      type: 'authentication_error',
      code: 'unauthenticated',
    });
  });

  it('refuses an unknown model, n > 1 and a client tool named like a skill tool, naming the field', async () => {
    const unknown = await client()
      .chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] })
      .catch((caught: unknown) => caught);
    expect(unknown).toBeInstanceOf(OpenAI.BadRequestError);
    expect((unknown as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('model');

    const many = await client()
      .chat.completions.create({ model: 'scripted', n: 2, messages: [{ role: 'user', content: 'x' }] })
      .catch((caught: unknown) => caught);
    expect((many as InstanceType<typeof OpenAI.BadRequestError>).status).toBe(400);
    expect((many as Error).message).toContain('n = 1');

    const clash = await client()
      .chat.completions.create({
        model: 'scripted',
        messages: [{ role: 'user', content: 'x' }],
        tools: [{ type: 'function', function: { name: 'skills_activate', parameters: { type: 'object' } } }],
      })
      .catch((caught: unknown) => caught);
    expect((clash as InstanceType<typeof OpenAI.BadRequestError>).status).toBe(400);
    expect((clash as Error).message).toContain("Skillhost's skill tool 'skills.activate'");
    expect(ctx.model.requests).toHaveLength(0);
  });

  it("refuses another user's conversation id as not found", async () => {
    ctx.model.play({ text: 'Mine.' });
    const { response } = await client()
      .chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'mine' }] })
      .withResponse();
    const annChat = response.headers.get('x-skillhost-conversation')!;
    const error = await client('bob', { 'X-Skillhost-Conversation': annChat })
      .chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'steal' }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect((error as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('conversation_not_found');
    // Ann herself continues it by id.
    ctx.model.play({ text: 'Again.' });
    const again = await client('ann', { 'X-Skillhost-Conversation': annChat })
      .chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'again' }] })
      .withResponse();
    expect(again.response.headers.get('x-skillhost-conversation')).toBe(annChat);
  });

  it('a failing model is a 502 in OpenAI shape, and the conversation it would have opened is not kept', async () => {
    ctx.model.play({ status: 500 });
    const before = await request(ctx.app.getHttpServer())
      .get('/v1/chats')
      .set('authorization', `Bearer ${keys.bob}`)
      .expect(200);
    const error = await client('bob')
      .chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'fail' }] })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('model_error');
    const after = await request(ctx.app.getHttpServer())
      .get('/v1/chats')
      .set('authorization', `Bearer ${keys.bob}`)
      .expect(200);
    expect(after.body.total).toBe(before.body.total);
  });
});
