import { createRequire } from 'node:module';
import { boundedMemo } from '../../shared/bounded-memo.js';

type Tokenizer = typeof import('gpt-tokenizer/encoding/o200k_base');

let tokenizer: Tokenizer | undefined;

/**
 * Tokens of a text in OpenAI's o200k encoding (gpt-tokenizer): what the catalogue budget counts.
 * The encoding is large: it is loaded when first needed (the first snapshot with skills), not when
 * the module is imported. Each distinct text is counted once (catalogue entries and notes recur
 * from snapshot to snapshot and turn to turn), up to what any catalogue holds.
 */
export const countTokens: (text: string) => number = boundedMemo((text: string) => {
  tokenizer ??= createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as Tokenizer;
  return tokenizer.countTokens(text);
}, 50_000);
