import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  AppError,
  type CatalogueSnapshot,
  type CodeSkillLlm,
  type CodeSkillToolOutcome,
  ErrorCode,
  KNOWN_TOOL_NAMES,
  parseToolArguments,
  runScriptTool,
  type SkillTool,
  type ToolContext,
  toolStyleFor,
  type ToolStyleSet,
} from '@skillhost/core';
import { unstorableStringProblems, validationFailed } from '../shared/validation-errors.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { CHAT_METRICS, type ChatMetrics } from './chat-metrics.js';
import { SkillRegistryService, SkillResourcesService } from '@skillhost/nest';
import { type ScriptCaller, ScriptsService, scriptsDisabledError } from '../sandbox/scripts.service.js';
import { CodeSkillService } from '../skills/code/code-skill.service.js';
import { SkillSearchService } from '../skills/ranking/skill-search.service.js';
import { errorOutput, failedCallSummary, runSkillTool, type ToolCard, type ToolExecution } from '@skillhost/ai-sdk';

import { traceToolCall } from './turn-telemetry.js';

export type { ToolCard } from '@skillhost/ai-sdk';

export interface ToolRunOptions {
  /** The chat the call is made in (a code skill's `ctx.chatId`). */
  chatId?: string;
  /** The chat's model for a code skill's `ctx.llm.complete`; absent outside a turn. */
  llm?: CodeSkillLlm;
  /** Where a code skill's `promptInjection` goes (the rest of the turn's system prompt). */
  injectPrompt?(text: string): void;
  /** Hears each call a code skill makes through `ctx.tools.call`: its card, and what it activated. */
  onInnerCall?(call: ToolExecution): void;
  /** How many code skills are running around this call (a code skill calling use_skill). */
  codeDepth?: number;
  /** The provider's call id; a new one for calls the server or an API caller makes. */
  id?: string;
  /** The snapshot the turn started with (the user's view), so one turn sees one catalogue. */
  snapshot?: CatalogueSnapshot;
  /**
   * The chat's activated versions by skill name: reads come from them; activations record new ones. Absent outside a
   * chat.
   */
  pins?: Map<string, string>;
  /** The user's words this turn (use_skill matches them when given no input). */
  userMessage?: string;
  /** The user, and the turn when there is one: the script caps count by them. */
  caller?: ScriptCaller;
}

/**
 * Runs the skill tools of the configured style for the model's loop and for the API alike. For
 * the model nothing throws: bad arguments and failures become an error card it can read (naming
 * alternatives). API callers get bad arguments as VALIDATION_FAILED, before anything runs.
 */
@Injectable()
export class SkillToolsService {
  private readonly logger = new Logger('SkillTools');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly registry: SkillRegistryService,
    private readonly resources: SkillResourcesService,
    @Inject(CHAT_METRICS) private readonly metrics: ChatMetrics,
    private readonly scripts: ScriptsService,
    private readonly codeSkills: CodeSkillService,
    private readonly searching: SkillSearchService,
  ) {}

  /**
   * The configured style's tools for a snapshot (default: the current one), with skills.search when its catalogue is
   * partial.
   */
  style(snapshot: CatalogueSnapshot = this.registry.snapshot): ToolStyleSet {
    return toolStyleFor(this.config.app.tools.style, snapshot, this.styleOptions(snapshot));
  }

  /**
   * Every tool the configured style may offer a turn (scripts and search included), by wire name, with its canonical
   * name: names a client of the gateway may not give its own tools.
   */
  wireNames(): ReadonlyMap<string, string> {
    const all = toolStyleFor(this.config.app.tools.style, this.registry.snapshot, {
      scripts: true,
      search: true,
      partial: true,
    });
    return new Map(all.definitions.map((definition) => [definition.wireName, definition.name]));
  }

  private styleOptions(snapshot: CatalogueSnapshot) {
    return {
      scripts: this.scripts.enabled,
      search: this.searching.offersSearch(snapshot),
      partial: !this.searching.isComplete(snapshot),
    };
  }

  /**
   * A tool of the configured style (for a user's view) by its canonical name, or TOOL_NOT_FOUND naming the ones it has.
   */
  find(name: string, snapshot?: CatalogueSnapshot): SkillTool {
    const style = this.style(snapshot);
    const tool = style.byName(name);
    if (tool !== undefined) return tool;
    if (name === runScriptTool.name) throw scriptsDisabledError();
    const available = style.tools.map((t) => t.name);
    throw new AppError(
      ErrorCode.TOOL_NOT_FOUND,
      `Tool '${name}' is not offered in the '${style.style}' tool style (app.tools.style). Available: ` +
        `${available.join(', ')}.`,
      {
        name,
        available,
      },
    );
  }

  /** An API caller's call: the arguments are checked first (VALIDATION_FAILED), then it runs as a model's call does. */
  executeForApi(name: string, args: unknown, options: ToolRunOptions = {}): Promise<ToolExecution> {
    const tool = this.find(name, options.snapshot);
    const unstorable = unstorableStringProblems(args, (key) => tool.nulAllowed?.includes(key) === true);
    if (unstorable.length > 0) throw validationFailed(unstorable);
    const parsed = parseToolArguments(tool, args);
    if (!parsed.ok) throw validationFailed(parsed.problems, parsed.message);
    return this.execute(tool, args, options);
  }

  async execute(tool: SkillTool, args: unknown, options: ToolRunOptions = {}): Promise<ToolExecution> {
    const snapshot = options.snapshot ?? this.registry.snapshot;
    const versions = {
      pinned: (skill: string) => options.pins?.get(skill),
      current: (skill: string) => snapshot.skills.get(skill)?.digest,
    };
    const execution = await traceToolCall(tool, versions, () => this.run(tool, args, options));
    // Reads later in the turn come from what was just activated.
    if (execution.activated !== undefined && options.pins !== undefined) {
      if (execution.version === undefined) options.pins.delete(execution.activated);
      else options.pins.set(execution.activated, execution.version);
    }
    this.observe(execution.card);
    if (execution.activated !== undefined) this.metrics.observeActivation(execution.activated);
    return execution;
  }

  private async run(tool: SkillTool, args: unknown, options: ToolRunOptions): Promise<ToolExecution> {
    const snapshot = options.snapshot ?? this.registry.snapshot;
    const reader = this.resources.reader({ snapshot, pins: options.pins });
    const context: ToolContext = {
      resources: reader,
      registry: reader,
      snapshot,
      search: (query: string, limit: number) => this.searching.search(snapshot, query, limit),
      userMessage: options.userMessage,
      useSkillThreshold: this.config.app.tools.useSkillThreshold,
      scripts: this.scripts,
      caller: options.caller,
      code: {
        service: this.codeSkills,
        chatId: options.chatId ?? '',
        llm: options.llm,
        callTool: (name: string, args: unknown) => this.callFromCode(name, args, options),
        injectPrompt: options.injectPrompt,
        depth: options.codeDepth ?? 0,
      },
    };
    return runSkillTool(tool, args, context, { id: options.id, log: (line) => this.logger.log(line) });
  }

  /**
   * A code skill's `ctx.tools.call`: the skill tools (`skills.*`, whatever the style) and the
   * style's own, by canonical or wire name; each call is heard by whoever ran the code skill (a turn, a tool route).
   */
  private async callFromCode(name: string, args: unknown, options: ToolRunOptions): Promise<CodeSkillToolOutcome> {
    const snapshot = options.snapshot ?? this.registry.snapshot;
    const sets = [this.style(snapshot), toolStyleFor('skillhost', snapshot, this.styleOptions(snapshot))];
    const tool = sets.map((set) => set.byName(name) ?? set.byWireName(name)).find((found) => found !== undefined);
    if (tool === undefined) {
      const available = [...new Set(sets.flatMap((set) => set.tools.map((t) => t.name)))];
      return {
        status: 'error',
        output: `Error (TOOL_NOT_FOUND): No tool '${name}' in this chat. Available: ${available.join(', ')}.`,
      };
    }
    // Arguments from code may be anything a worker can pass (a cycle, a BigInt): only plain JSON is a call.
    let plain: unknown;
    try {
      plain = JSON.parse(JSON.stringify(args ?? null)) as unknown;
    } catch (error) {
      return {
        status: 'error',
        output:
          `Error (VALIDATION_FAILED): The arguments for '${name}' are not plain JSON data ` +
          `(${(error as Error).message}).`,
      };
    }
    const call = await this.execute(tool, plain, {
      ...options,
      id: undefined,
      codeDepth: (options.codeDepth ?? 0) + 1,
    });
    options.onInnerCall?.(call);
    return { status: call.card.status, output: call.card.output };
  }

  /** A call that failed with a domain error, as the card the model and the user see. */
  errorCard(toolName: string, args: unknown, error: AppError, id: string = randomUUID()): ToolCard {
    const card: ToolCard = {
      id,
      tool: toolName,
      args: args ?? null,
      status: 'error',
      summary: failedCallSummary(args),
      output: errorOutput(error),
      durationMs: 0,
    };
    this.observe(card);
    return card;
  }

  /** A call the SDK refused before execution: an unknown tool or arguments that were not JSON. */
  refusedCard(id: string, toolName: string, input: unknown, reason: string): ToolCard {
    const card: ToolCard = {
      id,
      tool: toolName,
      args: input ?? null,
      status: 'error',
      summary: { skill: null, truncated: false },
      output: `Error: ${reason}`,
      durationMs: 0,
    };
    this.observe(card);
    return card;
  }

  /** A made-up tool name is counted as `unknown`, so a model cannot add series at will. */
  private observe(card: ToolCard): void {
    this.metrics.observeToolCall(KNOWN_TOOL_NAMES.has(card.tool) ? card.tool : 'unknown', card.status, card.durationMs);
  }
}
