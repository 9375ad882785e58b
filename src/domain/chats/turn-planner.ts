import type { CatalogueFormat, ModelConfig, SkillsConfig } from '../../config/app-config.js';
import { validationFailed } from '../shared/validation-errors.js';
import type { StoredCommand } from './chat.types.js';
import {
  assembleSystemPrompt,
  buildSkillsPrompt,
  type CatalogueChoice,
  type CatalogueLimits,
  type CatalogueSnapshot,
  expandTemplate,
  type Invocation,
  parseInvocation,
  type PromptCommand,
  searchTool,
  type ToolStyleSet,
} from '@skillhost/core';

/**
 * The last messages of a chat that rank a partial catalogue, as weaker context than the message, and how much of each
 * is read.
 */
export const CONTEXT_MESSAGES = 4;
const CONTEXT_MESSAGE_CHARS = 4000;

/**
 * The longest prompt a command may expand to: a template repeating `$ARGUMENTS` must not turn one message into
 * gigabytes.
 */
export const MAX_COMMAND_PROMPT_CHARS = 500_000;

/** The configuration values planning reads. */
export interface TurnPlanSettings {
  basePrompt: string;
  explicitPrefixes: readonly string[];
  skills: Pick<SkillsConfig, 'catalogueFormat' | 'includeLocation'>;
  /** `app.tools.enabled`. */
  toolsEnabled: boolean;
}

/** Chooses the catalogue a turn lists (the server's SkillSearchService, with the team's use of skills). */
export interface CatalogueRanking {
  readonly limits: CatalogueLimits;
  isComplete(view: CatalogueSnapshot): boolean;
  catalogue(
    view: CatalogueSnapshot,
    request: { message: string; context?: string; pinned?: readonly string[]; searchable: boolean },
    format?: CatalogueFormat,
  ): CatalogueChoice;
}

/** The configured tool style for a view of the catalogue (SkillToolsService.style). */
export type ToolStyleOf = (view: CatalogueSnapshot) => ToolStyleSet;

/** A skill the message asks for, activated by the server before the model runs. */
export interface RequestedSkill {
  skillName: string;
  how: 'explicit' | 'command';
}

/** The command a message runs: the skills it requires, and what is stored with the message. */
export interface CommandRun {
  requiredSkills: readonly string[];
  stored: StoredCommand;
}

/** What a message asks for, and the text the model gets as the user's words. */
export interface TurnRequest {
  invocation: Invocation;
  command: CommandRun | undefined;
  requested: RequestedSkill[];
  prompt: string;
}

/** What planning reads: the message, and what is known of the chat and the model before the turn. */
export interface TurnPlanInput {
  content: string;
  /** The caller's view of the catalogue in this chat; undefined with skills off. */
  view: CatalogueSnapshot | undefined;
  model: Pick<ModelConfig, 'tools'> | undefined;
  /** The request's `tools` (false: no tools this turn). */
  tools?: boolean;
  /** The skills the chat activated before this turn. */
  activated: readonly string[];
  /** The chat's last messages, oldest first (they rank a partial catalogue). */
  history: readonly { content: string }[];
}

export interface TurnPlan extends TurnRequest {
  view: CatalogueSnapshot | undefined;
  activated: readonly string[];
  toolsAvailable: boolean;
  /** The tool style offered this turn; undefined when the model gets no tools. */
  style: ToolStyleSet | undefined;
  /** What ranks a partial catalogue: the prompt, the chat's last messages (newest first, cut), the requested skills. */
  ranking: { text: string; context: string; requested: readonly string[] };
}

/** What the activations before the model added to the turn's prompt. */
export interface ActivationsInPrompt {
  /** Without tools, the requested skills' instructions. */
  fallback?: { name: string; body: string }[];
  /** What each requested code skill answered. */
  ran?: { name: string; output: string }[];
  /** The instructions of the skills activated earlier, kept in the prompt (the gateway's conversations). */
  kept?: { name: string; body: string }[];
}

export interface TurnPrompt {
  system: string;
  /** The catalogue the prompt lists; undefined with skills off. */
  catalogue?: CatalogueChoice;
}

/**
 * A turn's plan, from values only (no database, no clock, no model): how the message is read
 * (`/name`, `$name`, a command), which skills it requests, whether tools are offered, and the
 * system prompt with its catalogue. The context endpoint and the turn both plan here, so what the
 * context shows is what the turn sends.
 */
export class TurnPlanner {
  constructor(
    private readonly settings: TurnPlanSettings,
    private readonly ranking: CatalogueRanking,
    private readonly toolStyle: ToolStyleOf,
  ) {}

  get catalogueLimits(): CatalogueLimits {
    return this.ranking.limits;
  }

  plan(input: TurnPlanInput): TurnPlan {
    const request = this.readMessage(input.content, input.view);
    const toolsAvailable = this.toolsAvailable(input.view !== undefined, input.model, input.tools);
    const style = toolsAvailable && input.view !== undefined ? this.toolStyle(input.view) : undefined;
    const requested = request.requested.map((skill) => skill.skillName);
    const context =
      input.view === undefined || this.ranking.isComplete(input.view) ? '' : rankingContext(input.history);
    return {
      ...request,
      view: input.view,
      activated: input.activated,
      toolsAvailable,
      style,
      ranking: { text: request.prompt, context, requested },
    };
  }

  /**
   * What a message asks for: the skills it invokes (`/a $b …`) or the command it runs (its prompt
   * expanded, its required skills), and the text the model gets as the user's words. A command
   * that expands too far is VALIDATION_FAILED.
   */
  readMessage(content: string, view: CatalogueSnapshot | undefined): TurnRequest {
    const invocation = this.parseInvocation(content, view);
    const command = invocation.command && view ? runCommand(view, invocation.command) : undefined;
    const requested: RequestedSkill[] = command
      ? command.requiredSkills.map((skillName) => ({ skillName, how: 'command' }))
      : invocation.skills.map((skillName) => ({ skillName, how: 'explicit' }));
    return { invocation, command, requested, prompt: command?.stored.prompt ?? invocation.text };
  }

  /**
   * Skill tools are offered only when skills are on, tools are on, the model can call them, and the request did not say
   * no.
   */
  toolsAvailable(
    skillsOn: boolean,
    model: Pick<ModelConfig, 'tools'> | undefined,
    requested: boolean | undefined,
  ): boolean {
    return skillsOn && this.settings.toolsEnabled && (model?.tools ?? true) && requested !== false;
  }

  /**
   * The system prompt, and the catalogue it lists: the whole catalogue when the chat's skills fit
   * the budget, else the ones ranked best for the message (its history as weaker context), after
   * the activated skills and those requested this turn.
   */
  systemPrompt(plan: TurnPlan, activations: ActivationsInPrompt = {}): TurnPrompt {
    if (plan.view === undefined) return { system: assembleSystemPrompt({ basePrompt: this.settings.basePrompt }) };
    return buildSkillsPrompt({
      basePrompt: this.settings.basePrompt,
      snapshot: plan.view,
      chooser: this.ranking,
      skills: this.settings.skills,
      style: plan.style,
      activated: plan.activated,
      message: plan.ranking,
      turn: {
        commands: promptCommands(plan.view),
        invoked: plan.invocation.skills,
        command: plan.command?.stored.name,
        ...activations,
      },
    });
  }

  /**
   * The catalogue a message would list in a new chat (read as a turn reads it, no history, no
   * activated skills), in `format`.
   */
  previewCatalogue(
    view: CatalogueSnapshot,
    message: string,
    model: Pick<ModelConfig, 'tools'> | undefined,
    format: CatalogueFormat,
  ): string {
    const { prompt, requested } = this.readMessage(message, view);
    const searchable =
      this.toolsAvailable(true, model, undefined) && this.toolStyle(view).byName(searchTool.name) !== undefined;
    return this.ranking.catalogue(
      view,
      { message: prompt, pinned: requested.map((request) => request.skillName), searchable },
      format,
    ).text;
  }

  private parseInvocation(content: string, view: CatalogueSnapshot | undefined): Invocation {
    if (view === undefined) return { skills: [], command: null, text: content };
    return parseInvocation(content, {
      prefixes: this.settings.explicitPrefixes,
      isSkill: (name) => view.skills.has(name),
      isCommand: (name) => view.commands.has(name),
    });
  }
}

/** The commands the system prompt lists (and the context endpoint returns), in name order. */
export function promptCommands(view: CatalogueSnapshot): PromptCommand[] {
  return [...view.commands.values()].map((c) => ({
    name: c.name,
    description: c.description,
    argumentHint: c.argumentHint,
    requiredSkills: c.requiredSkills,
  }));
}

/** The last messages, newest first (only their start is read): what ranks a partial catalogue besides the message. */
function rankingContext(history: readonly { content: string }[]): string {
  return history
    .slice(-CONTEXT_MESSAGES)
    .reverse()
    .map((m) => m.content.slice(0, CONTEXT_MESSAGE_CHARS))
    .join('\n');
}

function runCommand(view: CatalogueSnapshot, invoked: { name: string; arguments: string }): CommandRun | undefined {
  const command = view.commands.get(invoked.name);
  if (command === undefined) return undefined;
  const prompt = expandTemplate(command.template, invoked.arguments, MAX_COMMAND_PROMPT_CHARS);
  if (prompt === undefined) {
    throw validationFailed([
      `content: the command /${command.name} with these arguments expands to more than ` +
        `${MAX_COMMAND_PROMPT_CHARS} characters (its template repeats $ARGUMENTS or $1…$9); send shorter arguments`,
    ]);
  }
  return {
    requiredSkills: command.requiredSkills,
    stored: { name: command.name, arguments: invoked.arguments, prompt },
  };
}
