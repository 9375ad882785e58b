import { describe, expect, it } from '@jest/globals';
import { clampScore, codeSkillResult, MAX_RESULT_TEXT_BYTES } from './code-skill-result.js';

describe(codeSkillResult.name, () => {
  it('keeps a well-formed result as it is, with its duration', () => {
    const value = {
      success: true,
      output: 'done',
      error: 'minor',
      metadata: { rows: 3, nested: { ok: true } },
      promptInjection: 'Use metric units.',
    };
    expect(codeSkillResult(value, 12.5)).toEqual({ ...value, durationMs: 12.5 });
  });

  it('leaves out optional fields that were not given, and ignores fields it does not know', () => {
    expect(codeSkillResult({ success: true, output: '', extra: 'x' }, 1)).toEqual({
      success: true,
      output: '',
      durationMs: 1,
    });
  });

  it('lets a failure give only its error, but a success must give its output', () => {
    expect(codeSkillResult({ success: false, error: 'no key' }, 1)).toEqual({
      success: false,
      output: '',
      error: 'no key',
      durationMs: 1,
    });
    expect(codeSkillResult({ success: true }, 1).error).toMatch(
      /^execute\(\) returned an invalid result: 'output' must be a string \(got nothing\)\./,
    );
  });

  it.each([
    [null, 'expected an object, got null'],
    [[1, 2], 'expected an object, got an array'],
    [42, 'expected an object, got number 42'],
    [{ success: 1, output: 'x' }, "'success' must be true or false (got number 1)"],
    [{ success: true, output: 'x', metadata: 'rows=3' }, "'metadata' must be an object when given (got a string)"],
  ])('turns %j into an error naming the problem', (value, problem) => {
    expect(codeSkillResult(value, 2)).toEqual({
      success: false,
      output: '',
      error:
        `execute() returned an invalid result: ${problem}. Return { success: true, output: "…" } (optional: ` +
        `error, metadata, promptInjection).`,
      durationMs: 2,
    });
  });

  it('refuses metadata that is not plain JSON data or is too big', () => {
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(codeSkillResult({ success: true, output: '', metadata: cyclic }, 0).error).toMatch(
      /'metadata' must be plain JSON data/,
    );
    expect(
      codeSkillResult({ success: true, output: '', metadata: { big: 'x'.repeat(MAX_RESULT_TEXT_BYTES) } }, 0).error,
    ).toMatch(/'metadata' is 1000010 bytes as JSON; at most 1000000 are kept/);
  });

  it('stores metadata as JSON data (a Date becomes its text, undefined fields go)', () => {
    expect(
      codeSkillResult({ success: true, output: '', metadata: { at: new Date(0), gone: undefined } }, 0).metadata,
    ).toEqual({ at: '1970-01-01T00:00:00.000Z' });
  });

  it('cuts each text past 1 MB with a notice', () => {
    const sut = codeSkillResult(
      {
        success: false,
        output: 'o'.repeat(MAX_RESULT_TEXT_BYTES + 1),
        error: '✓'.repeat(400_000),
        promptInjection: 'p'.repeat(MAX_RESULT_TEXT_BYTES),
      },
      0,
    );
    expect(sut.output).toBe(
      `${'o'.repeat(MAX_RESULT_TEXT_BYTES)}\n\n[Truncated: showing the first 1000000 of 1000001 bytes of the output.]`,
    );
    expect(sut.error).toBe(
      `${'✓'.repeat(333_333)}\n\n[Truncated: showing the first 999999 of 1200000 bytes of the error.]`,
    );
    expect(sut.promptInjection).toBe('p'.repeat(MAX_RESULT_TEXT_BYTES));
  });
});

describe(clampScore.name, () => {
  it.each([
    [0.25, 0.25],
    [-1, 0],
    [3, 1],
    [Number.POSITIVE_INFINITY, 1],
    [Number.NaN, undefined],
    ['0.5', undefined],
    [undefined, undefined],
  ])('%p → %p', (value, expected) => {
    expect(clampScore(value)).toBe(expected);
  });
});
