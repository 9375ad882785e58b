import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import type { ModelMessage } from 'ai';
import type { Principal } from '../users/principal.js';
import { AppError, isCodeSkill, type SkillReadScope, type SkillTool, useSkillTool } from '@skillhost/core';
import { isUuid } from '../shared/uuid.js';
import type { ModelConfig } from '../../config/app-config.js';
import type { NewActivation, NewMessage, StoredTurn, TurnContext } from './chat-store.js';
import type { Chat, ChatActivation, ChatMessage, StoredCommand } from './chat.types.js';
import { chatNotFound } from './chat-errors.js';
import type { ChatEvent } from './chat-events.service.js';
import type { ChatMetrics, TurnTiming } from './chat-metrics.js';
import { type ModelSettings, requireModel } from './chat-models.js';
import { chatTitleFrom } from './chat-title.js';
import { type CatalogueViews, chatView } from './chat-view.js';
import type { LoopEvent, LoopTool, LoopToolCall, ModelCallOptions, ToolLoopResult } from './llm/tool-loop.js';
import type { ModelLoop } from './llm/model-loop.service.js';
import type { ToolCard, ToolRunOptions } from './skill-tools.service.js';
import { serverCallMessages, type ToolExecution } from '@skillhost/ai-sdk';
import type { TurnAdmission, TurnRelease } from './turn-admission.js';
import type { ActivationsInPrompt, TurnPlan, TurnPlanner } from './turn-planner.js';
import { annotateTurn, traceTurn } from './turn-telemetry.js';
import type { UsageRecorder } from '../skills/usage/skill-usage.js';
import { callerSkills, turnUsageEvents } from '../skills/usage/turn-usage.js';

export interface TurnInput {
  content: string;
  model?: string;
  tools?: boolean;
  /** A gateway request: the conversation as its client sent it (the chat's stored history is not read). */
  client?: ClientConversation;
}

/**
 * A conversation as an OpenAI-compatible client sends it: its whole history each time, without Skillhost's own tool
 * calls. The chat it continues gives the activations (their instructions stay in the prompt) and the skill filters.
 */
export interface ClientConversation {
  /** The client's messages as the model reads them, oldest first: its history, then its new input. */
  messages: ModelMessage[];
  /**
   * Whether the request ends with a new user message (`content`). Else it continues a round trip through the
   * client's own tools: its last messages are their results, and nothing the user typed is read for `/name`.
   */
  newUserMessage: boolean;
  /** The texts of the conversation's messages, oldest first: they rank a partial catalogue. */
  history: readonly { content: string }[];
  /** The client's own tools, offered beside the skill tools; a call of one ends the turn (`clientCalls`). */
  tools: readonly LoopTool[];
  options: ModelCallOptions;
}

/** What one turn answers (and the `done` event carries). */
export interface TurnOutcome {
  /** Null for a gateway request that brought only its own tools' results (no new user message). */
  userMessage: ChatMessage | null;
  assistantMessage: ChatMessage;
  activatedSkills: readonly ChatActivation[];
  invokedSkills: readonly string[];
  /** The command the message ran: its name, arguments, and the prompt the model got. */
  command: StoredCommand | null;
  /** The calls of the client's own tools the turn ended with (the gateway's clients run them). */
  clientCalls: readonly LoopToolCall[];
  /** Tokens the model used over the turn's steps, as its provider counted them. */
  usage: ToolLoopResult['usage'];
  /**
   * The skills this turn activated (by a model's or a code skill's tool call, `/name` or a command), each once, in
   * order.
   */
  activatedThisTurn: readonly string[];
}

/** A turn's answer, and where its time went. */
export interface TurnResult extends TurnOutcome {
  timing: TurnTiming;
}

export type TurnListener = (event: ChatEvent) => void;

/** How many code skills may call the chat's model in one turn (each call is a model request the turn pays for). */
export const MAX_CODE_LLM_CALLS = 10;

/** The configuration values a turn reads. */
export interface TurnSettings extends ModelSettings {
  historyMessages: number;
  maxSteps: number;
  maxAnswerBytes: number;
}

/** The chats' storage as a turn uses it (part of `ChatStore`). */
export interface TurnStore {
  findChat(id: string, ownerId: string): Promise<Chat | null>;
  turnContext(chatId: string, ownerId: string, historyCount: number): Promise<TurnContext | null>;
  recordTurn(
    chatId: string,
    ownerId: string,
    messages: NewMessage[],
    activations: NewActivation[],
    title: string | null,
  ): Promise<StoredTurn | null>;
}

/** The skill tools as a turn runs them (SkillToolsService). */
export interface TurnTools {
  execute(tool: SkillTool, args: unknown, options: ToolRunOptions): Promise<ToolExecution>;
  errorCard(toolName: string, args: unknown, error: AppError): ToolCard;
  refusedCard(id: string, toolName: string, input: unknown, reason: string): ToolCard;
}

/** Reads a skill's instructions for the prompt when the model gets no tools (SkillResourcesService). */
export interface SkillInstructions {
  activate(name: string, scope: SkillReadScope): Promise<{ name: string; body: string; version?: string }>;
}

/** The chat's live subscribers, whichever instance they are on (ChatEventsService). */
export interface TurnEventBus {
  hasSubscribers(chatId: string): boolean;
  publish(chatId: string, event: ChatEvent): void;
}

/** Where the app gives the chats its doors' `TurnEventShapes` (see ChatModule.forRoot). */
export const TURN_EVENT_SHAPES = Symbol('TURN_EVENT_SHAPES');

/**
 * The wire shapes of the `done` and `error` events (the API's presenters): subscribers get them as the door that ran
 * the turn answers.
 */
export interface TurnEventShapes {
  done(turn: TurnOutcome): unknown;
  /** The error as `principal` may read it (the caller and the chat's subscribers are the same user). */
  error(error: unknown, principal: Principal): unknown;
}

export interface TurnRunnerPorts {
  settings: TurnSettings;
  store: TurnStore;
  views: CatalogueViews;
  planner: TurnPlanner;
  tools: TurnTools;
  instructions: SkillInstructions;
  events: TurnEventBus;
  shapes: TurnEventShapes;
  admission: TurnAdmission;
  metrics: ChatMetrics;
  models: ModelLoop;
  /** The skills usage funnel (counted in memory, written in batches). */
  usage: UsageRecorder;
}

/** One turn in flight: what it was asked, its plan, and what it has gathered so far. */
interface Turn {
  chatId: string;
  principal: Principal;
  input: TurnInput;
  model: ModelConfig;
  plan: TurnPlan;
  onEvent: TurnListener | undefined;
  messages: ModelMessage[];
  cards: ToolCard[];
  /**
   * What the turn activated, in the order the activations happened: a code skill's own calls' (as `tool`) before its
   * own, which ends after them. Stored as the chat's, so the pins they set in the turn hold in the next ones.
   */
  activations: NewActivation[];
  /** A code skill's promptInjection joins the system prompt for the rest of the turn, from the next step on. */
  injections: string[];
  toolOptions: ToolRunOptions;
}

/** Where the time went, gathered step by step. */
interface Clock {
  started: number;
  dbMs: number;
  skillsMs: number;
  toolMs: number;
  modelMs: number;
}

/**
 * One chat turn, in named steps: admit, read the chat, plan (TurnPlanner), activate the requested
 * skills, run the model's tool loop, store, answer.
 */
export class TurnRunner {
  private readonly logger = new Logger(TurnRunner.name);

  constructor(private readonly ports: TurnRunnerPorts) {}

  /**
   * Checks what can be checked before a turn starts (room for it, a model is there, a command's
   * prompt is not too long, the caller's chat exists) and returns the model: a streamed turn answers
   * these as plain JSON errors, before the stream begins.
   */
  async prepare(principal: Principal, id: string, input: Pick<TurnInput, 'model' | 'content'>): Promise<ModelConfig> {
    const { admission, settings, views, planner, store } = this.ports;
    admission.assertOpen();
    const model = requireModel(settings, input.model);
    // Reading the message as the turn will refuses a command that expands too far.
    planner.readMessage(input.content, views.enabled ? views.viewFor(undefined, []) : undefined);
    if (!isUuid(id) || (await store.findChat(id, principal.userId)) === null) throw chatNotFound(id);
    return model;
  }

  /** What a gateway request checks before its stream starts: room for a turn, and the model. */
  prepareModel(name: string | undefined): ModelConfig {
    this.ports.admission.assertOpen();
    return requireModel(this.ports.settings, name);
  }

  /**
   * One turn. Nothing is stored until the model has answered; then one statement stores the user
   * message, the assistant message with its tool cards, the activations, and (for a chat without a
   * title) the title taken from the user's message (chat-title.ts). A turn that fails
   * (model error, timeout, database gone) stores nothing at all, so it can simply be sent again.
   *
   * `onEvent` hears the turn's events (ending with `done` or `error`); subscribers of the chat hear
   * them too, from the moment the caller is known to own it.
   *
   * The turn is counted in by the admission until it has been answered and stored: BUSY (503) past
   * app.limits.max_concurrent_turns or once shutdown began; shutdown waits for counted turns.
   */
  async run(principal: Principal, id: string, input: TurnInput, onEvent?: TurnListener): Promise<TurnResult> {
    const { admission, metrics, shapes } = this.ports;
    let emit = onEvent;
    let release: TurnRelease | undefined;
    try {
      release = admission.enter();
      const door = input.client === undefined ? 'chat' : 'gateway';
      const result = await traceTurn({ chatId: id, door }, input.model, () =>
        this.runTurn(principal, id, input, (listener) => (emit = listener), onEvent),
      );
      metrics.observeTurn(input.model, result.timing);
      emit?.({ event: 'done', data: shapes.done(result) });
      return result;
    } catch (error) {
      metrics.observeFailedTurn(input.model, error);
      emit?.({ event: 'error', data: shapes.error(error, principal) });
      throw error;
    } finally {
      release?.();
    }
  }

  private async runTurn(
    principal: Principal,
    id: string,
    input: TurnInput,
    useListener: (listener: TurnListener | undefined) => void,
    caller: TurnListener | undefined,
  ): Promise<TurnResult> {
    const clock: Clock = { started: performance.now(), dbMs: 0, skillsMs: 0, toolMs: 0, modelMs: 0 };
    const model = requireModel(this.ports.settings, input.model);
    // A gateway's client sends the history itself.
    const context = await this.readChat(principal, id, input.client === undefined ? undefined : 0);
    const onEvent = this.listenerFor(id, caller);
    useListener(onEvent);
    clock.dbMs = performance.now() - clock.started;
    const turn = await this.startTurn(principal, id, input, model, context, onEvent);
    annotateTurn(model.name, turn.plan.style?.style, model.provider);
    const activated = await this.activateRequested(turn, clock);
    const forcedCount = turn.cards.length;
    if (input.client !== undefined) activated.kept = await this.keptInstructions(turn);
    const { system, catalogue } = this.ports.planner.systemPrompt(turn.plan, activated);
    const result = await this.runModel(turn, system, clock);
    const answer = this.finalAnswer(id, result, onEvent);
    inModelOrder(turn.cards, forcedCount, result.toolCallIds);
    turn.cards.push(...result.clientCalls.map(clientCallCard));
    const stored = await this.store(turn, answer, clock);
    this.recordUsage(turn, catalogue?.listed ?? []);
    const assistantMessage = stored.messages[stored.messages.length - 1];
    const { invocation, command } = turn.plan;
    return {
      userMessage: stored.messages.length > 1 ? stored.messages[0] : null,
      assistantMessage,
      activatedSkills: stored.activatedSkills,
      invokedSkills: invocation.skills,
      command: command?.stored ?? null,
      clientCalls: result.clientCalls,
      usage: result.usage,
      activatedThisTurn: [...new Set(turn.activations.map((activation) => activation.skillName))],
      timing: timingOf(clock),
    };
  }

  /** The answered turn's part of the skills usage funnel: what its catalogue listed, activated, read, ran, failed. */
  private recordUsage(turn: Turn, offered: readonly string[]): void {
    const { view } = turn.plan;
    if (view === undefined) return;
    this.ports.usage.record(
      turnUsageEvents({
        model: turn.model.name,
        gateway: turn.input.client !== undefined,
        offered,
        activations: turn.activations,
        cards: turn.cards,
        ...callerSkills(view, turn.toolOptions.pins),
      }),
    );
  }

  /**
   * The instructions of the skills the chat activated before, for a client that resends its history without the tool
   * results that carried them. A skill gone since is left out (the model can still activate what the catalogue lists).
   */
  private async keptInstructions(turn: Turn): Promise<{ name: string; body: string }[]> {
    const kept: { name: string; body: string }[] = [];
    for (const name of turn.plan.activated) {
      try {
        const skill = await this.ports.instructions.activate(name, { snapshot: turn.toolOptions.snapshot });
        kept.push({ name: skill.name, body: skill.body });
      } catch (error) {
        if (!AppError.isInstance(error)) throw error;
      }
    }
    return kept;
  }

  /** The chat's history, activations, pins and filters in one query; CHAT_NOT_FOUND when it is not the caller's. */
  private async readChat(
    principal: Principal,
    id: string,
    historyCount = this.ports.settings.historyMessages,
  ): Promise<TurnContext> {
    const context = isUuid(id) ? await this.ports.store.turnContext(id, principal.userId, historyCount) : null;
    if (context === null) throw chatNotFound(id);
    return context;
  }

  /** The turn's plan, and the model's messages so far: the chat's history and the user's words. */
  private async startTurn(
    principal: Principal,
    chatId: string,
    input: TurnInput,
    model: ModelConfig,
    context: TurnContext,
    onEvent: TurnListener | undefined,
  ): Promise<Turn> {
    const view = await chatView(this.ports.views, principal.userId, context);
    const { client } = input;
    const planned = this.ports.planner.plan({
      content: input.content,
      view,
      model,
      tools: input.tools,
      activated: context.activated,
      history: client?.history ?? context.history,
    });
    // Tool results coming back are not the user's words: nothing in them is a `/name`.
    const plan =
      client === undefined || client.newUserMessage
        ? planned
        : { ...planned, requested: [], command: undefined, invocation: { ...planned.invocation, skills: [] } };
    const messages = client === undefined ? chatMessages(context, plan.prompt) : clientMessages(client, plan.prompt);
    const turn: Turn = {
      chatId,
      principal,
      input,
      model,
      plan,
      onEvent,
      messages,
      cards: [],
      activations: [],
      injections: [],
      toolOptions: {},
    };
    turn.toolOptions = this.toolOptions(turn, new Map(context.pins));
    return turn;
  }

  /**
   * What the turn's tool calls get: the chat, its view and model (for code skills), and where their cards and prompt
   * injections go.
   */
  private toolOptions(turn: Turn, pins: Map<string, string>): ToolRunOptions {
    let llmCalls = 0;
    return {
      chatId: turn.chatId,
      // The turn's scripts, its code skills' included, share the turn's cap.
      caller: { userId: turn.principal.userId, turnId: randomUUID() },
      snapshot: turn.plan.view,
      pins,
      userMessage: turn.plan.invocation.text,
      llm: (prompt, options) => {
        if (++llmCalls > MAX_CODE_LLM_CALLS)
          return Promise.reject(new Error(`llm.complete may be called at most ${MAX_CODE_LLM_CALLS} times in a turn`));
        return this.ports.models.complete(turn.model, prompt, options.system);
      },
      injectPrompt: (text) => turn.injections.push(text),
      // A code skill's own call: its card after the code skill's, and what it activated is the chat's, as the model's
      // own activation would be (the call has already pinned it for the rest of the turn).
      onInnerCall: ({ card, activated, version }) => {
        turn.cards.push(card);
        if (activated !== undefined) turn.activations.push({ skillName: activated, how: 'tool', version });
        turn.onEvent?.({ event: 'tool-result', data: card });
      },
    };
  }

  /**
   * The skills the user asked for (`/a $b`, or a command's required ones), activated by the server
   * before the model runs. With tools, each is the style's activation call, after the user's words,
   * so the skill is active and its card shown whatever the model then does (no reliance on a
   * provider honouring a forced tool choice). Without tools, the bodies go into the system prompt.
   * A code skill runs instead (its card, its result in the system prompt). A skill that cannot be
   * activated is an error card naming it; the turn goes on.
   */
  private async activateRequested(turn: Turn, clock: Clock): Promise<Required<ActivationsInPrompt>> {
    const added: Required<ActivationsInPrompt> = { fallback: [], ran: [], kept: [] };
    const started = performance.now();
    for (const { skillName, how } of turn.plan.requested) {
      const record = turn.plan.view?.skills.get(skillName);
      if (record !== undefined && isCodeSkill(record)) await this.runCodeSkill(turn, skillName, how, added);
      else if (turn.plan.style !== undefined) await this.callActivation(turn, skillName, how);
      else await this.activateIntoPrompt(turn, skillName, how, added);
    }
    clock.skillsMs += performance.now() - started;
    return added;
  }

  /** A requested code skill runs with the user's words; its card goes before the cards of the calls it made. */
  private async runCodeSkill(
    turn: Turn,
    skillName: string,
    how: NewActivation['how'],
    added: Required<ActivationsInPrompt>,
  ): Promise<void> {
    const at = turn.cards.length;
    const { card, activated, version } = await this.ports.tools.execute(
      useSkillTool,
      { skill_name: skillName, input: turn.toolOptions.userMessage ?? '' },
      turn.toolOptions,
    );
    this.showServerCall(turn, card, at);
    added.ran.push({ name: skillName, output: card.output });
    if (activated) turn.activations.push({ skillName: activated, how, version });
  }

  /**
   * With tools: the style's activation call, made by the server, in the model's history as if the model had made it.
   */
  private async callActivation(turn: Turn, skillName: string, how: NewActivation['how']): Promise<void> {
    const { tool, args } = turn.plan.style!.activation(skillName);
    const { card, activated, version } = await this.ports.tools.execute(tool, args, turn.toolOptions);
    this.showServerCall(turn, card, turn.cards.length);
    if (activated) turn.activations.push({ skillName: activated, how, version });
    turn.messages.push(...serverCallMessages(card, tool.wireName, args));
  }

  /** Without tools: the skill's instructions go into this turn's system prompt, or an error card names the skill. */
  private async activateIntoPrompt(
    turn: Turn,
    skillName: string,
    how: NewActivation['how'],
    added: Required<ActivationsInPrompt>,
  ): Promise<void> {
    try {
      const skill = await this.ports.instructions.activate(skillName, {
        snapshot: turn.toolOptions.snapshot,
        pins: turn.toolOptions.pins,
      });
      added.fallback.push({ name: skill.name, body: skill.body });
      turn.activations.push({
        skillName: skill.name,
        how: how === 'explicit' ? 'fallback' : how,
        version: skill.version,
      });
    } catch (error) {
      if (!AppError.isInstance(error)) throw error;
      const card = this.ports.tools.errorCard('skills.activate', { name: skillName }, error);
      turn.onEvent?.({ event: 'tool-result', data: card });
      turn.cards.push(card);
    }
  }

  private showServerCall(turn: Turn, card: ToolCard, at: number): void {
    turn.onEvent?.({ event: 'tool-call', data: { id: card.id, tool: card.tool, args: card.args } });
    turn.onEvent?.({ event: 'tool-result', data: card });
    turn.cards.splice(at, 0, card);
  }

  /** The model's tool loop; the skill calls it makes run here, and their time is the skills', not the model's. */
  private async runModel(turn: Turn, system: string, clock: Clock): Promise<ToolLoopResult> {
    const { style } = turn.plan;
    const started = performance.now();
    const result = await this.ports.models.run(turn.model, {
      system,
      systemForStep: () => (turn.injections.length === 0 ? system : `${system}\n\n${turn.injections.join('\n\n')}`),
      messages: turn.messages,
      tools: style?.definitions ?? [],
      clientTools: turn.input.client?.tools,
      callOptions: turn.input.client?.options,
      maxSteps: this.ports.settings.maxSteps,
      maxAnswerBytes: this.ports.settings.maxAnswerBytes,
      execute: async (call, definition) => {
        // The definitions are the style's own, so the lookup always finds the tool.
        const tool = style!.byWireName(definition.wireName)!;
        const execution = await this.ports.tools.execute(tool, call.input, {
          ...turn.toolOptions,
          id: call.toolCallId,
        });
        clock.toolMs += execution.card.durationMs;
        turn.cards.push(execution.card);
        if (execution.activated)
          turn.activations.push({ skillName: execution.activated, how: 'tool', version: execution.version });
        turn.onEvent?.({ event: 'tool-result', data: execution.card });
        return execution.card.output;
      },
      refused: (call, reason) => {
        // The card says what the model was told: for an unknown tool, the SDK's reason names the available ones.
        const card = this.ports.tools.refusedCard(
          call.toolCallId,
          style?.byWireName(call.wireName)?.name ?? call.wireName,
          call.input,
          reason,
        );
        turn.cards.push(card);
        turn.onEvent?.({ event: 'tool-result', data: card });
      },
      onEvent: turn.onEvent && ((event) => this.relayLoopEvent(turn, event)),
    });
    clock.modelMs = performance.now() - started - clock.toolMs;
    return result;
  }

  private relayLoopEvent(turn: Turn, event: LoopEvent): void {
    if (event.type === 'text-delta') turn.onEvent?.({ event: 'text-delta', data: { text: event.text } });
    else {
      const name = turn.plan.style?.byWireName(event.wireName)?.name ?? event.wireName;
      turn.onEvent?.({ event: 'tool-call', data: { id: event.toolCallId, tool: name, args: event.input ?? null } });
    }
  }

  /** One statement: both messages, the activations, and the title of an untitled chat. */
  private async store(turn: Turn, answer: string, clock: Clock): Promise<StoredTurn> {
    const { chatId, principal, input, model, plan } = turn;
    const started = performance.now();
    const assistant: NewMessage = { role: 'assistant', content: answer, toolCards: turn.cards, model: model.name };
    const user: NewMessage = {
      role: 'user',
      content: input.content,
      invokedSkills: plan.invocation.skills,
      command: plan.command?.stored ?? null,
      model: model.name,
    };
    const stored = await this.ports.store.recordTurn(
      chatId,
      principal.userId,
      input.client === undefined || input.client.newUserMessage ? [user, assistant] : [assistant],
      turn.activations,
      chatTitleFrom(input.content),
    );
    clock.dbMs += performance.now() - started;
    // Deleted while the model was answering: nothing was stored.
    if (stored === null) throw chatNotFound(chatId);
    return stored;
  }

  /** The model's text as stored and answered, with a notice when it was cut or stopped at the step limit. */
  private finalAnswer(chatId: string, result: ToolLoopResult, onEvent: TurnListener | undefined): string {
    const { maxAnswerBytes, maxSteps } = this.ports.settings;
    let answer = result.text.trim();
    if (result.truncated) {
      const notice =
        `[Truncated: the model's answer was longer than ${maxAnswerBytes} bytes (app.tools.max_answer_bytes); the ` +
        `rest was not kept.]`;
      answer = `${answer}\n\n${notice}`;
      onEvent?.({ event: 'text-delta', data: { text: `\n\n${notice}` } });
      this.logger.warn(`Chat ${chatId}: the model's answer was cut at ${maxAnswerBytes} bytes`);
    }
    if (result.stepLimitReached) {
      answer =
        `${answer}${answer ? '\n\n' : ''}[Stopped: this turn reached the limit of ` +
        `${maxSteps} model steps (app.tools.max_steps) before a final answer.]`;
      this.logger.warn(`Chat ${chatId}: turn stopped at the step limit (${maxSteps})`);
    }
    return answer;
  }

  /** The caller's listener and the chat's live subscribers, as one; undefined when nobody listens. */
  private listenerFor(chatId: string, caller: TurnListener | undefined): TurnListener | undefined {
    const { events } = this.ports;
    if (!events.hasSubscribers(chatId)) return caller;
    return (event) => {
      caller?.(event);
      events.publish(chatId, event);
    };
  }
}

/** A chat's turn: its stored history, then the user's words as the model gets them. */
function chatMessages(context: TurnContext, prompt: string): ModelMessage[] {
  const messages: ModelMessage[] = context.history.map((m) => ({ role: m.role, content: m.content }));
  messages.push({ role: 'user', content: prompt });
  return messages;
}

/** A gateway's turn: the client's messages, its last one (a new user message) as the plan reads it. */
function clientMessages(client: ClientConversation, prompt: string): ModelMessage[] {
  const messages = [...client.messages];
  if (client.newUserMessage) messages[messages.length - 1] = { role: 'user', content: prompt };
  return messages;
}

/** What a call of the client's own tool shows in the chat: made by the model, run by the client. */
function clientCallCard(call: LoopToolCall): ToolCard {
  return {
    id: call.toolCallId,
    tool: `client.${call.wireName}`,
    args: call.input,
    status: 'ok',
    summary: { skill: null, truncated: false },
    output: "(run by the client: this conversation's next request carries its result)",
    durationMs: 0,
  };
}

function timingOf(clock: Clock): TurnTiming {
  const totalMs = performance.now() - clock.started;
  return {
    totalMs,
    modelMs: clock.modelMs,
    overheadMs: totalMs - clock.modelMs,
    dbMs: clock.dbMs,
    skillsMs: clock.skillsMs + clock.toolMs,
  };
}

/**
 * The model's cards in the order it made the calls: a call the SDK refused is reported after the
 * step's executed calls, but belongs where the model made it. The server's own calls stay first.
 */
function inModelOrder(cards: ToolCard[], forcedCount: number, toolCallIds: readonly string[]): void {
  const position = new Map(toolCallIds.map((id, index) => [id, index]));
  const at = (card: ToolCard) => position.get(card.id) ?? toolCallIds.length;
  const modelCards = cards.slice(forcedCount).sort((a, b) => at(a) - at(b));
  cards.splice(forcedCount, modelCards.length, ...modelCards);
}
