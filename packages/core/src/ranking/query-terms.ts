/// <reference path="../types/nlpjs-lang-es.d.ts" />
import { boundedMemo } from '../util/bounded-memo.js';
import { lazyModule } from '../util/lazy-module.js';
import { ENGLISH_STOP_WORDS, englishStem, foldedWords, indexTerm, WORD } from './text-terms.js';

/**
 * A request's words beyond this are ignored: a user message can be 1 MB, and every query term costs
 * a walk of the index.
 */
export const MAX_QUERY_WORDS = 64;
/** Only the start of a request is read for its words. */
export const MAX_REQUEST_CHARS = 65_536;
/** Multiword entries of the lexicons are matched up to this many words (longer entries are left out when compiled). */
export const MAX_PHRASE_WORDS = 6;
/**
 * Words read for phrases, and distinct words read for terms (stop words among them), from a request; fewer from its
 * context.
 */
const REQUEST_READ = { sequence: MAX_QUERY_WORDS * 4, distinct: MAX_QUERY_WORDS * 4 };
const CONTEXT_READ = { sequence: MAX_QUERY_WORDS, distinct: MAX_QUERY_WORDS };
/** Unknown words tried as typos and compounds: a request of thousands of made-up words costs no more than this many. */
const MAX_TYPO_WORDS = 8;

/** How much a term of the query counts, relative to a word of the request as typed. */
export const WEIGHTS = {
  /** A Spanish word put into the English the skills are written in. */
  translated: 1,
  /** A word with two letters swapped, found in the index. */
  transposed: 0.8,
  /** One half of a word the index knows only as two ("blogpost" → blog, post). */
  split: 0.7,
  /** A word people use for what skill descriptions call otherwise ("phone" → mobile). */
  related: 0.35,
  /** A phrase people use for it ("small screens" → responsive): more specific than one word. */
  relatedPhrase: 0.7,
  /** Words of the chat's last messages: context, weaker than this message. */
  context: 0.3,
} as const;

/** One term searched for: its weight, and whether a prefix or a typo of it may match. */
export interface QueryTerm {
  weight: number;
  prefix: boolean;
  /** Edit distance allowed (a word the index does not know is likely a typo), or false. */
  fuzzy: number | false;
  /** The request's word this term stands for (an index into `concepts`); -1 for context. */
  concept: number;
}

/** A term's document frequency, as a map or a view over several. */
export type TermCounts = Pick<ReadonlyMap<string, number>, 'has' | 'get'>;

/** What the index knows of its terms: how many skills have each, of how many. */
export interface Vocabulary {
  /** How many skills have each term. */
  terms: TermCounts;
  skills: number;
}

/**
 * A known word is matched by its beginning too ("scrape" → scraper) only when few skills have it:
 * the beginning of a common word walks thousands of postings for little.
 */
const PREFIX_MAX_SHARE = 0.05;

export interface AnalysedQuery {
  terms: Map<string, QueryTerm>;
  /** How many meaningful words the request has: a match's share is counted against this. */
  concepts: number;
  /** The request's first words, folded, in order (what trigger phrases are looked for in). */
  sequence: readonly string[];
}

/**
 * The Spanish stemmer brings @nlpjs's whole language pack, and the lexicons are 140 kB of JSON: all loaded on first
 * use.
 */
const nlpjsSpanish = lazyModule<typeof import('@nlpjs/lang-es')>('@nlpjs/lang-es', import.meta.url);
const spanishGlossary = lazyModule<Lexicon>('./spanish-glossary.json', import.meta.url);
const relatedTerms = lazyModule<Lexicon>('./related-terms.json', import.meta.url);
const spanishStopWords = lazyModule<string[]>('./spanish-stop-words.json', import.meta.url);

let spanishStemmer: { stemWord(word: string): string } | undefined;

/** Spanish stem of a folded word (the glossary's keys and the request's words meet here); memoised. */
const spanishStem = boundedMemo((word: string) => {
  spanishStemmer ??= new (nlpjsSpanish().StemmerEs)();
  return spanishStemmer.stemWord(word);
}, 100_000);

/**
 * A text's words, folded, in one pass over at most its first MAX_REQUEST_CHARS characters that
 * stops as soon as enough are read: the first `sequence` words in order (for phrases), and the
 * first `distinct` different ones. Each word is folded on its own (folding 64 KiB at once costs
 * milliseconds), a repeated one once.
 */
function readWords(
  text: string,
  limits: { sequence: number; distinct: number },
): { sequence: string[]; distinct: string[] } {
  const sequence: string[] = [];
  const distinct = new Set<string>();
  const folded = new Map<string, string[]>();
  for (const [raw] of text.slice(0, MAX_REQUEST_CHARS).matchAll(WORD)) {
    let words = folded.get(raw);
    if (words === undefined) folded.set(raw, (words = foldedWords(raw)));
    for (const word of words) {
      if (sequence.length < limits.sequence) sequence.push(word);
      if (distinct.size < limits.distinct) distinct.add(word);
    }
    if (sequence.length >= limits.sequence && distinct.size >= limits.distinct) break;
  }
  return { sequence, distinct: [...distinct] };
}

/**
 * A lexicon as its data file holds it: entries grouped in sections named for the people who edit
 * them. An entry's value is the words (space-separated, most likely first) that skill descriptions
 * use for its key.
 * - spanish-glossary.json: Spanish words users type in requests → the English words skill
 *   descriptions use for them. Keys: natural Spanish (lower case, accents as written); the ranker
 *   folds accents and stems both sides, so one form per word family is enough.
 * - related-terms.json: words users type → words skill descriptions use for the same need, for a
 *   weak second query: a paraphrase names the need, not the skill. Keys: lower-case English words or
 *   short phrases.
 * spanish-stop-words.json is Spanish function words and request filler (de, la, para, hazme, dime,
 * por favor, quiero, necesito, ayúdame...).
 */
type Lexicon = Readonly<Record<string, Readonly<Record<string, string>>>>;

/** A lexicon's keys as stem sequences ("base de datos" → "bas de dat"), values as index terms. */
function compile(lexicon: Lexicon, stem: (word: string) => string): Map<string, string[]> {
  const compiled = new Map<string, string[]>();
  for (const [key, value] of Object.values(lexicon).flatMap((section) => Object.entries(section))) {
    const words = foldedWords(key);
    if (words.length === 0 || words.length > MAX_PHRASE_WORDS) continue;
    const terms = foldedWords(value)
      .map(indexTerm)
      .filter((term): term is string => term !== null);
    const joined = words.map(stem).join(' ');
    compiled.set(joined, [...new Set([...(compiled.get(joined) ?? []), ...terms])]);
  }
  return compiled;
}

interface Lexicons {
  spanish: Map<string, string[]>;
  related: Map<string, string[]>;
  spanishStop: ReadonlySet<string>;
}

let lexicons: Lexicons | undefined;

/** Compiled once, on first use. */
function lexiconsOf(): Lexicons {
  lexicons ??= {
    spanish: compile(spanishGlossary(), spanishStem),
    related: compile(relatedTerms(), englishStem),
    spanishStop: new Set(spanishStopWords().flatMap(foldedWords)),
  };
  return lexicons;
}

/**
 * Words with two neighbouring letters swapped ("contianer" → "container"): the commonest typo, two edits for
 * Levenshtein.
 */
function* transpositions(word: string): Generator<string> {
  for (let i = 0; i + 1 < word.length; i++) {
    if (word[i] === word[i + 1]) continue;
    yield word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2);
  }
}

/**
 * What to search for a request: each meaningful word as the index knows it (English stem); a word
 * the index does not know, put into English when the Spanish glossary has it, else matched with
 * its likely typos; words people use for a need mapped, weakly, to the words skills use for it.
 * `vocabulary` is the index's terms.
 */
export function analyseQuery(request: string, vocabulary: Vocabulary, context = ''): AnalysedQuery {
  const terms = new Map<string, QueryTerm>();
  const add = (term: string, next: QueryTerm) => {
    const known = terms.get(term);
    if (known === undefined || known.weight < next.weight) terms.set(term, next);
  };
  const read = readWords(request, REQUEST_READ);
  const concepts = addWords(read, 1, 0, vocabulary, add);
  if (context !== '') {
    // The context's terms, of which only the rarest count: a topic word ("kubernetes") says what the
    // chat is about; a common one says little and costs a long walk of the index.
    const found = new Map<string, QueryTerm>();
    addWords(readWords(context, CONTEXT_READ), WEIGHTS.context, -1, vocabulary, (term, next) => {
      if (vocabulary.terms.has(term) && !terms.has(term) && (found.get(term)?.weight ?? 0) < next.weight)
        found.set(term, next);
    });
    const rarest = [...found]
      .sort(([a], [b]) => (vocabulary.terms.get(a) ?? 0) - (vocabulary.terms.get(b) ?? 0))
      .slice(0, MAX_CONTEXT_TERMS);
    for (const [term, next] of rarest) terms.set(term, next);
  }
  return { terms, concepts, sequence: read.sequence };
}

/** Terms the chat's last messages add to a request, the rarest first. */
const MAX_CONTEXT_TERMS = 4;

/** Adds one text's terms at a weight; returns how many concepts (meaningful words) it had. */
function addWords(
  { sequence, distinct: words }: { sequence: readonly string[]; distinct: readonly string[] },
  scale: number,
  conceptBase: number,
  vocabulary: Vocabulary,
  add: AddTerm,
): number {
  const lexicons = lexiconsOf();
  const concepts = new ConceptCounter(conceptBase);
  // Phrases first ("base de datos", "small screens"): their words are then not read on their own.
  const inPhrase = addPhrases(sequence, scale, concepts, lexicons, add);
  const inSpanish = readsAsSpanish(sequence, lexicons);
  const reading: WordReading = {
    scale,
    context: conceptBase < 0,
    concepts,
    vocabulary,
    add,
    lexicons,
    inSpanish,
    stemsSeen: new Set(),
    typoWords: 0,
  };
  let meaningful = concepts.count;
  for (const word of words) {
    if (meaningful >= MAX_QUERY_WORDS) break;
    if (
      inPhrase.has(word) ||
      word.length < 2 ||
      ENGLISH_STOP_WORDS.has(word) ||
      (inSpanish && lexicons.spanishStop.has(word))
    )
      continue;
    if (addWord(word, reading)) meaningful++;
  }
  return concepts.count;
}

type AddTerm = (term: string, next: QueryTerm) => void;

/** Numbers a text's concepts from its base: the request's from 0 on, a context's all -1 (and not counted). */
class ConceptCounter {
  count = 0;

  constructor(private readonly base: number) {}

  next(): number {
    return this.base < 0 ? -1 : this.base + this.count++;
  }
}

/**
 * Adds the lexicons' phrases found in a text's word sequence; returns the words of its translated
 * (Spanish) phrases. A translated phrase is one of the request's concepts; a related phrase only adds
 * weak terms (its words count on their own).
 */
function addPhrases(
  sequence: readonly string[],
  scale: number,
  concepts: ConceptCounter,
  { spanish, related }: Lexicons,
  add: AddTerm,
): Set<string> {
  const inPhrase = new Set<string>();
  const phrasesSeen = new Set<string>();
  for (const [lexicon, stem, weight] of [
    [spanish, spanishStem, WEIGHTS.translated],
    [related, englishStem, WEIGHTS.relatedPhrase],
  ] as const) {
    const stems = sequence.map(stem);
    for (let n = MAX_PHRASE_WORDS; n >= 2; n--) {
      for (let i = 0; i + n <= stems.length; i++) {
        const key = stems.slice(i, i + n).join(' ');
        const found = lexicon.get(key);
        // A phrase said twice is one concept, once.
        if (found === undefined || phrasesSeen.has(key) || concepts.count >= MAX_QUERY_WORDS) continue;
        phrasesSeen.add(key);
        const concept = lexicon === spanish ? concepts.next() : -1;
        for (const term of found) add(term, { weight: weight * scale, prefix: false, fuzzy: false, concept });
        if (lexicon === spanish) for (const word of sequence.slice(i, i + n)) inPhrase.add(word);
      }
    }
  }
  return inPhrase;
}

/**
 * A request with more Spanish function words than English ones is read as Spanish: its function
 * words are dropped even where English has them ("con", "solo", "muy" → MUI), and a word the
 * glossary knows is translated even where English has it ("informe", "resume").
 */
function readsAsSpanish(sequence: readonly string[], { spanishStop }: Lexicons): boolean {
  return countIn(sequence, spanishStop) > countIn(sequence, ENGLISH_STOP_WORDS);
}

/** What reading one text's words carries from word to word. */
interface WordReading {
  scale: number;
  /** The chat's last messages, not the request: no prefixes, no typos. */
  context: boolean;
  concepts: ConceptCounter;
  vocabulary: Vocabulary;
  add: AddTerm;
  lexicons: Lexicons;
  inSpanish: boolean;
  /** Two forms of one word ("PDFs, a pdf") are one concept. */
  stemsSeen: Set<string>;
  /** Unknown words met so far (the first MAX_TYPO_WORDS are tried as typos). */
  typoWords: number;
}

/**
 * Adds a word's terms: its translation when the glossary has one the index needs, else the word as
 * the index knows it (with its likely typos when unknown) and the words related to it. Returns
 * false, adding nothing, for another form of a word already added or a Spanish function word.
 */
function addWord(word: string, reading: WordReading): boolean {
  const { lexicons, vocabulary, inSpanish, scale, add } = reading;
  const term = englishStem(word);
  if (reading.stemsSeen.has(term)) return false;
  const glossary = lexicons.spanish.get(spanishStem(word)) ?? lexicons.spanish.get(word);
  // A glossary entry that gives the word back ("scrapear" → scrape) does not make an English word Spanish.
  const translated = glossary?.includes(term) ? undefined : glossary;
  const known = vocabulary.terms.has(term) && !(inSpanish && translated !== undefined);
  const translation = known ? undefined : translated;
  if (!known && translation === undefined && lexicons.spanishStop.has(word)) return false;
  reading.stemsSeen.add(term);
  const concept = reading.concepts.next();
  if (translation !== undefined) {
    for (const english of translation)
      add(english, { weight: WEIGHTS.translated * scale, prefix: false, fuzzy: false, concept });
    return true;
  }
  addAsTyped(word, term, known, concept, reading);
  for (const near of lexicons.related.get(term) ?? [])
    if (near !== term) add(near, { weight: WEIGHTS.related * scale, prefix: false, fuzzy: false, concept });
  return true;
}

/** Adds a word's own term; a word the index does not know also as its likely typos (the first few only). */
function addAsTyped(word: string, term: string, known: boolean, concept: number, reading: WordReading): void {
  const { vocabulary, context, scale, add } = reading;
  const rare = (vocabulary.terms.get(term) ?? 0) <= vocabulary.skills * PREFIX_MAX_SHARE;
  const typo = !known && !context && reading.typoWords < MAX_TYPO_WORDS;
  add(term, {
    weight: scale,
    prefix: !context && rare && term.length >= 5,
    fuzzy: typo ? typoDistance(term) : false,
    concept,
  });
  if (!known && !context) reading.typoWords++;
  if (!typo) return;
  for (const swapped of transpositions(word)) {
    const candidate = englishStem(swapped);
    if (vocabulary.terms.has(candidate))
      add(candidate, { weight: WEIGHTS.transposed * scale, prefix: false, fuzzy: false, concept });
  }
  for (const [left, right] of splits(word, vocabulary.terms)) {
    add(left, { weight: WEIGHTS.split * scale, prefix: false, fuzzy: false, concept });
    add(right, { weight: WEIGHTS.split * scale, prefix: false, fuzzy: false, concept });
  }
}

function countIn(words: readonly string[], set: ReadonlySet<string>): number {
  let count = 0;
  for (const word of words) if (set.has(word)) count++;
  return count;
}

/** Ways to cut a word into two the index knows, each half three letters or more ("blogpost", "filenames"). */
function* splits(word: string, vocabulary: TermCounts): Generator<[string, string]> {
  if (word.length < 6 || word.length > 30) return;
  for (let at = 3; at <= word.length - 3; at++) {
    const left = englishStem(word.slice(0, at));
    const right = englishStem(word.slice(at));
    if (
      vocabulary.has(left) &&
      vocabulary.has(right) &&
      !ENGLISH_STOP_WORDS.has(word.slice(0, at)) &&
      !ENGLISH_STOP_WORDS.has(word.slice(at))
    )
      yield [left, right];
  }
}

/**
 * A word the index does not know may be a typo: one edit from five letters. Two letters swapped (the
 * commonest typo of two edits) are tried as `transpositions`: a fuzzy search at distance 2 costs
 * more than the rest of the ranking.
 */
function typoDistance(term: string): number | false {
  return term.length >= 5 ? 1 : false;
}
