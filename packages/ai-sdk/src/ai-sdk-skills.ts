import type { ModelMessage, ToolSet } from 'ai';
import {
  type ActivationHow,
  type ActivationStore,
  buildSkillsPrompt,
  CatalogueChooser,
  type CatalogueSnapshot,
  parseInvocation,
  type SkillRegistry,
  type SkillResources,
  type SkillTool,
  TOOL_STYLES,
  type ToolContext,
  type ToolStyle,
  toolStyleFor,
  type ToolStyleSet,
} from '@skillhost/core';
import { runSkillTool, serverCallMessages, type ToolCard, type ToolExecution } from './run-tool.js';
import { toolSetOf } from './tool-set.js';

/** What the skill tools of one turn work with. */
export interface SkillToolsOptions {
  /** From `SkillsModule` (`skillhost/nest`): inject them where the model loop runs. */
  registry: SkillRegistry;
  resources: SkillResources;
  /** Hears the card of every call (the model's, and the activations `invokeSkills` makes): what the user is shown. */
  onCard?: (card: ToolCard) => void;
  /** The tool style (default: the module's `toolStyle` option, itself `skillhost` by default). */
  toolStyle?: ToolStyle;
  /** Where the chat's activations are remembered; each activation is recorded before the model reads it. */
  activations?: { store: ActivationStore; chatId: string };
  /** The catalogue the turn uses (default: the registry's current one, taken when the tools are made). */
  snapshot?: CatalogueSnapshot;
  /** The user's words this turn (`use_skill` without a name matches them). */
  userMessage?: string;
  /** How often each skill was used lately: the ranker's tie-breaker in a partial catalogue and search. */
  popularity?: () => ReadonlyMap<string, number>;
}

/** One turn's tools, context and style, made once from the options. */
interface Toolbox {
  snapshot: CatalogueSnapshot;
  chooser: CatalogueChooser;
  style: ToolStyleSet;
  run(tool: SkillTool, args: unknown, id: string | undefined, how: ActivationHow): Promise<ToolExecution>;
}

/** Plain JavaScript callers get a sentence, not a TypeError from deep inside. */
function checked(options: SkillToolsOptions): SkillToolsOptions {
  if (options === null || typeof options !== 'object')
    throw new TypeError('Skill tool options must be an object with `registry` and `resources` (from SkillsModule)');
  if (typeof options.registry?.settings !== 'object' || typeof options.resources?.reader !== 'function') {
    throw new TypeError(
      '`registry` and `resources` must be the SkillRegistryService and SkillResourcesService of a SkillsModule ' +
        '(inject them from @skillhost/nest), or a SkillRegistry and SkillResources of @skillhost/core',
    );
  }
  if (options.toolStyle !== undefined && !TOOL_STYLES.includes(options.toolStyle))
    throw new TypeError(
      `\`toolStyle\` must be one of ${TOOL_STYLES.join(', ')}, not ${JSON.stringify(options.toolStyle)}`,
    );
  if (options.onCard !== undefined && typeof options.onCard !== 'function')
    throw new TypeError('`onCard` must be a function');
  if (options.userMessage !== undefined && typeof options.userMessage !== 'string')
    throw new TypeError('`userMessage` must be a string');
  return options;
}

function names(list: readonly string[] | undefined, option: string): readonly string[] {
  if (list === undefined) return [];
  if (!Array.isArray(list) || !list.every((name) => typeof name === 'string'))
    throw new TypeError(`\`${option}\` must be a list of skill names`);
  return list;
}

function toolbox(unchecked: SkillToolsOptions): Toolbox {
  const options = checked(unchecked);
  const { registry, resources } = options;
  const settings = registry.settings;
  const snapshot = options.snapshot ?? registry.snapshot;
  const chooser = new CatalogueChooser(settings.skills, options.popularity);
  const style = toolStyleFor(options.toolStyle ?? settings.toolStyle, snapshot, {
    scripts: false,
    search: chooser.offersSearch(snapshot),
    partial: !chooser.isComplete(snapshot),
  });
  const reader = resources.reader({ snapshot });
  const context: ToolContext = {
    resources: reader,
    registry: reader,
    snapshot,
    search: (query, limit) => chooser.search(snapshot, query, limit),
    userMessage: options.userMessage,
    useSkillThreshold: settings.useSkillThreshold,
  };
  return {
    snapshot,
    chooser,
    style,
    async run(skillTool, args, id, how) {
      const execution = await runSkillTool(skillTool, args, context, { id });
      if (execution.activated !== undefined && options.activations !== undefined) {
        const { store, chatId } = options.activations;
        await store.record(chatId, [
          {
            skillName: execution.activated,
            how,
            ...(execution.version === undefined ? {} : { version: execution.version }),
          },
        ]);
      }
      options.onCard?.(execution.card);
      return execution;
    },
  };
}

/**
 * The skill tools of the style, as AI SDK `tool()` objects keyed by their wire names, for an app's
 * own `generateText`/`streamText` call: `tools: skillTools({ registry, resources, onCard })`. A call
 * never throws for a bad argument, an unknown skill or a path outside a skill's folder: the model
 * reads an error naming what would work, and `onCard` hears an error card.
 */
export function skillTools(options: SkillToolsOptions): ToolSet {
  const box = toolbox(options);
  // The style's definitions, their JSON Schemas made once per snapshot, as the server's loop sends them.
  return toolSetOf(
    box.style.definitions,
    async (call) =>
      (await box.run(box.style.byWireName(call.wireName)!, call.input, call.toolCallId, 'tool')).card.output,
  );
}

/** What `invokeSkills` did with a message. */
export interface Invoked {
  /** The user's words without the invocation (`/name` stripped); the message unchanged when it invoked nothing. */
  text: string;
  /** The skills it invoked, in order. */
  skills: string[];
  /** The cards of their activations. */
  cards: ToolCard[];
  /**
   * The user's message, then each activation as the tool call and result the model's history would hold: append them to
   * the conversation.
   */
  messages: ModelMessage[];
}

/**
 * A message that starts with `/name` (or `$name`, when listed in `explicitPrefixes`) for loaded
 * skills: each is activated now with the style's own tool, so the model starts with the
 * instructions and the user sees the card whatever the model does next. Other messages pass as
 * they are (`/etc/hosts` is text).
 */
export async function invokeSkills(options: SkillToolsOptions & { message: string }): Promise<Invoked> {
  if (typeof options?.message !== 'string') throw new TypeError("`message` must be the user's message, a string");
  const box = toolbox({ ...options, userMessage: options.userMessage ?? options.message });
  const invocation = parseInvocation(options.message, {
    prefixes: options.registry.settings.skills.explicitPrefixes,
    isSkill: (name) => box.snapshot.skills.has(name),
  });
  const messages: ModelMessage[] = [{ role: 'user', content: invocation.text }];
  const cards: ToolCard[] = [];
  for (const name of invocation.skills) {
    const { tool: activation, args } = box.style.activation(name);
    const { card } = await box.run(activation, args, undefined, 'explicit');
    cards.push(card);
    messages.push(...serverCallMessages(card, activation.wireName, args));
  }
  return { text: invocation.text, skills: invocation.skills, cards, messages };
}

/**
 * The system prompt for a turn with the skill tools: `basePrompt`, the style's rules, the skills
 * the chat activated, and the catalogue (whole, or ranked for `message` when it is over the
 * module's budget).
 */
export function skillSystemPrompt(
  options: SkillToolsOptions & {
    basePrompt: string;
    message?: string;
    activated?: readonly string[];
    invoked?: readonly string[];
  },
): string {
  if (typeof options?.basePrompt !== 'string')
    throw new TypeError('`basePrompt` must be a string (the start of the system prompt)');
  if (options.message !== undefined && typeof options.message !== 'string')
    throw new TypeError('`message` must be a string');
  const box = toolbox(options);
  // Only skills the catalogue holds: one since removed or switched off is not announced as active.
  const loaded = (name: string) => box.snapshot.skills.has(name);
  const activated = names(options.activated, 'activated').filter(loaded);
  const invoked = names(options.invoked, 'invoked').filter(loaded);
  return buildSkillsPrompt({
    basePrompt: options.basePrompt,
    snapshot: box.snapshot,
    chooser: box.chooser,
    skills: options.registry.settings.skills,
    style: box.style,
    activated,
    message: { text: options.message ?? '', requested: invoked },
    turn: invoked.length > 0 ? { invoked } : undefined,
  }).system;
}
