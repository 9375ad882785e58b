import { describe, expect, it } from '@jest/globals';
import { IsOptional, IsString } from 'class-validator';
import { AppError, ErrorCode } from './app-error.js';
import { createValidationPipe, NulAllowed, unstorableStringProblems } from './validation.pipe.js';

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
});
