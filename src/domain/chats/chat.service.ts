import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { ModelMessage } from 'ai';
import type { Principal } from '../users/principal.js';
import { AppError, ErrorCode } from '@skillhost/core';
import { errorReaderOf, toErrorBody } from '../../api/errors/app-exception.filter.js';
import { cutProblem } from '../shared/problem-list.js';
import { isUuid } from '../shared/uuid.js';
import { validationFailed } from '../../api/http/pipes/validation.pipe.js';
import { APP_CONFIG, type AppConfig, type CatalogueFormat, type ModelConfig } from '../../config/app-config.js';
import { MetricsService } from '../../infra/observability/metrics.service.js';
import { TurnGate, type TurnRelease } from './turn-gate.service.js';
import { ChatRepository, type NewActivation, type OwnedChat, type Page, type TurnContext } from '../../infra/database/chat.repository.js';
import type { StoredSkillFilter } from '../../infra/database/skill-store.repository.js';
import type { ChatActivatedSkillEntity } from '../../infra/database/entities/chat-activated-skill.entity.js';
import type { ChatMessageEntity } from '../../infra/database/entities/chat-message.entity.js';
import type { ChatEntity } from '../../infra/database/entities/chat.entity.js';
import { SkillRegistryService } from '../skills/skill-registry.service.js';
import { SkillResourcesService } from '../skills/skill-resources.service.js';
import { SkillStoreService } from '../skills/store/skill-store.service.js';
import type { CatalogueChoice } from '../skills/ranking/catalogue-choice.js';
import { SkillSearchService } from '../skills/ranking/skill-search.service.js';
import { type SkillFilterResult, SkillLifecycleService } from '../skills/store/skill-lifecycle.service.js';
import { type ChatEvent, ChatEventsService } from './chat-events.service.js';
import { chatTitleFrom } from './chat-title.js';
import { presentCatalogueChoice, presentTurn, type TurnOutcome } from '../../api/presenters/chat.presenter.js';
import { expandTemplate } from '@skillhost/core';
import type { CatalogueSnapshot } from '../skills/catalogue-snapshot.js';
import { isCodeSkill } from '../skills/skill.types.js';
import type { StoredCommand } from '../../infra/database/entities/chat-message.entity.js';
import { type Invocation, parseInvocation } from '@skillhost/core';
import { LanguageModelFactory } from '../../infra/llm/language-model.factory.js';
import { completeOnce, type LoopEvent, runToolLoop, type ToolLoopResult } from './llm/tool-loop.js';
import { assembleSystemPrompt, type PromptCommand } from '@skillhost/core';
import { buildSkillsPrompt } from './skills-prompt.js';
import { type ToolCard, type ToolRunOptions, SkillToolsService } from './skill-tools.service.js';
import { serverCallMessages } from './tools/run-tool.js';
import { searchTool } from './tools/search-tool.js';
import { useSkillTool } from './tools/style-tools.js';
import type { ToolStyleSet } from './tools/tool-styles.js';

export interface TurnInput {
  content: string;
  model?: string;
  tools?: boolean;
}

/** A turn's answer, and where its time went. */
export interface TurnResult extends TurnOutcome {
  timing: TurnTiming;
}

/**
 * Where a turn's time went: waiting for the model, and Skillhost's own overhead (everything else),
 * of which the database statements and the skill tools are broken out.
 */
export interface TurnTiming {
  totalMs: number;
  modelMs: number;
  overheadMs: number;
  dbMs: number;
  skillsMs: number;
}

/** One chat turn, the chat API, and the external-loop tools: the business rules of ChatModule. */
@Injectable()
export class ChatService {
  private readonly logger = new Logger(ChatService.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly chats: ChatRepository,
    private readonly registry: SkillRegistryService,
    private readonly resources: SkillResourcesService,
    private readonly skillTools: SkillToolsService,
    private readonly events: ChatEventsService,
    private readonly turns: TurnGate,
    private readonly metrics: MetricsService,
    private readonly skillStore: SkillStoreService,
    private readonly lifecycle: SkillLifecycleService,
    private readonly searching: SkillSearchService,
    private readonly models: LanguageModelFactory,
  ) {}

  /** A title of white space only is none: the chat is then titled from its first message. */
  createChat(principal: Principal, title?: string): Promise<ChatEntity> {
    return this.chats.createChat(principal.userId, title === undefined || title.trim() === '' ? null : title);
  }

  listChats(principal: Principal, limit = 50, offset = 0): Promise<Page<ChatEntity>> {
    return this.chats.listChats(principal.userId, limit, offset);
  }

  /** Every user's chats, for operators (the route is admin-only). */
  listAllChats(limit = 50, offset = 0): Promise<Page<OwnedChat>> {
    return this.chats.listAllChats(limit, offset);
  }

  /** The caller's chat, or CHAT_NOT_FOUND: another user's chat is answered exactly as a missing one. */
  async getChat(principal: Principal, id: string): Promise<ChatEntity> {
    const chat = isUuid(id) ? await this.chats.findChat(id, principal.userId) : null;
    if (chat === null) throw chatNotFound(id);
    return chat;
  }

  /** Activated skills of chats the caller has already been given (batched for GraphQL's nested fields). */
  activatedSkills(chatIds: readonly string[]): Promise<Map<string, ChatActivatedSkillEntity[]>> {
    return this.chats.activatedSkills(chatIds);
  }

  async getChatWithActivations(principal: Principal, id: string): Promise<{ chat: ChatEntity; activatedSkills: ChatActivatedSkillEntity[] }> {
    const chat = await this.getChat(principal, id);
    return { chat, activatedSkills: (await this.chats.activatedSkills([chat.id])).get(chat.id) ?? [] };
  }

  async deleteChat(principal: Principal, id: string): Promise<void> {
    if (!isUuid(id) || !(await this.chats.deleteChat(id, principal.userId))) throw chatNotFound(id);
  }

  async listMessages(principal: Principal, id: string, limit = 50, offset = 0): Promise<Page<ChatMessageEntity>> {
    const page = isUuid(id) ? await this.chats.listMessages(id, principal.userId, limit, offset) : null;
    if (page === null) throw chatNotFound(id);
    return page;
  }

  /** The chat's turn events from now on; the caller must own the chat. */
  async subscribe(principal: Principal, id: string): Promise<AsyncIterableIterator<ChatEvent>> {
    await this.getChat(principal, id);
    return this.events.subscribe(id);
  }

  /**
   * Exactly what the model would get next in this chat: system prompt, tool definitions, and the
   * commands the prompt lists. With `message`, the catalogue is the one a turn with that message
   * would list (ranked with the chat's last messages, when the chat's skills do not all fit).
   */
  async getContext(principal: Principal, id: string, options: { model?: string; tools?: boolean; message?: string } = {}) {
    const model = this.findModel(options.model);
    // The same one-query read a turn makes: existence, activated names, and the last messages when a message is ranked.
    const context = isUuid(id) ? await this.chats.turnContext(id, principal.userId, options.message === undefined ? 0 : Math.min(CONTEXT_MESSAGES, this.config.app.historyMessages)) : null;
    if (context === null) throw chatNotFound(id);
    const activated = context.activated;
    const toolsAvailable = this.toolsAvailable(model, options.tools);
    const snapshot = this.viewOf(principal, context);
    // The message is read as a turn reads it: a command expands to its prompt and requires its skills.
    const { invocation, command, requested, prompt } = this.turnRequest(options.message ?? '', snapshot);
    const fallback = toolsAvailable || snapshot === undefined ? [] : await this.fallbackBodies(requested, snapshot, context.pins);
    const ranking = { text: prompt, history: context.history, requested: requested.map((request) => request.skillName) };
    const { system, catalogue } = this.systemPrompt(snapshot, activated, toolsAvailable, ranking, { invoked: invocation.skills, fallback, command: command?.stored.name });
    return {
      model: model?.name ?? null,
      systemPrompt: system,
      catalogue: catalogue === undefined ? null : presentCatalogueChoice(catalogue, this.searching.limits),
      tools: toolsAvailable && snapshot ? this.skillTools.style(snapshot).definitions : [],
      activatedSkills: activated,
      activatedVersions: snapshot ? await this.activatedVersions(activated, context.pins, snapshot) : [],
      skills: { offered: snapshot ? [...snapshot.skills.keys()] : [], filteredOut: snapshot ? [...snapshot.filteredOut] : [], userFilter: context.userFilter, chatFilter: context.chatFilter },
      commands: snapshot ? promptCommands(snapshot) : [],
    };
  }

  /**
   * The catalogue a message would list in a new chat of the caller (`GET /v1/skills-catalogue?query=`):
   * read as a turn reads it (`/name`, commands), the user's filter applied. Without a message: every
   * skill the caller may see.
   */
  async previewCatalogue(principal: Principal, message: string | undefined, format: CatalogueFormat): Promise<string> {
    if (message === undefined) return this.searching.wholeCatalogue(this.registry.viewFor(principal.userId), format);
    // A new chat: the user's filter, the default model, the configured style.
    const view = await this.registry.viewForUser(principal.userId);
    const { prompt, requested } = this.turnRequest(message, view);
    const searchable = this.toolsAvailable(this.findModel(undefined), undefined) && this.skillTools.style(view).byName(searchTool.name) !== undefined;
    return this.searching.catalogue(view, { message: prompt, pinned: requested.map((request) => request.skillName), searchable }, format).text;
  }

  /**
   * What a message asks for: the skills it invokes (`/a $b …`) or the command it runs (its prompt
   * expanded, its required skills), and the text the model gets as the user's words.
   */
  private turnRequest(content: string, snapshot: CatalogueSnapshot | undefined) {
    const invocation = this.parseInvocation(content, snapshot);
    const command = invocation.command && snapshot ? runCommand(snapshot, invocation.command) : undefined;
    const requested: NewActivation[] = command
      ? command.requiredSkills.map((skillName) => ({ skillName, how: 'command' }))
      : invocation.skills.map((skillName) => ({ skillName, how: 'explicit' }));
    return { invocation, command, requested, prompt: command?.stored.prompt ?? invocation.text };
  }

  /** Without tools, a turn puts the requested skills' instructions in the prompt: what the context route shows (code skills run only in a turn). */
  private async fallbackBodies(requested: readonly NewActivation[], snapshot: CatalogueSnapshot, pins: ReadonlyMap<string, string>): Promise<{ name: string; body: string }[]> {
    const bodies: { name: string; body: string }[] = [];
    for (const { skillName } of requested) {
      const record = snapshot.skills.get(skillName);
      if (record === undefined || isCodeSkill(record)) continue;
      try {
        const skill = await this.resources.activate(skillName, { snapshot, pins });
        bodies.push({ name: skill.name, body: skill.body });
      } catch (error) {
        if (!(AppError.isInstance(error))) throw error;
      }
    }
    return bodies;
  }

  /** The chat's own skill filter, and what the user's and the chat's filters together offer. */
  async getSkillFilter(principal: Principal, id: string): Promise<SkillFilterResult> {
    const context = isUuid(id) ? await this.chats.turnContext(id, principal.userId, 0) : null;
    if (context === null) throw chatNotFound(id);
    return this.lifecycle.presentFilter(principal, context.chatFilter, context.userFilter);
  }

  async setSkillFilter(principal: Principal, id: string, filter: StoredSkillFilter): Promise<SkillFilterResult> {
    if (!isUuid(id)) throw chatNotFound(id);
    const { found, filter: stored } = await this.skillStore.setChatFilter(id, principal.userId, filter);
    if (!found) throw chatNotFound(id);
    return this.lifecycle.presentFilter(principal, stored, await this.skillStore.userFilter(principal.userId));
  }

  /** The user's view of the catalogue in this chat (personal skills, the user's and the chat's filters); undefined with skills off. */
  private viewOf(principal: Principal, context: Pick<TurnContext, 'userFilter' | 'chatFilter'>): CatalogueSnapshot | undefined {
    return this.registry.enabled ? this.registry.viewFor(principal.userId, [context.userFilter, context.chatFilter]) : undefined;
  }

  /** Each activated skill's pinned version against the one loaded now (`newer`: activating it again moves the chat there). */
  private async activatedVersions(activated: readonly string[], pins: ReadonlyMap<string, string>, snapshot: CatalogueSnapshot) {
    return Promise.all(
      activated.map(async (name) => {
        const skill = snapshot.skills.get(name);
        const version = pins.get(name) ?? null;
        const current = skill === undefined ? null : ((await this.skillStore.keptDigest(skill)) ?? skill.digest ?? null);
        const status =
          skill === undefined
            ? snapshot.disabled.has(name)
              ? 'disabled'
              : snapshot.filteredOut.has(name)
                ? 'filtered-out'
                : 'gone'
            : version === null || current === null || current === version
              ? 'current'
              : 'newer-available';
        return { name, version, currentVersion: current, status };
      }),
    );
  }

  /** The external-loop API: run one tool of the configured style against a chat, stored like a model-made call. */
  async executeTool(principal: Principal, id: string, tool: string, args: unknown): Promise<{ card: ToolCard; activatedSkills: ChatActivatedSkillEntity[] }> {
    const context = isUuid(id) ? await this.chats.turnContext(id, principal.userId, 0) : null;
    if (context === null) throw chatNotFound(id);
    const { card, activated, version } = await this.skillTools.executeForApi(tool, args, { snapshot: this.viewOf(principal, context), pins: context.pins, chatId: id, caller: { userId: principal.userId } });
    // The write finds out whether the chat still exists (deleted meanwhile: CHAT_NOT_FOUND); reading files is harmless.
    const stored = await this.chats.recordTurn(id, principal.userId, [{ role: 'tool', content: '', toolCards: [card] }], activated ? [{ skillName: activated, how: 'tool', version }] : []);
    if (stored === null) throw chatNotFound(id);
    // The card as stored (a NUL in a path became U+FFFD): the answer and a later read agree.
    return { card: stored.messages[0].toolCards[0], activatedSkills: stored.activatedSkills };
  }

  /** Activates a skill with the configured style's activation tool, as `/name` does in a turn. */
  activateSkill(principal: Principal, id: string, name: string) {
    const { tool, args } = this.skillTools.style().activation(name);
    return this.executeTool(principal, id, tool.name, args);
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
   * The turn is counted in the TurnGate until it has been answered and stored: BUSY (503) past
   * app.limits.max_concurrent_turns or once shutdown began; shutdown waits for counted turns.
   */
  async sendMessage(principal: Principal, id: string, input: TurnInput, onEvent?: (event: ChatEvent) => void): Promise<TurnResult> {
    let emit = onEvent;
    let release: TurnRelease | undefined;
    try {
      release = this.turns.enter();
      const result = await this.runTurn(principal, id, input, (listener) => (emit = listener), onEvent);
      this.metrics.observeTurn(input.model, result.timing);
      emit?.({ event: 'done', data: presentTurn(result) });
      return result;
    } catch (error) {
      this.metrics.observeFailedTurn(input.model, error);
      // The caller and the chat's subscribers are the same user: the error as that user may read it.
      emit?.({ event: 'error', data: toErrorBody(error, errorReaderOf(principal)).body });
      throw error;
    } finally {
      release?.();
    }
  }

  private async runTurn(
    principal: Principal,
    id: string,
    input: TurnInput,
    useListener: (listener: ((event: ChatEvent) => void) | undefined) => void,
    caller: ((event: ChatEvent) => void) | undefined,
  ): Promise<TurnResult> {
    const started = performance.now();
    const model = this.requireModel(input.model);
    const context = isUuid(id) ? await this.chats.turnContext(id, principal.userId, this.config.app.historyMessages) : null;
    if (context === null) throw chatNotFound(id);
    const onEvent = this.listenerFor(id, caller);
    useListener(onEvent);
    let dbMs = performance.now() - started;
    const snapshot = this.viewOf(principal, context);
    const { invocation, command, requested, prompt } = this.turnRequest(input.content, snapshot);
    const toolsAvailable = this.toolsAvailable(model, input.tools);
    const style = toolsAvailable && snapshot ? this.skillTools.style(snapshot) : undefined;
    const messages: ModelMessage[] = context.history.map((m) => ({ role: m.role, content: m.content }));
    messages.push({ role: 'user', content: prompt });
    const cards: ToolCard[] = [];
    const injections: string[] = [];
    const runOptions = this.turnToolOptions({ chatId: id, userId: principal.userId, snapshot, pins: new Map(context.pins), userMessage: invocation.text, model, cards, injections, onEvent });
    const { activations, fallback, ran, durationMs: skillsMs } = await this.activateRequested(requested, style, messages, runOptions, cards, onEvent);
    const forcedCount = cards.length;
    const turnPrompt = { invoked: invocation.skills, fallback, ran, command: command?.stored.name };
    const ranking = { text: prompt, history: context.history, requested: requested.map((request) => request.skillName) };
    const { system } = this.systemPrompt(snapshot, context.activated, toolsAvailable, ranking, turnPrompt);
    // A code skill's promptInjection joins the system prompt for the rest of the turn, from the next step on.
    const systemForStep = () => (injections.length === 0 ? system : `${system}\n\n${injections.join('\n\n')}`);

    let toolMs = 0;
    const loopStarted = performance.now();
    const result = await runToolLoop({
      model: this.models.get(model),
      modelName: model.name,
      system,
      systemForStep,
      messages,
      tools: style?.definitions ?? [],
      maxSteps: this.config.app.tools.maxSteps,
      maxAnswerBytes: this.config.app.tools.maxAnswerBytes,
      timeoutMs: model.timeoutMs,
      maxRetries: model.maxRetries,
      execute: async (call, definition) => {
        // The definitions are the style's own, so the lookup always finds the tool.
        const tool = style!.byWireName(definition.wireName)!;
        const execution = await this.skillTools.execute(tool, call.input, { ...runOptions, id: call.toolCallId });
        toolMs += execution.card.durationMs;
        cards.push(execution.card);
        if (execution.activated) activations.push({ skillName: execution.activated, how: 'tool', version: execution.version });
        onEvent?.({ event: 'tool-result', data: execution.card });
        return execution.card.output;
      },
      refused: (call, reason) => {
        // The card says what the model was told: for an unknown tool, the SDK's reason names the available ones.
        const card = this.skillTools.refusedCard(call.toolCallId, style?.byWireName(call.wireName)?.name ?? call.wireName, call.input, reason);
        cards.push(card);
        onEvent?.({ event: 'tool-result', data: card });
      },
      onEvent: onEvent && ((event: LoopEvent) => {
        if (event.type === 'text-delta') onEvent?.({ event: 'text-delta', data: { text: event.text } });
        else if (event.type === 'tool-call') {
          const name = style?.byWireName(event.wireName)?.name ?? event.wireName;
          onEvent?.({ event: 'tool-call', data: { id: event.toolCallId, tool: name, args: event.input ?? null } });
        }
      }),
    });
    const modelMs = performance.now() - loopStarted - toolMs;
    const answer = this.finalAnswer(id, result, onEvent);
    inModelOrder(cards, forcedCount, result.toolCallIds);
    const writeStarted = performance.now();
    const stored = await this.chats.recordTurn(
      id,
      principal.userId,
      [
        { role: 'user', content: input.content, invokedSkills: invocation.skills, command: command?.stored ?? null, model: model.name },
        { role: 'assistant', content: answer, toolCards: cards, model: model.name },
      ],
      activations,
      chatTitleFrom(input.content),
    );
    dbMs += performance.now() - writeStarted;
    // Deleted while the model was answering: nothing was stored.
    if (stored === null) throw chatNotFound(id);
    const [userMessage, assistantMessage] = stored.messages;
    const totalMs = performance.now() - started;
    const timing: TurnTiming = { totalMs, modelMs, overheadMs: totalMs - modelMs, dbMs, skillsMs: skillsMs + toolMs };
    return { userMessage, assistantMessage, activatedSkills: stored.activatedSkills, invokedSkills: invocation.skills, command: command?.stored ?? null, timing };
  }

  /** What the turn's tool calls get: the chat, its snapshot and model (for code skills), and where their cards and prompt injections go. */
  private turnToolOptions(turn: {
    chatId: string;
    userId: string;
    snapshot: CatalogueSnapshot | undefined;
    pins: Map<string, string>;
    userMessage: string;
    model: ModelConfig;
    cards: ToolCard[];
    injections: string[];
    onEvent: ((event: ChatEvent) => void) | undefined;
  }): ToolRunOptions {
    let llmCalls = 0;
    const { model } = turn;
    return {
      chatId: turn.chatId,
      // The turn's scripts, its code skills' included, share the turn's cap.
      caller: { userId: turn.userId, turnId: randomUUID() },
      snapshot: turn.snapshot,
      pins: turn.pins,
      userMessage: turn.userMessage,
      llm: (prompt, options) => {
        if (++llmCalls > MAX_CODE_LLM_CALLS) return Promise.reject(new Error(`llm.complete may be called at most ${MAX_CODE_LLM_CALLS} times in a turn`));
        return completeOnce({ model: this.models.get(model), modelName: model.name, prompt, system: options.system, timeoutMs: model.timeoutMs, maxRetries: model.maxRetries });
      },
      injectPrompt: (text) => turn.injections.push(text),
      onInnerCard: (card) => {
        turn.cards.push(card);
        turn.onEvent?.({ event: 'tool-result', data: card });
      },
    };
  }

  /** The model's text as stored and answered, with a notice when it was cut or stopped at the step limit. */
  private finalAnswer(chatId: string, result: ToolLoopResult, onEvent: ((event: ChatEvent) => void) | undefined): string {
    const { maxAnswerBytes, maxSteps } = this.config.app.tools;
    let answer = result.text.trim();
    if (result.truncated) {
      const notice = `[Truncated: the model's answer was longer than ${maxAnswerBytes} bytes (app.tools.max_answer_bytes); the rest was not kept.]`;
      answer = `${answer}\n\n${notice}`;
      onEvent?.({ event: 'text-delta', data: { text: `\n\n${notice}` } });
      this.logger.warn(`Chat ${chatId}: the model's answer was cut at ${maxAnswerBytes} bytes`);
    }
    if (result.stepLimitReached) {
      answer = `${answer}${answer ? '\n\n' : ''}[Stopped: this turn reached the limit of ${maxSteps} model steps (app.tools.max_steps) before a final answer.]`;
      this.logger.warn(`Chat ${chatId}: turn stopped at the step limit (${maxSteps})`);
    }
    return answer;
  }

  /** The caller's listener and the chat's live subscribers, as one; undefined when nobody listens. */
  private listenerFor(chatId: string, caller: ((event: ChatEvent) => void) | undefined): ((event: ChatEvent) => void) | undefined {
    if (!this.events.hasSubscribers(chatId)) return caller;
    return (event) => {
      caller?.(event);
      this.events.publish(chatId, event);
    };
  }

  /**
   * Checks what can be checked before a turn starts (room for it, a model is there, a command's
   * prompt is not too long, the caller's chat exists) and returns the model: a streamed turn answers
   * these as plain JSON errors, before the stream begins.
   */
  async prepareTurn(principal: Principal, id: string, input: Pick<TurnInput, 'model' | 'content'>): Promise<ModelConfig> {
    this.turns.assertOpen();
    const model = this.requireModel(input.model);
    // Reading the message as the turn will refuses a command that expands too far.
    this.turnRequest(input.content, this.registry.enabled ? this.registry.snapshot : undefined);
    await this.getChat(principal, id);
    return model;
  }

  /** The configured models a turn may name, in name order, and the one a turn without `model` uses. */
  configuredModels(): { defaultModel: string | null; models: { name: string; provider: string; model: string; tools: boolean }[] } {
    const models = Object.values(this.config.app.models)
      .map((model) => ({ name: model.name, provider: model.provider, model: model.model, tools: model.tools }))
      .sort((a, b) => a.name.localeCompare(b.name));
    return { defaultModel: this.findModel(undefined)?.name ?? null, models };
  }

  private requireModel(name: string | undefined): ModelConfig {
    const model = this.findModel(name);
    if (model === undefined) {
      throw new AppError(ErrorCode.MODEL_NOT_CONFIGURED, 'No model is configured: add an [app.models.NAME] section (or set SKILLHOST_MODEL) to chat.');
    }
    return model;
  }

  private findModel(name: string | undefined): ModelConfig | undefined {
    const models = this.config.app.models;
    if (name === undefined) return this.config.app.defaultModel ? ownModel(models, this.config.app.defaultModel) : undefined;
    const model = ownModel(models, name);
    if (model === undefined) {
      const available = Object.keys(models);
      // The name as a listed problem shows it: a client may send a megabyte of it.
      const shown = cutProblem(name);
      throw new AppError(ErrorCode.VALIDATION_FAILED, `Model '${shown}' is not configured. Available: ${available.join(', ') || 'none'}`, { problems: [`model: '${shown}' is not configured`], available });
    }
    return model;
  }

  /** Skill tools are offered only when skills are on, tools are on, the model can call them, and the request did not say no. */
  private toolsAvailable(model: ModelConfig | undefined, requested: boolean | undefined): boolean {
    return this.registry.enabled && this.config.app.tools.enabled && (model?.tools ?? true) && requested !== false;
  }

  private parseInvocation(content: string, snapshot: CatalogueSnapshot | undefined): Invocation {
    if (snapshot === undefined) return { skills: [], command: null, text: content };
    return parseInvocation(content, {
      prefixes: this.config.app.skills.explicitPrefixes,
      isSkill: (name) => snapshot.skills.has(name),
      isCommand: (name) => snapshot.commands.has(name),
    });
  }

  /**
   * The skills the user asked for (`/a $b`, or a command's required ones), activated by the server
   * before the model runs. With tools, each is the style's activation call, after the user's words,
   * so the skill is active and its card shown whatever the model then does (no reliance on a
   * provider honouring a forced tool choice). Without tools, the bodies go into the system prompt.
   * A code skill runs instead (its card, its result in the system prompt). A skill that cannot be
   * activated is an error card naming it; the turn goes on.
   */
  private async activateRequested(
    requested: readonly NewActivation[],
    style: ToolStyleSet | undefined,
    messages: ModelMessage[],
    options: ToolRunOptions,
    cards: ToolCard[],
    onEvent: ((event: ChatEvent) => void) | undefined,
  ): Promise<{ activations: NewActivation[]; fallback: { name: string; body: string }[]; ran: { name: string; output: string }[]; durationMs: number }> {
    const activations: NewActivation[] = [];
    const fallback: { name: string; body: string }[] = [];
    const ran: { name: string; output: string }[] = [];
    const started = performance.now();
    // A card goes before the cards of the calls it made (a code skill's ctx.tools.call).
    const show = (card: ToolCard, at = cards.length) => {
      onEvent?.({ event: 'tool-call', data: { id: card.id, tool: card.tool, args: card.args } });
      onEvent?.({ event: 'tool-result', data: card });
      cards.splice(at, 0, card);
    };
    for (const { skillName, how } of requested) {
      const record = options.snapshot?.skills.get(skillName);
      if (record !== undefined && isCodeSkill(record)) {
        const at = cards.length;
        const { card, activated, version } = await this.skillTools.execute(useSkillTool, { skill_name: skillName, input: options.userMessage ?? '' }, options);
        show(card, at);
        ran.push({ name: skillName, output: card.output });
        if (activated) activations.push({ skillName: activated, how, version });
        continue;
      }
      if (style !== undefined) {
        const { tool, args } = style.activation(skillName);
        const { card, activated, version } = await this.skillTools.execute(tool, args, options);
        show(card);
        if (activated) activations.push({ skillName: activated, how, version });
        messages.push(...serverCallMessages(card, tool.wireName, args));
        continue;
      }
      try {
        const skill = await this.resources.activate(skillName, { snapshot: options.snapshot, pins: options.pins });
        fallback.push({ name: skill.name, body: skill.body });
        activations.push({ skillName: skill.name, how: how === 'explicit' ? 'fallback' : how, version: skill.version });
      } catch (error) {
        if (!(AppError.isInstance(error))) throw error;
        const card = this.skillTools.errorCard('skills.activate', { name: skillName }, error);
        onEvent?.({ event: 'tool-result', data: card });
        cards.push(card);
      }
    }
    return { activations, fallback, ran, durationMs: performance.now() - started };
  }

  /**
   * The system prompt, and the catalogue it lists: the whole catalogue when the chat's skills fit
   * the budget, else the ones ranked best for `message` (its history as weaker context), after the
   * activated skills and those invoked this turn.
   */
  private systemPrompt(
    snapshot: CatalogueSnapshot | undefined,
    activated: readonly string[],
    toolsAvailable: boolean,
    message: { text: string; history: readonly { content: string }[]; requested: readonly string[] },
    turn: { invoked?: readonly string[]; fallback?: { name: string; body: string }[]; ran?: { name: string; output: string }[]; command?: string } = {},
  ): { system: string; catalogue?: CatalogueChoice } {
    if (snapshot === undefined) return { system: assembleSystemPrompt({ basePrompt: this.config.app.basePrompt }) };
    // The last messages, newest first (only their start is read), rank a partial catalogue.
    const context = this.searching.isComplete(snapshot)
      ? ''
      : message.history
          .slice(-CONTEXT_MESSAGES)
          .reverse()
          .map((m) => m.content.slice(0, CONTEXT_MESSAGE_CHARS))
          .join('\n');
    return buildSkillsPrompt({
      basePrompt: this.config.app.basePrompt,
      snapshot,
      chooser: this.searching,
      skills: this.config.app.skills,
      style: toolsAvailable ? this.skillTools.style(snapshot) : undefined,
      activated,
      message: { text: message.text, context, requested: message.requested },
      turn: { commands: promptCommands(snapshot), ...turn },
    });
  }

  /**
   * A page of messages of each of several of the caller's chats, in one query (batched for
   * GraphQL's nested `Chat.messages`); a chat that is not the caller's is absent from the map.
   */
  messagePages(principal: Principal, chatIds: readonly string[], limit = 50, offset = 0): Promise<Map<string, Page<ChatMessageEntity>>> {
    return this.chats.messagePages(chatIds.filter(isUuid), principal.userId, limit, offset);
  }
}

/** Only the configured models: `__proto__` or `constructor` must not find Object.prototype's members. */
function ownModel(models: Readonly<Record<string, ModelConfig>>, name: string): ModelConfig | undefined {
  return Object.hasOwn(models, name) ? models[name] : undefined;
}

/** The commands the system prompt lists (and the context endpoint returns), in name order. */
function promptCommands(snapshot: CatalogueSnapshot): PromptCommand[] {
  return [...snapshot.commands.values()].map((c) => ({ name: c.name, description: c.description, argumentHint: c.argumentHint, requiredSkills: c.requiredSkills }));
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

/** The last messages of a chat that rank a partial catalogue, as weaker context than the message, and how much of each is read. */
const CONTEXT_MESSAGES = 4;
const CONTEXT_MESSAGE_CHARS = 4000;

/** How often code skills may call the chat's model in one turn (each call is a model request the turn pays for). */
export const MAX_CODE_LLM_CALLS = 10;

/** The longest prompt a command may expand to: a template repeating `$ARGUMENTS` must not turn one message into gigabytes. */
export const MAX_COMMAND_PROMPT_CHARS = 500_000;

/** The command a message runs: the skills it requires, and what is stored with the message (name, arguments, the prompt they expand to). */
function runCommand(snapshot: CatalogueSnapshot, invoked: { name: string; arguments: string }): { requiredSkills: readonly string[]; stored: StoredCommand } | undefined {
  const command = snapshot.commands.get(invoked.name);
  if (command === undefined) return undefined;
  const prompt = expandTemplate(command.template, invoked.arguments, MAX_COMMAND_PROMPT_CHARS);
  if (prompt === undefined) {
    throw validationFailed([`content: the command /${command.name} with these arguments expands to more than ${MAX_COMMAND_PROMPT_CHARS} characters (its template repeats $ARGUMENTS or $1…$9); send shorter arguments`]);
  }
  return { requiredSkills: command.requiredSkills, stored: { name: command.name, arguments: invoked.arguments, prompt } };
}

export function chatNotFound(id: string): AppError {
  return new AppError(ErrorCode.CHAT_NOT_FOUND, `Chat '${id}' not found.`, { id });
}
