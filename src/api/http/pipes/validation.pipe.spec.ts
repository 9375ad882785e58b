import { describe, expect, it } from '@jest/globals';
import { IsOptional, IsString } from 'class-validator';
import { AppError, ErrorCode, MAX_LISTED_PROBLEMS } from '@skillhost/core';
import { createAppPipe, createValidationPipe, NulAllowed } from './validation.pipe.js';

class ResourceDto {
  @IsString()
  name: string;

  @IsString()
  @NulAllowed()
  path: string;

  @IsOptional()
  extra?: unknown;
}

describe('createValidationPipe', () => {
  const sut = createValidationPipe();

  it('refuses a body with NUL before the DTO rules, as VALIDATION_FAILED with the problems', async () => {
    const error = await sut
      .transform({ name: 'a\u0000', path: 'x' }, { type: 'body', metatype: ResourceDto })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe(ErrorCode.VALIDATION_FAILED);
    expect((error as AppError).details).toEqual({
      problems: ['name: contains a NUL character (U+0000), which cannot be stored; remove it'],
    });
  });

  it('leaves route parameters to the services (a resource path with NUL is RESOURCE_OUTSIDE_SKILL there)', async () => {
    await expect(sut.transform('a\u0000b', { type: 'param', metatype: String, data: '*' })).resolves.toBe('a\u0000b');
  });

  it("lists unknown fields as class-validator words them, before the known fields' problems", async () => {
    const error = await sut
      .transform({ name: 42, path: 'x', extra: 1, other: 2 }, { type: 'body', metatype: ResourceDto })
      .catch((e: unknown) => e);
    expect((error as AppError).details).toEqual({
      problems: ['other: property other should not exist', 'name: name must be a string'],
    });
  });

  it('answers a valid body with the DTO, and refuses an unknown query parameter as an unknown field', async () => {
    await expect(sut.transform({ name: 'pdf', path: 'a' }, { type: 'body', metatype: ResourceDto })).resolves.toEqual(
      Object.assign(new ResourceDto(), { name: 'pdf', path: 'a' }),
    );
    const error = await sut
      .transform({ name: 'pdf', path: 'a', role: 'admin' }, { type: 'query', metatype: ResourceDto })
      .catch((e: unknown) => e);
    expect((error as AppError).details).toEqual({ problems: ['role: property role should not exist'] });
  });

  it('does not report the keys Nest strips itself (constructor, prototype) as unknown', async () => {
    await expect(
      sut.transform({ name: 'pdf', path: 'a', constructor: 1, prototype: 2 }, { type: 'body', metatype: ResourceDto }),
    ).resolves.toBeInstanceOf(ResourceDto);
  });

  it('lists the first problems of 100,000 unknown fields and counts the rest', async () => {
    const body = Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i]));
    const error = (await sut
      .transform({ ...body, name: 42, path: 'x' }, { type: 'body', metatype: ResourceDto })
      .catch((e: unknown) => e)) as AppError;
    expect(error.code).toBe(ErrorCode.VALIDATION_FAILED);
    expect(error.details).toEqual({
      problems: Array.from({ length: MAX_LISTED_PROBLEMS }, (_, i) => `k${i}: property k${i} should not exist`),
      // The other 99,990 unknown fields and `name`, which must be a string.
      moreProblems: 99_991,
    });
    expect(error.message).toMatch(
      /^Invalid request: k0: property k0 should not exist; .*; k9: property k9 should not exist … and 99991 more$/,
    );
  });

  it('counts every unstorable string beyond the listed ones', async () => {
    const error = (await sut
      .transform({ name: 'pdf', path: 'a', extra: Array(30).fill('\u0000') }, { type: 'body', metatype: ResourceDto })
      .catch((e: unknown) => e)) as AppError;
    expect(error.details).toEqual({
      problems: expect.arrayContaining([expect.stringMatching(/^extra\[0\]: contains a NUL/)]),
      moreProblems: 20,
    });
  });
});

describe('createAppPipe', () => {
  it("passes a custom decorator's value (the principal) on as it is, at once", () => {
    const principal = { userId: 'u', name: 'ada', role: 'member', keyId: 'k' };
    const sut = createAppPipe();

    expect(sut.transform(principal, { type: 'custom', metatype: Object })).toBe(principal);
  });

  it('validates everything else as createValidationPipe does', async () => {
    const sut = createAppPipe();

    await expect(
      sut.transform({ name: 'pdf', path: 'a', other: 1 }, { type: 'body', metatype: ResourceDto }) as Promise<unknown>,
    ).rejects.toMatchObject({
      code: ErrorCode.VALIDATION_FAILED,
      details: { problems: ['other: property other should not exist'] },
    });
  });
});
