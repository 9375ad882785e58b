import { z } from 'zod';
import { API_KEY_PATTERN, MODEL_SETTINGS, SETTINGS, type SettingKind } from './config-schema.js';

/**
 * The configuration's validation, derived from the one settings table: a zod schema per kind of
 * value, and a strict schema of the whole tree (so an unknown key is a problem, not a silent
 * typo). Zod finds the problems; they are told as one line per problem that names the key (or
 * the environment variable it came from), the bad value and what is allowed.
 */
export function kindSchema(kind: SettingKind): z.ZodType {
  switch (kind.type) {
    case 'integer':
      // smol-toml reads integers past 2^53 as bigint; they are then simply out of range.
      return z.preprocess((v) => (typeof v === 'bigint' ? Number(v) : v), z.number().int().min(kind.min).max(kind.max));
    case 'boolean':
      return z.boolean();
    case 'string':
      return kind.nonEmpty ? z.string().refine((v) => v.trim() !== '') : z.string();
    case 'enum':
      return z.enum(kind.values as [string, ...string[]]);
    case 'string-list':
      return z.array(kind.values ? z.enum(kind.values as [string, ...string[]]) : z.string().refine((v) => v.trim() !== ''));
    case 'database-url':
      return z.string().refine((v) => v === '' || isDatabaseUrl(v));
    case 'api-key':
      return z.string().refine((v) => v === '' || API_KEY_PATTERN.test(v));
  }
}

/** What a value of this kind may be, as the problem lines say it. */
export function expectedText(kind: SettingKind): string {
  switch (kind.type) {
    case 'integer':
      return `an integer from ${kind.min} to ${kind.max}`;
    case 'boolean':
      return 'true or false';
    case 'string':
      return kind.nonEmpty ? 'a non-empty string' : 'a string';
    case 'enum':
      return `one of ${kind.values.join(', ')}`;
    case 'string-list':
      return kind.values ? `a list of ${kind.values.join(', ')}` : 'a list of non-empty strings';
    case 'database-url':
      return 'a postgres:// or postgresql:// URL with a host (or empty for the embedded PostgreSQL)';
    case 'api-key':
      return "an API key: 'skh_' and 43 characters of A-Z, a-z, 0-9, '_' or '-', as `skillhost keys generate` prints (or empty for none)";
  }
}

/** The bad value as a problem line shows it: secrets (and URLs, which may hold a password) are described, never echoed. */
function shownValue(kind: SettingKind | undefined, value: unknown): string {
  if (kind?.type === 'database-url') return '(a URL that is not valid here; not shown, it may hold a password)';
  if (kind?.type === 'api-key') return typeof value === 'string' ? `(a value of ${value.length} characters; not shown, it is a secret)` : `(a ${typeof value}; not shown, it is a secret)`;
  return JSON.stringify(value);
}

function isDatabaseUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'postgres:' || url.protocol === 'postgresql:') && url.hostname !== '';
  } catch {
    return false;
  }
}

type Shape = { [key: string]: Shape | z.ZodType };

/** `[app.models.NAME]`: each table strict, its keys optional here (required ones are checked by name, to say "missing"). */
export const MODEL_TABLE_SCHEMA = z.strictObject(Object.fromEntries(MODEL_SETTINGS.map((s) => [s.key, kindSchema(s.kind).optional()])));

/** The whole file-and-environment tree: every section strict, every setting its kind's schema. */
export const CONFIG_TREE_SCHEMA: z.ZodType = (() => {
  const root: Shape = {};
  for (const setting of SETTINGS) {
    const parts = setting.key.split('.');
    let node = root;
    for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Shape;
    node[parts[parts.length - 1]] = kindSchema(setting.kind);
  }
  (root.app as Shape).models = z.record(z.string(), z.unknown()).optional() as z.ZodType;
  // `[app.skills.settings.NAME]`: free-form tables, one per skill, read by that skill's code.
  ((root.app as Shape).skills as Shape).settings = z.record(z.string(), z.record(z.string(), z.unknown())).optional() as z.ZodType;
  const toSchema = (shape: Shape): z.ZodType =>
    z.strictObject(Object.fromEntries(Object.entries(shape).map(([key, value]) => [key, value instanceof z.ZodType ? value : toSchema(value)])));
  return toSchema(root);
})();

export interface Problem {
  /** Sort key: problems are told in the settings table's order, unknown keys after. */
  rank: number;
  line: string;
}

/**
 * One line per zod issue, keys written after `prefix`. `where(key)` names the value's origin (`app.port`, or
 * `SKILLHOST_PORT (app.port)` when the environment set it); `valueAt(path)` is the raw value.
 */
export function describeIssues(
  issues: readonly z.core.$ZodIssue[],
  options: { prefix?: string; where: (key: string) => string; valueAt: (path: readonly PropertyKey[]) => unknown; kindOf: (key: string) => SettingKind | undefined; rankOf: (key: string) => number; knownUnder: (prefix: string) => string[] },
): Problem[] {
  const problems: Problem[] = [];
  for (const issue of issues) {
    const key = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const unknown of issue.keys) {
        const full = `${options.prefix ?? ''}${key ? `${key}.` : ''}${unknown}`;
        problems.push({ rank: 1e6 + problems.length, line: `${full}: unknown key (known keys: ${options.knownUnder(key).join(', ')})` });
      }
      continue;
    }
    const kind = options.kindOf(key);
    const value = options.valueAt(issue.path);
    const shown = shownValue(kind, value);
    problems.push({ rank: options.rankOf(key), line: `${options.where(key)}: ${shown} is not allowed; expected ${kind ? expectedText(kind) : 'a table'}` });
  }
  return problems;
}
