import { z } from 'zod';
import { namesText, problemsText } from '../util/problem-list.js';
import type { CatalogueSnapshot } from '../catalogue/catalogue-snapshot.js';
import type { CodeSkillRunner, ScriptCaller, ScriptRunner } from './tool-ports.js';
import type { CodeSkillLlm, CodeSkillToolCaller } from '../code/code-skill.types.js';
import type { ActivatedSkill, SkillReader } from '../registry/skill-resources.js';
import type { SkillSearchResult } from '../catalogue/catalogue-chooser.js';

/**
 * A skill tool is one definition: its names, its description, a zod schema for its arguments (the
 * JSON Schema the model gets is derived from it) and `execute`. The model loop, REST and GraphQL
 * all check arguments with that schema and run `execute`; nothing else restates either.
 *
 * Canonical names (`skills.activate`) are what cards, logs and the API show; model APIs allow only
 * `[a-zA-Z0-9_-]{1,64}` in tool names, so wire names use `_`.
 */
export interface SkillTool<Input = unknown> {
  name: string;
  wireName: string;
  description: string;
  input: z.ZodType<Input>;
  /** Shown with an argument error, so the model (or a person) sees a call that works. */
  example: string;
  /**
   * What the tool does to the world, as MCP clients read it (some run only read-only tools unattended), and its title.
   */
  annotations: ToolAnnotations;
  /** Top-level string arguments where NUL is the tool's to refuse (a resource path: RESOURCE_OUTSIDE_SKILL). */
  nulAllowed?: readonly string[];
  execute(input: Input, context: ToolContext): Promise<ToolResult>;
}

/** MCP's tool annotations: hints a client may use to decide whether to ask before a call. */
export interface ToolAnnotations {
  /** A short human name clients show in place of the wire name. */
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/**
 * A tool that only reads skills: activating one, reading its files, searching. (In a chat an
 * activation is remembered, but that changes what the chat shows, not the world.)
 */
export function readsSkills(title: string): ToolAnnotations {
  return { title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };
}

/** What a tool may use while it runs. */
export interface ToolContext {
  /** The caller's reads: its view of the catalogue and, in a chat, the versions it activated. */
  resources: SkillReader;
  /** Name lookups in the caller's view, with suggestions (SKILL_NOT_FOUND names the skills that exist). */
  registry: Pick<SkillReader, 'get'>;
  snapshot: CatalogueSnapshot;
  /** The user's words this turn (without any invocation prefix); absent for API calls. */
  userMessage?: string;
  /** The caller's view ranked for a query (`skills.search`), best first. */
  search(query: string, limit: number): SkillSearchResult[];
  /** `app.tools.use_skill_threshold`, in percent. */
  useSkillThreshold: number;
  /** Running scripts; absent where scripts are not offered (an app embedding Skillhost). */
  scripts?: ScriptRunner;
  /** Who the call is made for: a script counts against this user's and this turn's caps. */
  caller?: ScriptCaller;
  /** Running code skills: the service, and what their `ctx` reaches in this chat; absent where there are none. */
  code?: {
    service: CodeSkillRunner;
    chatId: string;
    /** The chat's model; absent outside a turn (an API call), where `ctx.llm.complete` fails with a reason. */
    llm?: CodeSkillLlm;
    callTool: CodeSkillToolCaller;
    /** Adds a code skill's `promptInjection` to the system prompt for the rest of the turn. */
    injectPrompt?(text: string): void;
    /** How many code skills this call is nested in (0: the model or the user made it). */
    depth: number;
  };
}

import type { ToolCardSummary } from './tool-cards.js';

export interface ToolResult {
  output: string;
  summary: ToolCardSummary;
  /** The skill this call activated (its instructions reached the model). */
  activated?: string;
  /** The version it activated (in a chat), recorded with the activation. */
  version?: string;
  /** The call ran but did not succeed (a script's non-zero exit): an error card, with this output. */
  failed?: boolean;
}

/**
 * The result of an activation: `output` for the model (with a note when the version could not be
 * pinned), the card's summary with the version, and the activation with its version.
 */
export function activationResult(skill: ActivatedSkill, output: string): ToolResult {
  const note = skill.versionWarning === undefined ? '' : `\n\n[Note: ${skill.versionWarning}]`;
  const version = skill.version === undefined ? {} : { version: skill.version };
  const warning = skill.versionWarning === undefined ? {} : { versionWarning: skill.versionWarning };
  return {
    output: output + note,
    summary: { skill: skill.name, truncated: skill.truncated, ...version, ...warning },
    activated: skill.name,
    ...version,
  };
}

/** Keeps each tool's own input type inside its definition while lists hold them alike. */
export function defineTool<Input>(tool: SkillTool<Input>): SkillTool {
  return tool as unknown as SkillTool;
}

/** The JSON Schema sent to the model for a tool, derived from its zod schema. */
export function inputJsonSchema(tool: SkillTool): Record<string, unknown> {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(tool.input) as Record<string, unknown>;
  return schema;
}

/** A non-empty string argument (not only spaces) of at most `max` characters. */
export function textArgument(max: number, description: string) {
  return z
    .string({ error: 'must be a non-empty string' })
    .max(max, { error: `must be at most ${max} characters` })
    .refine((value) => value.trim() !== '', { error: 'must be a non-empty string' })
    .describe(description);
}

/** Skill names are at most 64 characters by the specification; 200 leaves room for a readable error on a near miss. */
export const MAX_SKILL_NAME_ARGUMENT = 200;
export const MAX_PATH_ARGUMENT = 4096;

/**
 * The tool's arguments, or what is wrong with them in one readable sentence that ends with a call
 * that works. The same text is the model's error card and the API caller's 400.
 */
export function parseToolArguments(
  tool: SkillTool,
  args: unknown,
): { ok: true; input: unknown } | { ok: false; message: string; problems: string[] } {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) {
    const message = `Arguments must be a JSON object like ${tool.example}.`;
    return { ok: false, message, problems: [message] };
  }
  const parsed = tool.input.safeParse(args);
  if (parsed.success) return { ok: true, input: parsed.data };
  const problems = describeIssues(parsed.error.issues);
  return {
    ok: false,
    message: `Invalid arguments for ${tool.name}: ${problemsText(problems)}. Expected ${tool.example}.`,
    problems,
  };
}

/** Field problems first, in field order, then unknown arguments (the first few named, the rest counted). */
function describeIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  const fields = issues
    .filter((issue) => issue.code !== 'unrecognized_keys')
    .map((issue) => `'${issue.path.join('.')}' ${issue.message}`);
  const unknown = issues.flatMap((issue) => (issue.code === 'unrecognized_keys' ? issue.keys : []));
  return unknown.length > 0 ? [...fields, `unknown argument(s): ${namesText(unknown)}`] : fields;
}
