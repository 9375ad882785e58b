import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, type LanguageModel, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';
import { UsersService } from '../../src/domain/users/users.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { type RecordedRequest, ScriptedModelServer } from '../support/scripted-model-server.js';
import { useChatSkillsTree } from '../support/files/skill-tree.js';

/**
 * The AI SDK as a client of the OpenAI-compatible gateway: `@ai-sdk/openai` over chat completions and over the
 * responses API, and `@ai-sdk/openai-compatible`, each whole and streamed, with a client tool the AI SDK runs itself.
 * The scripted model behind Skillhost shows what it was sent (the catalogue, the skill tools beside the client's).
 */
const chatSkills = useChatSkillsTree();

let ctx: ChatTestContext;
let gatewayUrl: string;
let apiKey: string;

const system = (sent: RecordedRequest) => ScriptedModelServer.systemPrompt(sent);
const toolNames = (sent: RecordedRequest) => (sent.body.tools ?? []).map((offered) => offered.function.name);

beforeAll(async () => {
  ctx = await startChatApp([chatSkills().path('skills')], { 'app.auth.mode': 'api_key' });
  const users = ctx.app.get(UsersService);
  apiKey = (await users.createKey((await users.createUser('ann', 'member')).id)).key;
  await ctx.app.listen(0, '127.0.0.1');
  gatewayUrl = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}/openai/v1`;
});

afterAll(async () => ctx?.close());

beforeEach(() => {
  ctx.model.play();
});

/** The client's tool, run by the AI SDK in the test process: it records what it was asked. */
function weatherTool(asked: string[]) {
  return tool({
    description: 'The weather in a city.',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      asked.push(city);
      return `sunny in ${city}, 21 C`;
    },
  });
}

/** What every request's model was sent: Skillhost's catalogue and skill tools, with the client's tools beside. */
function expectSkillhostAdded(sent: RecordedRequest, clientTools: string[] = []): void {
  expect(system(sent)).toContain('pdf');
  expect(system(sent)).toContain('Works with PDF files.');
  expect(toolNames(sent)).toEqual(expect.arrayContaining(['skills_activate', ...clientTools]));
}

const openai = () => createOpenAI({ baseURL: gatewayUrl, apiKey });
const models: [string, () => LanguageModel][] = [
  ['@ai-sdk/openai chat completions', () => openai().chat('scripted')],
  ['@ai-sdk/openai responses', () => openai().responses('scripted')],
  [
    '@ai-sdk/openai-compatible',
    // includeUsage: the provider asks for the usage chunk (stream_options.include_usage), as OpenAI's own does.
    () => createOpenAICompatible({ name: 'skillhost', baseURL: gatewayUrl, apiKey, includeUsage: true })('scripted'),
  ],
];

describe.each(models)('%s', (_name, model) => {
  it('generateText: the model gets the catalogue and the skill tools, the client only the answer', async () => {
    ctx.model.play({ text: 'Hello from the model.' });
    const result = await generateText({
      model: model(),
      system: 'CLIENT-SYSTEM',
      prompt: 'hi',
      maxRetries: 0,
    });
    expect(result.text).toBe('Hello from the model.');
    expect(result.finishReason).toBe('stop');
    expect(result.usage).toMatchObject({ inputTokens: 10, outputTokens: 5 });
    expect(result.toolCalls).toEqual([]);
    expect(ctx.model.requests).toHaveLength(1);
    const sent = ctx.model.requests[0];
    expectSkillhostAdded(sent);
    // Skillhost's prompt first, the client's own system message kept after it.
    expect(sent.body.messages.map((message) => message.role)).toEqual(['system', 'system', 'user']);
    expect(sent.body.messages[1].content).toBe('CLIENT-SYSTEM');
    expect(sent.body.messages[2].content).toBe('hi');
  });

  it('streamText: the text arrives in pieces and ends with the usage', async () => {
    ctx.model.play({ text: 'A streamed answer in several pieces.' });
    const result = streamText({ model: model(), prompt: 'stream please', maxRetries: 0 });
    const pieces: string[] = [];
    for await (const piece of result.textStream) pieces.push(piece);
    expect(pieces.join('')).toBe('A streamed answer in several pieces.');
    expect(pieces.length).toBeGreaterThan(1);
    expect(await result.finishReason).toBe('stop');
    expect(await result.usage).toMatchObject({ inputTokens: 10, outputTokens: 5 });
    expectSkillhostAdded(ctx.model.requests[0]);
    expect(ctx.model.requests[0].body.stream).toBe(true);
  });

  it('generateText with a client tool: the gateway returns it, the AI SDK runs it, the model answers', async () => {
    ctx.model.play(
      { toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' }, id: 'call_w1' }] },
      { text: 'It is sunny in Oslo.' },
    );
    const asked: string[] = [];
    const result = await generateText({
      model: model(),
      prompt: 'weather in Oslo?',
      tools: { get_weather: weatherTool(asked) },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    expect(asked).toEqual(['Oslo']);
    expect(result.text).toBe('It is sunny in Oslo.');
    expect(result.steps).toHaveLength(2);
    expect(result.steps[0].toolCalls).toEqual([
      expect.objectContaining({ toolCallId: 'call_w1', toolName: 'get_weather', input: { city: 'Oslo' } }),
    ]);
    expect(result.steps[0].finishReason).toBe('tool-calls');
    // The first request offered the client's tool beside Skillhost's; the second carried the client's result.
    expect(ctx.model.requests).toHaveLength(2);
    expectSkillhostAdded(ctx.model.requests[0], ['get_weather']);
    expectSkillhostAdded(ctx.model.requests[1], ['get_weather']);
    const sentResult = ctx.model.requests[1].body.messages.find((message) => message.role === 'tool');
    expect(sentResult).toMatchObject({ tool_call_id: 'call_w1' });
    expect(String(sentResult?.content)).toContain('sunny in Oslo, 21 C');
  });

  it('streamText with a client tool: the same round trip, streamed', async () => {
    ctx.model.play(
      { toolCalls: [{ name: 'get_weather', arguments: { city: 'Bergen' }, id: 'call_w2' }] },
      { text: 'Rain is not expected in Bergen.' },
    );
    const asked: string[] = [];
    const result = streamText({
      model: model(),
      prompt: 'weather in Bergen?',
      tools: { get_weather: weatherTool(asked) },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    let text = '';
    for await (const piece of result.textStream) text += piece;
    expect(asked).toEqual(['Bergen']);
    expect(text).toBe('Rain is not expected in Bergen.');
    expect(await result.steps).toHaveLength(2);
    expect(ctx.model.requests).toHaveLength(2);
    const sentResult = ctx.model.requests[1].body.messages.find((message) => message.role === 'tool');
    expect(sentResult).toMatchObject({ tool_call_id: 'call_w2' });
    expect(String(sentResult?.content)).toContain('sunny in Bergen, 21 C');
  });
});

describe('a conversation over several calls', () => {
  // Regression, fixed since the hostile gateway pass found it. Was: the responses API refused the AI SDK's
  // `item_reference` items (it sends earlier answers by id while `store` is on) with 400 "input: Invalid input", so a
  // tool round trip whose first step had text, and every second call, failed.
  it.each(models)('%s: the next call resends the first answer and continues the same conversation', async (_n, m) => {
    ctx.model.play(
      { text: 'Let me look.', toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' }, id: 'call_c1' }] },
      { text: 'Sunny in Oslo.' },
      { text: 'Still sunny.' },
    );
    const asked: string[] = [];
    const tools = { get_weather: weatherTool(asked) };
    const first = await generateText({
      model: m(),
      prompt: 'weather in Oslo?',
      tools,
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    expect(first.text).toBe('Sunny in Oslo.');
    const second = await generateText({
      model: m(),
      messages: [
        { role: 'user', content: 'weather in Oslo?' },
        ...first.response.messages,
        { role: 'user', content: 'and tomorrow?' },
      ],
      tools,
      maxRetries: 0,
    });
    expect(second.text).toBe('Still sunny.');
    // The model saw the whole conversation: the first answer, the client's call and its result, the new question.
    const sent = ctx.model.requests[2].body.messages;
    expect(sent.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    expect(JSON.stringify(sent)).toContain('Sunny in Oslo.');
    expect(JSON.stringify(sent)).toContain('sunny in Oslo, 21 C');
  });
});

describe('skill calls stay inside Skillhost', () => {
  it.each(models)('%s: a skill activation is run by Skillhost, the client sees only the answer', async (_n, model) => {
    ctx.model.play(
      { toolCalls: [{ name: 'skills_activate', arguments: { name: 'pdf' } }] },
      { text: 'Following the PDF skill.' },
    );
    const asked: string[] = [];
    const result = await generateText({
      model: model(),
      prompt: 'fill the pdf form',
      tools: { get_weather: weatherTool(asked) },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    expect(result.text).toBe('Following the PDF skill.');
    expect(result.steps).toHaveLength(1);
    expect(result.toolCalls).toEqual([]);
    expect(asked).toEqual([]);
    // The model read the skill's instructions from the activation's result.
    expect(JSON.stringify(ctx.model.requests[1].body.messages)).toContain('PDF-BODY-MARKER');
  });
});
