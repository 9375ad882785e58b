import { z } from 'zod';
import { ErrorCode } from '../errors/app-error.js';
import type { CatalogueSnapshot } from '../catalogue/catalogue-snapshot.js';
import { escapeXml } from '../catalogue/catalogue-renderer.js';
import type { SkillReader } from '../registry/skill-resources.js';
import { isCodeSkill, type SkillRecord } from '../skill/skill.types.js';
import { searchTool } from './search-tool.js';
import {
  activationResult,
  defineTool,
  MAX_SKILL_NAME_ARGUMENT,
  readsSkills,
  type SkillTool,
  textArgument,
  type ToolContext,
  type ToolResult,
} from './skill-tool.js';

/**
 * The activation tools of the other designs Skillhost was built from. Each activates a skill as
 * `skills.activate` does (same card, same persistence); only what the model sees differs.
 */

/**
 * The agentskills.io client guide: `name` is an enum of the skills the chat may use; a plain string
 * when the catalogue is partial (an enum of thousands of names would cost more than the catalogue).
 * `catalogue`, when given, follows the description (MCP's, where no system prompt lists the skills);
 * `searchToolName` is the search tool as this door names it (MCP's is `search_skills`).
 */
export function activateSkillTool(
  snapshot: CatalogueSnapshot,
  partial = false,
  catalogue?: string,
  searchToolName = searchTool.wireName,
): SkillTool {
  const names = [...snapshot.skills.keys()];
  const nameSchema = partial
    ? textArgument(
        MAX_SKILL_NAME_ARGUMENT,
        `The skill to activate: a name from the catalogue or from ${searchToolName}.`,
      )
    : names.length > 0
      ? z
          .enum(names as [string, ...string[]], {
            error: `must be one of the available skills: ${names.slice(0, 20).join(', ')}${
              names.length > 20 ? ', …' : ''
            }`,
          })
          .describe('The skill to activate.')
      : textArgument(MAX_SKILL_NAME_ARGUMENT, 'No skills are available.');
  return defineTool({
    name: 'activate_skill',
    wireName: 'activate_skill',
    description: `${ACTIVATE_SKILL_DESCRIPTION}${catalogue === undefined ? '' : `\n\n${catalogue}`}`,
    input: z.strictObject({ name: nameSchema }),
    example: `{"name": "${names[0] ?? '<skill>'}"}`,
    annotations: readsSkills('Activate a skill'),
    execute({ name }: { name: string }, context: ToolContext): Promise<ToolResult> {
      return activateSkillOutput(context.resources, name);
    },
  });
}

const ACTIVATE_SKILL_DESCRIPTION =
  'Activate a skill: returns its full instructions in <skill_content> and the list of its files in ' +
  "<skill_resources>. Call it when a task matches a skill's description, then follow the instructions.";

/**
 * What activate_skill answers (in a chat, and over MCP): the instructions in <skill_content>, the files in
 * <skill_resources>.
 */
export async function activateSkillOutput(
  reader: Pick<SkillReader, 'activate' | 'listResources'>,
  name: string,
): Promise<ToolResult> {
  const [skill, listing] = await Promise.all([reader.activate(name), reader.listResources(name)]);
  const files = listing.files.map((file) => `<file>${escapeXml(file.path)}</file>`);
  if (listing.truncated) files.push(`<!-- more files: only the first ${listing.files.length} are listed -->`);
  const output = [
    `<skill_content name="${escapeXml(skill.name)}">`,
    skill.body,
    '</skill_content>',
    '<skill_resources>',
    ...files,
    '</skill_resources>',
  ].join('\n');
  return activationResult(skill, output);
}

/**
 * The Vercel-AI backend design: the skills are listed in the tool's description, not in the system
 * prompt — unless the catalogue is partial: then the ranked catalogue is in the prompt, and the
 * description lists none.
 */
export function loadSkillTool(snapshot: CatalogueSnapshot, partial = false): SkillTool {
  const listed = partial
    ? []
    : [...snapshot.skills.values()].map(
        (skill) => `- ${skill.name}: ${skill.description.replace(/\s*[\r\n]+\s*/g, ' ')}`,
      );
  const available = partial
    ? '\n\nThe skills are listed in the system prompt.'
    : listed.length > 0
      ? `\n\nAvailable skills:\n${listed.join('\n')}`
      : '\n\nNo skills are available.';
  return defineTool({
    name: 'load_skill',
    wireName: 'load_skill',
    description:
      `Load a skill's instructions by name when the task matches its description, then follow them. Its other ` +
      `files are read with skills_readResource, by paths relative to its base directory.${available}`,
    input: z.strictObject({ name: textArgument(MAX_SKILL_NAME_ARGUMENT, 'The skill name, exactly as listed.') }),
    example: '{"name": "<skill>"}',
    annotations: readsSkills('Load a skill'),
    async execute({ name }: { name: string }, context: ToolContext): Promise<ToolResult> {
      const skill = await context.resources.activate(name);
      return activationResult(
        skill,
        `## Skill: ${skill.name}\n\n**Base directory**: skills/${skill.name}\n\n${skill.body}`,
      );
    },
  });
}

const QUOTED_REQUEST_CHARS = 200;

/** How deep code skills may run code skills through ctx.tools.call. */
export const MAX_CODE_DEPTH = 2;

/**
 * The Rumi design: `use_skill {skill_name?, input?}`. With a name, that skill; without, the best
 * match for `input` (or the user's message) when it matches enough of the request's words, else
 * the three closest skills, so the model can choose or go on without one.
 */
export const useSkillTool = defineTool({
  name: 'use_skill',
  wireName: 'use_skill',
  description:
    'Use a skill and get its instructions, which you then follow. Give skill_name to use that skill; or give ' +
    "input (the task in a few words) to use the skill that best matches it; with neither, the user's message is " +
    'matched.',
  input: z.strictObject({
    skill_name: textArgument(MAX_SKILL_NAME_ARGUMENT, 'A skill name from the catalogue.').optional(),
    input: z
      .string({ error: 'must be a string' })
      .max(100_000, { error: 'must be at most 100000 characters' })
      .optional()
      .describe('The task, to find the best-matching skill when no skill_name is given.'),
  }),
  example: '{"skill_name": "<skill>"} or {"input": "<the task>"}',
  // A code skill it runs may do anything its code does: not a read-only tool.
  annotations: {
    title: 'Use a skill',
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: false,
  },
  async execute(
    { skill_name, input }: { skill_name?: string; input?: string },
    context: ToolContext,
  ): Promise<ToolResult> {
    if (skill_name !== undefined) return instructions(skill_name, context, input ?? context.userMessage ?? '');
    const request = input?.trim() || context.userMessage?.trim() || '';
    if (request === '')
      return {
        output: 'Give skill_name, or describe the task in input, to choose a skill.',
        summary: { skill: null, truncated: false },
      };
    const matches = await bestMatches(request, context);
    const best = matches[0];
    if (best !== undefined && best.score * 100 >= context.useSkillThreshold) {
      const used = await instructions(best.name, context, input ?? request);
      const how = best.byCode ? 'by its own canHandle' : "of the request's words";
      return {
        ...used,
        output: `Best match for ${quote(request)}: ${best.name} (${percent(best)} ${how}).\n\n${used.output}`,
      };
    }
    return {
      output: noMatch(request, matches, context.useSkillThreshold),
      summary: { skill: null, candidates: matches.map((m) => m.name), truncated: false },
    };
  },
});

/** An instruction skill's body (the model follows it next), or a code skill's result (its `execute` runs now). */
async function instructions(name: string, context: ToolContext, input: string): Promise<ToolResult> {
  const record = context.registry.get(name);
  if (isCodeSkill(record)) return runCode(record, context, input);
  const skill = await context.resources.activate(name);
  return activationResult(skill, `# Skill: ${skill.name}\n\n${skill.body}`);
}

/** Runs a code skill with the chat's ctx; a failure is an error card, never a failed turn. */
export async function runCode(skill: SkillRecord, context: ToolContext, input: string): Promise<ToolResult> {
  const { code } = context;
  if (code === undefined) {
    return {
      output:
        `Error (${ErrorCode.CODE_SKILL_FAILED}): Skill ` +
        `'${skill.name}' is a code skill, and code skills do not run here.`,
      summary: { skill: skill.name, truncated: false },
      failed: true,
    };
  }
  // A code skill may use another through ctx.tools.call, but not without end (each run is a worker).
  if (code.depth >= MAX_CODE_DEPTH) {
    return {
      output:
        `Error (${ErrorCode.CODE_SKILL_FAILED}): Skill '${skill.name}' was not run: code skills may call code ` +
        `skills only ${MAX_CODE_DEPTH} deep.`,
      summary: { skill: skill.name, truncated: false },
      failed: true,
    };
  }
  const llm =
    code.llm ??
    (async () =>
      Promise.reject(new Error('llm.complete is available only inside a chat turn, not through the tool API')));
  const result = await code.service.run(skill, {
    input,
    userMessage: context.userMessage ?? input,
    chatId: code.chatId,
    llm,
    callTool: code.callTool,
  });
  if (result.success && result.promptInjection) code.injectPrompt?.(result.promptInjection);
  const summary = { skill: skill.name, truncated: false };
  if (!result.success)
    return {
      output:
        `Error (${ErrorCode.CODE_SKILL_FAILED}): Skill '${skill.name}' failed: ` +
        `${result.error ?? 'no reason given'}`,
      summary,
      failed: true,
    };
  return { output: `# Skill: ${skill.name} (ran)\n\n${result.output}`, summary, activated: skill.name };
}

/** A candidate skill for a request; `score` (0..1) is what `use_skill_threshold` is compared with. */
interface SkillMatch {
  name: string;
  description: string;
  score: number;
}

/**
 * The closest skills for a request: the catalogue ranker's three best, scored by the share of the
 * request's words each matches, or a code skill's own `canHandle` score when that is higher.
 */
async function bestMatches(request: string, context: ToolContext): Promise<(SkillMatch & { byCode: boolean })[]> {
  const snapshot = context.snapshot;
  const byWords = snapshot.index
    .search(snapshot, request, { limit: 3 })
    .map((m) => ({ name: m.name, description: m.description, score: m.share, byCode: false }));
  const service = context.code?.service;
  const coded = service === undefined ? [] : [...snapshot.skills.values()].filter(isCodeSkill);
  const byCode = await Promise.all(
    coded.map(async (skill) => ({
      name: skill.name,
      description: skill.description,
      score: (await service!.score(skill, request)) ?? 0,
      byCode: true,
    })),
  );
  const best = new Map<string, SkillMatch & { byCode: boolean }>();
  for (const match of [...byWords, ...byCode]) {
    const known = best.get(match.name);
    if (match.score > 0 && (known === undefined || match.score > known.score)) best.set(match.name, match);
  }
  return [...best.values()]
    .sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .slice(0, 3);
}

function noMatch(request: string, matches: readonly SkillMatch[], threshold: number): string {
  if (matches.length === 0)
    return (
      `No skill matches ${quote(request)}. Go on without a skill, or call use_skill with a skill_name from the ` +
      `catalogue.`
    );
  const lines = matches.map((m) => `- ${m.name} (${percent(m)}): ${m.description.replace(/\s*[\r\n]+\s*/g, ' ')}`);
  return [
    `No skill matches ${quote(request)} closely enough (a match needs ` +
      `${threshold}% of the request's words). The closest:`,
    ...lines,
    'Call use_skill with skill_name set to one of them to use it, or go on without a skill.',
  ].join('\n');
}

function percent(match: SkillMatch): string {
  return `${Math.round(match.score * 100)}%`;
}

function quote(request: string): string {
  const oneLine = request.replace(/\s+/g, ' ');
  if (oneLine.length <= QUOTED_REQUEST_CHARS) return `"${oneLine}"`;
  // By code point, so an emoji is never split into an unpaired surrogate.
  return `"${Array.from(oneLine.slice(0, QUOTED_REQUEST_CHARS * 2))
    .slice(0, QUOTED_REQUEST_CHARS)
    .join('')}…"`;
}
