import { describe, expect, it } from '@jest/globals';
import { AppError, ErrorCode, httpStatusOf } from './app-error.js';

describe(AppError.name, () => {
  it('recognises its errors by marker, also from another copy of the package', () => {
    const sut = new AppError(ErrorCode.SKILL_NOT_FOUND, 'No skill named x.');
    expect(AppError.isInstance(sut)).toBe(true);
    // A second install of @skillhost/core has its own class; the Symbol.for marker is shared.
    const fromAnotherCopy = Object.assign(new Error('No skill named x.'), {
      code: ErrorCode.SKILL_NOT_FOUND,
      [Symbol.for('skillhost.AppError')]: true,
    });
    expect(AppError.isInstance(fromAnotherCopy)).toBe(true);
    expect(AppError.isInstance(new Error('plain'))).toBe(false);
    expect(AppError.isInstance({ code: ErrorCode.SKILL_NOT_FOUND })).toBe(false);
    expect(AppError.isInstance(null)).toBe(false);
  });

  it('maps every code to one HTTP status', () => {
    for (const code of Object.values(ErrorCode)) expect(httpStatusOf(code)).toBeGreaterThanOrEqual(400);
    expect(httpStatusOf(ErrorCode.RESOURCE_OUTSIDE_SKILL)).toBe(400);
  });
});
