import { describe, expect, it } from '@jest/globals';
import { AppError, ErrorCode } from '@skillhost/core';
import {
  gatewayJsonLimits,
  JSON_LIMITS,
  jsonLimitExceeded,
  jsonValueLimitExceeded,
  parseJsonBody,
  type JsonTextParser,
} from './json-body.js';

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

describe(jsonLimitExceeded.name, () => {
  const depthOnly = { maxDepth: 64, maxWidth: 1e9, maxValues: 1e9 };
  const depthOf = (bytes: Buffer, maxDepth: number) => jsonLimitExceeded(bytes, { ...depthOnly, maxDepth });
  const nested = (depth: number) => Buffer.from(`${'['.repeat(depth)}${']'.repeat(depth)}`);

  it('counts arrays and objects inside one another, up to the limit', () => {
    expect(depthOf(nested(64), 64)).toBeUndefined();
    expect(depthOf(nested(65), 64)).toBe('maxDepth');
    expect(depthOf(Buffer.from(`{"a":${'{"a":'.repeat(70)}1${'}'.repeat(71)}`), 64)).toBe('maxDepth');
  });

  it('does not count siblings, or brackets inside strings (escaped quotes included)', () => {
    expect(depthOf(Buffer.from(`[${'[],'.repeat(1000)}[]]`), 2)).toBeUndefined();
    expect(depthOf(Buffer.from(`{"a":"${'['.repeat(200)}\\"${'{'.repeat(200)}"}`), 2)).toBeUndefined();
  });

  it('ends a string at a quote after an escaped backslash', () => {
    // {"a":"\\\\","b":[[[…]]]}: the string holds two backslashes and ends before "b".
    expect(depthOf(Buffer.from(`{"a":"\\\\\\\\","b":${'['.repeat(70)}${']'.repeat(70)}}`), 64)).toBe('maxDepth');
  });

  const list = (items: number, item = '1') => `[${Array(items).fill(item).join(', ')}]`;
  const object = (members: number) => `{${Array.from({ length: members }, (_, i) => `"k${i}": 1`).join(',\n')}}`;
  const limits = { maxDepth: 64, maxWidth: 5, maxValues: 20 };

  it('counts the members of each array and object, up to the width limit', () => {
    expect(jsonLimitExceeded(Buffer.from(list(5)), limits)).toBeUndefined();
    expect(jsonLimitExceeded(Buffer.from(list(6)), limits)).toBe('maxWidth');
    expect(jsonLimitExceeded(Buffer.from(object(5)), limits)).toBeUndefined();
    expect(jsonLimitExceeded(Buffer.from(object(6)), limits)).toBe('maxWidth');
    // Each level has its own count: three lists of five are within the width.
    expect(jsonLimitExceeded(Buffer.from(`[${list(5)}, ${list(4)}, {"a": ${list(5)}}]`), limits)).toBeUndefined();
  });

  it('counts the values at every level together, up to the values limit', () => {
    // 4 lists of 4 items, and the 4 lists themselves: 20 values.
    expect(jsonLimitExceeded(Buffer.from(list(4, list(4))), limits)).toBeUndefined();
    expect(jsonLimitExceeded(Buffer.from(list(4, list(4, '[]'))), limits)).toBeUndefined();
    expect(jsonLimitExceeded(Buffer.from(`[${list(4, list(4))}, 1]`), limits)).toBe('maxValues');
    // Empty arrays and objects hold nothing; a string's commas and brackets are not counted.
    expect(jsonLimitExceeded(Buffer.from(list(5, '[ ]')), limits)).toBeUndefined();
    expect(jsonLimitExceeded(Buffer.from(list(5, '{}')), limits)).toBeUndefined();
    expect(jsonLimitExceeded(Buffer.from(list(1, `"${',[1,2],'.repeat(100)}"`)), limits)).toBeUndefined();
  });
});

describe(jsonValueLimitExceeded.name, () => {
  it('gives a parsed value the answer its text gets', () => {
    const limits = { maxDepth: 4, maxWidth: 5, maxValues: 20 };
    const texts = [
      '[[[[]]]]',
      '[[[[[]]]]]',
      '[1,2,3,4,5]',
      '[1,2,3,4,5,6]',
      '{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6}',
      JSON.stringify(Array(4).fill([1, 2, 3, 4])),
      JSON.stringify(Array(5).fill([1, 2, 3, 4])),
      '"[[[[[[,,,,,,"',
    ];
    for (const text of texts)
      expect([text, jsonValueLimitExceeded(JSON.parse(text), limits)]).toEqual([
        text,
        jsonLimitExceeded(Buffer.from(text), limits),
      ]);
  });
});

describe(parseJsonBody.name, () => {
  it('parses UTF-8 JSON', () => {
    expect(parseJsonBody(Buffer.from('{"title":"héllo"}'), parseText)).toEqual({ title: 'héllo' });
  });

  it.each([
    ['an empty body', Buffer.alloc(0), /The body is empty/],
    [
      'bytes that are not UTF-8',
      Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      /not valid UTF-8/,
    ],
    ['a lone surrogate encoded as UTF-8 (CESU)', Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]), /not valid UTF-8/],
    [
      'nesting past the limit',
      Buffer.from(`${'['.repeat(JSON_LIMITS.maxDepth + 1)}${']'.repeat(JSON_LIMITS.maxDepth + 1)}`),
      /nested more than 64/,
    ],
    [
      'an object of 100,000 members',
      Buffer.from(JSON.stringify(Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, 1])))),
      /an array or object of more than 1000 members/,
    ],
    [
      'an array one item past the width',
      Buffer.from(JSON.stringify(Array(JSON_LIMITS.maxWidth + 1).fill(0))),
      /more than 1000 members/,
    ],
    [
      'more values than the limit, in narrow lists',
      Buffer.from(JSON.stringify(Array(51).fill(Array(99).fill(0)))),
      /more than 5000 values/,
    ],
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

describe(gatewayJsonLimits.name, () => {
  it('lets a gateway body hold max_messages messages in one array, and refuses past its own figures', () => {
    const limits = gatewayJsonLimits({ maxMessages: 2000, maxTools: 128 });
    const history = Buffer.from(
      JSON.stringify({ messages: Array.from({ length: 2000 }, (_, i) => ({ role: 'user', content: `m${i}` })) }),
    );
    expect(jsonLimitExceeded(history)).toBe('maxWidth');
    expect(parseJsonBody(history, parseText, limits)).toMatchObject({ messages: expect.any(Array) });
    expect(limits.maxDepth).toBe(JSON_LIMITS.maxDepth);
    const tooMany = Buffer.from(JSON.stringify(Array(limits.maxValues + 1).fill(0)));
    expect(() => parseJsonBody(tooMany, parseText, limits)).toThrow(`more than ${limits.maxWidth} members`);
  });

  it('never goes below the limits of every other route', () => {
    expect(gatewayJsonLimits({ maxMessages: 1, maxTools: 0 })).toEqual({
      maxDepth: JSON_LIMITS.maxDepth,
      maxWidth: JSON_LIMITS.maxValues,
      maxValues: JSON_LIMITS.maxValues,
    });
  });
});
