import { AppError, ErrorCode, problemDetails, problemsText, unstorableCharacter } from '@skillhost/core';

/**
 * VALIDATION_FAILED listing the first problems and counting the rest (see problem-list.ts); `message` replaces "Invalid
 * request: …".
 */
export function validationFailed(
  problems: readonly string[],
  message = `Invalid request: ${problemsText(problems)}`,
): AppError {
  return new AppError(ErrorCode.VALIDATION_FAILED, message, { ...problemDetails(problems) });
}

/** Deeper than any DTO; JSON bodies are refused past 64 levels before they get here (see json-body.ts). */
const MAX_WALK_DEPTH = 100;

const DESCRIPTIONS = {
  NUL: 'contains a NUL character (U+0000), which cannot be stored; remove it',
  'unpaired surrogate': 'contains an unpaired UTF-16 surrogate (not valid Unicode text); send well-formed text',
} as const;

/**
 * Every string of a body, query or GraphQL arguments (keys too) must be storable text: one check
 * here, before any DTO rule, so NUL or a lone surrogate is a 400 wherever it would reach PostgreSQL.
 * Every problem is found (one walk, linear in the value), so the refusal can say how many there are.
 */
export function unstorableStringProblems(
  value: unknown,
  nulAllowedIn: (key: string) => boolean = () => false,
  skipped: (key: string) => boolean = () => false,
): string[] {
  const problems: string[] = [];
  const walk = (item: unknown, path: string, depth: number, allowNul: boolean): void => {
    if (typeof item === 'string') {
      const found = unstorableCharacter(item, { allowNul });
      if (found !== undefined) problems.push(`${path || 'value'}: ${DESCRIPTIONS[found]}`);
      return;
    }
    if (item === null || typeof item !== 'object') return;
    if (depth >= MAX_WALK_DEPTH) {
      problems.push(`${path || 'value'}: nested more than ${MAX_WALK_DEPTH} levels deep`);
      return;
    }
    for (const [key, child] of Object.entries(item)) {
      if (depth === 0 && skipped(key)) continue;
      const found = unstorableCharacter(key);
      const childPath = Array.isArray(item) ? `${path}[${key}]` : path ? `${path}.${key}` : key;
      if (found !== undefined) problems.push(`${childPath}: the field name ${DESCRIPTIONS[found]}`);
      else walk(child, childPath, depth + 1, depth === 0 && !Array.isArray(item) && nulAllowedIn(key));
    }
  };
  walk(value, '', 0, false);
  return problems;
}
