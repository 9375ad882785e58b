import type MiniSearch from 'minisearch';
import type { Query } from 'minisearch';
import { lazyModule } from '../util/lazy-module.js';
import { analyseQuery, MAX_PHRASE_WORDS, type QueryTerm, type TermCounts, WEIGHTS } from './query-terms.js';
import { foldedWords, indexTerm } from './text-terms.js';

/** Loaded by the first index built: an import of core that ranks nothing does not pay for it. */
const miniSearch = lazyModule<typeof MiniSearch>('minisearch', import.meta.url);

/** What the ranker reads of a skill. */
export interface RankableSkill {
  readonly name: string;
  readonly description: string;
  /** `metadata.triggers`: keywords, verbs and phrases that should bring this skill up. */
  readonly triggers?: readonly string[];
  /** A user's own skill: in the index, but its words are known only to views that hold it. */
  readonly private?: boolean;
}

export interface RankedSkill {
  name: string;
  description: string;
  /**
   * 0..1, how well the skill fits the request (the Rumi design's `can_handle`): its relevance,
   * normalised; results come in this order.
   */
  score: number;
  /** The share of the request's meaningful words the skill matches (name, description or triggers). */
  share: number;
}

export interface RankOptions {
  /** At most this many (default 20). */
  limit?: number;
  /** The chat's last messages: weaker evidence than the request itself. */
  context?: string;
  /**
   * How often the team activated each skill lately: among near-equal scores the more used ranks
   * higher (at most `POPULARITY_BOOST` more).
   */
  popularity?: ReadonlyMap<string, number>;
  /** Only skills (by the position they were added at) this accepts: a user's view of a shared index. */
  include?: (position: number) => boolean;
  /** The private skills (by position) the view holds: their words count as known. */
  privateSkills?: readonly number[];
}

/** The most a team's use adds to a skill's relevance: enough to order near-equals, never to lift a poor match. */
export const POPULARITY_BOOST = 0.05;
/**
 * The relevance (BM25, boosted) that scores 0.5: `score = relevance / (relevance + this)`, so scores
 * follow the ranking. Set from the labelled requests (bench/fixtures/skill-queries.json): the best
 * match of a request a skill serves scores about 0.8 (p50), of one no skill serves about 0.4.
 */
const RELEVANCE_HALF = 45;

const FIELD_BOOSTS = { name: 3, description: 1, triggers: 2 } as const;

/**
 * A BM25 index (MiniSearch) of skills' names, descriptions and triggers, each weighted, with
 * accent-folded, Porter-stemmed terms. Built once per catalogue snapshot; `rank` is pure. Skills
 * are kept by position in plain arrays (the index holds only positions), for a small heap.
 */
export class SkillRanker {
  private readonly index: MiniSearch<RankableSkill & { id: number }>;
  private readonly names: string[] = [];
  private readonly descriptions: string[] = [];
  /** Trigger phrases (two words or more), folded, by position: a request containing one is a strong sign. */
  private readonly phrases = new Map<number, readonly string[]>();
  /** Each term's document frequency among the shared skills: how many have it. */
  private readonly terms = new Map<string, number>();
  /** The terms of each private skill (a user's personal one), by position: known only to the views that hold it. */
  private readonly privateTerms = new Map<number, ReadonlySet<string>>();
  /** The terms of the skill being added (a term counts once per skill). */
  private adding = new Set<string>();

  /** All at once; `SkillRanker.building` gives the event loop turns between slices of a large catalogue. */
  constructor(skills: Iterable<RankableSkill> = []) {
    this.index = new (miniSearch())<RankableSkill & { id: number }>({
      fields: ['name', 'description', 'triggers'],
      extractField: (skill, field) =>
        field === 'triggers'
          ? skill.triggers?.join(' ')
          : field === 'id'
            ? skill.id
            : skill[field as 'name' | 'description'],
      tokenize: (text) => foldedWords(text),
      processTerm: (word) => {
        const term = indexTerm(word);
        if (term !== null) this.adding.add(term);
        return term;
      },
      searchOptions: { boost: FIELD_BOOSTS },
    });
    for (const skill of skills) this.add(skill);
  }

  /** Builds a ranker a slice of skills per step (for generator-built snapshots). */
  static *building(skills: readonly RankableSkill[], slice = 250): Generator<void, SkillRanker> {
    const ranker = new SkillRanker();
    for (let i = 0; i < skills.length; i++) {
      ranker.add(skills[i]);
      if ((i + 1) % slice === 0) yield;
    }
    return ranker;
  }

  /**
   * Skills are known by the position they were added at (what `include` is asked about). A private
   * skill's words are not in the shared vocabulary: whether a word is known (and so not taken for a
   * typo) must not depend on another user's skills.
   */
  private add(skill: RankableSkill): void {
    const id = this.names.length;
    this.names.push(skill.name);
    this.descriptions.push(skill.description);
    const phrases = (skill.triggers ?? [])
      .map((trigger) => foldedWords(trigger))
      .filter((words) => words.length >= 2 && words.length <= MAX_PHRASE_WORDS)
      .map((words) => words.join(' '));
    if (phrases.length > 0) this.phrases.set(id, phrases);
    this.adding = new Set();
    this.index.add({ id, name: skill.name, description: skill.description, triggers: skill.triggers });
    if (skill.private === true) this.privateTerms.set(id, this.adding);
    else for (const term of this.adding) this.terms.set(term, (this.terms.get(term) ?? 0) + 1);
  }

  /**
   * Every term of the shared skills, with how many have it: a request's word outside it is a typo, another language or
   * unknown.
   */
  get vocabulary(): ReadonlyMap<string, number> {
    return this.terms;
  }

  /**
   * The search for a query's terms. Two kinds are looked for in names and triggers only, where a
   * skill says what it is about:
   * - the context's (the chat's earlier messages): weak evidence, which in descriptions would mostly
   *   add skills to walk through;
   * - in a large catalogue, a term most descriptions use ("tool", "search", "first" in a thousand
   *   generated integration skills): in a description it says little (its IDF is near nothing)
   *   and costs a walk of most of the index.
   */
  private queryOf(terms: ReadonlyMap<string, QueryTerm>): Query {
    const commonAbove =
      this.names.length >= COMMON_MIN_SKILLS ? this.names.length * COMMON_SHARE : Number.POSITIVE_INFINITY;
    const everywhere: string[] = [];
    const inNames: string[] = [];
    for (const [term, query] of terms) {
      const fromContext = query.concept < 0 && query.weight <= WEIGHTS.context;
      (fromContext || (this.terms.get(term) ?? 0) > commonAbove ? inNames : everywhere).push(term);
    }
    if (inNames.length === 0) return everywhere.join(' ');
    const named: Query = { queries: [inNames.join(' ')], fields: ['name', 'triggers'] };
    return { combineWith: 'OR', queries: everywhere.length === 0 ? [named] : [everywhere.join(' '), named] };
  }

  /** The shared vocabulary plus the words of the private skills a view holds. */
  private vocabularyFor(privateSkills: readonly number[] | undefined): TermCounts {
    const own = (privateSkills ?? []).flatMap((position) => {
      const terms = this.privateTerms.get(position);
      return terms === undefined ? [] : [terms];
    });
    if (own.length === 0) return this.terms;
    const shared = this.terms;
    const count = (term: string) => (shared.get(term) ?? 0) + own.filter((terms) => terms.has(term)).length;
    return { has: (term) => count(term) > 0, get: (term) => count(term) || undefined };
  }

  get size(): number {
    return this.names.length;
  }

  /** Bytes of the index serialised (MiniSearch's JSON form), for benchmarks. */
  serializedBytes(): number {
    return Buffer.byteLength(JSON.stringify(this.index));
  }

  /** Best first; only skills matching at least one word of the request; ties by name. */
  rank(request: string, options: RankOptions = {}): RankedSkill[] {
    const limit = Math.floor(options.limit ?? 20);
    if (!(limit >= 1)) return [];
    const { terms, concepts, sequence } = analyseQuery(
      request,
      { terms: this.vocabularyFor(options.privateSkills), skills: this.names.length },
      options.context,
    );
    // A request without a meaningful word ("ok, thanks") matches nothing by itself: only its context can.
    if (terms.size === 0 || (concepts === 0 && !(options.context ?? '').trim())) return [];
    const include = options.include;
    const results = this.index.search(this.queryOf(terms), {
      tokenize: (text) => text.split(' '),
      processTerm: (term) => term,
      boostTerm: (term) => terms.get(term)?.weight ?? 1,
      prefix: (term) => terms.get(term)?.prefix ?? false,
      fuzzy: (term) => terms.get(term)?.fuzzy ?? false,
      ...(include === undefined ? {} : { filter: (result) => include(result.id as number) }),
    });
    // The request's phrases (runs of 2 to MAX_PHRASE_WORDS of its first words): a trigger phrase matches whole words
    // only, by one look-up.
    const phrases = this.phrases.size > 0 ? phrasesOf(sequence) : undefined;
    const popularity = options.popularity;
    const mostUsed = popularity === undefined ? 0 : mostUsedOf(popularity);
    for (const result of results) {
      const id = result.id as number;
      if (phrases !== undefined && this.phrases.get(id)?.some((phrase) => phrases.has(phrase))) result.score *= 2;
      const uses = mostUsed > 0 ? (popularity!.get(this.names[id]) ?? 0) : 0;
      if (uses > 0) result.score *= 1 + (POPULARITY_BOOST * Math.log1p(uses)) / Math.log1p(mostUsed);
    }
    const best = this.best(results, limit);
    return best.map(({ id: position, score, queryTerms }) => {
      const id = position as number;
      const share = concepts === 0 ? 0 : Math.min(1, shareOf(queryTerms, terms, concepts));
      return {
        name: this.names[id],
        description: this.descriptions[id],
        score: round(score / (score + RELEVANCE_HALF)),
        share: round(share),
      };
    });
  }

  /**
   * The first `limit` results, higher score first and equal scores by name. Results run to
   * thousands and the limit is small: a list of the best is kept in order as they pass (most are
   * turned away by one comparison with its last), each newcomer placed by binary search.
   */
  private best<T extends { id: unknown; score: number }>(results: readonly T[], limit: number): T[] {
    const before = (a: T, b: T) =>
      a.score > b.score || (a.score === b.score && this.names[a.id as number] < this.names[b.id as number]);
    const best: T[] = [];
    for (const result of results) {
      if (best.length === limit && !before(result, best[limit - 1])) continue;
      let low = 0;
      let high = best.length;
      while (low < high) {
        const middle = (low + high) >>> 1;
        if (before(result, best[middle])) high = middle;
        else low = middle + 1;
      }
      if (best.length === limit) best.pop();
      best.splice(low, 0, result);
    }
    return best;
  }
}

/**
 * A term more than this share of the skills have is looked for in names and triggers only, in a catalogue of at least
 * so many skills (where it costs).
 */
const COMMON_SHARE = 0.2;
const COMMON_MIN_SKILLS = 500;

function phrasesOf(sequence: readonly string[]): Set<string> {
  const phrases = new Set<string>();
  for (let i = 0; i < sequence.length; i++) {
    for (let n = 2; n <= MAX_PHRASE_WORDS && i + n <= sequence.length; n++)
      phrases.add(sequence.slice(i, i + n).join(' '));
  }
  return phrases;
}

const mostUsedMemo = new WeakMap<ReadonlyMap<string, number>, number>();

/** The highest count of a popularity map (maps are replaced, not changed: memoised per map). */
function mostUsedOf(popularity: ReadonlyMap<string, number>): number {
  let most = mostUsedMemo.get(popularity);
  if (most === undefined) {
    most = 0;
    for (const uses of popularity.values()) if (uses > most) most = uses;
    mostUsedMemo.set(popularity, most);
  }
  return most;
}

/** Each concept counts once, by its strongest matched term's weight. */
function shareOf(matched: readonly string[], terms: ReadonlyMap<string, QueryTerm>, concepts: number): number {
  const best = new Map<number, number>();
  for (const term of matched) {
    const query = terms.get(term);
    if (query === undefined || query.concept < 0) continue;
    best.set(query.concept, Math.max(best.get(query.concept) ?? 0, Math.min(1, query.weight)));
  }
  let sum = 0;
  for (const weight of best.values()) sum += weight;
  return sum / concepts;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
