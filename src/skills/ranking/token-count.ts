import { createRequire } from 'node:module';

type Tokenizer = typeof import('gpt-tokenizer/encoding/o200k_base');

let tokenizer: Tokenizer | undefined;

/**
 * Tokens of a text in OpenAI's o200k encoding (gpt-tokenizer): what the catalogue budget counts.
 * The encoding (35 MB of heap, 0.2 s to load) is loaded on first use, not with the module.
 */
export function countTokens(text: string): number {
  tokenizer ??= createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as Tokenizer;
  return tokenizer.countTokens(text);
}
