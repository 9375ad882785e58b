import { isUtf8 } from 'node:buffer';
import { AppError, ErrorCode } from '@skillhost/core';

/**
 * What a JSON body may hold, checked on its bytes before it is parsed (see `jsonLimitExceeded`).
 * Each is far above what any route takes, and each bounds the work a body causes after parsing
 * (measured in bench/results/worst-request.md):
 *
 * - `maxDepth`: arrays and objects inside one another. No DTO nests more than three levels, and
 *   validating (or merely walking) a value thousands of levels deep would exhaust the stack.
 * - `maxWidth`: members of one array or object. The longest list a route takes is 200 skill
 *   names (`PUT /v1/me/skills`); class-transformer deduplicates an object's keys in quadratic time.
 * - `maxValues`: array items and object members at every level together. The largest body a
 *   route takes holds about 400; class-transformer and class-validator spend one to three
 *   microseconds on each, so the 300,000 small values a megabyte holds would keep every other
 *   request waiting for most of a second.
 */
export const JSON_LIMITS = { maxDepth: 64, maxWidth: 1_000, maxValues: 5_000 } as const;

export type JsonLimits = { readonly [limit in keyof typeof JSON_LIMITS]: number };

/**
 * The OpenAI-compatible gateway's bodies are whole conversations (up to `[app.gateway] max_messages`) and tool lists
 * (up to `max_tools`), read by zod rather than class-transformer: one array may hold every message, and each message
 * or tool about 64 values (a tool's JSON schema, a call's arguments), so that those settings, not these, say how
 * much a request may send.
 */
export function gatewayJsonLimits(gateway: { maxMessages: number; maxTools: number }): JsonLimits {
  const maxValues = Math.max(JSON_LIMITS.maxValues, 64 * (gateway.maxMessages + gateway.maxTools));
  return { maxDepth: JSON_LIMITS.maxDepth, maxWidth: maxValues, maxValues };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const COMMA = 0x2c;
const SPACE = 0x20;
const TAB = 0x09;
const LINE_FEED = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/**
 * The first of `limits` JSON text goes past, or undefined: counted in one pass that stops there
 * (an attack costs nothing to refuse; JSON.parse would first build the whole value). Members are
 * counted by the commas between them, plus one for a container that is not empty. Strings are
 * skipped with a native search for their closing quote, so brackets and commas inside them do not
 * count and long texts cost little. It does not check the syntax: JSON.parse does that afterwards.
 */
export function jsonLimitExceeded(bytes: Uint8Array, limits: JsonLimits = JSON_LIMITS): keyof JsonLimits | undefined {
  // Fewer bytes than it takes to pass any limit: nothing to count.
  if (bytes.length <= Math.min(limits.maxDepth, 2 * limits.maxWidth, 2 * limits.maxValues)) return undefined;
  const widths = new Uint32Array(limits.maxDepth + 1);
  let depth = 0;
  let values = 0;
  let justOpened = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte === SPACE || byte === LINE_FEED || byte === CARRIAGE_RETURN || byte === TAB) continue;
    if (justOpened) {
      justOpened = false;
      // The container's first member (one member never passes maxWidth).
      if (byte !== CLOSE_BRACKET && byte !== CLOSE_BRACE && ++values > limits.maxValues) return 'maxValues';
    }
    if (byte === QUOTE) {
      i = closingQuote(bytes, i);
      // An unterminated string: nothing after it can open or separate anything.
      if (i < 0) return undefined;
    } else if (byte === OPEN_BRACKET || byte === OPEN_BRACE) {
      if (++depth > limits.maxDepth) return 'maxDepth';
      widths[depth] = 1;
      justOpened = true;
    } else if (byte === CLOSE_BRACKET || byte === CLOSE_BRACE) {
      // Never below the top: a stray bracket is malformed JSON, which JSON.parse refuses.
      if (depth > 0) depth--;
    } else if (byte === COMMA) {
      if (++widths[depth] > limits.maxWidth) return 'maxWidth';
      if (++values > limits.maxValues) return 'maxValues';
    }
  }
  return undefined;
}

/**
 * The same limits on a value parsed elsewhere (a GraphQL argument written in the query, variables
 * sent in a GET's URL): the first one it goes past, or undefined. It stops there too.
 */
export function jsonValueLimitExceeded(value: unknown, limits: JsonLimits = JSON_LIMITS): keyof JsonLimits | undefined {
  let values = 0;
  const visit = (item: unknown, depth: number): keyof JsonLimits | undefined => {
    if (item === null || typeof item !== 'object') return undefined;
    if (depth >= limits.maxDepth) return 'maxDepth';
    const members = Array.isArray(item) ? item : Object.values(item);
    if (members.length > limits.maxWidth) return 'maxWidth';
    values += members.length;
    if (values > limits.maxValues) return 'maxValues';
    for (const member of members) {
      const exceeded = visit(member, depth + 1);
      if (exceeded !== undefined) return exceeded;
    }
    return undefined;
  };
  return visit(value, 0);
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
 * The one JSON body parser: UTF-8 only (RFC 8259), within JSON_LIMITS, and Fastify's own parse, which
 * refuses `__proto__` and `constructor.prototype` keys. Every refusal is VALIDATION_FAILED naming
 * what was wrong.
 */
export function parseJsonBody(body: Buffer, parseText: JsonTextParser, limits: JsonLimits = JSON_LIMITS): unknown {
  if (body.length === 0)
    throw invalidBody(
      'The body is empty but its content type is application/json: send a JSON value, or no body and no content type.',
    );
  if (!isUtf8(body)) throw invalidBody('The body is not valid UTF-8: JSON must be sent as UTF-8 text.');
  const exceeded = jsonLimitExceeded(body, limits);
  if (exceeded !== undefined) throw invalidBody(beyondLimit(exceeded, 'The body', limits));
  const text = body.toString('utf8');
  let result: { value: unknown } | undefined;
  parseText(text, (error, value) => {
    if (error === null) result = { value };
  });
  if (result !== undefined) return result.value;
  throw invalidBody(whyNotJson(text));
}

/** What a refusal for going past `limit` says, of `what` ("The body", "A JSON argument"). */
export function beyondLimit(limit: keyof JsonLimits, what: string, limits: JsonLimits = JSON_LIMITS): string {
  switch (limit) {
    case 'maxDepth':
      return `${what} is nested more than ${limits.maxDepth} arrays or objects deep.`;
    case 'maxWidth':
      return (
        `${what} has an array or object of more than ` +
        `${limits.maxWidth} members; nothing takes that many: send fewer.`
      );
    case 'maxValues':
      return (
        `${what} holds more than ` +
        `${limits.maxValues} values (array items and object members, at every level together); nothing ` +
        `takes that many: send fewer.`
      );
  }
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
