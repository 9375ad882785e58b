import { describe, expect, it } from '@jest/globals';
import { AppError, ErrorCode } from './app-error.js';
import { jsonNestedDeeperThan, MAX_JSON_DEPTH, parseJsonBody, type JsonTextParser } from './json-body.js';

/** Fastify's default parser's behaviour: JSON.parse, refusing a `__proto__` key. */
const parseText: JsonTextParser = (text, done) => {
  try {
    const value = JSON.parse(text);
    if (/"__proto__"\s*:/.test(text)) return done(new Error('forbidden'));
    done(null, value);
  } catch (error) {
    done(error as Error);
  }
};

function refusal(body: Buffer): AppError {
  try {
    parseJsonBody(body, parseText);
  } catch (error) {
    return error as AppError;
  }
  throw new Error('expected a refusal');
}

describe(jsonNestedDeeperThan.name, () => {
  const nested = (depth: number) => Buffer.from(`${'['.repeat(depth)}${']'.repeat(depth)}`);

  it('counts arrays and objects inside one another, up to the limit', () => {
    expect(jsonNestedDeeperThan(nested(64), 64)).toBe(false);
    expect(jsonNestedDeeperThan(nested(65), 64)).toBe(true);
    expect(jsonNestedDeeperThan(Buffer.from(`{"a":${'{"a":'.repeat(70)}1${'}'.repeat(71)}`), 64)).toBe(true);
  });

  it('does not count siblings, or brackets inside strings (escaped quotes included)', () => {
    expect(jsonNestedDeeperThan(Buffer.from(`[${'[],'.repeat(1000)}[]]`), 2)).toBe(false);
    expect(jsonNestedDeeperThan(Buffer.from(`{"a":"${'['.repeat(200)}\\"${'{'.repeat(200)}"}`), 2)).toBe(false);
  });

  it('ends a string at a quote after an escaped backslash', () => {
    // {"a":"\\\\","b":[[[…]]]}: the string holds two backslashes and ends before "b".
    expect(jsonNestedDeeperThan(Buffer.from(`{"a":"\\\\\\\\","b":${'['.repeat(70)}${']'.repeat(70)}}`), 64)).toBe(true);
  });
});

describe(parseJsonBody.name, () => {
  it('parses UTF-8 JSON', () => {
    expect(parseJsonBody(Buffer.from('{"title":"héllo"}'), parseText)).toEqual({ title: 'héllo' });
  });

  it.each([
    ['an empty body', Buffer.alloc(0), /The body is empty/],
    ['bytes that are not UTF-8', Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), /not valid UTF-8/],
    ['a lone surrogate encoded as UTF-8 (CESU)', Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]), /not valid UTF-8/],
    ['nesting past the limit', Buffer.from(`${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`), /nested more than 64/],
    ['thousands of levels', Buffer.from('['.repeat(100_000)), /nested more than 64/],
    ['malformed JSON', Buffer.from('{"title":'), /The body is not valid JSON: /],
    ['a __proto__ key', Buffer.from('{"__proto__":{"admin":true}}'), /forbidden key/],
  ])('refuses %s with VALIDATION_FAILED', (_label, body, message) => {
    const error = refusal(body);
    expect(error).toBeInstanceOf(AppError);
    expect(error.code).toBe(ErrorCode.VALIDATION_FAILED);
    expect(error.message).toMatch(message);
    expect(error.details).toEqual({ problems: [error.message] });
  });
});
