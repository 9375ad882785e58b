import { homedir } from 'node:os';
import type { FactoryProvider, ModuleMetadata } from '@nestjs/common';
import type { AppConfig, CatalogueFormat, SkillDirectory, SkillsConfig, ToolStyle, ValidationMode } from '../config/app-config.js';
import { unstorableCharacter } from '../common/storable-text.js';
import { ConfigError, configWith } from '../config/config-loader.js';

/**
 * What the skills services read: the `[app.skills]` section, the command folders and whether
 * scripts run. The server takes it from its configuration; an app embedding Skillhost gets it from
 * `SkillsModule.forRoot(options)`, checked by the same rules (and defaults) as the server's file.
 */
export interface SkillsSettings {
  readonly skills: SkillsConfig;
  readonly commandDirectories: readonly SkillDirectory[];
  readonly scriptsEnabled: boolean;
  /** The tool style the model is offered (`skillhost/ai-sdk` uses it unless told another). */
  readonly toolStyle: ToolStyle;
  /** `use_skill` without a name: the least share of the request's words the best match must cover, in percent. */
  readonly useSkillThreshold: number;
}

/** The injection token of the skills services' settings. */
export const SKILLS_SETTINGS = Symbol('SKILLHOST_SKILLS_SETTINGS');

/** The server's: its configuration's sections. */
export function skillsSettingsOf(config: AppConfig): SkillsSettings {
  return {
    skills: config.app.skills,
    commandDirectories: config.app.commands.directories,
    scriptsEnabled: config.app.scripts.enabled,
    toolStyle: config.app.tools.style,
    useSkillThreshold: config.app.tools.useSkillThreshold,
  };
}

/**
 * `SkillsModule.forRoot(options)`: the skills an app serves, read from its folders. Every field but
 * `directories` has the server's default (README "Configuration reference", `[app.skills]`).
 */
export interface SkillsModuleOptions {
  /** Skill folders to scan, in precedence order (earlier wins a name collision); relative ones resolve from `rootDir`, `~` is the home folder. */
  directories: readonly string[];
  /** Where relative `directories` resolve from (default: the working directory when the module is built). */
  rootDir?: string;
  /** `strict`, `standard` (default) or `lenient`: how strictly frontmatter is checked against the specification. */
  validation?: ValidationMode;
  /** 1 (default): skills are the folders' immediate children; up to 6 for nested collections. */
  maxDepth?: number;
  /** Valid skills past this count (in discovery order) are not loaded, with a warning (default 10,000). */
  maxSkills?: number;
  /** A SKILL.md body past this many bytes is cut on activation, with a notice (default 200,000). */
  maxSkillMdBytes?: number;
  /** A resource past this many bytes is cut on reading, with a notice (default 2,000,000). */
  maxResourceBytes?: number;
  /** Skills switched off by name: in no catalogue, and activating one is `SKILL_DISABLED`. */
  disabled?: readonly string[];
  /** Prefixes that invoke a skill at the start of a message: `/` (default), and `$` when listed. */
  explicitPrefixes?: readonly ('/' | '$')[];
  catalogue?: {
    /** `json` (default), `xml` or `markdown`. */
    format?: CatalogueFormat;
    /** List each skill's SKILL.md path (for a model that reads files itself). Default false. */
    includeLocation?: boolean;
    /** The most o200k tokens the catalogue in a prompt may take; past it a turn lists the skills ranked best for its message (default 4,000). */
    budgetTokens?: number;
    /** The most skills the catalogue in a prompt lists (default 50). */
    maxSkills?: number;
  };
  /** The tool style `skillhost/ai-sdk` offers: `skillhost` (default), `activate_skill`, `load_skill` or `use_skill`. */
  toolStyle?: ToolStyle;
  /** Make the registry and resources services injectable everywhere in the app, without importing the module again. */
  isGlobal?: boolean;
}

/** `SkillsModule.forRootAsync`: the options from a factory (a config service, a secret store…). */
export interface SkillsModuleAsyncOptions {
  /** Modules whose providers the factory injects. */
  imports?: ModuleMetadata['imports'];
  /** The options (without `isGlobal`: the module's scope is settled before the factory runs). */
  useFactory(...args: never[]): Omit<SkillsModuleOptions, 'isGlobal'> | Promise<Omit<SkillsModuleOptions, 'isGlobal'>>;
  inject?: FactoryProvider['inject'];
  isGlobal?: boolean;
}

type OptionKind = 'strings' | 'number' | 'boolean' | 'choice';

/** Each option: the server's `[app.skills]` (or `[app.tools]`) key it sets, and what its value must be before that key's own checks. */
const OPTIONS = new Map<string, { key: string; kind: OptionKind }>([
  ['directories', { key: 'app.skills.directories', kind: 'strings' }],
  ['validation', { key: 'app.skills.validation', kind: 'choice' }],
  ['maxDepth', { key: 'app.skills.max_depth', kind: 'number' }],
  ['maxSkills', { key: 'app.skills.max_skills', kind: 'number' }],
  ['maxSkillMdBytes', { key: 'app.skills.max_skill_md_bytes', kind: 'number' }],
  ['maxResourceBytes', { key: 'app.skills.max_resource_bytes', kind: 'number' }],
  ['disabled', { key: 'app.skills.disabled', kind: 'strings' }],
  ['explicitPrefixes', { key: 'app.skills.explicit_prefixes', kind: 'strings' }],
  ['catalogue.format', { key: 'app.skills.catalogue_format', kind: 'choice' }],
  ['catalogue.includeLocation', { key: 'app.skills.include_location', kind: 'boolean' }],
  ['catalogue.budgetTokens', { key: 'app.skills.catalogue_budget_tokens', kind: 'number' }],
  ['catalogue.maxSkills', { key: 'app.skills.catalogue_max_skills', kind: 'number' }],
  ['toolStyle', { key: 'app.tools.style', kind: 'choice' }],
]);

/** What is wrong with an option's value before its key's own checks (bounds, choices), or undefined. */
function kindProblem(kind: OptionKind, value: unknown): string | undefined {
  switch (kind) {
    case 'strings':
      if (!Array.isArray(value)) return 'must be a list of strings';
      return value.every((item) => typeof item === 'string' && item.trim() !== '' && unstorableCharacter(item) === undefined) ? undefined : 'must hold only non-empty strings (without NUL)';
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : 'must be a finite number';
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'must be true or false';
    case 'choice':
      return typeof value === 'string' ? undefined : 'must be a string';
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The settings for an app's options, checked like the server's configuration file (a wrong type,
 * a bound, an unknown option: a `ConfigError` listing every problem, each named by its option). No
 * file and no environment variable is read.
 */
export function resolveSkillsOptions(options: SkillsModuleOptions, homeDir?: string): SkillsSettings {
  if (!isPlainObject(options)) throw new ConfigError(['SkillsModule options must be an object with `directories`']);
  const problems: string[] = [];
  const overrides: Record<string, unknown> = { 'app.skills.enabled': true, 'app.commands.directories': [], 'app.scripts.enabled': false };
  const { rootDir, isGlobal, catalogue, ...rest } = options as SkillsModuleOptions & Record<string, unknown>;
  if (rootDir !== undefined && (typeof rootDir !== 'string' || rootDir.trim() === '' || unstorableCharacter(rootDir) !== undefined)) problems.push('SkillsModule option `rootDir` must be a folder path');
  if (isGlobal !== undefined && typeof isGlobal !== 'boolean') problems.push('SkillsModule option `isGlobal` must be true or false');
  if (rest.directories === undefined) problems.push('SkillsModule option `directories` is required: the skill folders to scan');
  const given: [string, unknown][] = Object.entries(rest);
  if (catalogue !== undefined) {
    if (isPlainObject(catalogue)) given.push(...Object.entries(catalogue).map(([key, value]): [string, unknown] => [`catalogue.${key}`, value]));
    else problems.push('SkillsModule option `catalogue` must be an object');
  }
  for (const [name, value] of given) {
    if (value === undefined) continue;
    const option = OPTIONS.get(name);
    if (option === undefined) {
      problems.push(`Unknown SkillsModule option \`${name}\``);
      continue;
    }
    const problem = kindProblem(option.kind, value);
    if (problem !== undefined) problems.push(`SkillsModule option \`${name}\` ${problem}`);
    else overrides[option.key] = value;
  }
  if (problems.length > 0) throw new ConfigError(problems);
  try {
    return skillsSettingsOf(configWith(overrides, rootDir ?? process.cwd(), homeDir ?? homedir()));
  } catch (error) {
    // The problems name the server's keys (`app.skills.max_depth`): an app wrote the option's name.
    if (error instanceof ConfigError) throw new ConfigError([...new Set(error.problems.map(toOptionNames))]);
    throw error;
  }
}

const KEY_TO_OPTION = new Map([...OPTIONS].map(([name, { key }]) => [key, name]));

function toOptionNames(problem: string): string {
  return problem.replace(/app\.(?:skills|tools)\.[a-z_]+/g, (key) => (KEY_TO_OPTION.has(key) ? `SkillsModule option \`${KEY_TO_OPTION.get(key)}\`` : key));
}
