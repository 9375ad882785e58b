import type { UsageEvent } from '../skills/usage/skill-usage.js';
import { describe, expect, it } from '@jest/globals';
import type { Principal } from '../users/principal.js';
import {
  AppError,
  buildSnapshot,
  CatalogueChooser,
  type CatalogueSnapshot,
  ErrorCode,
  NO_COMMANDS,
  type SkillRecord,
  toolStyleFor,
} from '@skillhost/core';
import type { ModelConfig } from '../../config/app-config.js';
import type { NewActivation, NewMessage, TurnContext } from './chat-store.js';
import type { Chat, ChatActivation, ChatMessage } from './chat.types.js';
import type { ChatEvent } from './chat-events.service.js';
import type { ChatMetrics, TurnTiming } from './chat-metrics.js';
import type { ModelLoop, ModelLoopRequest } from './llm/model-loop.service.js';
import type { LoopTool, ToolLoopResult } from './llm/tool-loop.js';
import type { ToolCard } from './skill-tools.service.js';
import type { TurnAdmission } from './turn-admission.js';
import { TurnPlanner } from './turn-planner.js';
import { type TurnRunnerPorts, type TurnStore, type TurnTools, TurnRunner } from './turn-runner.js';

const CHAT = '0b5c7a52-2a3e-4b8e-9a57-5f0e8b1c2d3e';
const ALICE: Principal = { userId: 'alice', name: 'alice', role: 'user' } as unknown as Principal;
const MODEL: ModelConfig = {
  name: 'scripted',
  provider: 'openai-compatible',
  model: 'm',
  baseUrl: 'http://127.0.0.1:1',
  apiKey: undefined,
  apiKeyEnv: '',
  tools: true,
  timeoutMs: 1000,
  maxRetries: 0,
};

function view(): CatalogueSnapshot {
  const skill = (name: string): SkillRecord => ({
    name,
    description: `Does ${name} things.`,
    path: `/s/${name}`,
    skillFile: `/s/${name}/SKILL.md`,
    source: '/s',
    frontmatter: { name, description: name },
    warnings: [],
  });
  return buildSnapshot(
    { skills: [skill('pdf'), skill('docx')], invalid: [], collisions: [], excluded: [], warnings: [], directories: [] },
    { validation: 'standard', includeLocation: false, catalogueFormat: 'json' },
    { scannedAt: new Date(0), durationMs: 0 },
    NO_COMMANDS,
  );
}

function card(id: string, tool: string, overrides: Partial<ToolCard> = {}): ToolCard {
  return {
    id,
    tool,
    args: {},
    status: 'ok',
    summary: { skill: null, truncated: false },
    output: `${tool} output`,
    durationMs: 1,
    ...overrides,
  };
}

/** A chat's storage that records what a turn writes and stores it as given. */
function fakeStore(overrides: Partial<TurnStore> = {}) {
  const writes: { messages: NewMessage[]; activations: NewActivation[]; title: string | null }[] = [];
  const context: TurnContext = {
    history: [{ role: 'user', content: 'earlier' }],
    activated: [],
    pins: new Map(),
    userFilter: null,
    chatFilter: null,
  };
  const store: TurnStore = {
    findChat: async (id) => (id === CHAT ? ({ id } as Chat) : null),
    turnContext: async (id) => (id === CHAT ? context : null),
    recordTurn: async (_chatId, _ownerId, messages, activations, title) => {
      writes.push({ messages, activations, title });
      const stored = messages.map((message, seq) => ({ ...message, seq }) as unknown as ChatMessage);
      return {
        messages: stored,
        activatedSkills: activations.map((a) => ({ skillName: a.skillName, how: a.how }) as ChatActivation),
      };
    },
    ...overrides,
  };
  return { store, writes };
}

/** Skill tools that answer each call with a card, activating the skill an activation names. */
function fakeTools(): { tools: TurnTools; calls: { tool: string; args: unknown }[] } {
  const calls: { tool: string; args: unknown }[] = [];
  const tools: TurnTools = {
    execute: async (tool, args, options) => {
      calls.push({ tool: tool.name, args });
      const name = (args as { name?: string }).name;
      return {
        card: card(options.id ?? `server-${calls.length}`, tool.name, { args }),
        activated: tool.name === 'skills.activate' ? name : undefined,
        version: 'sha256:v1',
      };
    },
    errorCard: (tool, args, error) =>
      card('error-card', tool, { args, status: 'error', output: `Error (${error.code})` }),
    refusedCard: (id, tool, input, reason) =>
      card(id, tool, { args: input, status: 'error', output: `Error: ${reason}` }),
  };
  return { tools, calls };
}

/** A model that makes the scripted tool calls, then answers `text`; it records what it was sent. */
function scriptedModel(
  script: {
    calls?: { wireName: string; input: unknown }[];
    text?: string;
    result?: Partial<ToolLoopResult>;
    fail?: Error;
  } = {},
) {
  const requests: ModelLoopRequest[] = [];
  const models: ModelLoop = {
    run: async <T extends LoopTool>(_model: ModelConfig, request: ModelLoopRequest<T>) => {
      requests.push({ ...request, messages: [...request.messages] } as unknown as ModelLoopRequest);
      if (script.fail) throw script.fail;
      const ids: string[] = [];
      for (const [index, call] of (script.calls ?? []).entries()) {
        const id = `model-${index}`;
        ids.push(id);
        request.onEvent?.({ type: 'tool-call', toolCallId: id, wireName: call.wireName, input: call.input });
        const definition = request.tools.find((tool) => tool.wireName === call.wireName);
        if (definition === undefined)
          request.refused({ toolCallId: id, wireName: call.wireName, input: call.input }, `no tool ${call.wireName}`);
        else await request.execute({ toolCallId: id, wireName: call.wireName, input: call.input }, definition);
      }
      const text = script.text ?? 'The answer.';
      request.onEvent?.({ type: 'text-delta', text });
      return {
        text,
        stepLimitReached: false,
        truncated: false,
        toolCallIds: ids,
        clientCalls: [],
        usage: { inputTokens: undefined, outputTokens: undefined },
        ...script.result,
      };
    },
    complete: async () => 'completed',
  };
  return { models, requests };
}

function fakeMetrics() {
  const seen: string[] = [];
  const metrics: ChatMetrics = {
    observeTurn: (model, timing: TurnTiming) =>
      seen.push(`turn ${model ?? 'default'} ${timing.totalMs >= timing.modelMs ? 'timed' : 'untimed'}`),
    observeFailedTurn: (model, error) =>
      seen.push(`failed ${model ?? 'default'} ${AppError.isInstance(error) ? error.code : 'unknown'}`),
    observeToolCall: () => undefined,
    observeActivation: () => undefined,
  };
  return { metrics, seen };
}

function fakeAdmission(open = true) {
  const state = { entered: 0, released: 0 };
  const busy = () => new AppError(ErrorCode.BUSY, 'busy');
  const admission: TurnAdmission = {
    assertOpen: () => {
      if (!open) throw busy();
    },
    enter: () => {
      if (!open) throw busy();
      state.entered++;
      return () => void state.released++;
    },
  };
  return { admission, state };
}

function setup(overrides: Partial<TurnRunnerPorts> & { toolsEnabled?: boolean } = {}) {
  const chooser = new CatalogueChooser({
    catalogueBudgetTokens: 4000,
    catalogueMaxSkills: 50,
    catalogueFormat: 'json',
    searchTool: 'auto',
  });
  const planner = new TurnPlanner(
    {
      basePrompt: 'You are helpful.',
      explicitPrefixes: ['/'],
      skills: { catalogueFormat: 'json', includeLocation: false },
      toolsEnabled: overrides.toolsEnabled ?? true,
    },
    chooser,
    (v) => toolStyleFor('skillhost', v, { scripts: false }),
  );
  const store = fakeStore();
  const tools = fakeTools();
  const model = scriptedModel();
  const metrics = fakeMetrics();
  const admission = fakeAdmission();
  const published: ChatEvent[] = [];
  const snapshot = view();
  const usage: UsageEvent[] = [];
  const ports: TurnRunnerPorts = {
    settings: {
      models: { scripted: MODEL },
      defaultModel: 'scripted',
      historyMessages: 10,
      maxSteps: 5,
      maxAnswerBytes: 1000,
    },
    store: store.store,
    views: { enabled: true, viewFor: () => snapshot, userView: async () => snapshot },
    planner,
    tools: tools.tools,
    instructions: {
      activate: async (name) => ({ name, body: `${name.toUpperCase()}-INSTRUCTIONS`, version: 'sha256:v1' }),
    },
    events: { hasSubscribers: () => false, publish: (_chatId, event) => void published.push(event) },
    shapes: {
      done: (turn) => ({ answer: turn.assistantMessage.content }),
      error: (error) => ({ code: AppError.isInstance(error) ? error.code : 'INTERNAL' }),
    },
    admission: admission.admission,
    metrics: metrics.metrics,
    models: model.models,
    usage: { record: (events) => void usage.push(...events), flush: () => Promise.resolve() },
    ...overrides,
  };
  return { sut: new TurnRunner(ports), store, tools, model, metrics, admission, published, usage };
}

function listener() {
  const events: ChatEvent[] = [];
  return { events, onEvent: (event: ChatEvent) => void events.push(event), names: () => events.map((e) => e.event) };
}

describe(TurnRunner.name, () => {
  it(
    'stores the user message and the answer in one write, titled from the message, and answers with where the ' +
      'time went',
    async () => {
      const { sut, store, metrics, admission } = setup();
      const heard = listener();
      const result = await sut.run(ALICE, CHAT, { content: 'Summarise this PDF please' }, heard.onEvent);
      expect(store.writes).toHaveLength(1);
      expect(store.writes[0].messages).toEqual([
        { role: 'user', content: 'Summarise this PDF please', invokedSkills: [], command: null, model: 'scripted' },
        { role: 'assistant', content: 'The answer.', toolCards: [], model: 'scripted' },
      ]);
      expect(store.writes[0].title).toBe('Summarise this PDF please');
      expect(result.assistantMessage.content).toBe('The answer.');
      expect(Object.keys(result.timing).sort()).toEqual(['dbMs', 'modelMs', 'overheadMs', 'skillsMs', 'totalMs']);
      expect(heard.names()).toEqual(['text-delta', 'done']);
      expect(heard.events[1].data).toEqual({ answer: 'The answer.' });
      expect(metrics.seen).toEqual(['turn default timed']);
      expect(admission.state).toEqual({ entered: 1, released: 1 });
    },
  );

  it(
    "sends the model the chat history, then the user's words, with the planned system prompt and the " +
      "style's tools",
    async () => {
      const { sut, model } = setup();
      await sut.run(ALICE, CHAT, { content: 'hello' });
      const [request] = model.requests;
      expect(request.messages).toEqual([
        { role: 'user', content: 'earlier' },
        { role: 'user', content: 'hello' },
      ]);
      expect(request.system).toContain('skills_activate');
      expect(request.tools.map((tool) => tool.wireName)).toEqual([
        'skills_activate',
        'skills_readResource',
        'skills_listResources',
      ]);
    },
  );

  it(
    "activates an invoked skill with the style's call before the model runs, shown first and stored " + 'as explicit',
    async () => {
      const { sut, tools, model, store } = setup();
      const heard = listener();
      const result = await sut.run(ALICE, CHAT, { content: '/pdf split it' }, heard.onEvent);
      expect(tools.calls[0]).toEqual({ tool: 'skills.activate', args: { name: 'pdf' } });
      expect(model.requests[0].messages.map((m) => m.role)).toEqual(['user', 'user', 'assistant', 'tool']);
      expect(heard.names().slice(0, 2)).toEqual(['tool-call', 'tool-result']);
      expect(store.writes[0].activations).toEqual([{ skillName: 'pdf', how: 'explicit', version: 'sha256:v1' }]);
      expect(result.invokedSkills).toEqual(['pdf']);
    },
  );

  it(
    'counts the answered turn in the usage funnel: the skills its catalogue listed, the `/name` activation at its ' +
      'version, and the turn that used it; a failed turn counts nothing',
    async () => {
      const { sut, usage } = setup();
      await sut.run(ALICE, CHAT, { content: '/pdf split it' });
      expect(usage).toEqual([
        { skill: 'docx', model: 'scripted', version: undefined, counter: 'offered' },
        { skill: 'pdf', model: 'scripted', version: 'sha256:v1', counter: 'offered' },
        { skill: 'pdf', model: 'scripted', version: 'sha256:v1', counter: 'activatedSlash' },
        { skill: 'pdf', model: 'scripted', version: 'sha256:v1', counter: 'turns' },
      ]);
      const failing = setup({ models: scriptedModel({ fail: new AppError(ErrorCode.MODEL_ERROR, 'down') }).models });
      await expect(failing.sut.run(ALICE, CHAT, { content: '/pdf split it' })).rejects.toThrow('down');
      expect(failing.usage).toEqual([]);
    },
  );

  it(
    "without tools, puts an invoked skill's instructions in the prompt and stores it as a fallback " + 'activation',
    async () => {
      const { sut, model, store, tools } = setup();
      await sut.run(ALICE, CHAT, { content: '/pdf split it', tools: false });
      expect(model.requests[0].system).toContain('PDF-INSTRUCTIONS');
      expect(model.requests[0].tools).toEqual([]);
      expect(tools.calls).toEqual([]);
      expect(store.writes[0].activations).toEqual([{ skillName: 'pdf', how: 'fallback', version: 'sha256:v1' }]);
    },
  );

  it('goes on with an error card when a requested skill cannot be read', async () => {
    const missing = new AppError(ErrorCode.SKILL_NOT_FOUND, 'gone');
    const { sut, store } = setup({ instructions: { activate: () => Promise.reject(missing) } });
    await sut.run(ALICE, CHAT, { content: '/pdf split it', tools: false });
    const assistant = store.writes[0].messages[1];
    expect(assistant.toolCards).toEqual([
      expect.objectContaining({ tool: 'skills.activate', status: 'error', output: 'Error (SKILL_NOT_FOUND)' }),
    ]);
    expect(store.writes[0].activations).toEqual([]);
  });

  it(
    "runs the model's tool calls, stores their cards in the order it made them, and records what " + 'they activated',
    async () => {
      const { models } = scriptedModel({
        calls: [
          { wireName: 'made_up', input: {} },
          { wireName: 'skills_activate', input: { name: 'docx' } },
        ],
      });
      const { sut, store } = setup({ models });
      const heard = listener();
      await sut.run(ALICE, CHAT, { content: 'write a memo' }, heard.onEvent);
      const cards = store.writes[0].messages[1].toolCards ?? [];
      expect(cards.map((c) => [c.id, c.tool, c.status])).toEqual([
        ['model-0', 'made_up', 'error'],
        ['model-1', 'skills.activate', 'ok'],
      ]);
      expect(store.writes[0].activations).toEqual([{ skillName: 'docx', how: 'tool', version: 'sha256:v1' }]);
      expect(
        heard.events.find((e) => e.event === 'tool-call' && (e.data as { id: string }).id === 'model-1')?.data,
      ).toEqual({ id: 'model-1', tool: 'skills.activate', args: { name: 'docx' } });
    },
  );

  it('says so in the answer when it was cut or stopped at the step limit', async () => {
    const { models } = scriptedModel({ text: 'Partial', result: { truncated: true, stepLimitReached: true } });
    const { sut, store } = setup({ models });
    await sut.run(ALICE, CHAT, { content: 'go' });
    expect(store.writes[0].messages[1].content).toBe(
      "Partial\n\n[Truncated: the model's answer was longer than 1000 bytes (app.tools.max_answer_bytes); the " +
        'rest was not kept.]\n\n' +
        '[Stopped: this turn reached the limit of 5 model steps (app.tools.max_steps) before a final answer.]',
    );
  });

  it(
    "answers CHAT_NOT_FOUND for another user's chat: nothing is stored, the error is heard and counted, the turn " +
      'is counted out',
    async () => {
      const { sut, store, metrics, admission } = setup();
      const heard = listener();
      await expect(
        sut.run({ ...ALICE, userId: 'mallory' } as Principal, 'not-a-uuid', { content: 'hi' }, heard.onEvent),
      ).rejects.toMatchObject({ code: ErrorCode.CHAT_NOT_FOUND });
      expect(store.writes).toEqual([]);
      expect(heard.events).toEqual([{ event: 'error', data: { code: ErrorCode.CHAT_NOT_FOUND } }]);
      expect(metrics.seen).toEqual(['failed default CHAT_NOT_FOUND']);
      expect(admission.state).toEqual({ entered: 1, released: 1 });
    },
  );

  it(
    'stores nothing when the model fails, and answers CHAT_NOT_FOUND when the chat was deleted while the model ' +
      'answered',
    async () => {
      const failing = setup({ models: scriptedModel({ fail: new AppError(ErrorCode.MODEL_ERROR, 'down') }).models });
      await expect(failing.sut.run(ALICE, CHAT, { content: 'hi' })).rejects.toMatchObject({
        code: ErrorCode.MODEL_ERROR,
      });
      expect(failing.store.writes).toEqual([]);
      const deleted = setup({ store: fakeStore({ recordTurn: async () => null }).store });
      await expect(deleted.sut.run(ALICE, CHAT, { content: 'hi' })).rejects.toMatchObject({
        code: ErrorCode.CHAT_NOT_FOUND,
      });
    },
  );

  it('runs no turn when admission refuses it', async () => {
    const { admission } = fakeAdmission(false);
    const { sut, model } = setup({ admission });
    await expect(sut.run(ALICE, CHAT, { content: 'hi' })).rejects.toMatchObject({ code: ErrorCode.BUSY });
    expect(model.requests).toEqual([]);
  });

  it("relays the events to the chat's live subscribers as well as the caller", async () => {
    const published: ChatEvent[] = [];
    const { sut } = setup({
      events: { hasSubscribers: () => true, publish: (_chat, event) => void published.push(event) },
    });
    const heard = listener();
    await sut.run(ALICE, CHAT, { content: 'hi' }, heard.onEvent);
    expect(published).toEqual(heard.events);
    expect(published.map((e) => e.event)).toEqual(['text-delta', 'done']);
  });

  describe('prepare', () => {
    it('returns the model when the turn could start', async () => {
      const { sut } = setup();
      await expect(sut.prepare(ALICE, CHAT, { content: 'hi' })).resolves.toBe(MODEL);
    });

    it("refuses before any stream: no room, no model, or not the caller's chat", async () => {
      await expect(
        setup({ admission: fakeAdmission(false).admission }).sut.prepare(ALICE, CHAT, { content: 'hi' }),
      ).rejects.toMatchObject({ code: ErrorCode.BUSY });
      const noModel = setup({
        settings: { models: {}, defaultModel: undefined, historyMessages: 10, maxSteps: 5, maxAnswerBytes: 1000 },
      });
      await expect(noModel.sut.prepare(ALICE, CHAT, { content: 'hi' })).rejects.toMatchObject({
        code: ErrorCode.MODEL_NOT_CONFIGURED,
      });
      await expect(
        setup().sut.prepare(ALICE, '6f1c0a4e-1111-4b8e-9a57-5f0e8b1c2d3e', { content: 'hi' }),
      ).rejects.toMatchObject({ code: ErrorCode.CHAT_NOT_FOUND });
    });
  });
});
