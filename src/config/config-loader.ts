import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import type { AppConfig, CatalogueFormat, SkillDirectory, ValidationMode } from './app-config.js';
import { SETTINGS, type Setting } from './config-schema.js';

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
  if (problems.length > 0) throw new ConfigError(problems);
  return buildConfig(values, projectRoot, options.homeDir ?? homedir());
}

/**
 * The configuration with every default plus TOML-shaped overrides (`{'app.skills.enabled': true}`),
 * validated like a file: for tests and tools. No file or environment is read.
 */
export function configWith(overrides: Record<string, unknown>, projectRoot = process.cwd(), homeDir = homedir()): AppConfig {
  const toml: Raw = {};
  for (const [dotted, value] of Object.entries(overrides)) {
    const parts = dotted.split('.');
    let node = toml;
    for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Raw;
    node[parts[parts.length - 1]] = value;
  }
  return loadConfig({ env: {}, toml, projectRoot, homeDir });
}

export function resolveSkillDirectory(configured: string, projectRoot: string, homeDir: string): SkillDirectory {
  let path = configured;
  if (path === '~') path = homeDir;
  else if (path.startsWith('~/')) path = resolve(homeDir, path.slice(2));
  else if (!isAbsolute(path)) path = resolve(projectRoot, path);
  return { configured, path };
}

function buildConfig(values: Map<string, unknown>, projectRoot: string, homeDir: string): AppConfig {
  const get = <T>(key: string) => values.get(key) as T;
  const config: AppConfig = {
    app: {
      port: get<number>('app.port'),
      host: get<string>('app.host'),
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
      if (known.has(key)) continue;
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
      return Array.isArray(value) && value.every((v) => typeof v === 'string' && v.trim() !== '') ? value : bad('a list of non-empty strings');
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
