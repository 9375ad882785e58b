import { describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { withBoundedIssues } from './bounded-params.js';

describe(withBoundedIssues.name, () => {
  const sut = withBoundedIssues(
    z.looseObject({ name: z.string(), arguments: z.record(z.string(), z.string()).optional() }),
  );
  const validate = (value: unknown) =>
    sut['~standard'].validate(value) as Awaited<ReturnType<(typeof sut)['~standard']['validate']>>;

  it('passes valid params through as the schema parses them', () => {
    expect(validate({ name: 'pdf', arguments: { request: 'x' }, extra: 1 })).toEqual({
      value: { name: 'pdf', arguments: { request: 'x' }, extra: 1 },
    });
  });

  it('words a few issues as the MCP SDK does: the path, then the message', () => {
    expect(validate({ name: 5 }).issues).toEqual([
      { message: 'name: Invalid input: expected string, received number' },
    ]);
  });

  it('reports ten issues and one that counts the rest', () => {
    const issues = validate({
      name: 'pdf',
      arguments: Object.fromEntries(Array.from({ length: 25 }, (_, i) => [`a${i}`, i])),
    }).issues!;
    expect(issues).toHaveLength(11);
    expect(issues[0]).toEqual({ message: 'arguments.a0: Invalid input: expected string, received number' });
    expect(issues[10]).toEqual({ message: '… and 15 more' });
  });
});
