import MiniSearch from 'minisearch';
import { stemmer } from 'stemmer';
import { compareByName } from '../../skills/skill-order.js';

export interface SkillMatch {
  name: string;
  description: string;
  /** 0..1: the share of the request's meaningful words this skill matches (name or description) */
  score: number;
}

interface SkillEntry {
  name: string;
  description: string;
}

/**
 * A request's meaningful terms beyond this are ignored: a user message can be 1 MB, and every query
 * term costs a prefix and a fuzzy walk of the index.
 */
const MAX_QUERY_TERMS = 64;
/** Only the start of a request is read for its terms, so a huge one of stop words or symbols costs no more than 64 KiB. */
const MAX_REQUEST_CHARS = 65_536;
/** Longer runs of letters are not words (base64, minified code) and would make fuzzy search slow. */
const MAX_TERM_LENGTH = 64;
/** A word is a run of letters, combining marks and digits; punctuation, symbols, emoji and controls separate words. */
const WORD = /[\p{L}\p{M}\p{N}]+/gu;

/**
 * Function words plus what people put around a request ("can you please help me…"), so that the
 * share in `score` counts only the words that say what is wanted. "use"/"using" are here because
 * nearly every skill description says "Use when…".
 */
const STOP_WORDS: ReadonlySet<string> = new Set(
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

/** Lower-cased, stop words and implausible lengths dropped, then Porter-stemmed ("PDFs" → "pdf", "extracting" → "extract"). */
function toTerm(word: string): string | null {
  if (word.length < 2 || word.length > MAX_TERM_LENGTH) return null;
  const lower = word.toLowerCase();
  return STOP_WORDS.has(lower) ? null : stemmer(lower);
}

/** The first `MAX_QUERY_TERMS` distinct terms of the request's start; a repeated word is processed once. */
function requestTerms(request: string): string[] {
  const seen = new Set<string>();
  const terms = new Set<string>();
  for (const [word] of request.slice(0, MAX_REQUEST_CHARS).matchAll(WORD)) {
    if (seen.has(word)) continue;
    seen.add(word);
    const term = toTerm(word);
    if (term !== null) terms.add(term);
    if (terms.size === MAX_QUERY_TERMS) break;
  }
  return [...terms];
}

/**
 * Ranks skills for a free-text request (`use_skill` without a skill name). A match's `score` is the
 * share of the request's distinct meaningful terms (stop words dropped, stemmed) that the skill's
 * name or description has, exactly or by prefix or a one-letter typo: a threshold of 0.5 reads
 * "at least half of what was asked for".
 */
export class SkillMatcher {
  private readonly index: MiniSearch<SkillEntry & { id: number }>;
  private readonly entries: readonly SkillEntry[];

  constructor(entries: readonly SkillEntry[]) {
    this.entries = entries.map(({ name, description }) => ({ name, description }));
    // Descriptions share most of their words, and stemming is most of the build's time.
    const terms = new Map<string, string | null>();
    this.index = new MiniSearch({
      fields: ['name', 'description'],
      tokenize: (text) => text.match(WORD) ?? [],
      processTerm: (word) => {
        let term = terms.get(word);
        if (term === undefined) terms.set(word, (term = toTerm(word)));
        return term;
      },
      searchOptions: {
        // A name is a handful of words chosen to say what the skill is for.
        boost: { name: 3 },
        // Short stems would prefix- or fuzzy-match unrelated words ("go" → "google", "creat" → "great").
        prefix: (term) => term.length >= 4,
        fuzzy: (term) => (term.length >= 6 ? 1 : false),
      },
    });
    this.index.addAll(this.entries.map((entry, id) => ({ id, ...entry })));
    // Searches pass terms already processed, so the memo is needed no more.
    terms.clear();
  }

  /** Best first, at most `limit`, only skills matching at least one word; ties broken by name. */
  rank(request: string, limit = 3): SkillMatch[] {
    const terms = requestTerms(request);
    if (terms.length === 0 || !(limit >= 1)) return [];
    // The terms are already processed: MiniSearch must neither split nor stem them again.
    const results = this.index.search(terms.join(' '), { tokenize: (query) => query.split(' '), processTerm: (term) => term });
    // The share comes first so that the first match is the one most likely to clear the caller's
    // threshold; among equal shares, MiniSearch's relevance (BM25, names weighing more) decides.
    return results
      .map((result) => ({ share: result.queryTerms.length / terms.length, relevance: result.score, entry: this.entries[result.id as number] }))
      .sort((a, b) => b.share - a.share || b.relevance - a.relevance || compareByName(a.entry, b.entry))
      .slice(0, Math.floor(limit))
      .map(({ entry, share }) => ({ name: entry.name, description: entry.description, score: share }));
  }
}

const matchers = new WeakMap<object, SkillMatcher>();

/** One matcher per snapshot-like object (WeakMap memo), built on first use. */
export function matcherFor(key: object, entries: () => readonly SkillEntry[]): SkillMatcher {
  let matcher = matchers.get(key);
  if (matcher === undefined) {
    matcher = new SkillMatcher(entries());
    matchers.set(key, matcher);
  }
  return matcher;
}
