import type { z } from 'zod';
import {
  type AnySetting,
  type Place,
  type ResolvedOf,
  resolveValues,
  schemaOf,
  type Setting,
  setting,
  settingOnPath,
  settingsOf,
  shownValue,
  type ValuesOf,
} from './setting.js';

/**
 * The skills library's options (`SkillsModule.forRoot`): each one's rule, default and meaning,
 * defined here once. The server's configuration places them in its `[app.skills]` and `[app.tools]`
 * sections (src/config/config-schema.ts); an app gives them as options, checked here.
 */
export const VALIDATION_MODES = ['strict', 'standard', 'lenient'] as const;
export type ValidationMode = (typeof VALIDATION_MODES)[number];
export const CATALOGUE_FORMATS = ['json', 'xml', 'markdown'] as const;
export type CatalogueFormat = (typeof CATALOGUE_FORMATS)[number];
/** How the model is offered skills (see README "Tool styles"); catalogue, cards and persistence stay the same. */
export const TOOL_STYLES = ['skillhost', 'activate_skill', 'load_skill', 'use_skill'] as const;
export type ToolStyle = (typeof TOOL_STYLES)[number];
export const EXPLICIT_PREFIXES = ['/', '$'] as const;

/** Memory bounds that hold whatever the configuration says. */
export const HARD_LIMITS = {
  skillMdBytes: 8 * 1024 * 1024,
  resourceBytes: 16 * 1024 * 1024,
  maxSkills: 1_000_000,
  maxDepth: 6,
} as const;

export const SKILLS_OPTIONS = {
  directories: setting.folders({
    description:
      'Skill folders to scan, in precedence order (earlier wins a name collision); `~` is the home folder, ' +
      'relative ones resolve from `rootDir`.',
  }),
  validation: setting.choice(VALIDATION_MODES, {
    default: 'standard',
    description:
      '`strict` (the reference validator: unknown fields are errors), `standard` (unknown fields are warnings) ' +
      'or `lenient` (also loads name mismatches and over-long fields with warnings).',
  }),
  maxDepth: setting.integer({
    min: 1,
    max: HARD_LIMITS.maxDepth,
    default: 1,
    description:
      '1 = immediate children of each directory hold skills; up to 6 for nested collections (deeper levels skip ' +
      '`.git` and `node_modules`).',
  }),
  maxSkills: setting.integer({
    min: 1,
    max: HARD_LIMITS.maxSkills,
    default: 10_000,
    description:
      'Valid skills past this count (in discovery order) are not loaded, with a warning. The prompt does not ' +
      'grow with the skills loaded (see `catalogue_budget_tokens`): this only bounds the scan and memory.',
  }),
  maxSkillMdBytes: setting.integer({
    min: 1024,
    max: HARD_LIMITS.skillMdBytes,
    default: 200_000,
    description: 'A `SKILL.md` body past this many bytes is cut on activation, with a notice.',
  }),
  maxResourceBytes: setting.integer({
    min: 1024,
    max: HARD_LIMITS.resourceBytes,
    default: 2_000_000,
    description: 'A resource past this many bytes is cut, with a notice; only the shown part is read.',
  }),
  disabled: setting.list({
    default: [],
    description:
      'Skills switched off, by name: in no catalogue, `/name` stays plain text, and activating or reading one ' +
      'answers 403 `SKILL_DISABLED` (an error card in a chat). The admin view lists them.',
  }),
  explicitPrefixes: setting.listOf(EXPLICIT_PREFIXES, {
    default: ['/'],
    description:
      'Prefixes that invoke a skill explicitly at the start of a message: `/name`, and `$name` when `"$"` is listed.',
  }),
  catalogue: {
    format: setting.choice(CATALOGUE_FORMATS, {
      default: 'json',
      description: 'How the catalogue is rendered for the model: `json`, `xml` or `markdown`.',
    }),
    includeLocation: setting.boolean({
      default: false,
      description: "List each skill's `SKILL.md` path in the catalogue, for a model that reads files itself.",
    }),
    budgetTokens: setting.integer({
      min: 100,
      max: 1_000_000,
      default: 4000,
      description:
        'The most the catalogue in a prompt may take, in o200k tokens (each listed entry as rendered with its ' +
        "separator, the catalogue's frame and its closing note; not the rules or the rest of the prompt). When " +
        "the chat's skills do not all fit, each turn lists the skills ranked best for the message, whole " +
        'entries only. See "Choosing skills at scale".',
    }),
    maxSkills: setting.integer({
      min: 1,
      max: 10_000,
      default: 50,
      description:
        "The most skills the catalogue in a prompt lists (the chat's activated skills and the one invoked are " +
        'listed even past it).',
    }),
  },
  toolStyle: setting.choice(TOOL_STYLES, {
    default: 'skillhost',
    description:
      'How the model is offered skills: `skillhost` (`skills.activate`, `skills.readResource`, ' +
      '`skills.listResources`), `activate_skill` (the agentskills.io client guide), `load_skill` (skills listed ' +
      'in the tool, not the prompt) or `use_skill` (by name or best match). See "Tool styles".',
  }),
};

/** The options' zod schema: defaults filled in, an unknown option refused. */
export const SKILLS_OPTIONS_SCHEMA = schemaOf(SKILLS_OPTIONS);

type Optional<D> = { [K in keyof D]?: D[K] extends Setting<infer T, infer _R> ? T : Optional<D[K]> };

/** `SkillsModule.forRoot(options)`: `directories` and any other option, which then has the server's default. */
export type SkillsOptions = Optional<typeof SKILLS_OPTIONS> & Pick<ValuesOf<typeof SKILLS_OPTIONS>, 'directories'>;
/** The options once checked: every default filled in, folders resolved. */
export type ResolvedSkillsOptions = ResolvedOf<typeof SKILLS_OPTIONS>;

export type SkillsOptionsResult = { ok: true; options: ResolvedSkillsOptions } | { ok: false; problems: string[] };

const OPTION_LIST = settingsOf(SKILLS_OPTIONS);
/** What `SkillsModule` takes besides the options of the skills. */
const MODULE_OPTIONS = ['rootDir', 'isGlobal', 'sources'];
const label = (name: string) => `SkillsModule option \`${name}\``;

/**
 * Checks an app's options (what plain JavaScript or JSON may hand over): first that each is a known
 * option of the right type (`must be a finite number`), then, those all right, each against its
 * rule (`: 99 is not allowed; expected …`); every problem a line naming the option. `rootDir`,
 * `isGlobal` and `sources` are the module's, not options of the skills: checked, then left to the caller.
 */
export function parseSkillsOptions(options: unknown, place: Place): SkillsOptionsResult {
  const problems = typeProblems(options);
  if (problems.length > 0) return { ok: false, problems };
  const given = Object.fromEntries(
    Object.entries(options as Record<string, unknown>).filter(([key]) => !MODULE_OPTIONS.includes(key)),
  );
  const parsed = SKILLS_OPTIONS_SCHEMA.safeParse(given);
  if (parsed.success) return { ok: true, options: resolveValues(SKILLS_OPTIONS, parsed.data, place) };
  return { ok: false, problems: ruleProblems(parsed.error, given) };
}

function typeProblems(options: unknown): string[] {
  if (!isPlainObject(options)) return ['SkillsModule options must be an object with `directories`'];
  const problems: string[] = [];
  const { rootDir, isGlobal, sources, catalogue, ...rest } = options;
  if (rootDir !== undefined && (typeof rootDir !== 'string' || rootDir.trim() === '' || !storable(rootDir)))
    problems.push(`${label('rootDir')} must be a folder path`);
  if (isGlobal !== undefined && typeof isGlobal !== 'boolean')
    problems.push(`${label('isGlobal')} must be true or false`);
  if (sources !== undefined && !(Array.isArray(sources) && sources.every(isSource)))
    problems.push(
      `${label('sources')} must be a list of SkillSource objects, each with a name, a load() method and, if any, ` +
        'a finite precedence',
    );
  if (rest.directories === undefined) problems.push(`${label('directories')} is required: the skill folders to scan`);
  const given: [string, unknown][] = Object.entries(rest);
  if (catalogue !== undefined) {
    if (isPlainObject(catalogue))
      given.push(...Object.entries(catalogue).map(([key, value]): [string, unknown] => [`catalogue.${key}`, value]));
    else problems.push(`${label('catalogue')} must be an object`);
  }
  for (const [name, value] of given) {
    if (value === undefined) continue;
    const option = OPTION_LIST.find((candidate) => candidate.key === name);
    const problem = option === undefined ? 'unknown' : shapeProblem(option.setting, value);
    if (problem === 'unknown') problems.push(`Unknown SkillsModule option \`${name}\``);
    else if (problem !== undefined) problems.push(`${label(name)} ${problem}`);
  }
  return problems;
}

/** What is wrong with a value's type, before its rule (bounds, choices), or undefined. */
function shapeProblem(of: AnySetting, value: unknown): string | undefined {
  switch (of.shape) {
    case 'list':
      if (!Array.isArray(value)) return 'must be a list of strings';
      return value.every((item) => typeof item === 'string' && item.trim() !== '' && storable(item))
        ? undefined
        : 'must hold only non-empty strings (without NUL)';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'must be a finite number';
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'string':
      return typeof value === 'string' ? undefined : 'must be a string';
  }
}

function ruleProblems(error: z.ZodError, given: Record<string, unknown>): string[] {
  const lines = new Map<string, string>();
  for (const issue of error.issues) {
    const found = settingOnPath(SKILLS_OPTIONS, issue.path);
    if (found === undefined || lines.has(found.key)) continue;
    const value = found.key
      .split('.')
      .reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part], given);
    lines.set(
      found.key,
      `${label(found.key)}: ${shownValue(found.setting, value)} is not allowed; expected ${found.setting.expected}`,
    );
  }
  return OPTION_LIST.flatMap(({ key }) => lines.get(key) ?? []);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Text PostgreSQL can store: no NUL, no unpaired surrogate. */
function storable(text: string): boolean {
  return !text.includes('\0') && (text as unknown as { isWellFormed(): boolean }).isWellFormed();
}

function isSource(value: unknown): boolean {
  return (
    isPlainObject(value) &&
    typeof value.name === 'string' &&
    typeof value.load === 'function' &&
    (value.precedence === undefined || Number.isFinite(value.precedence))
  );
}
