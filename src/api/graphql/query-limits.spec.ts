import { describe, expect, it } from '@jest/globals';
import { getIntrospectionQuery, parse } from 'graphql';
import { AppError, ErrorCode } from '@skillhost/core';
import { assertWithinLimits, measureDocument, QUERY_LIMITS } from './query-limits.js';

const measure = (source: string) => measureDocument(parse(source));
const nested = (levels: number) => `{ ${'a { '.repeat(levels - 1)}b${' }'.repeat(levels - 1)} }`;

describe('measureDocument', () => {
  it('counts depth as nesting of fields and cost as fields selected', () => {
    expect(measure('{ me { id name } }')).toEqual({ depth: 2, cost: 3 });
    expect(measure(nested(10))).toEqual({ depth: 10, cost: 10 });
  });

  it('counts every alias', () => {
    const aliases = Array.from({ length: 300 }, (_, i) => `a${i}: me { id }`).join(' ');
    expect(measure(`{ ${aliases} }`)).toEqual({ depth: 2, cost: 600 });
  });

  it('expands fragments and inline fragments at every spread, including in other operations', () => {
    const source = `
      query A { chats { items { ...F ...F } } }
      query B { chat(id: "x") { ... on Chat { ...F } } }
      fragment F on Chat { id title activatedSkills { name } }`;
    // A: chats, items, 2 × 4; B: chat, 4.
    expect(measure(source)).toEqual({ depth: 4, cost: 2 + 8 + 1 + 4 });
  });

  it('measures exponential fragment spreads in time linear in the document, and counts what they expand to', () => {
    const levels = 60;
    const fragments = Array.from(
      { length: levels },
      (_, i) => `fragment F${i} on Query { ${i === levels - 1 ? 'me { id }' : `...F${i + 1} ...F${i + 1}`} }`,
    );
    // No clock is read (a synchronous test cannot time out): expanding them would be 2^59 visits,
    // which never ends, so a measure that expanded fragments would hang the run rather than pass.
    const result = measure(`{ ...F0 } ${fragments.join(' ')}`);
    expect(result).toEqual({ depth: 2, cost: 2 * 2 ** (levels - 1) });
  });

  it('survives fragment cycles (validation refuses them afterwards)', () => {
    expect(measure('{ ...A } fragment A on Query { me { id } ...B } fragment B on Query { ...A }')).toEqual({
      depth: 2,
      cost: 2,
    });
    expect(measure('{ ...Missing }')).toEqual({ depth: 0, cost: 0 });
  });

  it('lets the standard introspection query through: `ofType` chains add cost, not depth', () => {
    const introspection = measure(
      getIntrospectionQuery({
        descriptions: true,
        specifiedByUrl: true,
        directiveIsRepeatable: true,
        inputValueDeprecation: true,
      }),
    );
    expect(introspection.depth).toBeLessThanOrEqual(QUERY_LIMITS.maxDepth);
    expect(introspection.cost * 4).toBeLessThanOrEqual(QUERY_LIMITS.maxCost);
    expect(measure('{ __schema { types { fields { type { ofType { ofType { name } } } } } } }')).toEqual({
      depth: 5,
      cost: 7,
    });
  });
});

describe('assertWithinLimits', () => {
  it('accepts a document at the limits', () => {
    expect(() => assertWithinLimits(parse(nested(10)), { maxDepth: 10, maxCost: 10 })).not.toThrow();
  });

  it.each([
    ['too deep', nested(11), 'it is 11 levels deep (at most 10)', { depth: 11, cost: 11 }],
    [
      'too costly',
      `{ ${Array.from({ length: 501 }, (_, i) => `a${i}: me { id }`).join(' ')} }`,
      'it selects 1002 fields, counting aliases and fragment spreads (at most 1000)',
      { depth: 2, cost: 1002 },
    ],
  ])('refuses a document %s with QUERY_TOO_COMPLEX naming the measure', (_, source, problem, measured) => {
    let error: unknown;
    try {
      assertWithinLimits(parse(source));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({
      code: ErrorCode.QUERY_TOO_COMPLEX,
      message: `The query is too complex: ${problem}. Ask for less in one request, or split it.`,
      details: { ...measured, maxDepth: 10, maxCost: 1000 },
    });
  });
});
