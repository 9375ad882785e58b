import { capUtf8 } from '../util/truncation.js';
import type { CodeSkillOutput, CodeSkillResult } from './code-skill.types.js';

/**
 * What a code skill hands back is checked and bounded here, the same for a worker's `skill.mjs` and
 * an in-process programmatic skill: whatever it returned, the caller gets a well-formed result.
 */

/**
 * Each text of a result (output, error, promptInjection) and the metadata's JSON are cut past this many UTF-8 bytes.
 */
export const MAX_RESULT_TEXT_BYTES = 1_000_000;

const SHAPE_HINT = 'Return { success: true, output: "…" } (optional: error, metadata, promptInjection).';

/** A checked, capped result; anything else `execute` returned becomes `success: false` saying what was wrong. */
export function codeSkillResult(value: unknown, durationMs: number): CodeSkillResult {
  const checked = checkOutput(value);
  if (typeof checked === 'string')
    return failedResult(`execute() returned an invalid result: ${checked}. ${SHAPE_HINT}`, durationMs);
  return {
    success: checked.success,
    output: capText(checked.output, 'the output'),
    ...(checked.error === undefined ? {} : { error: capText(checked.error, 'the error') }),
    ...(checked.metadata === undefined ? {} : { metadata: checked.metadata }),
    ...(checked.promptInjection === undefined
      ? {}
      : { promptInjection: capText(checked.promptInjection, 'the prompt injection') }),
    durationMs,
  };
}

export function failedResult(error: string, durationMs: number): CodeSkillResult {
  return { success: false, output: '', error: capText(error, 'the error'), durationMs };
}

/** The output, or every problem with its shape in one sentence. */
function checkOutput(value: unknown): CodeSkillOutput | string {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return `expected an object, got ${describeValue(value)}`;
  const record = value as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof record.success !== 'boolean')
    problems.push(`'success' must be true or false (got ${describeValue(record.success)})`);
  // A failure may say why in `error` alone; a success must say what it produced.
  const outputOptional = record.success === false && record.output === undefined;
  if (typeof record.output !== 'string' && !outputOptional)
    problems.push(`'output' must be a string (got ${describeValue(record.output)})`);
  for (const field of ['error', 'promptInjection'] as const) {
    if (record[field] !== undefined && typeof record[field] !== 'string')
      problems.push(`'${field}' must be a string when given (got ${describeValue(record[field])})`);
  }
  const metadata = checkMetadata(record.metadata);
  if (typeof metadata === 'string') problems.push(metadata);
  if (problems.length > 0) return problems.join('; ');
  return {
    success: record.success as boolean,
    output: (record.output as string | undefined) ?? '',
    error: record.error as string | undefined,
    metadata: metadata as Record<string, unknown> | undefined,
    promptInjection: record.promptInjection as string | undefined,
  };
}

/** Plain JSON data, so it can be stored and shown as it is; at most MAX_RESULT_TEXT_BYTES as JSON. */
function checkMetadata(value: unknown): Record<string, unknown> | undefined | string {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return `'metadata' must be an object when given (got ${describeValue(value)})`;
  let json: string;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    return `'metadata' must be plain JSON data (${(error as Error).message})`;
  }
  const bytes = Buffer.byteLength(json);
  if (bytes > MAX_RESULT_TEXT_BYTES)
    return `'metadata' is ${bytes} bytes as JSON; at most ${MAX_RESULT_TEXT_BYTES} are kept`;
  return JSON.parse(json) as Record<string, unknown>;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return 'a string';
  return typeof value === 'object'
    ? 'an object'
    : typeof value === 'undefined'
      ? 'nothing'
      : `${typeof value} ${String(value)}`;
}

function capText(text: string, what: string): string {
  return capUtf8(text, MAX_RESULT_TEXT_BYTES, what).text;
}

/** A `canHandle` score in 0..1, or undefined when it gave no number. */
export function clampScore(value: unknown): number | undefined {
  if (typeof value !== 'number' || Number.isNaN(value)) return undefined;
  return Math.min(1, Math.max(0, value));
}

/** By shape, not `instanceof`: errors from a worker (or another realm) are not this realm's Error. */
function isErrorLike(error: unknown): error is { name?: unknown; message: unknown } {
  return typeof error === 'object' && error !== null && 'message' in error;
}

export function describeError(error: unknown): string {
  return isErrorLike(error) ? String(error.message) : String(error);
}

/** What code threw where nothing caught it: `TypeError: …`, or the value thrown. */
export function describeThrown(error: unknown): string {
  return isErrorLike(error) ? `${String(error.name ?? 'Error')}: ${String(error.message)}` : String(error);
}
