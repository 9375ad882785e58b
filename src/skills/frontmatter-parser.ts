import yaml from 'js-yaml';

/**
 * Parses frontmatter YAML the way the reference validator reads it: every scalar is a string
 * (`name: 123` is "123"), duplicate keys and anchors/aliases are errors, the top level must be a
 * mapping. Most real frontmatter is flat `key: value` lines, so a small exact parser handles those
 * and anything it is not sure about goes to js-yaml; a test checks both agree on the whole corpus.
 */
export type FrontmatterData = Record<string, unknown>;

export type ParsedFrontmatter =
  | { ok: true; data: FrontmatterData; warnings: readonly string[] }
  | { ok: false; error: string };

export const NOT_A_MAPPING = 'SKILL.md frontmatter must be a YAML mapping';
const NO_WARNINGS: readonly string[] = Object.freeze([]);

export interface ParseOptions {
  /** Retry a failed parse with unquoted colons in values read as quoted strings. */
  lenient?: boolean;
  /** Line number of the first YAML line in the file, for messages (the opening fence is line 1). */
  firstLine?: number;
}

export function parseFrontmatterYaml(text: string, options: ParseOptions = {}): ParsedFrontmatter {
  const fast = parseSimpleFrontmatter(text);
  if (fast !== undefined) return { ok: true, data: fast, warnings: NO_WARNINGS };
  const firstLine = options.firstLine ?? 2;
  const parsed = parseWithJsYaml(text, firstLine);
  if (parsed.ok || !options.lenient) return parsed;
  const repaired = quoteUnquotedColons(text);
  if (repaired.fields.length === 0) return parsed;
  const retried = parseWithJsYaml(repaired.text, firstLine);
  if (!retried.ok) return parsed;
  return {
    ok: true,
    data: retried.data,
    warnings: [`Unquoted colon in frontmatter field(s) ${repaired.fields.join(', ')}; read as a quoted string (quote the value to silence this)`],
  };
}

/** js-yaml 4.3 bounds nesting with `maxDepth`; its typings predate the option. */
const LOAD_OPTIONS = {
  schema: yaml.FAILSAFE_SCHEMA,
  maxDepth: 32,
  listener(event: 'open' | 'close', state: unknown) {
    // Every alias needs an anchor first, so refusing anchors refuses aliases (and alias bombs).
    const { anchor, line } = state as { anchor: string | null; line: number };
    if (event === 'close' && anchor !== null) {
      throw new yaml.YAMLException('anchors and aliases are not allowed', { line, column: -1 } as unknown as yaml.YAMLException['mark']);
    }
  },
} as yaml.LoadOptions;

function parseWithJsYaml(text: string, firstLine: number): ParsedFrontmatter {
  let data: unknown;
  try {
    data = yaml.load(text, LOAD_OPTIONS);
  } catch (error) {
    return { ok: false, error: `Invalid YAML in frontmatter: ${describeYamlError(error, firstLine)}` };
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return { ok: false, error: NOT_A_MAPPING };
  return { ok: true, data: data as FrontmatterData, warnings: NO_WARNINGS };
}

function describeYamlError(error: unknown, firstLine: number): string {
  if (error instanceof yaml.YAMLException) {
    const mark = (error as yaml.YAMLException & { mark?: { line: number; column: number } }).mark;
    if (mark === undefined) return error.reason;
    const where = mark.column < 0 ? ` (line ${mark.line + firstLine})` : ` (line ${mark.line + firstLine}, column ${mark.column + 1})`;
    return `${error.reason}${where}`;
  }
  // A stack overflow from pathological nesting is still just invalid YAML to the user.
  return error instanceof Error ? error.message : String(error);
}

const KEY = /^([A-Za-z0-9_][A-Za-z0-9_-]*):(.*)$/;
const NESTED_KEY = /^( +)([A-Za-z0-9_][A-Za-z0-9_.-]*):(.*)$/;
const PLAIN_FIRST_FORBIDDEN = new Set([...'-?:,[]{}#&*!|>\'"%@`']);
const NON_PRINTABLE_OR_TAB = /[\x00-\x1f\x7f-\x9f\ufeff\ufffe\uffff]/;

/**
 * The exact subset: `key: value` lines with plain, single-quoted or escape-free double-quoted
 * one-line values, `key:` with nothing (null), `key:` followed by one level of such nested lines,
 * blank lines and `#` comment lines. Returns undefined for anything else.
 */
export function parseSimpleFrontmatter(text: string): FrontmatterData | undefined {
  const lines = text.split('\n');
  const result: FrontmatterData = {};
  let i = 0;
  while (i < lines.length) {
    const line = stripCr(lines[i]);
    i++;
    if (line.trim() === '') continue;
    if (line[0] === '#') continue;
    const match = KEY.exec(line);
    if (match === null || NON_PRINTABLE_OR_TAB.test(line)) return undefined;
    const [, key, rest] = match;
    if (key === '__proto__' || Object.hasOwn(result, key)) return undefined;
    if (rest !== '' && rest[0] !== ' ') return undefined;
    const raw = rest.trim();
    if (raw !== '') {
      const value = simpleScalar(raw);
      if (value === undefined) return undefined;
      result[key] = value;
      continue;
    }
    const nested: Record<string, string> = {};
    let indent = -1;
    while (i < lines.length) {
      const inner = stripCr(lines[i]);
      if (inner === '' || inner[0] !== ' ') break;
      const innerMatch = NESTED_KEY.exec(inner);
      if (innerMatch === null || NON_PRINTABLE_OR_TAB.test(inner)) return undefined;
      const [, spaces, innerKey, innerRest] = innerMatch;
      if (indent === -1) indent = spaces.length;
      if (spaces.length !== indent || innerKey === '__proto__' || Object.hasOwn(nested, innerKey)) return undefined;
      if (innerRest === '' || innerRest[0] !== ' ') return undefined;
      const value = simpleScalar(innerRest.trim());
      if (value === undefined || value === '') return undefined;
      nested[innerKey] = value;
      i++;
    }
    result[key] = indent === -1 ? null : nested;
  }
  return Object.keys(result).length === 0 ? undefined : result;
}

function stripCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

function simpleScalar(raw: string): string | undefined {
  const first = raw[0];
  if (first === "'") {
    if (raw.length < 2 || !raw.endsWith("'")) return undefined;
    const inner = raw.slice(1, -1);
    return inner.replaceAll("''", '').includes("'") ? undefined : inner.replaceAll("''", "'");
  }
  if (first === '"') {
    if (raw.length < 2 || !raw.endsWith('"')) return undefined;
    const inner = raw.slice(1, -1);
    return inner.includes('"') || inner.includes('\\') ? undefined : inner;
  }
  if (PLAIN_FIRST_FORBIDDEN.has(first) || raw.includes(': ') || raw.includes(' #') || raw.endsWith(':')) return undefined;
  return raw;
}

/** For lenient mode: `description: Use when: x` → `description: "Use when: x"`. */
function quoteUnquotedColons(text: string): { text: string; fields: string[] } {
  const fields: string[] = [];
  const lines = text.split('\n').map((line) => {
    const match = /^([A-Za-z0-9_-]+):[ ]+(.*?)(\r?)$/.exec(line);
    if (match === null) return line;
    const [, key, value, cr] = match;
    if (!value.includes(': ') || PLAIN_FIRST_FORBIDDEN.has(value[0])) return line;
    fields.push(key);
    return `${key}: "${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"${cr}`;
  });
  return { text: lines.join('\n'), fields };
}
