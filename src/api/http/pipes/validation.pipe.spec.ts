import { describe, expect, it } from '@jest/globals';
import { IsOptional, IsString } from 'class-validator';
import { AppError, ErrorCode } from '@skillhost/core';
import { MAX_LISTED_PROBLEMS, MAX_PROBLEM_CHARS } from '@skillhost/core';
import { createValidationPipe, NulAllowed, unstorableStringProblems, validationFailed } from './validation.pipe.js';

class ResourceDto {
  @IsString()
  name: string;

  @IsString()
  @NulAllowed()
  path: string;

  @IsOptional()
  extra?: unknown;
}

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
    expect(unstorableStringProblems({ tool: 'x', arguments: { path: 'a\u0000' } }, undefined, (key) => key === 'arguments')).toEqual([]);
    expect(unstorableStringProblems({ tool: 'x\u0000', arguments: {} }, undefined, (key) => key === 'arguments')).toHaveLength(1);
  });

  it('finds every problem, not only the first few, so the refusal can count them', () => {
    expect(unstorableStringProblems(Array(25).fill('\u0000'))).toHaveLength(25);
  });

  it('checks a bare string (a query value) too', () => {
    expect(unstorableStringProblems('\u0000')).toEqual(['value: contains a NUL character (U+0000), which cannot be stored; remove it']);
  });
});

describe('createValidationPipe', () => {
  const sut = createValidationPipe();

  it('refuses a body with NUL before the DTO rules, as VALIDATION_FAILED with the problems', async () => {
    const error = await sut.transform({ name: 'a\u0000', path: 'x' }, { type: 'body', metatype: ResourceDto }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe(ErrorCode.VALIDATION_FAILED);
    expect((error as AppError).details).toEqual({ problems: ['name: contains a NUL character (U+0000), which cannot be stored; remove it'] });
  });

  it('leaves route parameters to the services (a resource path with NUL is RESOURCE_OUTSIDE_SKILL there)', async () => {
    await expect(sut.transform('a\u0000b', { type: 'param', metatype: String, data: '*' })).resolves.toBe('a\u0000b');
  });

  it('lists unknown fields as class-validator words them, before the known fields\' problems', async () => {
    const error = await sut.transform({ name: 42, path: 'x', extra: 1, other: 2 }, { type: 'body', metatype: ResourceDto }).catch((e: unknown) => e);
    expect((error as AppError).details).toEqual({
      problems: ['other: property other should not exist', 'name: name must be a string'],
    });
  });

  it('answers a valid body with the DTO, and refuses an unknown query parameter as an unknown field', async () => {
    await expect(sut.transform({ name: 'pdf', path: 'a' }, { type: 'body', metatype: ResourceDto })).resolves.toEqual(Object.assign(new ResourceDto(), { name: 'pdf', path: 'a' }));
    const error = await sut.transform({ name: 'pdf', path: 'a', role: 'admin' }, { type: 'query', metatype: ResourceDto }).catch((e: unknown) => e);
    expect((error as AppError).details).toEqual({ problems: ['role: property role should not exist'] });
  });

  it('does not report the keys Nest strips itself (constructor, prototype) as unknown', async () => {
    await expect(sut.transform({ name: 'pdf', path: 'a', constructor: 1, prototype: 2 }, { type: 'body', metatype: ResourceDto })).resolves.toBeInstanceOf(ResourceDto);
  });

  it('lists the first problems of 100,000 unknown fields and counts the rest', async () => {
    const body = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i]));
    const error = (await sut.transform({ ...body, name: 42, path: 'x' }, { type: 'body', metatype: ResourceDto }).catch((e: unknown) => e)) as AppError;
    expect(error.code).toBe(ErrorCode.VALIDATION_FAILED);
    expect(error.details).toEqual({
      problems: Array.from({ length: MAX_LISTED_PROBLEMS }, (_, i) => `k${i}: property k${i} should not exist`),
      // The other 99,990 unknown fields and `name`, which must be a string.
      moreProblems: 99_991,
    });
    expect(error.message).toMatch(/^Invalid request: k0: property k0 should not exist; .*; k9: property k9 should not exist … and 99991 more$/);
  });

  it('counts every unstorable string beyond the listed ones', async () => {
    const error = (await sut.transform({ name: 'pdf', path: 'a', extra: Array(30).fill('\u0000') }, { type: 'body', metatype: ResourceDto }).catch((e: unknown) => e)) as AppError;
    expect(error.details).toEqual({ problems: expect.arrayContaining([expect.stringMatching(/^extra\[0\]: contains a NUL/)]), moreProblems: 20 });
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
    expect(error.details).toEqual({ problems: ['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8', 'p9'], moreProblems: 2 });
  });

  it('cuts a problem quoting a megabyte-long field name in the middle, keeping what was wrong, never inside a character', () => {
    const name = `${'k'.repeat(149)}😀${'k'.repeat(1_000_000)}`;
    const [listed] = (validationFailed([`${name}: property ${name} should not exist`]).details as { problems: string[] }).problems;
    expect(listed.length).toBeLessThanOrEqual(MAX_PROBLEM_CHARS);
    expect(listed).toMatch(/^k{149}…k+ should not exist$/);
    expect(validationFailed([listed]).message.length).toBeLessThan(MAX_PROBLEM_CHARS + 20);
  });

  it('takes the message of a caller that words the refusal itself, the details bounded alike', () => {
    const error = validationFailed(Array(50).fill('x'), 'Invalid arguments for skills.activate.');
    expect(error.message).toBe('Invalid arguments for skills.activate.');
    expect(error.details).toEqual({ problems: Array(10).fill('x'), moreProblems: 40 });
  });
});
