import { AppError, ErrorCode } from '../errors/app-error.js';
import type { CodeSkillCanHandle, CodeSkillExecute } from '../code/code-skill.types.js';
import { normalizeResourcePath } from '../resources/resource-path.js';
import { validateFrontmatter } from './skill-validator.js';
import { SKILL_SCOPES, type SkillRecord, type SkillScope } from './skill.types.js';

/**
 * A skill an embedding Nest application registers at run time through `SkillRegistryService.register`:
 * an instruction skill (`instructions`), a code skill (`execute`), or both. It lives in memory only.
 */
export interface ProgrammaticSkill {
  /** The rules of a SKILL.md `name`: lowercase letters, digits and single inner hyphens, at most 64. */
  name: string;
  /** What it does and when to use it, at most 1024 characters: the catalogue shows it. */
  description: string;
  /** What activation returns, as a SKILL.md body would be. */
  instructions?: string;
  /** Runs in-process (trusted application code) with the same ctx and result as a `skill.mjs`. */
  execute?: CodeSkillExecute;
  /** How well it fits a query, 0..1 (use_skill's matching). */
  canHandle?: CodeSkillCanHandle;
  /**
   * Its other files by relative path (`references/guide.md`), served as readResource and listResources serve a
   * folder's.
   */
  resources?: Record<string, string>;
  /** Tools it needs from the chat; without them it is not offered. */
  toolsRequired?: readonly string[];
}

/** Where a programmatic skill of `scope` appears in paths and reports: it has no folder. */
export function programmaticSource(scope: SkillScope): string {
  return `programmatic:${scope}`;
}

/** The skill as the registry holds it, or VALIDATION_FAILED naming every problem. */
export function programmaticSkillRecord(skill: ProgrammaticSkill, scope: SkillScope): SkillRecord {
  const problems = skillProblems(skill, scope);
  const validated = validateFrontmatter(
    { name: skill?.name, description: skill?.description },
    typeof skill?.name === 'string' ? skill.name.trim() : '',
    'strict',
  );
  problems.unshift(...validated.errors);
  const frontmatter = validated.frontmatter;
  if (problems.length > 0 || frontmatter === undefined) {
    const shown = typeof skill?.name === 'string' ? `'${skill.name}'` : '(unnamed)';
    throw new AppError(
      ErrorCode.VALIDATION_FAILED,
      `Programmatic skill ${shown} cannot be registered: ${problems.join('; ')}.`,
      { problems },
    );
  }
  const source = programmaticSource(scope);
  const path = `${source}/${frontmatter.name}`;
  return Object.freeze({
    name: frontmatter.name,
    description: frontmatter.description,
    path,
    skillFile: `${path}/SKILL.md`,
    source,
    frontmatter: Object.freeze(frontmatter),
    warnings: Object.freeze([]),
    origin: 'programmatic' as const,
    scope,
    ...(skill.toolsRequired === undefined || skill.toolsRequired.length === 0
      ? {}
      : { toolsRequired: Object.freeze([...skill.toolsRequired]) }),
    programmatic: Object.freeze({
      instructions: skill.instructions,
      execute: skill.execute,
      canHandle: skill.canHandle,
      resources: normalizedResources(skill.resources),
    }),
  });
}

/** Everything wrong besides name and description (which the specification's rules check). */
function skillProblems(skill: ProgrammaticSkill, scope: SkillScope): string[] {
  if (skill === null || typeof skill !== 'object')
    return ['the skill must be an object { name, description, instructions?, execute?, … }'];
  const problems: string[] = [];
  if (!SKILL_SCOPES.includes(scope))
    problems.push(`scope must be one of ${SKILL_SCOPES.join(', ')} (got ${String(scope)})`);
  if (skill.instructions !== undefined && typeof skill.instructions !== 'string')
    problems.push("'instructions' must be a string");
  for (const field of ['execute', 'canHandle'] as const) {
    if (skill[field] !== undefined && typeof skill[field] !== 'function')
      problems.push(`'${field}' must be a function`);
  }
  if (skill.instructions === undefined && skill.execute === undefined)
    problems.push("give 'instructions' (an instruction skill), 'execute' (a code skill), or both");
  if (
    skill.toolsRequired !== undefined &&
    !(
      Array.isArray(skill.toolsRequired) &&
      skill.toolsRequired.every((name) => typeof name === 'string' && name.trim() !== '')
    )
  ) {
    problems.push("'toolsRequired' must be a list of tool names");
  }
  problems.push(...resourceProblems(skill.resources));
  return problems;
}

function resourceProblems(resources: unknown): string[] {
  if (resources === undefined) return [];
  if (resources === null || typeof resources !== 'object' || Array.isArray(resources))
    return ["'resources' must be an object mapping relative paths to text"];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const [path, content] of Object.entries(resources)) {
    if (typeof content !== 'string') problems.push(`resource '${path}' must be text (a string)`);
    let normalized: string;
    try {
      normalized = normalizeResourcePath(path);
    } catch (error) {
      problems.push(`resource '${path}': ${(error as Error).message}`);
      continue;
    }
    if (normalized === 'SKILL.md')
      problems.push("resource 'SKILL.md' is the skill itself; give its body as 'instructions'");
    else if (seen.has(normalized)) problems.push(`resource '${path}' names '${normalized}' twice`);
    seen.add(normalized);
  }
  return problems;
}

function normalizedResources(resources: Record<string, string> | undefined): ReadonlyMap<string, string> {
  return new Map(Object.entries(resources ?? {}).map(([path, content]) => [normalizeResourcePath(path), content]));
}
