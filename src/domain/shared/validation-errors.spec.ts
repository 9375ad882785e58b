import { describe, expect, it } from '@jest/globals';
import { MAX_PROBLEM_CHARS } from '@skillhost/core';
import { unstorableStringProblems, validationFailed } from './validation-errors.js';

describe(unstorableStringProblems.name, () => {
  it('names each string with NUL or a lone surrogate by its path, keys included', () => {
    expect(unstorableStringProblems({ a: 'ok', b: ['x', 'y\u0000'], c: { d: '\ud800' }, 'e\u0000': 1 })).toEqual([
      'b[1]: contains a NUL character (U+0000), which cannot be stored; remove it',
      'c.d: contains an unpaired UTF-16 surrogate (not valid Unicode text); send well-formed text',
      'e\u0000: the field name contains a NUL character (U+0000), which cannot be stored; remove it',
    ]);
  });

  it('lets NUL through only in the top-level fields it is told of', () => {
    const pathOnly = (key: string) => key === 'path';
    expect(unstorableStringProblems({ name: 'pdf', path: 'a\u0000b' }, pathOnly)).toEqual([]);
    expect(unstorableStringProblems({ name: 'p\u0000', path: 'a' }, pathOnly)).toHaveLength(1);
    expect(unstorableStringProblems({ name: 'pdf', path: 'a\ud800' }, pathOnly)).toHaveLength(1);
    expect(unstorableStringProblems({ name: 'pdf', path: 'a', extra: { path: 'b\u0000' } }, pathOnly)).toHaveLength(1);
  });

  it('leaves the top-level fields it is told to skip to the service', () => {
    expect(
      unstorableStringProblems({ tool: 'x', arguments: { path: 'a\u0000' } }, undefined, (key) => key === 'arguments'),
    ).toEqual([]);
    expect(
      unstorableStringProblems({ tool: 'x\u0000', arguments: {} }, undefined, (key) => key === 'arguments'),
    ).toHaveLength(1);
  });

  it('finds every problem, not only the first few, so the refusal can count them', () => {
    expect(unstorableStringProblems(Array(25).fill('\u0000'))).toHaveLength(25);
  });

  it('checks a bare string (a query value) too', () => {
    expect(unstorableStringProblems('\u0000')).toEqual([
      'value: contains a NUL character (U+0000), which cannot be stored; remove it',
    ]);
  });
});

describe(validationFailed.name, () => {
  it('lists all the problems when there are few', () => {
    const error = validationFailed(['a: bad', 'b: worse']);
    expect(error.message).toBe('Invalid request: a: bad; b: worse');
    expect(error.details).toEqual({ problems: ['a: bad', 'b: worse'] });
  });

  it('lists the first ten and says how many more there are', () => {
    const error = validationFailed(Array.from({ length: 12 }, (_, i) => `p${i}`));
    expect(error.message).toBe('Invalid request: p0; p1; p2; p3; p4; p5; p6; p7; p8; p9 … and 2 more');
    expect(error.details).toEqual({
      problems: ['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8', 'p9'],
      moreProblems: 2,
    });
  });

  it(
    'cuts a problem quoting a megabyte-long field name in the middle, keeping what was wrong, never inside a ' +
      'character',
    () => {
      const name = `${'k'.repeat(149)}😀${'k'.repeat(1_000_000)}`;
      const [listed] = (
        validationFailed([`${name}: property ${name} should not exist`]).details as { problems: string[] }
      ).problems;
      expect(listed.length).toBeLessThanOrEqual(MAX_PROBLEM_CHARS);
      expect(listed).toMatch(/^k{149}…k+ should not exist$/);
      expect(validationFailed([listed]).message.length).toBeLessThan(MAX_PROBLEM_CHARS + 20);
    },
  );

  it('takes the message of a caller that words the refusal itself, the details bounded alike', () => {
    const error = validationFailed(Array(50).fill('x'), 'Invalid arguments for skills.activate.');
    expect(error.message).toBe('Invalid arguments for skills.activate.');
    expect(error.details).toEqual({ problems: Array(10).fill('x'), moreProblems: 40 });
  });
});
