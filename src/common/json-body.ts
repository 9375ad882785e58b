import { isUtf8 } from 'node:buffer';
import { AppError, ErrorCode } from './app-error.js';

/**
 * Request bodies nested deeper than this are refused before they are parsed: no DTO nests more
 * than three levels, and validating (or merely walking) a value thousands of levels deep would
 * exhaust the stack.
 */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * Whether JSON text opens more than `maxDepth` arrays or objects inside one another, counted in
 * one pass that stops at the first bracket too many (an attack costs nothing to refuse; JSON.parse
 * would first build the whole value). Strings are skipped with a native search for their closing
 * quote, so brackets inside them do not count and long texts cost little. It does not check the
 * syntax: JSON.parse does that afterwards.
 */
export function jsonNestedDeeperThan(bytes: Uint8Array, maxDepth: number): boolean {
  // Fewer bytes than brackets it would take: nothing to count.
  if (bytes.length <= maxDepth) return false;
  let depth = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte === QUOTE) {
      i = closingQuote(bytes, i);
      // An unterminated string: nothing after it can open anything.
      if (i < 0) return false;
    } else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) {
      if (++depth > maxDepth) return true;
    } else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) {
      depth--;
    }
  }
  return false;
}

/** The index of the quote that closes the string opening at `open` (one not escaped), or -1. */
function closingQuote(bytes: Uint8Array, open: number): number {
  let at = open;
  for (;;) {
    at = bytes.indexOf(QUOTE, at + 1);
    if (at < 0) return -1;
    let backslashes = 0;
    while (bytes[at - 1 - backslashes] === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return at;
  }
}

/** Fastify's own JSON parser, bound to the request; it calls `done` before returning. */
export type JsonTextParser = (text: string, done: (error: Error | null, value?: unknown) => void) => void;

/**
 * The one JSON body parser: UTF-8 only (RFC 8259), bounded depth, and Fastify's own parse, which
 * refuses `__proto__` and `constructor.prototype` keys. Every refusal is VALIDATION_FAILED naming
 * what was wrong.
 */
export function parseJsonBody(body: Buffer, parseText: JsonTextParser): unknown {
  if (body.length === 0) throw invalidBody('The body is empty but its content type is application/json: send a JSON value, or no body and no content type.');
  if (!isUtf8(body)) throw invalidBody('The body is not valid UTF-8: JSON must be sent as UTF-8 text.');
  if (jsonNestedDeeperThan(body, MAX_JSON_DEPTH)) throw invalidBody(`The body is nested more than ${MAX_JSON_DEPTH} arrays or objects deep.`);
  const text = body.toString('utf8');
  let result: { value: unknown } | undefined;
  parseText(text, (error, value) => {
    if (error === null) result = { value };
  });
  if (result !== undefined) return result.value;
  throw invalidBody(whyNotJson(text));
}

function whyNotJson(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    return `The body is not valid JSON: ${(error as Error).message}.`;
  }
  // Valid JSON that Fastify's parser refused: prototype poisoning.
  return 'The body uses a forbidden key (`__proto__`, or `constructor` with a `prototype`).';
}

function invalidBody(message: string): AppError {
  return new AppError(ErrorCode.VALIDATION_FAILED, message, { problems: [message] });
}
