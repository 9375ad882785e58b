import { createRequire } from 'node:module';

type Tokenizer = typeof import('gpt-tokenizer/encoding/o200k_base');

let tokenizer: Tokenizer | undefined;

/**
 * Tokens of a text in OpenAI's o200k encoding (gpt-tokenizer): what the catalogue budget counts.
 * The encoding is large: it is loaded when first needed (the first snapshot with skills), not when
 * the module is imported.
 */
export function countTokens(text: string): number {
  tokenizer ??= createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as Tokenizer;
  return tokenizer.countTokens(text);
}
