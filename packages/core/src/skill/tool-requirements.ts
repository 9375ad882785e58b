import type { SkillFrontmatter } from './skill-validator.js';
import type { SkillRecord, UnavailableSkill } from './skill.types.js';

/**
 * `tools_required` (the Rumi design's dependency check): a skill may name the tools it needs, at the
 * top level of its frontmatter or, to stay within the specification's fields, in
 * `metadata.tools_required`. A skill that needs a tool the chats do not have is not offered at all:
 * a model could only fail with it.
 */
export const TOOLS_REQUIRED_FIELD = 'tools_required';

/** The skill tools of every style, by canonical and wire name: a chat with skills always has them. */
export const SKILL_TOOL_NAMES: readonly string[] = [
  'skills.activate',
  'skills_activate',
  'skills.readResource',
  'skills_readResource',
  'skills.listResources',
  'skills_listResources',
  'activate_skill',
  'load_skill',
  'use_skill',
];

/** Offered only while scripts are on (`app.scripts.enabled`): `bash` and `shell` name the same ability. */
export const SCRIPT_TOOL_NAMES: readonly string[] = ['skills.runScript', 'skills_runScript', 'bash', 'shell'];

/** The tools a chat of this server can have, as `toolKey`s. */
export interface ToolAvailability {
  readonly tools: ReadonlySet<string>;
  readonly scriptsEnabled: boolean;
}

/** The tools a chat has unless the application says otherwise (`SkillRegistryService.setAvailableTools`). */
export function defaultToolNames(scriptsEnabled: boolean): string[] {
  return [...SKILL_TOOL_NAMES, ...(scriptsEnabled ? SCRIPT_TOOL_NAMES : [])];
}

export function toolAvailability(names: Iterable<string>, scriptsEnabled: boolean): ToolAvailability {
  return Object.freeze({ tools: new Set([...names].map(toolKey)), scriptsEnabled });
}

/** How names are compared: case-insensitive, and `Bash(git:*)` (the allowed-tools form) names `bash`. */
export function toolKey(name: string): string {
  return name
    .trim()
    .replace(/\(.*\)$/s, '')
    .toLowerCase();
}

/** The tools a skill declares it needs, and a warning for a declaration that is not a list of names. */
export function readToolsRequired(frontmatter: Readonly<SkillFrontmatter>): { tools?: string[]; warnings: string[] } {
  const declarations = [
    { where: TOOLS_REQUIRED_FIELD, value: frontmatter[TOOLS_REQUIRED_FIELD] },
    { where: `metadata.${TOOLS_REQUIRED_FIELD}`, value: frontmatter.metadata?.[TOOLS_REQUIRED_FIELD] },
  ].filter((declaration) => declaration.value !== undefined);
  if (declarations.length === 0) return { warnings: [] };
  const tools = new Set<string>();
  const warnings: string[] = [];
  for (const { where, value } of declarations) {
    const names = toolNames(value);
    if (names === undefined)
      warnings.push(
        `Field '${where}' must be a list of tool names or a space- or comma-separated string; it was ignored`,
      );
    else for (const name of names) tools.add(name);
  }
  return tools.size > 0 ? { tools: [...tools], warnings } : { warnings };
}

/** A list of names, a space/comma-separated string, or that list as JSON text (how `metadata` stores a list). */
function toolNames(value: unknown): string[] | undefined {
  if (typeof value === 'string') {
    const text = value.trim();
    if (text.startsWith('[')) return toolNames(parseJson(text));
    return text.split(/[\s,]+/).filter((name) => name !== '');
  }
  if (Array.isArray(value) && value.every((item) => typeof item === 'string'))
    return value.map((name) => name.trim()).filter((name) => name !== '');
  return undefined;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Why the skill is not offered, or undefined when every tool it needs is there. */
export function checkToolsRequired(skill: SkillRecord, availability: ToolAvailability): UnavailableSkill | undefined {
  const missingTools = (skill.toolsRequired ?? []).filter((name) => !availability.tools.has(toolKey(name)));
  if (missingTools.length === 0) return undefined;
  const explained = missingTools.map((name) => `'${name}' (${whyMissing(name, availability)})`);
  return {
    name: skill.name,
    path: skill.path,
    source: skill.source,
    missingTools,
    reason:
      `It needs tools the chats of this server do not have: ${explained.join(', ')}; it is left out of the ` +
      `catalogue until they are offered.`,
  };
}

const SCRIPT_TOOL_KEYS = new Set(SCRIPT_TOOL_NAMES.map(toolKey));

function whyMissing(name: string, availability: ToolAvailability): string {
  return SCRIPT_TOOL_KEYS.has(toolKey(name)) && !availability.scriptsEnabled
    ? 'offered only while scripts are on: app.scripts.enabled = true'
    : 'no chat of this server has it';
}
