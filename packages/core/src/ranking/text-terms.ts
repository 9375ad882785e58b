import { stemmer } from 'stemmer';
import { boundedMemo } from '../util/bounded-memo.js';
import englishStopWords from './english-stop-words.json' with { type: 'json' };

/** A word is a run of letters, combining marks and digits; punctuation, symbols, emoji and controls separate words. */
export const WORD = /[\p{L}\p{M}\p{N}]+/gu;
/** Longer runs of letters are not words (base64, minified code) and would make typo matching slow. */
export const MAX_TERM_LENGTH = 64;

/**
 * Function words plus what people put around a request ("can you please help me…"), so that only
 * the words that say what is wanted count. "use"/"using" are there because nearly every skill
 * description says "Use when…". The words are data: english-stop-words.json.
 */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set(englishStopWords);

/**
 * Lower case without accents (NFKD, combining marks dropped): "Diseño" and "diseno", "Café" and
 * "cafe" are the same word, as users type them either way. Fullwidth and other compatibility forms
 * become their plain letters.
 */
export function fold(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
}

/** The folded words of a text, in order; words of implausible length are dropped. */
export function foldedWords(text: string): string[] {
  const words: string[] = [];
  for (const [word] of fold(text).matchAll(WORD)) if (word.length <= MAX_TERM_LENGTH) words.push(word);
  return words;
}

/**
 * The English (Porter) stem of a folded word: "PDFs" → "pdf", "extracting" → "extract". Memoised: descriptions share
 * most words.
 */
export const englishStem: (word: string) => string = boundedMemo(stemmer, 200_000);

/** The index term of a folded word, or null for a stop word or a single letter. */
export function indexTerm(word: string): string | null {
  if (word.length < 2 || word.length > MAX_TERM_LENGTH || ENGLISH_STOP_WORDS.has(word)) return null;
  return englishStem(word);
}
