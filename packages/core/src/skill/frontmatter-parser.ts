import type yaml from 'js-yaml';
import { lazyModule } from '../util/lazy-module.js';

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
    warnings: [
      `Unquoted colon in frontmatter field(s) ${repaired.fields.join(', ')}; read as a quoted string (quote the ` +
        `value to silence this)`,
    ],
  };
}

/** Loaded by the first frontmatter the exact parser leaves to it: most skills never need it. */
const jsYaml = lazyModule<typeof yaml>('js-yaml', import.meta.url);

let loadOptions: yaml.LoadOptions | undefined;

/** js-yaml 4.3 bounds nesting with `maxDepth`; its typings predate the option. */
function yamlLoadOptions(): yaml.LoadOptions {
  loadOptions ??= {
    schema: jsYaml().FAILSAFE_SCHEMA,
    maxDepth: 32,
    listener(event: 'open' | 'close', state: unknown) {
      // Every alias needs an anchor first, so refusing anchors refuses aliases (and alias bombs).
      const { anchor, line } = state as { anchor: string | null; line: number };
      if (event === 'close' && anchor !== null) {
        throw new (jsYaml().YAMLException)('anchors and aliases are not allowed', {
          line,
          column: -1,
        } as unknown as yaml.YAMLException['mark']);
      }
    },
  } as yaml.LoadOptions;
  return loadOptions;
}

function parseWithJsYaml(text: string, firstLine: number): ParsedFrontmatter {
  let data: unknown;
  try {
    data = jsYaml().load(text, yamlLoadOptions());
  } catch (error) {
    return { ok: false, error: `Invalid YAML in frontmatter: ${describeYamlError(error, firstLine)}` };
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return { ok: false, error: NOT_A_MAPPING };
  return { ok: true, data: data as FrontmatterData, warnings: NO_WARNINGS };
}

function describeYamlError(error: unknown, firstLine: number): string {
  if (error instanceof jsYaml().YAMLException) {
    const mark = (error as yaml.YAMLException & { mark?: { line: number; column: number } }).mark;
    if (mark === undefined) return error.reason;
    const where =
      mark.column < 0
        ? ` (line ${mark.line + firstLine})`
        : ` (line ${mark.line + firstLine}, column ${mark.column + 1})`;
    return `${error.reason}${where}`;
  }
  // A stack overflow from pathological nesting is still just invalid YAML to the user.
  return error instanceof Error ? error.message : String(error);
}

const PLAIN_FIRST_FORBIDDEN = new Set([...'-?:,[]{}#&*!|>\'"%@`']);
// biome-ignore lint/suspicious/noControlCharactersInRegex: YAML's non-printable characters are what it finds
const NON_PRINTABLE_OR_TAB = /[\x00-\x1f\x7f-\x9f\ufeff\ufffe\uffff]/;
const SPACE = 32;
const HASH = 35;
const COLON = 58;
const CR = 13;

/** `[A-Za-z0-9_-]`, plus `.` inside nested keys. */
function isKeyChar(code: number, nested: boolean): boolean {
  return (
    (code >= 97 && code <= 122) ||
    (code >= 65 && code <= 90) ||
    (code >= 48 && code <= 57) ||
    code === 95 ||
    code === 45 ||
    (nested && code === 46)
  );
}

/** Where a line's content ends: before a trailing CR. */
function contentEnd(text: string, start: number, newline: number): number {
  return newline > start && text.charCodeAt(newline - 1) === CR ? newline - 1 : newline;
}

function nextNewline(text: string, from: number): number {
  const at = text.indexOf('\n', from);
  return at < 0 ? text.length : at;
}

/**
 * Reads `key: value` starting at `start` (after `indent` spaces). Returns the key and the raw value
 * (trimmed, possibly empty), or undefined when the line is not of that shape.
 */
function readKeyLine(
  text: string,
  start: number,
  end: number,
  nested: boolean,
): { key: string; raw: string } | undefined {
  let i = start;
  const first = text.charCodeAt(i);
  if (!isKeyChar(first, nested) || first === 45 || first === 46) return undefined;
  while (i < end && isKeyChar(text.charCodeAt(i), nested)) i++;
  if (i === end || text.charCodeAt(i) !== COLON) return undefined;
  const key = text.slice(start, i);
  if (i + 1 < end && text.charCodeAt(i + 1) !== SPACE) return undefined;
  const raw = text.slice(i + 1, end).trim();
  if (NON_PRINTABLE_OR_TAB.test(raw) || key === '__proto__') return undefined;
  return { key, raw };
}

/**
 * The exact subset: `key: value` lines with plain, single-quoted or escape-free double-quoted
 * one-line values, `key:` with nothing (null), `key:` followed by one level of such nested lines,
 * blank lines and `#` comment lines. Returns undefined for anything else. An index scanner, not
 * split + regex: discovery runs it once per skill and allocation is most of its cost.
 */
export function parseSimpleFrontmatter(text: string): FrontmatterData | undefined {
  const result: FrontmatterData = {};
  let empty = true;
  let pos = 0;
  while (pos < text.length) {
    const newline = nextNewline(text, pos);
    const end = contentEnd(text, pos, newline);
    const first = text.charCodeAt(pos);
    if (end === pos || first === HASH) {
      pos = newline + 1;
      continue;
    }
    if (first === SPACE || first === 9) {
      // Indented text at the top level continues a value: only blank lines are simple.
      if (text.slice(pos, end).trim() !== '') return undefined;
      pos = newline + 1;
      continue;
    }
    const line = readKeyLine(text, pos, end, false);
    if (line === undefined || Object.hasOwn(result, line.key)) return undefined;
    pos = newline + 1;
    empty = false;
    if (line.raw !== '') {
      const value = simpleScalar(line.raw);
      if (value === undefined) return undefined;
      result[line.key] = value;
      continue;
    }
    let nested: Record<string, string> | null = null;
    let indent = -1;
    while (pos < text.length && text.charCodeAt(pos) === SPACE) {
      const innerNewline = nextNewline(text, pos);
      const innerEnd = contentEnd(text, pos, innerNewline);
      let keyStart = pos;
      while (keyStart < innerEnd && text.charCodeAt(keyStart) === SPACE) keyStart++;
      if (indent === -1) indent = keyStart - pos;
      if (keyStart - pos !== indent) return undefined;
      const inner = readKeyLine(text, keyStart, innerEnd, true);
      if (inner === undefined || inner.raw === '') return undefined;
      nested ??= {};
      if (Object.hasOwn(nested, inner.key)) return undefined;
      const value = simpleScalar(inner.raw);
      if (value === undefined || value === '') return undefined;
      nested[inner.key] = value;
      pos = innerNewline + 1;
    }
    result[line.key] = nested;
  }
  return empty ? undefined : result;
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
  if (PLAIN_FIRST_FORBIDDEN.has(first) || raw.includes(': ') || raw.includes(' #') || raw.endsWith(':'))
    return undefined;
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
