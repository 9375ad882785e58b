import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';

/**
 * A setting, defined once: its rule (a zod schema), its default, what it means, and the words the
 * problem lines and the configuration reference use for it. The skills options and the server's
 * configuration are trees of these; their schemas, types, environment variables, problem lines and
 * reference table are all derived from the trees.
 */
export interface Setting<T = unknown, R = T> {
  readonly rule: z.ZodType<T>;
  /** Absent: the setting is required. */
  readonly default?: T;
  readonly description: string;
  /** What a value must be, as a problem line says it: "an integer from 1 to 6". */
  readonly expected: string;
  /** Its type in the configuration reference: "integer 1–6". */
  readonly type: string;
  /**
   * What its values are in JavaScript, before the rule: how a value written as text is read, and what a wrong type is
   * told.
   */
  readonly shape: 'number' | 'boolean' | 'string' | 'list';
  /** A secret is described in problem lines, never shown. */
  readonly secret?: 'url' | 'key';
  /** The value the configuration holds, from a valid one (folders resolved from where the configuration sits). */
  readonly resolve?: (value: T, place: Place) => R;
}

/** Where relative paths resolve from, and what `~` is. */
export interface Place {
  root: string;
  home: string;
}

/** A setting of any value type (a tree holds settings of many; `Setting` is invariant in its types). */
// biome-ignore lint/suspicious/noExplicitAny: the one place the tree erases its settings' types
export type AnySetting = Setting<any, any>;

export interface SettingTree {
  readonly [key: string]: AnySetting | SettingTree;
}

export interface SkillDirectory {
  /** As written in the configuration. */
  configured: string;
  /** Absolute: `~` expanded, relative paths resolved from the project root. */
  path: string;
}

export function isSetting(node: AnySetting | SettingTree | undefined): node is AnySetting {
  return node !== undefined && (node as Setting).rule instanceof z.ZodType;
}

interface Described<T> {
  default?: T;
  description: string;
}

function integer(options: Described<number> & { min: number; max: number }): Setting<number> {
  const { min, max, ...rest } = options;
  // smol-toml reads integers past 2^53 as bigint; they are then simply out of range.
  const rule = z.preprocess(
    (v) => (typeof v === 'bigint' ? Number(v) : v),
    z.number().int().min(min).max(max),
  ) as z.ZodType<number>;
  return {
    ...rest,
    rule,
    expected: `an integer from ${min} to ${max}`,
    type: `integer ${min}–${max}`,
    shape: 'number',
  };
}

function boolean(options: Described<boolean>): Setting<boolean> {
  return { ...options, rule: z.boolean(), expected: 'true or false', type: 'boolean', shape: 'boolean' };
}

function string(options: Described<string> & { nonEmpty?: boolean }): Setting<string> {
  const { nonEmpty, ...rest } = options;
  const rule = nonEmpty ? z.string().refine((v) => v.trim() !== '') : z.string();
  return { ...rest, rule, expected: nonEmpty ? 'a non-empty string' : 'a string', type: 'string', shape: 'string' };
}

function choice<const V extends readonly [string, ...string[]]>(
  values: V,
  options: Described<V[number]>,
): Setting<V[number]> {
  const rule = z.enum(values as unknown as [V[number], ...V[number][]]) as unknown as z.ZodType<V[number]>;
  return {
    ...options,
    rule,
    expected: `one of ${values.join(', ')}`,
    type: values.map((v) => `\`${v}\``).join(' \\| '),
    shape: 'string',
  };
}

function list(options: Described<readonly string[]>): Setting<readonly string[]> {
  const rule = z.array(z.string().refine((v) => v.trim() !== '')).readonly();
  return { ...options, rule, expected: 'a list of non-empty strings', type: 'list of strings', shape: 'list' };
}

function listOf<const V extends readonly [string, ...string[]]>(
  values: V,
  options: Described<readonly V[number][]>,
): Setting<readonly V[number][]> {
  const rule = z.array(z.enum(values as unknown as [V[number], ...V[number][]])).readonly() as unknown as z.ZodType<
    readonly V[number][]
  >;
  return {
    ...options,
    rule,
    expected: `a list of ${values.join(', ')}`,
    type: `list of ${values.map((v) => `\`${v}\``).join(', ')}`,
    shape: 'list',
  };
}

/** Folders in precedence order: `~` is the home folder, relative paths resolve from the root. */
function folders(options: Described<readonly string[]>): Setting<readonly string[], readonly SkillDirectory[]> {
  return {
    ...list(options),
    resolve: (value, place) => value.map((configured) => resolveSkillDirectory(configured, place.root, place.home)),
  };
}

/** One folder, resolved from the root (as written: no `~`). */
function folder(options: Described<string>): Setting<string> {
  return { ...string({ ...options, nonEmpty: true }), resolve: (value, place) => resolve(place.root, value) };
}

/** The setting builders: each gives its rule, its problem wording and its reference type. */
export const setting = { integer, boolean, string, choice, list, listOf, folders, folder };

export function resolveSkillDirectory(configured: string, projectRoot: string, homeDir: string): SkillDirectory {
  let path = configured;
  if (path === '~') path = homeDir;
  else if (path.startsWith('~/')) path = resolve(homeDir, path.slice(2));
  else if (!isAbsolute(path)) path = resolve(projectRoot, path);
  return { configured, path };
}

/** The values a tree's settings hold once valid, defaults filled in. */
export type ValuesOf<D> = { [K in keyof D]: D[K] extends Setting<infer T, infer _R> ? T : ValuesOf<D[K]> };

type Camel<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S;

/** The configuration a tree gives: its keys in camelCase, each value resolved. */
export type ResolvedOf<D> = {
  [K in keyof D as Camel<K & string>]: D[K] extends Setting<infer _T, infer R> ? R : ResolvedOf<D[K]>;
};

/** `max_depth` → `maxDepth`. */
export function camelCase(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
}

/**
 * The tree's zod schema: every section strict (an unknown key is a problem, not a silent typo) and
 * filled in when absent, every setting its rule with its default. `extra` adds schemas of keys that
 * are not settings (free-form tables), by dotted path.
 */
export function schemaOf<D extends SettingTree>(
  tree: D,
  extra: Readonly<Record<string, z.ZodType>> = {},
  prefix = '',
): z.ZodType<ValuesOf<D>> {
  const shape: Record<string, z.ZodType> = {};
  for (const [key, node] of Object.entries(tree)) {
    if (isSetting(node)) shape[key] = node.default === undefined ? node.rule : node.rule.default(node.default as never);
    else shape[key] = (schemaOf(node, extra, `${prefix}${key}.`) as z.ZodObject).prefault({});
  }
  for (const [path, schema] of Object.entries(extra)) {
    if (path.startsWith(prefix) && !path.slice(prefix.length).includes('.')) shape[path.slice(prefix.length)] = schema;
  }
  return z.strictObject(shape) as unknown as z.ZodType<ValuesOf<D>>;
}

/** Every setting of a tree with its dotted path, in the tree's order. */
export function settingsOf(tree: SettingTree, prefix = ''): { key: string; setting: AnySetting }[] {
  return Object.entries(tree).flatMap(([key, node]) =>
    isSetting(node) ? [{ key: `${prefix}${key}`, setting: node }] : settingsOf(node, `${prefix}${key}.`),
  );
}

/** The values resolved into the configuration's shape (camelCase keys): `values` must be valid. */
export function resolveValues<D extends SettingTree>(tree: D, values: ValuesOf<D>, place: Place): ResolvedOf<D> {
  const out: Record<string, unknown> = {};
  for (const [key, node] of Object.entries(tree)) {
    const value = (values as Record<string, unknown>)[key];
    out[camelCase(key)] = isSetting(node)
      ? node.resolve
        ? node.resolve(value, place)
        : value
      : resolveValues(node, value as never, place);
  }
  return out as ResolvedOf<D>;
}

/**
 * The setting a path lands in or under (a list's item), with its dotted key; undefined off the settings (a section, a
 * free-form table).
 */
export function settingOnPath(
  tree: SettingTree,
  path: readonly PropertyKey[],
): { key: string; setting: AnySetting } | undefined {
  let node: AnySetting | SettingTree | undefined = tree;
  for (let depth = 0; depth < path.length; depth++) {
    if (node === undefined || isSetting(node)) return undefined;
    node = node[String(path[depth])];
    if (isSetting(node))
      return {
        key: path
          .slice(0, depth + 1)
          .map(String)
          .join('.'),
        setting: node,
      };
  }
  return undefined;
}

/**
 * The bad value as a problem line shows it: secrets (and URLs, which may hold a password) are described, never echoed.
 */
export function shownValue(of: AnySetting | undefined, value: unknown): string {
  if (of?.secret === 'url') return '(a URL that is not valid here; not shown, it may hold a password)';
  if (of?.secret === 'key')
    return typeof value === 'string'
      ? `(a value of ${value.length} characters; not shown, it is a secret)`
      : `(a ${typeof value}; not shown, it is a secret)`;
  return JSON.stringify(value);
}
