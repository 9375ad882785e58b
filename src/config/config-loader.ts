import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import type { AppConfig, AuthMode, CatalogueFormat, LogFormat, LogLevel, ModelConfig, ModelProvider, SkillDirectory, ToolStyle, ValidationMode } from './app-config.js';
import { MODEL_PROVIDERS, MODEL_SETTINGS, SETTINGS, type Setting } from './config-schema.js';
import { CONFIG_TREE_SCHEMA, describeIssues, MODEL_TABLE_SCHEMA, type Problem } from './config-validation.js';

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

/**
 * Reads config.toml (if any) and the environment, validates every key against the schema derived
 * from the settings table (zod), and returns a frozen AppConfig; every problem is one line of the
 * ConfigError.
 */
export function loadConfig(options: LoadConfigOptions = {}): AppConfig {
  const env = options.env ?? process.env;
  const projectRoot = options.projectRoot ?? process.cwd();
  const fileProblems: string[] = [];
  const toml = options.toml ?? readConfigFile(options.file ?? env.SKILLHOST_CONFIG, projectRoot, fileProblems);
  const { tree, fromEnv } = mergedTree(toml, env);
  const problems: Problem[] = [];
  const parsed = CONFIG_TREE_SCHEMA.safeParse(tree);
  if (!parsed.success) problems.push(...describeIssues(parsed.error.issues, issueContext(tree, fromEnv)));
  problems.sort((a, b) => a.rank - b.rank);
  const lines = [...fileProblems, ...problems.map((p) => p.line)];
  const models = readModels(lookup(tree, 'app.models'), env, lines);
  const values = new Map(SETTINGS.map((setting) => [setting.key, lookup(tree, setting.key)]));
  let defaultModel = values.get('app.default_model') as string;
  if (defaultModel === '') defaultModel = Object.keys(models)[0] ?? '';
  else if (!Object.hasOwn(models, defaultModel)) {
    lines.push(`app.default_model: ${JSON.stringify(defaultModel)} is not allowed; expected one of the configured models (${Object.keys(models).join(', ') || 'none configured'})`);
  }
  if (lines.length > 0) throw new ConfigError(lines);
  const settings = (lookup(tree, 'app.skills.settings') ?? {}) as Record<string, Record<string, unknown>>;
  return buildConfig(values, models, defaultModel || undefined, projectRoot, options.homeDir ?? homedir(), settings);
}

/**
 * The file's tree with every setting filled in: the environment's value (coerced from text to the
 * setting's kind) where set, else the file's, else the default. `fromEnv` maps a key to the
 * variable that set it, for the problem lines.
 */
function mergedTree(toml: Raw, env: Record<string, string | undefined>): { tree: Raw; fromEnv: Map<string, string> } {
  const tree = structuredClone(toml);
  const fromEnv = new Map<string, string>();
  for (const setting of SETTINGS) {
    const variable = [setting.env, setting.fallbackEnv].find((name) => name !== undefined && env[name] !== undefined && env[name] !== '');
    let value: unknown;
    if (variable !== undefined) {
      value = coerceEnv(setting, env[variable]!);
      fromEnv.set(setting.key, variable);
    } else {
      value = lookup(toml, setting.key);
      if (value === undefined) value = setting.default;
    }
    assign(tree, setting.key, value);
  }
  return { tree, fromEnv };
}

function issueContext(tree: Raw, fromEnv: Map<string, string>) {
  const known = SETTINGS.map((s) => s.key);
  const index = new Map(SETTINGS.map((s, i) => [s.key, i]));
  return {
    where: (key: string) => (fromEnv.has(key) ? `${fromEnv.get(key)} (${key})` : key),
    valueAt: (path: readonly PropertyKey[]) => lookup(tree, path.map(String).join('.')),
    kindOf: (key: string) => SETTINGS.find((s) => s.key === key)?.kind,
    rankOf: (key: string) => index.get(key) ?? SETTINGS.length,
    knownUnder: (prefix: string) => known.filter((k) => k.startsWith(prefix)),
  };
}

/**
 * `[app.models.NAME]` tables (each checked by MODEL_TABLE_SCHEMA), plus the quick start:
 * SKILLHOST_MODEL (with OPENAI_BASE_URL and OPENAI_API_KEY) defines an openai-compatible model
 * named `default` without any file.
 */
function readModels(table: unknown, env: Record<string, string | undefined>, problems: string[]): Record<string, ModelConfig> {
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
    for (const setting of MODEL_SETTINGS) {
      if (setting.required && entry[setting.key] === undefined) problems.push(`${where}.${setting.key}: missing; expected ${setting.key === 'provider' ? MODEL_PROVIDERS.join(' or ') : 'a value'}`);
    }
    const parsed = MODEL_TABLE_SCHEMA.safeParse(entry);
    if (!parsed.success) {
      const lines = describeIssues(parsed.error.issues, {
        prefix: `${where}.`,
        where: (key) => `${where}.${key}`,
        valueAt: (path) => entry[String(path[0])],
        kindOf: (key) => MODEL_SETTINGS.find((s) => s.key === key)?.kind,
        rankOf: (key) => MODEL_SETTINGS.findIndex((s) => s.key === key),
        knownUnder: () => MODEL_SETTINGS.map((s) => s.key),
      });
      problems.push(...lines.sort((a, b) => a.rank - b.rank).map((p) => p.line));
    }
    // Invalid values have been reported; the model is still listed, so default_model is checked against every name.
    const valid = parsed.success ? (parsed.data as Raw) : {};
    const value = (key: string) => valid[key] ?? MODEL_SETTINGS.find((s) => s.key === key)!.default;
    const provider = value('provider') as ModelProvider;
    let baseUrl = typeof entry.base_url === 'string' ? entry.base_url : '';
    if (baseUrl === '' && provider === 'anthropic') baseUrl = 'https://api.anthropic.com/v1';
    if (baseUrl === '' && (provider === 'openai-compatible' || entry.provider === 'openai-compatible')) problems.push(`${where}.base_url: missing; an openai-compatible model needs its API's base URL`);
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
      timeoutMs: Number(value('timeout_ms')),
      maxRetries: Number(value('max_retries')),
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
  settings: Record<string, Record<string, unknown>>,
): AppConfig {
  const get = <T>(key: string) => values.get(key) as T;
  const folders = (key: string) => get<string[]>(key).map((d) => resolveSkillDirectory(d, projectRoot, homeDir));
  const config: AppConfig = {
    app: {
      port: get<number>('app.port'),
      host: get<string>('app.host'),
      basePrompt: get<string>('app.base_prompt'),
      defaultModel,
      historyMessages: get<number>('app.history_messages'),
      shutdownGraceMs: get<number>('app.shutdown_grace_ms'),
      tools: {
        enabled: get<boolean>('app.tools.enabled'),
        style: get<ToolStyle>('app.tools.style'),
        useSkillThreshold: get<number>('app.tools.use_skill_threshold'),
        maxSteps: get<number>('app.tools.max_steps'),
        maxAnswerBytes: get<number>('app.tools.max_answer_bytes'),
      },
      commands: { directories: folders('app.commands.directories') },
      scripts: {
        enabled: get<boolean>('app.scripts.enabled'),
        requireAllowedTools: get<boolean>('app.scripts.require_allowed_tools'),
        personalSkills: get<boolean>('app.scripts.personal_skills'),
        timeoutMs: get<number>('app.scripts.timeout_ms'),
        maxOutputBytes: get<number>('app.scripts.max_output_bytes'),
        memoryMb: get<number>('app.scripts.memory_mb'),
        maxProcesses: get<number>('app.scripts.max_processes'),
        maxConcurrent: get<number>('app.scripts.max_concurrent'),
        maxConcurrentPerUser: get<number>('app.scripts.max_concurrent_per_user'),
        maxConcurrentPerTurn: get<number>('app.scripts.max_concurrent_per_turn'),
      },
      models,
      auth: { mode: get<AuthMode>('app.auth.mode'), bootstrapAdminKey: get<string>('app.auth.bootstrap_admin_key') },
      database: {
        url: get<string>('app.database.url'),
        poolSize: get<number>('app.database.pool_size'),
        embeddedDir: resolve(projectRoot, get<string>('app.database.embedded_dir')),
        embeddedPort: get<number>('app.database.embedded_port'),
        statementTimeoutMs: get<number>('app.database.statement_timeout_ms'),
      },
      http: {
        allowedHosts: get<string[]>('app.http.allowed_hosts'),
        corsOrigins: get<string[]>('app.http.cors_origins'),
        bodyTimeoutMs: get<number>('app.http.body_timeout_ms'),
        uploadTimeoutMs: get<number>('app.http.upload_timeout_ms'),
        bodyMinBytesPerSecond: get<number>('app.http.body_min_bytes_per_second'),
      },
      logging: { level: get<LogLevel>('app.logging.level'), format: get<LogFormat>('app.logging.format') },
      metrics: { public: get<boolean>('app.metrics.public') },
      mcp: {
        enabled: get<boolean>('app.mcp.enabled'),
        pageSize: get<number>('app.mcp.page_size'),
        maxSessions: get<number>('app.mcp.max_sessions'),
        maxSessionsPerUser: get<number>('app.mcp.max_sessions_per_user'),
        sessionIdleSeconds: get<number>('app.mcp.session_idle_seconds'),
        cacheTtlMs: get<number>('app.mcp.cache_ttl_ms'),
        catalogueBudgetTokens: get<number>('app.mcp.catalogue_budget_tokens') || get<number>('app.skills.catalogue_budget_tokens'),
        catalogueMaxSkills: get<number>('app.mcp.catalogue_max_skills') || get<number>('app.skills.catalogue_max_skills'),
        instructionsMaxChars: get<number>('app.mcp.instructions_max_chars'),
      },
      limits: {
        requestsPerMinute: get<number>('app.limits.requests_per_minute'),
        turnsPerMinute: get<number>('app.limits.turns_per_minute'),
        maxConcurrentTurns: get<number>('app.limits.max_concurrent_turns'),
      },
      skills: {
        enabled: get<boolean>('app.skills.enabled'),
        directories: folders('app.skills.directories'),
        validation: get<ValidationMode>('app.skills.validation'),
        catalogueFormat: get<CatalogueFormat>('app.skills.catalogue_format'),
        includeLocation: get<boolean>('app.skills.include_location'),
        maxSkills: get<number>('app.skills.max_skills'),
        catalogueBudgetTokens: get<number>('app.skills.catalogue_budget_tokens'),
        catalogueMaxSkills: get<number>('app.skills.catalogue_max_skills'),
        searchTool: get<'auto' | 'always'>('app.skills.search_tool'),
        maxSkillMdBytes: get<number>('app.skills.max_skill_md_bytes'),
        maxResourceBytes: get<number>('app.skills.max_resource_bytes'),
        maxDepth: get<number>('app.skills.max_depth'),
        explicitPrefixes: get<string[]>('app.skills.explicit_prefixes'),
        disabled: get<string[]>('app.skills.disabled'),
        watch: get<boolean>('app.skills.watch'),
        maxInstallBytes: get<number>('app.skills.max_install_bytes'),
        maxPersonalSkills: get<number>('app.skills.max_personal_skills'),
        storeDirectory: resolve(projectRoot, get<string>('app.skills.store_directory')),
        storePrecedence: get<'first' | 'last'>('app.skills.store_precedence'),
        syncIntervalMs: get<number>('app.skills.sync_interval_ms'),
        codeDirectories: folders('app.skills.code_directories'),
        codeTimeoutMs: get<number>('app.skills.code_timeout_ms'),
        codeMemoryMb: get<number>('app.skills.code_memory_mb'),
        settings,
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

/** An environment variable's text as the setting's kind, where it spells one; else the text (which then fails validation). */
function coerceEnv(setting: Setting, text: string): unknown {
  switch (setting.kind.type) {
    case 'integer':
      return /^-?\d+$/.test(text.trim()) ? Number(text.trim()) : text;
    case 'boolean': {
      const lowered = text.trim().toLowerCase();
      return ['true', '1', 'yes', 'on'].includes(lowered) ? true : ['false', '0', 'no', 'off'].includes(lowered) ? false : text;
    }
    case 'string-list':
      return parseEnvList(text);
    default:
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
  return trimmed.split(',').map((part) => part.trim()).filter((part) => part.length > 0);
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
