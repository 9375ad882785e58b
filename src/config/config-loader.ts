import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import type { AppConfig, AuthMode, CatalogueFormat, LogFormat, LogLevel, ModelConfig, ModelProvider, SkillDirectory, ValidationMode } from './app-config.js';
import { MODEL_PROVIDERS, MODEL_SETTINGS, SETTINGS, type Setting } from './config-schema.js';

export class ConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

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

/** Reads config.toml (if any) and the environment, validates every key, returns a frozen AppConfig. */
export function loadConfig(options: LoadConfigOptions = {}): AppConfig {
  const env = options.env ?? process.env;
  const projectRoot = options.projectRoot ?? process.cwd();
  const problems: string[] = [];
  const toml = options.toml ?? readConfigFile(options.file ?? env.SKILLHOST_CONFIG, projectRoot, problems);
  const values = new Map<string, unknown>();
  for (const setting of SETTINGS) {
    const fromEnv = env[setting.env];
    if (fromEnv !== undefined && fromEnv !== '') {
      values.set(setting.key, coerceEnv(setting, fromEnv, problems));
    } else {
      const fromToml = lookup(toml, setting.key);
      values.set(setting.key, fromToml === undefined ? setting.default : check(setting, fromToml, setting.key, problems));
    }
  }
  problems.push(...unknownKeys(toml));
  const models = readModels(toml, env, problems);
  let defaultModel = values.get('app.default_model') as string;
  if (defaultModel === '') defaultModel = Object.keys(models)[0] ?? '';
  else if (!(defaultModel in models)) {
    problems.push(`app.default_model: ${JSON.stringify(defaultModel)} is not allowed; expected one of the configured models (${Object.keys(models).join(', ') || 'none configured'})`);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return buildConfig(values, models, defaultModel || undefined, projectRoot, options.homeDir ?? homedir());
}

/**
 * `[app.models.NAME]` tables, plus the quick start: SKILLHOST_MODEL (with OPENAI_BASE_URL and
 * OPENAI_API_KEY) defines an openai-compatible model named `default` without any file.
 */
function readModels(toml: Raw, env: Record<string, string | undefined>, problems: string[]): Record<string, ModelConfig> {
  const models: Record<string, ModelConfig> = {};
  const quickStart = env.SKILLHOST_MODEL;
  if (quickStart !== undefined && quickStart.trim() !== '') {
    models.default = {
      name: 'default',
      provider: 'openai-compatible',
      model: quickStart.trim(),
      baseUrl: env.OPENAI_BASE_URL?.trim() || 'https://api.openai.com/v1',
      apiKeyEnv: 'OPENAI_API_KEY',
      apiKey: env.OPENAI_API_KEY || undefined,
      tools: true,
      timeoutMs: 60000,
      maxRetries: 1,
    };
  }
  const table = lookup(toml, 'app.models');
  if (table === undefined) return models;
  if (table === null || typeof table !== 'object' || Array.isArray(table)) {
    problems.push('app.models: expected tables like [app.models.NAME]');
    return models;
  }
  for (const [name, raw] of Object.entries(table as Raw)) {
    const where = `app.models.${name}`;
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name)) problems.push(`${where}: model names may use letters, digits, '.', '_' and '-' (1–64)`);
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      problems.push(`${where}: expected a table`);
      continue;
    }
    const entry = raw as Raw;
    const value = (key: string) => {
      const setting = MODEL_SETTINGS.find((s) => s.key === key)!;
      if (entry[key] === undefined) {
        if (setting.required) problems.push(`${where}.${key}: missing; expected ${key === 'provider' ? MODEL_PROVIDERS.join(' or ') : 'a value'}`);
        return setting.default;
      }
      return check({ ...setting, env: '' }, entry[key], `${where}.${key}`, problems);
    };
    for (const key of Object.keys(entry)) {
      if (!MODEL_SETTINGS.some((s) => s.key === key)) problems.push(`${where}.${key}: unknown key (known keys: ${MODEL_SETTINGS.map((s) => s.key).join(', ')})`);
    }
    const provider = value('provider') as ModelProvider;
    let baseUrl = value('base_url') as string;
    if (baseUrl === '' && provider === 'anthropic') baseUrl = 'https://api.anthropic.com/v1';
    if (baseUrl === '' && provider === 'openai-compatible') problems.push(`${where}.base_url: missing; an openai-compatible model needs its API's base URL`);
    else if (baseUrl !== '' && !/^https?:\/\/[^\s]+$/.test(baseUrl)) problems.push(`${where}.base_url: ${JSON.stringify(baseUrl)} is not allowed; expected an http(s) URL`);
    const apiKeyEnv = value('api_key_env') as string;
    models[name] = {
      name,
      provider,
      model: value('model') as string,
      baseUrl,
      apiKeyEnv,
      apiKey: apiKeyEnv ? env[apiKeyEnv] || undefined : undefined,
      tools: value('tools') as boolean,
      timeoutMs: value('timeout_ms') as number,
      maxRetries: value('max_retries') as number,
    };
  }
  return models;
}

/**
 * The configuration with every default plus TOML-shaped overrides (`{'app.skills.enabled': true}`),
 * validated like a file: for tests and tools. No file is read, and no environment but `env`.
 */
export function configWith(overrides: Record<string, unknown>, projectRoot = process.cwd(), homeDir = homedir(), env: Record<string, string | undefined> = {}): AppConfig {
  const toml: Raw = {};
  for (const [dotted, value] of Object.entries(overrides)) {
    const parts = dotted.split('.');
    let node = toml;
    for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Raw;
    node[parts[parts.length - 1]] = value;
  }
  return loadConfig({ env, toml, projectRoot, homeDir });
}

export function resolveSkillDirectory(configured: string, projectRoot: string, homeDir: string): SkillDirectory {
  let path = configured;
  if (path === '~') path = homeDir;
  else if (path.startsWith('~/')) path = resolve(homeDir, path.slice(2));
  else if (!isAbsolute(path)) path = resolve(projectRoot, path);
  return { configured, path };
}

function buildConfig(
  values: Map<string, unknown>,
  models: Record<string, ModelConfig>,
  defaultModel: string | undefined,
  projectRoot: string,
  homeDir: string,
): AppConfig {
  const get = <T>(key: string) => values.get(key) as T;
  const config: AppConfig = {
    app: {
      port: get<number>('app.port'),
      host: get<string>('app.host'),
      basePrompt: get<string>('app.base_prompt'),
      defaultModel,
      historyMessages: get<number>('app.history_messages'),
      shutdownGraceMs: get<number>('app.shutdown_grace_ms'),
      tools: { enabled: get<boolean>('app.tools.enabled'), maxSteps: get<number>('app.tools.max_steps'), maxAnswerBytes: get<number>('app.tools.max_answer_bytes') },
      models,
      auth: { mode: get<AuthMode>('app.auth.mode') },
      database: {
        url: get<string>('app.database.url'),
        poolSize: get<number>('app.database.pool_size'),
        embeddedDir: resolve(projectRoot, get<string>('app.database.embedded_dir')),
        embeddedPort: get<number>('app.database.embedded_port'),
        statementTimeoutMs: get<number>('app.database.statement_timeout_ms'),
      },
      http: { allowedHosts: get<string[]>('app.http.allowed_hosts'), corsOrigins: get<string[]>('app.http.cors_origins') },
      logging: { level: get<LogLevel>('app.logging.level'), format: get<LogFormat>('app.logging.format') },
      metrics: { public: get<boolean>('app.metrics.public') },
      limits: {
        requestsPerMinute: get<number>('app.limits.requests_per_minute'),
        turnsPerMinute: get<number>('app.limits.turns_per_minute'),
        maxConcurrentTurns: get<number>('app.limits.max_concurrent_turns'),
      },
      skills: {
        enabled: get<boolean>('app.skills.enabled'),
        directories: get<string[]>('app.skills.directories').map((d) => resolveSkillDirectory(d, projectRoot, homeDir)),
        validation: get<ValidationMode>('app.skills.validation'),
        catalogueFormat: get<CatalogueFormat>('app.skills.catalogue_format'),
        includeLocation: get<boolean>('app.skills.include_location'),
        maxSkills: get<number>('app.skills.max_skills'),
        maxSkillMdBytes: get<number>('app.skills.max_skill_md_bytes'),
        maxResourceBytes: get<number>('app.skills.max_resource_bytes'),
        maxDepth: get<number>('app.skills.max_depth'),
        explicitPrefixes: get<string[]>('app.skills.explicit_prefixes'),
      },
    },
  };
  return deepFreeze(config);
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

function lookup(root: Raw, dotted: string): unknown {
  let node: unknown = root;
  for (const part of dotted.split('.')) {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return undefined;
    node = (node as Raw)[part];
  }
  return node;
}

/** Keys in the file that no setting reads: almost always a typo, so they stop the start. */
function unknownKeys(toml: Raw): string[] {
  const known = new Set(SETTINGS.map((s) => s.key));
  const sections = new Set(SETTINGS.flatMap((s) => s.key.split('.').slice(0, -1).map((_, i, parts) => parts.slice(0, i + 1).join('.'))));
  const problems: string[] = [];
  const walk = (node: Raw, prefix: string) => {
    for (const [name, value] of Object.entries(node)) {
      const key = prefix ? `${prefix}.${name}` : name;
      if (known.has(key) || key === 'app.models') continue;
      if (sections.has(key) && value !== null && typeof value === 'object' && !Array.isArray(value)) walk(value as Raw, key);
      else problems.push(`${key}: unknown key (known keys: ${[...known].filter((k) => k.startsWith(prefix)).join(', ')})`);
    }
  };
  walk(toml, '');
  return problems;
}

function coerceEnv(setting: Setting, text: string, problems: string[]): unknown {
  const where = `${setting.env} (${setting.key})`;
  switch (setting.kind.type) {
    case 'integer':
      return check(setting, /^-?\d+$/.test(text.trim()) ? Number(text.trim()) : text, where, problems);
    case 'boolean': {
      const lowered = text.trim().toLowerCase();
      const value = ['true', '1', 'yes', 'on'].includes(lowered) ? true : ['false', '0', 'no', 'off'].includes(lowered) ? false : text;
      return check(setting, value, where, problems);
    }
    case 'string-list':
      return check(setting, parseEnvList(text), where, problems);
    default:
      return check(setting, text, where, problems);
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
  return trimmed.split(',').map((part) => part.trim()).filter((part) => part.length > 0);
}

function check(setting: Setting, value: unknown, where: string, problems: string[]): unknown {
  const bad = (allowed: string) => {
    problems.push(`${where}: ${JSON.stringify(value)} is not allowed; expected ${allowed}`);
    return setting.default;
  };
  const kind = setting.kind;
  switch (kind.type) {
    case 'integer':
      if (typeof value === 'bigint') value = Number(value);
      if (typeof value !== 'number' || !Number.isInteger(value) || value < kind.min || value > kind.max) {
        return bad(`an integer from ${kind.min} to ${kind.max}`);
      }
      return value;
    case 'boolean':
      return typeof value === 'boolean' ? value : bad('true or false');
    case 'string':
      return typeof value === 'string' && (!kind.nonEmpty || value.trim() !== '') ? value : bad(kind.nonEmpty ? 'a non-empty string' : 'a string');
    case 'enum':
      return typeof value === 'string' && kind.values.includes(value) ? value : bad(`one of ${kind.values.join(', ')}`);
    case 'string-list':
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string' && v.trim() !== '')) return bad('a list of non-empty strings');
      if (kind.values && !value.every((v) => kind.values!.includes(v))) return bad(`a list of ${kind.values.join(', ')}`);
      return value;
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
