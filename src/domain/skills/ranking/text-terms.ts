import { stemmer } from 'stemmer';
import { boundedMemo } from '../../shared/bounded-memo.js';

/** A word is a run of letters, combining marks and digits; punctuation, symbols, emoji and controls separate words. */
export const WORD = /[\p{L}\p{M}\p{N}]+/gu;
/** Longer runs of letters are not words (base64, minified code) and would make typo matching slow. */
export const MAX_TERM_LENGTH = 64;

/**
 * Function words plus what people put around a request ("can you please help me…"), so that only
 * the words that say what is wanted count. "use"/"using" are here because nearly every skill
 * description says "Use when…".
 */
export const ENGLISH_STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again all also am an and any anything are as at be because been before being below between both but by ' +
    'can could did do does doing done down during each either etc few for from further get gets getting got had has have having ' +
    'he hello help her here hers hey hi him his how i if in into is it its itself just kindly let lets like make me might mine more ' +
    'most much must my myself need needs no nor not now of off ok okay on once only or other our ours out over own please same ' +
    'shall she should so some something such than thank thanks that the their theirs them then there these they thing things this ' +
    'those through to too under until up us use using very want wants was we were what when where which while who whom why will ' +
    'with would you your yours yourself'
  ).split(' '),
);

/**
 * Lower case without accents (NFKD, combining marks dropped): "Diseño" and "diseno", "Café" and
 * "cafe" are the same word, as users type them either way. Fullwidth and other compatibility forms
 * become their plain letters.
 */
export function fold(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}+/gu, '').toLowerCase();
}

/** The folded words of a text, in order; words of implausible length are dropped. */
export function foldedWords(text: string): string[] {
  const words: string[] = [];
  for (const [word] of fold(text).matchAll(WORD)) if (word.length <= MAX_TERM_LENGTH) words.push(word);
  return words;
}

/** The English (Porter) stem of a folded word: "PDFs" → "pdf", "extracting" → "extract". Memoised: descriptions share most words. */
export const englishStem: (word: string) => string = boundedMemo(stemmer, 200_000);

/** The index term of a folded word, or null for a stop word or a single letter. */
export function indexTerm(word: string): string | null {
  if (word.length < 2 || word.length > MAX_TERM_LENGTH || ENGLISH_STOP_WORDS.has(word)) return null;
  return englishStem(word);
}
