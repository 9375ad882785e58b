import { describe, expect, it } from '@jest/globals';
import { parseValue } from 'graphql';
import { GraphQLDateTime } from './date-time.scalar.js';
import { GraphQLJSON } from './json.scalar.js';

describe('GraphQLJSON', () => {
  it('sends values as they are', () => {
    const value = { a: [1, 'two', null, { b: true }] };
    expect(GraphQLJSON.serialize(value)).toBe(value);
  });

  it('reads literals of every kind, variables included', () => {
    expect(GraphQLJSON.parseLiteral(parseValue('{ a: [1, 2.5, "s", true, null, E], b: $v }'), { v: { x: 1 } })).toEqual(
      { a: [1, 2.5, 's', true, null, 'E'], b: { x: 1 } },
    );
  });

  it("keeps to a JSON body's limits, written in the query or given as a variable", () => {
    const wide = `{ ${Array.from({ length: 1001 }, (_, i) => `k${i}: 1`).join(' ')} }`;
    expect(() => GraphQLJSON.parseLiteral(parseValue(wide))).toThrow(
      'A JSON value has an array or object of more than 1000 members',
    );
    expect(() => GraphQLJSON.parseValue(Array(6).fill(Array(1000).fill(0)))).toThrow(
      'A JSON value holds more than 5000 values',
    );
    expect(() => GraphQLJSON.parseValue(JSON.parse(`${'['.repeat(65)}${']'.repeat(65)}`))).toThrow(
      'A JSON value is nested more than 64 arrays or objects deep',
    );
    expect(GraphQLJSON.parseValue(JSON.parse(`${'['.repeat(64)}${']'.repeat(64)}`))).toHaveLength(1);
  });
});

describe('GraphQLDateTime', () => {
  it('serialises dates and ISO strings to ISO strings at UTC', () => {
    expect(GraphQLDateTime.serialize(new Date('2026-01-31T10:00:00+01:00'))).toBe('2026-01-31T09:00:00.000Z');
    expect(GraphQLDateTime.serialize('2026-01-31T09:00:00.000Z')).toBe('2026-01-31T09:00:00.000Z');
  });

  it('refuses anything that is not an instant', () => {
    expect(() => GraphQLDateTime.serialize('yesterday')).toThrow('DateTime cannot represent "yesterday".');
    expect(() => GraphQLDateTime.serialize(42)).toThrow('DateTime cannot represent 42.');
    expect(() => GraphQLDateTime.parseValue('nope')).toThrow('DateTime expects an ISO 8601 string; got "nope".');
  });
});
