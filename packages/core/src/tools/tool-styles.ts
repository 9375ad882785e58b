import type { ToolStyle } from '../options/skills-options.schema.js';
import type { CatalogueSnapshot } from '../catalogue/catalogue-snapshot.js';
import { runScriptTool } from './script-tool.js';
import { searchTool } from './search-tool.js';
import { inputJsonSchema, type SkillTool } from './skill-tool.js';
import { activateTool, listResourcesTool, readResourceTool } from './skillhost-tools.js';
import { activateSkillTool, loadSkillTool, useSkillTool } from './style-tools.js';

/**
 * A tool style (`app.tools.style`): the tools the model is offered, the call the server makes for
 * an explicit invocation or a command, and what the system prompt says about them. The catalogue,
 * the cards and persistence are the same in every style.
 */
export interface ToolStyleSet {
  readonly style: ToolStyle;
  readonly tools: readonly SkillTool[];
  /**
   * The activation call for `/name`, `$name` and a command's required skills: the style's own tool, so the model's
   * history stays consistent.
   */
  activation(name: string): { tool: SkillTool; args: Record<string, unknown> };
  /** load_skill lists the skills in its description instead of a catalogue in the system prompt. */
  readonly catalogueInPrompt: boolean;
  /** How-to lines of the system prompt's skills block while the tools are offered. */
  readonly rules: readonly string[];
  byWireName(wireName: string): SkillTool | undefined;
  byName(name: string): SkillTool | undefined;
  /** The definitions exactly as the model is sent them. */
  readonly definitions: readonly ToolDefinitionView[];
}

export interface ToolDefinitionView {
  name: string;
  wireName: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** Every canonical tool name, so a made-up name a model sends cannot add a metrics series. */
export const KNOWN_TOOL_NAMES: ReadonlySet<string> = new Set([
  activateTool.name,
  readResourceTool.name,
  listResourcesTool.name,
  'activate_skill',
  'load_skill',
  useSkillTool.name,
  runScriptTool.name,
  searchTool.name,
]);

const READ_RULE =
  "- Read a skill's other files with skills_readResource only when its instructions call for them; paths are " +
  'relative to the skill folder.';

/**
 * What the style offers besides its own tools: `skills.runScript` while scripts are enabled,
 * `skills.search` when the catalogue is partial or search is always on. With a partial catalogue
 * the style's tools do not list the skills (an enum or a description of thousands would cost more
 * than the whole budget): the ranked catalogue goes in the system prompt instead.
 */
export interface StyleOptions {
  scripts: boolean;
  search?: boolean;
  partial?: boolean;
}

function buildStyle(style: ToolStyle, snapshot: CatalogueSnapshot, options: StyleOptions): ToolStyleSet {
  const set = ownTools(style, snapshot, options.partial === true);
  const tools = [...set.tools];
  const rules = [...set.rules];
  if (options.search === true) {
    tools.push(searchTool);
    rules.push(
      options.partial === true
        ? '- The catalogue lists only some of the skills: when none listed fits the task, find one with ' +
            'skills_search, then use it.'
        : '- To find a skill by what it does, use skills_search.',
    );
  }
  if (options.scripts) {
    tools.push(runScriptTool);
    rules.push(
      "- Run a skill's script with skills_runScript only when its instructions say to; it runs sandboxed, " +
        'without network.',
    );
  }
  return tools.length === set.tools.length ? set : assemble(style, tools, set.activation, set.catalogueInPrompt, rules);
}

function ownTools(style: ToolStyle, snapshot: CatalogueSnapshot, partial: boolean): ToolStyleSet {
  switch (style) {
    case 'skillhost':
      return assemble(
        style,
        [activateTool, readResourceTool, listResourcesTool],
        (name) => ({ tool: activateTool, args: { name } }),
        true,
        [
          '- Before using a skill, activate it with the skills_activate tool, then follow the instructions it returns.',
          READ_RULE,
          '- To find a file a skill mentions, list its files with skills_listResources.',
        ],
      );
    case 'activate_skill': {
      const activate = activateSkillTool(snapshot, partial);
      return assemble(style, [activate, readResourceTool], (name) => ({ tool: activate, args: { name } }), true, [
        '- Before using a skill, call activate_skill with its name, then follow the instructions in the ' +
          '<skill_content> it returns.',
        '- Read a file listed in <skill_resources> with skills_readResource only when the instructions call for ' +
          'it; paths are relative to the skill folder.',
      ]);
    }
    case 'load_skill': {
      const load = loadSkillTool(snapshot, partial);
      return assemble(style, [load, readResourceTool], (name) => ({ tool: load, args: { name } }), partial, [
        partial
          ? '- When a task matches a skill of the catalogue, load it with load_skill, then follow its instructions.'
          : "- The skills are listed in the load_skill tool's description. When a task matches one, load it with " +
            'load_skill, then follow its instructions.',
        "- Read a skill's other files with skills_readResource only when its instructions call for them; paths " +
          'are relative to its base directory.',
      ]);
    }
    case 'use_skill':
      return assemble(
        style,
        [useSkillTool, readResourceTool],
        (name) => ({ tool: useSkillTool, args: { skill_name: name } }),
        true,
        [
          '- To use a skill, call use_skill with its skill_name (or with input describing the task, to use the ' +
            'best match), then follow the instructions it returns.',
          READ_RULE,
        ],
      );
  }
}

function assemble(
  style: ToolStyle,
  tools: readonly SkillTool[],
  activation: ToolStyleSet['activation'],
  catalogueInPrompt: boolean,
  rules: readonly string[],
): ToolStyleSet {
  const byWire = new Map(tools.map((tool) => [tool.wireName, tool]));
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const definitions = tools.map((tool) =>
    Object.freeze({
      name: tool.name,
      wireName: tool.wireName,
      description: tool.description,
      inputSchema: inputJsonSchema(tool),
    }),
  );
  return Object.freeze({
    style,
    tools,
    activation,
    catalogueInPrompt,
    rules,
    definitions,
    byWireName: (wireName: string) => byWire.get(wireName),
    byName: (name: string) => byName.get(name),
  });
}

const built = new WeakMap<CatalogueSnapshot, Map<string, ToolStyleSet>>();

/**
 * The style's tools for a snapshot, built once per snapshot (activate_skill's enum and load_skill's description list
 * its skills).
 */
export function toolStyleFor(
  style: ToolStyle,
  snapshot: CatalogueSnapshot,
  options: StyleOptions = { scripts: false },
): ToolStyleSet {
  let styles = built.get(snapshot);
  if (styles === undefined) {
    styles = new Map();
    built.set(snapshot, styles);
  }
  const key = `${style}${options.scripts ? '+scripts' : ''}${options.search === true ? '+search' : ''}${
    options.partial === true ? '+partial' : ''
  }`;
  let set = styles.get(key);
  if (set === undefined) {
    set = buildStyle(style, snapshot, options);
    styles.set(key, set);
  }
  return set;
}
