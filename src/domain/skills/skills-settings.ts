import { homedir } from 'node:os';
import type { FactoryProvider, ModuleMetadata } from '@nestjs/common';
import type { AppConfig, SkillDirectory, SkillsConfig, ToolStyle } from '../../config/app-config.js';
import { ConfigError, configWith, deepFreeze } from '../../config/config-loader.js';
import { parseSkillsOptions, type SkillsOptions } from '@skillhost/core';

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
 * `SkillsModule.forRoot(options)`: the skills an app serves, read from its folders. Every option but
 * `directories` has the server's default (README "Configuration reference", `[app.skills]`); the
 * options, their rules and defaults are defined once in skills-options.schema.ts.
 */
export type SkillsModuleOptions = SkillsOptions & {
  /** Where relative `directories` resolve from (default: the working directory when the module is built). */
  rootDir?: string;
  /** Make the registry and resources services injectable everywhere in the app, without importing the module again. */
  isGlobal?: boolean;
};

/** `SkillsModule.forRootAsync`: the options from a factory (a config service, a secret store…). */
export interface SkillsModuleAsyncOptions {
  /** Modules whose providers the factory injects. */
  imports?: ModuleMetadata['imports'];
  /** The options (without `isGlobal`: the module's scope is settled before the factory runs). */
  useFactory(...args: never[]): Omit<SkillsModuleOptions, 'isGlobal'> | Promise<Omit<SkillsModuleOptions, 'isGlobal'>>;
  inject?: FactoryProvider['inject'];
  isGlobal?: boolean;
}

/**
 * The settings for an app's options, checked by the options' schema (a wrong type, a bound, an
 * unknown option: a `ConfigError` listing every problem, each named by its option). What the
 * options do not cover (the store, code skills, watching) keeps the server's defaults. No file and
 * no environment variable is read.
 */
export function resolveSkillsOptions(options: SkillsModuleOptions, homeDir = homedir()): SkillsSettings {
  const root = isPlainObject(options) && typeof options.rootDir === 'string' ? options.rootDir : process.cwd();
  const parsed = parseSkillsOptions(options, { root, home: homeDir });
  if (!parsed.ok) throw new ConfigError(parsed.problems);
  const { catalogue, toolStyle, ...skills } = parsed.options;
  const server = configWith({}, root, homeDir).app;
  return deepFreeze({
    skills: {
      ...server.skills,
      ...skills,
      enabled: true,
      catalogueFormat: catalogue.format,
      includeLocation: catalogue.includeLocation,
      catalogueBudgetTokens: catalogue.budgetTokens,
      catalogueMaxSkills: catalogue.maxSkills,
    },
    commandDirectories: [],
    scriptsEnabled: false,
    toolStyle,
    useSkillThreshold: server.tools.useSkillThreshold,
  });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
