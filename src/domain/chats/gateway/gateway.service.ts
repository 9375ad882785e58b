import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { AppError, ErrorCode, toStorableText } from '@skillhost/core';
import type { Principal } from '../../users/principal.js';
import type { ChatEvent } from '../chat-events.service.js';
import { isUuid } from '../../shared/uuid.js';
import { validationFailed } from '../../shared/validation-errors.js';
import { CHAT_STORE, type ChatStore } from '../chat-store.js';
import type { LoopTool, ModelCallOptions } from '../llm/tool-loop.js';
import { type TurnInput, type TurnListener, type TurnResult, TurnRunner } from '../turn-runner.js';
import {
  type ConversationItem,
  conversationFingerprint,
  modelMessagesOf,
  newInputStart,
} from './conversation-items.js';
import { GATEWAY_STORE, type GatewayStore, type StoredResponse } from './gateway-store.js';
import { SkillToolsService } from '../skill-tools.service.js';

/**
 * The responses API's `item_reference`: an output item of one of the caller's stored responses, sent by id instead of
 * whole (the AI SDK does so for every earlier answer while `store` is on).
 */
export interface ItemReference {
  type: 'item-reference';
  /** The id as the client sent it (for the error that names it). */
  id: string;
  /** Where the id points; undefined for an id this gateway never gave. */
  responseId?: string;
  index?: number;
}

/** One request to the gateway, in neither wire format (api/gateway reads both into this). */
export interface GatewayRequest {
  model?: string;
  /** The request's conversation: its history (as the client resends it) and its new input. */
  items: (ConversationItem | ItemReference)[];
  /** The client's own tools. */
  tools: LoopTool[];
  /** The tools of a responses client's namespaces, by the name the model knows (`<namespace>__<name>`). */
  namespaced?: ReadonlyMap<string, { namespace: string; name: string }>;
  options: ModelCallOptions;
  /** `X-Skillhost-Conversation` or `metadata.skillhost_conversation`: one of the caller's chats. */
  conversationId?: string;
  /** The responses API's `previous_response_id`: its conversation goes before `items`. */
  previousResponseId?: string;
  /** The responses API: the response's `instructions`, and whether to keep it (`store`). */
  response?: { instructions: string | null; store: boolean };
}

/** What the gateway answers, in neither wire format. */
export interface GatewayAnswer {
  /** The chat the conversation is (`X-Skillhost-Conversation` for the next request). */
  chatId: string;
  model: string;
  turn: TurnResult;
  /** The answer as items: the text (if any), then the calls of the client's tools. */
  output: ConversationItem[];
  /** The answer's text as the client has it (streamed: every piece streamed). */
  text: string;
  /** The responses API's response, as stored (or as it would have been, with `store: false`). */
  response?: StoredResponse;
}

/** Responses are named as OpenAI names them: `resp_` and a random part. */
function newResponseId(): string {
  return `resp_${randomBytes(24).toString('hex')}`;
}

export function conversationNotFound(id: string): AppError {
  return new AppError(
    ErrorCode.CONVERSATION_NOT_FOUND,
    `No conversation '${id.slice(0, 100)}' of yours: send the id an earlier answer gave in X-Skillhost-Conversation, ` +
      'or none to start one.',
    { conversation: id.slice(0, 100) },
  );
}

export function responseNotFound(id: string): AppError {
  return new AppError(
    ErrorCode.RESPONSE_NOT_FOUND,
    `No stored response '${id.slice(0, 100)}' of yours (responses sent with store: false are not kept).`,
    { response: id.slice(0, 100) },
  );
}

/**
 * The OpenAI-compatible gateway's turns: a request's conversation is one of the caller's Skillhost chats, found by the
 * explicit id, the previous response, or its resent history (see `conversationFingerprint`), else a new chat. The turn
 * is a chat turn (TurnRunner) over the client's messages: the chat gives its activations, whose instructions stay in
 * the prompt; the turn stores the new messages and activations; the conversation's fingerprint after the answer is
 * remembered for the client's next request.
 */
@Injectable()
export class GatewayService {
  constructor(
    private readonly turns: TurnRunner,
    @Inject(CHAT_STORE) private readonly chats: ChatStore,
    @Inject(GATEWAY_STORE) private readonly store: GatewayStore,
    private readonly skillTools: SkillToolsService,
  ) {}

  /** Checks what can fail before a streamed answer starts: the model, the conversation, the items. */
  async prepare(principal: Principal, request: GatewayRequest): Promise<PreparedRequest> {
    const previous =
      request.previousResponseId === undefined
        ? undefined
        : await this.previousResponse(principal, request.previousResponseId);
    const sent = await this.resolveReferences(principal, request.items);
    const items = previous === undefined ? sent : [...previous.items, ...previous.output, ...sent];
    if (!items.some((item) => item.type !== 'system'))
      throw validationFailed(['messages: send at least one user message']);
    // A response's instructions are its own: the next one in the conversation sends its own, or none.
    const instructions = request.response?.instructions;
    const messages = modelMessagesOf(instructions ? [{ type: 'system', text: instructions }, ...items] : items);
    const model = this.turns.prepareModel(request.model).name;
    this.checkToolNames(request.tools);
    const { chatId, created } = await this.conversation(principal, request, previous, items);
    const responseId = request.response === undefined ? undefined : newResponseId();
    return { request, items, messages, chatId, created, model, responseId, createdAt: new Date() };
  }

  /** Each `item_reference` replaced by the stored output item it names; one that names none is refused by its id. */
  private async resolveReferences(
    principal: Principal,
    items: readonly (ConversationItem | ItemReference)[],
  ): Promise<ConversationItem[]> {
    const resolved: ConversationItem[] = [];
    const responses = new Map<string, StoredResponse | null>();
    for (const item of items) {
      if (item.type !== 'item-reference') {
        resolved.push(item);
        continue;
      }
      const { responseId, index } = item;
      if (responseId !== undefined && !responses.has(responseId))
        responses.set(responseId, await this.store.findResponse(responseId, principal.userId));
      const found =
        responseId === undefined || index === undefined ? undefined : responses.get(responseId)?.output[index];
      if (found === undefined)
        throw validationFailed([
          `input: the item_reference '${item.id.slice(0, 100)}' names no output item of a stored response of yours; ` +
            'send the item itself',
        ]);
      resolved.push(found);
    }
    return resolved;
  }

  /** A client tool named like a skill tool the turn may offer would be run by neither side: refused, naming both. */
  private checkToolNames(tools: readonly LoopTool[]): void {
    const ours = this.skillTools.wireNames();
    for (const [index, tool] of tools.entries()) {
      const clash = ours.get(tool.wireName);
      if (clash !== undefined)
        throw validationFailed([
          `tools.${index}: the client's tool '${tool.wireName}' has the name of Skillhost's skill tool ` +
            `'${clash}' (${tool.wireName} on the wire, [app.tools] style); rename the client's tool`,
        ]);
    }
  }

  /**
   * Runs the turn. Streamed (`onEvent`), the answer's text is every piece streamed, as the client put it together
   * (text a model wrote before a skill call included): that is what its next request sends back.
   */
  async respond(principal: Principal, prepared: PreparedRequest, onEvent?: TurnListener): Promise<GatewayAnswer> {
    const { request, items, messages } = prepared;
    let streamed = '';
    const pieces = storablePieces();
    const relay = (event: ChatEvent, text: string) => {
      streamed += text;
      if (text !== '') onEvent!({ ...event, data: { ...(event.data as object), text } });
    };
    const listener: TurnListener | undefined =
      onEvent &&
      ((event) => {
        if (event.event === 'text-delta') relay(event, pieces.next((event.data as { text: string }).text));
        else onEvent(event);
      });
    const last = items[items.length - 1];
    const newUserMessage = last.type === 'user';
    const lastUser = [...items].reverse().find((item) => item.type === 'user');
    const turn = await this.runTurn(
      principal,
      prepared,
      {
        content: lastUser?.text ?? '',
        model: request.model,
        client: {
          messages,
          newUserMessage,
          history: items
            .slice(0, -1)
            .flatMap((item) => (item.type === 'user' || item.type === 'assistant' ? [{ content: item.text }] : [])),
          tools: request.tools,
          options: request.options,
        },
      },
      listener,
    );
    if (onEvent !== undefined) relay({ event: 'text-delta', data: { text: '' } }, pieces.end());
    const text = onEvent === undefined ? turn.assistantMessage.content : streamed;
    const output: ConversationItem[] = [];
    if (text !== '') output.push({ type: 'assistant', text });
    for (const call of turn.clientCalls)
      output.push({
        type: 'tool-call',
        callId: call.toolCallId,
        ...(request.namespaced?.get(call.wireName) ?? { name: call.wireName }),
        arguments: JSON.stringify(call.input ?? {}),
      });
    const after = conversationFingerprint([...items, ...output]);
    const { chatId, model, responseId } = prepared;
    if (after !== undefined) await this.store.rememberFingerprint(principal.userId, after, chatId);
    const answer: GatewayAnswer = { chatId, model, turn, output, text };
    if (request.response !== undefined && responseId !== undefined) {
      answer.response = {
        id: responseId,
        userId: principal.userId,
        chatId,
        model,
        createdAt: prepared.createdAt,
        items,
        output,
        instructions: request.response.instructions,
        usage: { inputTokens: turn.usage.inputTokens ?? null, outputTokens: turn.usage.outputTokens ?? null },
      };
      if (request.response.store) await this.store.saveResponse(answer.response);
    }
    return answer;
  }

  /** A failed turn stores nothing: a chat made for it goes too, and the request can be sent again as it was. */
  private async runTurn(
    principal: Principal,
    prepared: PreparedRequest,
    input: TurnInput,
    onEvent: TurnListener | undefined,
  ): Promise<TurnResult> {
    try {
      return await this.turns.run(principal, prepared.chatId, input, onEvent);
    } catch (error) {
      if (prepared.created) await this.chats.deleteChat(prepared.chatId, principal.userId).catch(() => undefined);
      throw error;
    }
  }

  async getResponse(principal: Principal, id: string): Promise<StoredResponse> {
    return this.previousResponse(principal, id);
  }

  private async previousResponse(principal: Principal, id: string): Promise<StoredResponse> {
    const stored = await this.store.findResponse(id, principal.userId);
    if (stored === null) throw responseNotFound(id);
    return stored;
  }

  /**
   * The chat this request continues: the one it names, its previous response's, the one whose conversation its history
   * is, or a new one. An id and a previous response of two different conversations are refused.
   */
  private async conversation(
    principal: Principal,
    request: GatewayRequest,
    previous: StoredResponse | undefined,
    items: readonly ConversationItem[],
  ): Promise<{ chatId: string; created: boolean }> {
    if (request.conversationId !== undefined) {
      const id = request.conversationId;
      if (!isUuid(id) || (await this.chats.findChat(id, principal.userId)) === null) throw conversationNotFound(id);
      if (previous !== undefined && previous.chatId !== id)
        throw validationFailed([
          'previous_response_id: the response is of another conversation than X-Skillhost-Conversation names',
        ]);
      return { chatId: id, created: false };
    }
    if (previous !== undefined) return { chatId: previous.chatId, created: false };
    const prior = conversationFingerprint(items.slice(0, newInputStart(items)));
    const known = prior === undefined ? null : await this.store.chatForFingerprint(principal.userId, prior);
    if (known !== null) return { chatId: known, created: false };
    return { chatId: (await this.chats.createChat(principal.userId, null)).id, created: true };
  }
}

/**
 * A streamed answer's pieces as they are stored (NUL and unpaired surrogates as U+FFFD, see `toStorableText`), so that
 * the history a client sends back is one it may send and the one Skillhost kept. A piece ending in the first half of a
 * surrogate pair waits for the next piece, which may hold the second half.
 */
function storablePieces(): { next(piece: string): string; end(): string } {
  let held = '';
  return {
    next(piece) {
      const text = held + piece;
      const last = text.charCodeAt(text.length - 1);
      const split = last >= 0xd800 && last <= 0xdbff;
      held = split ? text.slice(-1) : '';
      return toStorableText(split ? text.slice(0, -1) : text);
    },
    end: () => toStorableText(held),
  };
}

/** A request checked and placed in its conversation (`GatewayService.prepare`). */
export interface PreparedRequest {
  request: GatewayRequest;
  items: ConversationItem[];
  messages: ReturnType<typeof modelMessagesOf>;
  chatId: string;
  /** The chat was made for this request (deleted again if its turn fails). */
  created: boolean;
  /** The configured model that answers. */
  model: string;
  /** The responses API: the response's id, known before its stream starts. */
  responseId: string | undefined;
  createdAt: Date;
}
