import { describe, expect, it } from '@jest/globals';
import { AppError, ErrorCode } from '@skillhost/core';
import type { Principal } from '../../users/principal.js';
import type { ChatStore } from '../chat-store.js';
import type { ChatMessage } from '../chat.types.js';
import type { SkillToolsService } from '../skill-tools.service.js';
import type { TurnInput, TurnResult, TurnRunner } from '../turn-runner.js';
import type { ConversationItem } from './conversation-items.js';
import type { GatewayStore, StoredResponse } from './gateway-store.js';
import { type GatewayRequest, GatewayService } from './gateway.service.js';

const ANN: Principal = { userId: '00000000-0000-4000-8000-00000000000a', role: 'member' } as Principal;
const BOB: Principal = { userId: '00000000-0000-4000-8000-00000000000b', role: 'member' } as Principal;

function message(role: ChatMessage['role'], content: string): ChatMessage {
  return {
    id: `m-${content}`,
    chatId: 'chat',
    seq: 1,
    role,
    content,
    toolCards: [],
    invokedSkill: null,
    invokedSkills: [],
    command: null,
    model: 'scripted',
    createdAt: new Date(0),
  };
}

/** A turn runner answering `answer` (or failing with `fail`), recording what each turn was given. */
function fakeTurns(script: { answer?: string; fail?: Error } = {}) {
  const runs: { chatId: string; input: TurnInput }[] = [];
  const turns = {
    prepareModel: (name: string | undefined) => ({ name: name ?? 'scripted' }),
    run: async (_principal: Principal, chatId: string, input: TurnInput): Promise<TurnResult> => {
      runs.push({ chatId, input });
      if (script.fail) throw script.fail;
      return {
        userMessage: message('user', input.content),
        assistantMessage: message('assistant', script.answer ?? 'The answer.'),
        activatedSkills: [],
        invokedSkills: [],
        command: null,
        clientCalls: [],
        usage: { inputTokens: 3, outputTokens: 4 },
        activatedThisTurn: [],
        timing: { totalMs: 1, modelMs: 1, overheadMs: 0, dbMs: 0, skillsMs: 0 },
      };
    },
  };
  return { turns: turns as unknown as TurnRunner, runs };
}

/** Chats by id and owner, in memory. */
function fakeChats() {
  const owners = new Map<string, string>();
  let next = 0;
  const chats: Partial<ChatStore> = {
    createChat: async (ownerId) => {
      const id = `00000000-0000-4000-8000-${String(++next).padStart(12, '0')}`;
      owners.set(id, ownerId);
      return { id, title: null, ownerId, createdAt: new Date(0), updatedAt: new Date(0) };
    },
    findChat: async (id, ownerId) =>
      owners.get(id) === ownerId ? { id, title: null, ownerId, createdAt: new Date(0), updatedAt: new Date(0) } : null,
    deleteChat: async (id, ownerId) => owners.get(id) === ownerId && owners.delete(id),
  };
  return { chats: chats as ChatStore, owners };
}

function fakeStore() {
  const fingerprints = new Map<string, string>();
  const responses = new Map<string, StoredResponse>();
  const store: GatewayStore = {
    chatForFingerprint: async (userId, fingerprint) => fingerprints.get(`${userId}/${fingerprint}`) ?? null,
    rememberFingerprint: async (userId, fingerprint, chatId) => {
      fingerprints.set(`${userId}/${fingerprint}`, chatId);
    },
    saveResponse: async (response) => {
      responses.set(response.id, response);
    },
    findResponse: async (id, userId) => {
      const found = responses.get(id);
      return found?.userId === userId ? found : null;
    },
  };
  return { store, fingerprints, responses };
}

const skillTools = {
  wireNames: () => new Map([['skills_activate', 'skills.activate']]),
} as unknown as SkillToolsService;

function setup(script: { answer?: string; fail?: Error } = {}) {
  const turns = fakeTurns(script);
  const chats = fakeChats();
  const store = fakeStore();
  return { sut: new GatewayService(turns.turns, chats.chats, store.store, skillTools), ...turns, ...chats, ...store };
}

function request(items: ConversationItem[], overrides: Partial<GatewayRequest> = {}): GatewayRequest {
  return { model: 'scripted', items, tools: [], options: {}, ...overrides };
}

async function ask(sut: GatewayService, principal: Principal, req: GatewayRequest) {
  return sut.respond(principal, await sut.prepare(principal, req));
}

describe(GatewayService.name, () => {
  it('opens a chat for a first message, and finds it again from the history the client resends', async () => {
    const { sut, runs } = setup({ answer: 'Hello!' });
    const first = await ask(sut, ANN, request([{ type: 'user', text: 'hi' }]));
    const second = await ask(
      sut,
      ANN,
      request([
        { type: 'user', text: 'hi' },
        { type: 'assistant', text: 'Hello!' },
        { type: 'user', text: 'again' },
      ]),
    );
    expect(second.chatId).toBe(first.chatId);
    expect(runs[1].input).toMatchObject({ content: 'again', client: { newUserMessage: true } });
    // Another user resending the same words is in a conversation of their own.
    const bobs = await ask(
      sut,
      BOB,
      request([
        { type: 'user', text: 'hi' },
        { type: 'assistant', text: 'Hello!' },
        { type: 'user', text: 'again' },
      ]),
    );
    expect(bobs.chatId).not.toBe(first.chatId);
  });

  it("continues the chat an explicit id names, and refuses one that is not the caller's as not found", async () => {
    const { sut } = setup();
    const first = await ask(sut, ANN, request([{ type: 'user', text: 'x' }]));
    const named = await ask(sut, ANN, request([{ type: 'user', text: 'y' }], { conversationId: first.chatId }));
    expect(named.chatId).toBe(first.chatId);
    for (const conversationId of [first.chatId, 'not-a-uuid']) {
      const refused = await sut
        .prepare(BOB, request([{ type: 'user', text: 'z' }], { conversationId }))
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(AppError);
      expect((refused as AppError).code).toBe(ErrorCode.CONVERSATION_NOT_FOUND);
    }
  });

  it('stores a response with the conversation so far, which previous_response_id continues', async () => {
    const { sut, runs } = setup({ answer: 'One.' });
    const first = await ask(
      sut,
      ANN,
      request([{ type: 'user', text: 'start' }], { response: { instructions: null, store: true } }),
    );
    expect(first.response).toMatchObject({
      items: [{ type: 'user', text: 'start' }],
      output: [{ type: 'assistant', text: 'One.' }],
    });
    const next = await ask(
      sut,
      ANN,
      request([{ type: 'user', text: 'next' }], {
        previousResponseId: first.response!.id,
        response: { instructions: null, store: true },
      }),
    );
    expect(next.chatId).toBe(first.chatId);
    expect(runs[1].input.client?.history).toEqual([{ content: 'start' }, { content: 'One.' }]);
    await expect(sut.getResponse(BOB, first.response!.id)).rejects.toMatchObject({
      code: ErrorCode.RESPONSE_NOT_FOUND,
    });
  });

  it('keeps no response sent with store: false', async () => {
    const { sut, responses } = setup();
    await ask(sut, ANN, request([{ type: 'user', text: 'x' }], { response: { instructions: null, store: false } }));
    expect(responses.size).toBe(0);
  });

  it('deletes the chat it opened when the turn fails, so the request can be sent again as it was', async () => {
    const { sut, owners } = setup({ fail: new AppError(ErrorCode.MODEL_ERROR, 'down') });
    await expect(ask(sut, ANN, request([{ type: 'user', text: 'x' }]))).rejects.toMatchObject({
      code: ErrorCode.MODEL_ERROR,
    });
    expect(owners.size).toBe(0);
  });

  it('refuses a client tool named like a skill tool, naming both, before any chat is opened', async () => {
    const { sut, owners } = setup();
    const tools = [{ wireName: 'skills_activate', description: '', inputSchema: { type: 'object' } }];
    await expect(sut.prepare(ANN, request([{ type: 'user', text: 'x' }], { tools }))).rejects.toThrow(
      "the client's tool 'skills_activate' has the name of Skillhost's skill tool 'skills.activate'",
    );
    expect(owners.size).toBe(0);
  });

  it('reads a request bringing only tool results as the continuation of a turn, not a new user message', async () => {
    const { sut, runs } = setup();
    await ask(
      sut,
      ANN,
      request([
        { type: 'user', text: '/pdf weather?' },
        { type: 'tool-call', callId: 'c1', name: 'weather', arguments: '{}' },
        { type: 'tool-result', callId: 'c1', output: 'sunny' },
      ]),
    );
    expect(runs[0].input).toMatchObject({ content: '/pdf weather?', client: { newUserMessage: false } });
  });
});
