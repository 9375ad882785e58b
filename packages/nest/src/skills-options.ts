import { homedir } from 'node:os';
import type { FactoryProvider, ModuleMetadata } from '@nestjs/common';
import {
  ConfigError,
  deepFreeze,
  parseSkillsOptions,
  type SkillSource,
  type SkillsOptions,
  type SkillsSettings,
  settingsOfOptions,
} from '@skillhost/core';

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
  /**
   * The app's own skill sources (its database, say), read at start-up and on every reload and
   * merged with the folders and the registered skills by their `precedence` (see `SkillSource`).
   */
  sources?: readonly SkillSource[];
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
  return deepFreeze(settingsOfOptions(parsed.options));
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
