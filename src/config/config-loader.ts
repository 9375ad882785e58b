import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import type { z } from 'zod';
import {
  ConfigError,
  deepFreeze,
  type Place,
  resolveValues,
  type Setting,
  type SettingTree,
  settingsOf,
} from '@skillhost/core';

export { ConfigError };
import type { AppConfig, ConfigValues, MirrorConfig, ModelConfig, ModelProvider, SkillsConfig } from './app-config.js';
import {
  CONFIG_SETTINGS,
  durationMs,
  HEADER_VALUE,
  MIRROR_NAME,
  MIRROR_SETTINGS,
  MODEL_PROVIDERS,
  MODEL_SETTINGS,
  SETTINGS,
} from './config-schema.js';
import { CONFIG_TREE_SCHEMA, describeIssues, MIRROR_TABLE_SCHEMA, MODEL_TABLE_SCHEMA } from './config-validation.js';

export interface LoadConfigOptions {
  /** Defaults to `process.env`. */
  env?: Record<string, string | undefined>;
  /** Explicit config file; otherwise `SKILLHOST_CONFIG`, otherwise `./config.toml`. */
  file?: string;
  /** Already-parsed TOML content; when given, no file is read. */
  toml?: Raw;
  /** Where relative paths resolve from; defaults to the working directory. */
  projectRoot?: string;
  homeDir?: string;
}

type Raw = Record<string, unknown>;

/**
 * Reads config.toml (if any) and the environment, validates every key against the schema derived
 * from the settings tree (zod), and returns a frozen AppConfig; every problem is one line of the
 * ConfigError.
 */
export function loadConfig(options: LoadConfigOptions = {}): AppConfig {
  const env = options.env ?? process.env;
  const place = { root: options.projectRoot ?? process.cwd(), home: options.homeDir ?? homedir() };
  const lines: string[] = [];
  const toml = options.toml ?? readConfigFile(options.file ?? env.SKILLHOST_CONFIG, place.root, lines);
  const { tree, fromEnv } = mergedTree(toml, env);
  const parsed = CONFIG_TREE_SCHEMA.safeParse(tree);
  if (!parsed.success) lines.push(...treeProblems(parsed.error.issues, tree, fromEnv));
  const models = readModels(lookup(tree, 'app.models'), env, lines);
  const defaultModel = chooseDefaultModel(lookup(tree, 'app.default_model') ?? '', models, lines);
  const mirrors = readMirrors(lookup(tree, 'app.skills.mirrors'), lines);
  const exportHeaders = parsed.success ? telemetryHeaders(parsed.data, env, place, lines) : {};
  if (!parsed.success || lines.length > 0) throw new ConfigError(lines);
  return deepFreeze(toAppConfig(parsed.data, { models, defaultModel, mirrors, exportHeaders }, place));
}

/**
 * The file's tree with the environment's values in it: each variable's text read as its
 * setting's kind. `fromEnv` maps a key to the variable that set it, for the problem lines. Absent
 * keys are left to the schema's defaults.
 */
function mergedTree(toml: Raw, env: Record<string, string | undefined>): { tree: Raw; fromEnv: Map<string, string> } {
  const tree = structuredClone(toml);
  const fromEnv = new Map<string, string>();
  const isSet = (candidate: string | undefined) =>
    candidate !== undefined && env[candidate] !== undefined && env[candidate] !== '';
  for (const { key, env: name, fallbackEnv, standardEnv, setting } of SETTINGS) {
    let variable = [name, fallbackEnv].find(isSet);
    // Another tool's standard variable only fills in what Skillhost's own configuration leaves unsaid.
    if (variable === undefined && isSet(standardEnv) && lookup(tree, key) === undefined) variable = standardEnv;
    if (variable === undefined) continue;
    assign(tree, key, fromText(setting.shape, env[variable]!));
    fromEnv.set(key, variable);
  }
  return { tree, fromEnv };
}

function treeProblems(issues: readonly z.core.$ZodIssue[], tree: Raw, fromEnv: Map<string, string>): string[] {
  const index = new Map(SETTINGS.map((s, i) => [s.key, i]));
  const problems = describeIssues(issues, {
    tree: CONFIG_SETTINGS,
    where: (key) => (fromEnv.has(key) ? `${fromEnv.get(key)} (${key})` : key),
    valueAt: (key) => lookup(tree, key),
    rankOf: (key) => index.get(key) ?? SETTINGS.length,
    knownUnder: (prefix) => SETTINGS.map((s) => s.key).filter((key) => key.startsWith(prefix)),
  });
  return problems.sort((a, b) => a.rank - b.rank).map((p) => p.line);
}

/** `[app] default_model` when it names a model; empty: the first model (`default` from the quick start comes first). */
function chooseDefaultModel(
  named: unknown,
  models: Record<string, ModelConfig>,
  problems: string[],
): string | undefined {
  if (named === '') return Object.keys(models)[0];
  if (typeof named === 'string' && Object.hasOwn(models, named)) return named;
  problems.push(
    `app.default_model: ${JSON.stringify(named)} is not allowed; expected one of the configured models ` +
      `(${Object.keys(models).join(', ') || 'none configured'})`,
  );
  return undefined;
}

/**
 * The valid tree as the configuration: keys in camelCase, folders resolved, the MCP catalogue's 0s taken from
 * [app.skills].
 */
function toAppConfig(
  values: ConfigValues,
  tables: {
    models: Record<string, ModelConfig>;
    defaultModel: string | undefined;
    mirrors: Record<string, MirrorConfig>;
    exportHeaders: Record<string, string>;
  },
  place: Place,
): AppConfig {
  const { models, defaultModel, mirrors, exportHeaders } = tables;
  const { app } = resolveValues(CONFIG_SETTINGS, values, place);
  const settings = (lookup(values as Raw, 'app.skills.settings') ?? {}) as SkillsConfig['settings'];
  const mcp = {
    ...app.mcp,
    catalogueBudgetTokens: app.mcp.catalogueBudgetTokens || app.skills.catalogueBudgetTokens,
    catalogueMaxSkills: app.mcp.catalogueMaxSkills || app.skills.catalogueMaxSkills,
  };
  const telemetry = { ...app.telemetry, exportHeaders };
  return { app: { ...app, defaultModel, models, mcp, telemetry, skills: { ...app.skills, settings, mirrors } } };
}

/**
 * Every header the telemetry exports send: `[app.telemetry] headers` as written, and `headers_env`'s each with the
 * value of the environment variable it names. A variable that is not set, a value a header cannot carry and a header
 * named in both are problems; a secret value is never shown.
 */
function telemetryHeaders(
  values: ConfigValues,
  env: Record<string, string | undefined>,
  place: Place,
  problems: string[],
): Record<string, string> {
  const telemetry = resolveValues(CONFIG_SETTINGS.app.telemetry, values.app.telemetry, place);
  const headers: Record<string, string> = { ...telemetry.headers };
  const written = new Set(Object.keys(headers).map((name) => name.toLowerCase()));
  for (const [name, variable] of Object.entries(telemetry.headersEnv)) {
    const where = `app.telemetry.headers_env.${name}`;
    const value = env[variable];
    if (written.has(name.toLowerCase()))
      problems.push(`${where}: the header is also in app.telemetry.headers; name each header once`);
    else if (value === undefined || value === '')
      problems.push(
        `${where}: the environment variable ${variable} is not set (or is empty); set it to the header's value, or ` +
          'remove the header',
      );
    else if (!HEADER_VALUE.test(value))
      problems.push(
        `${where}: the value of ${variable} holds a line break or another character a header cannot carry (not ` +
          'shown, it is a secret)',
      );
    else headers[name] = value;
  }
  return headers;
}

/** `[app.skills.mirrors.NAME]` tables, each checked by MIRROR_TABLE_SCHEMA; names as the admin route takes them. */
function readMirrors(table: unknown, problems: string[]): Record<string, MirrorConfig> {
  const mirrors: Record<string, MirrorConfig> = {};
  if (table === undefined) return mirrors;
  if (table === null || typeof table !== 'object' || Array.isArray(table)) {
    problems.push('app.skills.mirrors: expected tables like [app.skills.mirrors.NAME]');
    return mirrors;
  }
  for (const [name, raw] of Object.entries(table as Raw)) {
    const where = `app.skills.mirrors.${name}`;
    if (!MIRROR_NAME.test(name))
      problems.push(
        `${where}: mirror names may use lowercase letters, digits, '_' and '-' (1–64, a letter or digit first)`,
      );
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      problems.push(`${where}: expected a table`);
      continue;
    }
    const entry = raw as Raw;
    if (entry.source === undefined)
      problems.push(`${where}.source: missing; expected ${MIRROR_SETTINGS.source.expected}`);
    const parsed = MIRROR_TABLE_SCHEMA.safeParse(entry);
    if (!parsed.success) problems.push(...tableProblems(MIRROR_SETTINGS, parsed.error.issues, where, entry));
    if (!parsed.success || entry.source === undefined) continue;
    const interval = String(parsed.data.interval ?? MIRROR_SETTINGS.interval.default);
    const source = String(parsed.data.source).trim();
    mirrors[name] = { name, source, interval, intervalMs: durationMs(interval) ?? 0 };
  }
  return mirrors;
}

/**
 * `[app.models.NAME]` tables (each checked by MODEL_TABLE_SCHEMA), plus the quick start:
 * SKILLHOST_MODEL (with OPENAI_BASE_URL and OPENAI_API_KEY) defines an openai-compatible model
 * named `default` without any file.
 */
function readModels(
  table: unknown,
  env: Record<string, string | undefined>,
  problems: string[],
): Record<string, ModelConfig> {
  const models: Record<string, ModelConfig> = {};
  const quickStart = quickStartModel(env);
  if (quickStart !== undefined) models.default = quickStart;
  if (table === undefined) return models;
  if (table === null || typeof table !== 'object' || Array.isArray(table)) {
    problems.push('app.models: expected tables like [app.models.NAME]');
    return models;
  }
  for (const [name, raw] of Object.entries(table as Raw)) {
    const where = `app.models.${name}`;
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name))
      problems.push(`${where}: model names may use letters, digits, '.', '_' and '-' (1–64)`);
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) problems.push(`${where}: expected a table`);
    // Invalid values are reported; the model is still listed, so default_model is checked against every name.
    else models[name] = readModel(name, raw as Raw, env, problems);
  }
  return models;
}

function quickStartModel(env: Record<string, string | undefined>): ModelConfig | undefined {
  const model = env.SKILLHOST_MODEL?.trim();
  if (model === undefined || model === '') return undefined;
  const baseUrl = env.OPENAI_BASE_URL?.trim() || 'https://api.openai.com/v1';
  return {
    name: 'default',
    provider: 'openai-compatible',
    model,
    baseUrl,
    apiKeyEnv: 'OPENAI_API_KEY',
    apiKey: env.OPENAI_API_KEY || undefined,
    tools: true,
    timeoutMs: 60000,
    maxRetries: 1,
  };
}

function readModel(name: string, entry: Raw, env: Record<string, string | undefined>, problems: string[]): ModelConfig {
  const where = `app.models.${name}`;
  for (const { key, setting } of settingsOf(MODEL_SETTINGS)) {
    if (setting.default === undefined && entry[key] === undefined)
      problems.push(
        `${where}.${key}: missing; expected ${key === 'provider' ? MODEL_PROVIDERS.join(' or ') : 'a value'}`,
      );
  }
  const parsed = MODEL_TABLE_SCHEMA.safeParse(entry);
  if (!parsed.success) problems.push(...tableProblems(MODEL_SETTINGS, parsed.error.issues, where, entry));
  const valid = (parsed.success ? parsed.data : {}) as Raw;
  const value = <T>(key: keyof typeof MODEL_SETTINGS) => (valid[key] ?? MODEL_SETTINGS[key].default) as T;
  const provider = value<ModelProvider>('provider');
  let baseUrl = typeof entry.base_url === 'string' ? entry.base_url : '';
  if (baseUrl === '' && provider === 'anthropic') baseUrl = 'https://api.anthropic.com/v1';
  if (baseUrl === '' && (provider === 'openai-compatible' || entry.provider === 'openai-compatible'))
    problems.push(`${where}.base_url: missing; an openai-compatible model needs its API's base URL`);
  else if (baseUrl !== '' && !/^https?:\/\/[^\s]+$/.test(baseUrl))
    problems.push(`${where}.base_url: ${JSON.stringify(baseUrl)} is not allowed; expected an http(s) URL`);
  const apiKeyEnv = value<string>('api_key_env');
  const apiKey = apiKeyEnv ? env[apiKeyEnv] || undefined : undefined;
  return {
    name,
    provider,
    model: value('model'),
    baseUrl,
    apiKeyEnv,
    apiKey,
    tools: value('tools'),
    timeoutMs: value('timeout_ms'),
    maxRetries: value('max_retries'),
  };
}

/** One line per problem of a keyed table (`[app.models.NAME]`, `[app.skills.mirrors.NAME]`), in its keys' order. */
function tableProblems(tree: SettingTree, issues: readonly z.core.$ZodIssue[], where: string, entry: Raw): string[] {
  const keys = Object.keys(tree);
  const problems = describeIssues(issues, {
    tree,
    prefix: `${where}.`,
    where: (key) => `${where}.${key}`,
    valueAt: (key) => entry[key],
    rankOf: (key) => keys.indexOf(key),
    knownUnder: () => keys,
  });
  return problems.sort((a, b) => a.rank - b.rank).map((p) => p.line);
}

/**
 * The configuration with every default plus TOML-shaped overrides (`{'app.skills.enabled': true}`),
 * validated like a file: for tests and tools. No file is read, and no environment but `env`.
 */
export function configWith(
  overrides: Record<string, unknown>,
  projectRoot = process.cwd(),
  homeDir = homedir(),
  env: Record<string, string | undefined> = {},
): AppConfig {
  const toml: Raw = {};
  for (const [dotted, value] of Object.entries(overrides)) {
    const parts = dotted.split('.');
    let node = toml;
    for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Raw;
    node[parts[parts.length - 1]] = value;
  }
  return loadConfig({ env, toml, projectRoot, homeDir });
}

function readConfigFile(explicitFile: string | undefined, projectRoot: string, problems: string[]): Raw {
  const file = resolve(projectRoot, explicitFile ?? 'config.toml');
  const required = explicitFile !== undefined;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !required) return {};
    problems.push(`config file ${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    return {};
  }
  try {
    return parseToml(text) as Raw;
  } catch (error) {
    problems.push(`config file ${file}: invalid TOML: ${(error as Error).message.split('\n')[0]}`);
    return {};
  }
}

function assign(root: Raw, dotted: string, value: unknown): void {
  const parts = dotted.split('.');
  let node = root;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    // A section written as a plain value stays as it is: the schema reports it.
    if (next !== undefined && (next === null || typeof next !== 'object' || Array.isArray(next))) return;
    node = (node[part] ??= {}) as Raw;
  }
  node[parts[parts.length - 1]] = value;
}

function lookup(root: Raw, dotted: string): unknown {
  let node: unknown = root;
  for (const part of dotted.split('.')) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
    node = (node as Raw)[part];
  }
  return node;
}

/**
 * An environment variable's text as its setting's kind, where it spells one; else the text (which then fails
 * validation).
 */
function fromText(shape: Setting['shape'], text: string): unknown {
  switch (shape) {
    case 'number':
      return /^-?\d+(\.\d+)?$/.test(text.trim()) ? Number(text.trim()) : text;
    case 'boolean': {
      const lowered = text.trim().toLowerCase();
      return ['true', '1', 'yes', 'on'].includes(lowered)
        ? true
        : ['false', '0', 'no', 'off'].includes(lowered)
          ? false
          : text;
    }
    case 'list':
      return parseEnvList(text);
    case 'string':
      return text;
  }
}

/** A JSON array (`["a","b"]`) or a comma-separated list (`a,b`). */
function parseEnvList(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    try {
      return JSON.parse(trimmed);
    } catch {
      return text;
    }
  }
  return trimmed
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part.length > 0);
}

/** The value with every object in it frozen: a configuration nobody can change once it is read. */
