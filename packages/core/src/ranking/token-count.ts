import { createRequire } from 'node:module';
import { boundedMemo } from '../util/bounded-memo.js';

type Counter = (text: string) => number;

/** About four characters a token: what the budget counts when no tokenizer is installed or given. */
export const estimateTokens: Counter = (text) => Math.ceil(text.length / 4);

let counter: Counter | undefined;

/**
 * The tokenizer the catalogue budget counts with: OpenAI's o200k encoding when `gpt-tokenizer` is
 * installed (an optional peer: the server has it), else `estimateTokens`. An app may give its own.
 */
export function useTokenCounter(count: Counter): void {
  counter = count;
}

function defaultCounter(): Counter {
  try {
    const o200k = createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as { countTokens: Counter };
    return (text) => o200k.countTokens(text);
  } catch {
    return estimateTokens;
  }
}

/**
 * Tokens of a text, as the catalogue budget counts them. The encoding is large: it is loaded when
 * first needed (the first snapshot with skills), not when the module is imported. Each distinct
 * text is counted once (catalogue entries and notes recur from snapshot to snapshot and turn to
 * turn), up to what any catalogue holds.
 */
export const countTokens: (text: string) => number = boundedMemo((text: string) => {
  counter ??= defaultCounter();
  return counter(text);
}, 50_000);
