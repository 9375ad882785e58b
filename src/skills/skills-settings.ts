import { homedir } from 'node:os';
import type { AppConfig, CatalogueFormat, SkillDirectory, SkillsConfig, ToolStyle, ValidationMode } from '../config/app-config.js';
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
  imports?: readonly unknown[];
  useFactory(...args: any[]): SkillsModuleOptions | Promise<SkillsModuleOptions>;
  inject?: readonly unknown[];
  isGlobal?: boolean;
}

const OPTION_KEYS: Readonly<Record<string, string>> = {
  validation: 'validation',
  maxDepth: 'max_depth',
  maxSkills: 'max_skills',
  maxSkillMdBytes: 'max_skill_md_bytes',
  maxResourceBytes: 'max_resource_bytes',
  disabled: 'disabled',
  explicitPrefixes: 'explicit_prefixes',
};
const CATALOGUE_KEYS: Readonly<Record<string, string>> = {
  format: 'catalogue_format',
  includeLocation: 'include_location',
  budgetTokens: 'catalogue_budget_tokens',
  maxSkills: 'catalogue_max_skills',
};

/**
 * The settings for an app's options, checked like the server's configuration file (a wrong type,
 * a bound, an unknown option: a `ConfigError` listing every problem). No file and no environment
 * variable is read.
 */
export function resolveSkillsOptions(options: SkillsModuleOptions, homeDir?: string): SkillsSettings {
  const problems: string[] = [];
  if (options === null || typeof options !== 'object') throw new ConfigError(['SkillsModule options must be an object with `directories`']);
  const overrides: Record<string, unknown> = { 'app.skills.enabled': true, 'app.commands.directories': [], 'app.scripts.enabled': false };
  const { directories, rootDir, catalogue, toolStyle, isGlobal: _global, ...rest } = options;
  if (!Array.isArray(directories)) problems.push('SkillsModule option `directories` must be a list of skill folders');
  else overrides['app.skills.directories'] = directories;
  if (rootDir !== undefined && (typeof rootDir !== 'string' || rootDir === '')) problems.push('SkillsModule option `rootDir` must be a folder path');
  for (const [key, value] of Object.entries(rest)) {
    if (value === undefined) continue;
    if (OPTION_KEYS[key] === undefined) problems.push(`Unknown SkillsModule option \`${key}\``);
    else overrides[`app.skills.${OPTION_KEYS[key]}`] = value;
  }
  if (catalogue !== undefined) {
    if (catalogue === null || typeof catalogue !== 'object') problems.push('SkillsModule option `catalogue` must be an object');
    else {
      for (const [key, value] of Object.entries(catalogue)) {
        if (value === undefined) continue;
        if (CATALOGUE_KEYS[key] === undefined) problems.push(`Unknown SkillsModule option \`catalogue.${key}\``);
        else overrides[`app.skills.${CATALOGUE_KEYS[key]}`] = value;
      }
    }
  }
  if (toolStyle !== undefined) overrides['app.tools.style'] = toolStyle;
  if (problems.length > 0) throw new ConfigError(problems);
  try {
    return skillsSettingsOf(configWith(overrides, rootDir ?? process.cwd(), homeDir ?? homedir()));
  } catch (error) {
    // The problems name the server's keys (`app.skills.max_depth`): an app wrote the option's name.
    if (error instanceof ConfigError) throw new ConfigError(error.problems.map(toOptionNames));
    throw error;
  }
}

const KEY_TO_OPTION = new Map<string, string>([
  ...Object.entries(OPTION_KEYS).map(([option, key]) => [`app.skills.${key}`, option] as [string, string]),
  ...Object.entries(CATALOGUE_KEYS).map(([option, key]) => [`app.skills.${key}`, `catalogue.${option}`] as [string, string]),
  ['app.skills.directories', 'directories'],
  ['app.tools.style', 'toolStyle'],
]);

function toOptionNames(problem: string): string {
  return problem.replace(/app\.(?:skills|tools)\.[a-z_]+/g, (key) => (KEY_TO_OPTION.has(key) ? `SkillsModule option \`${KEY_TO_OPTION.get(key)}\`` : key));
}
