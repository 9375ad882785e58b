/**
 * Choosing skills at scale: ranking quality, the budgeted catalogue, and their cost.
 *
 * Quality: a labelled set of requests as users type them (bench/fixtures/skill-queries.json: plain,
 * paraphrased, with typos, in Spanish, needing two skills, or served by no skill) over the shared
 * corpus, loaded as a server would (lenient, max_depth 6). Each request has needed slots, each slot
 * being the skills any one of which would serve it. Reported: recall@5/@10/@20 of the ranker (the
 * share of needed slots with an acceptable skill among the first 5/10/20), and the share of slots
 * filled by the catalogue a turn would list within the default budget (4,000 o200k tokens, 50
 * skills) — what the model actually sees.
 *
 * Cost, with 2,250 skills (the corpus and copies): ranking per turn (`skills.search`, and the whole
 * catalogue choice: rank, fill, render), and the index's heap per skill.
 *
 *   npm run bench:skill-ranking          (writes bench/results/skill-ranking.{md,json})
 *   BENCH_QUERIES=held-out.json npm run bench:skill-ranking
 */
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { basename, join, relative } from 'node:path';
import {
  buildSnapshot,
  CatalogueIndex,
  type CatalogueLimits,
  type CatalogueSnapshot,
  chooseCatalogue,
  countTokens,
  discoverSkills,
  type DiscoveryResult,
  NO_COMMANDS,
  runThrough,
  type SkillRecord,
} from '@skillhost/core';
import { corpusPath } from '../test/support/files/corpus.js';
import { machineName, percentile, recordResults, type SummaryLine } from './bench-support.js';

const ROOT = join(import.meta.dirname, '..', '..');
/** Another labelled set (the same shape) can be measured with BENCH_QUERIES=<file>. */
const QUERIES = process.env.BENCH_QUERIES ?? join(ROOT, 'bench', 'fixtures', 'skill-queries.json');
/** Results of another set go beside the main ones, named after it. */
const RESULTS_NAME =
  process.env.BENCH_QUERIES === undefined ? 'skill-ranking' : `skill-ranking-${basename(QUERIES, '.json')}`;
const CUTS = [5, 10, 20] as const;
/** The defaults: `catalogue_budget_tokens`, `catalogue_max_skills`, `catalogue_format`. */
const LIMITS: CatalogueLimits = { budgetTokens: 4000, maxSkills: 50, format: 'json' };
const SCALE_SKILLS = 2250;
/**
 * Requests (and as many characters of chat context) a hostile user might send: a turn's catalogue must still be cheap.
 */
const HOSTILE_REQUESTS: Record<string, string> = {
  '1 MB of words, 200 distinct': 'extract text pdf '
    .concat(Array.from({ length: 200 }, (_, i) => `filler${i}`).join(' '), ' ')
    .repeat(4000)
    .slice(0, 1_048_576),
  '10,000 distinct made-up words': Array.from({ length: 10_000 }, (_, i) => `wrod${i}x`).join(' '),
  'one 1 MB word': 'a'.repeat(1_048_576),
  '1 MB of stop words': 'the a please me '.repeat(65_536),
  '1 MB of Spanish phrases': 'base de datos para la hoja de cálculo '.repeat(27_000),
};
const TIMING_ROUNDS = 20;

interface LabelledQuery {
  query: string;
  lang: string;
  kind: string;
  /** Slots: each lists the skills any one of which serves that part of the request. */
  needed: string[][];
}

type Cut = (typeof CUTS)[number] | 'budget';

interface Tally {
  queries: number;
  slots: number;
  filled: Record<Cut, number>;
}

const emptyTally = (): Tally => ({ queries: 0, slots: 0, filled: { 5: 0, 10: 0, 20: 0, budget: 0 } });

function snapshotOf(result: DiscoveryResult): CatalogueSnapshot {
  return buildSnapshot(
    result,
    { validation: 'lenient', includeLocation: false, catalogueFormat: LIMITS.format },
    { scannedAt: new Date(), durationMs: 0 },
    NO_COMMANDS,
  );
}

function main(): void {
  const path = corpusPath();
  const discovered = discoverSkills({
    directories: [{ configured: path, path }],
    mode: 'lenient',
    maxDepth: 6,
    maxSkills: 1_000_000,
  });
  const snapshot = snapshotOf(discovered);
  const queries = JSON.parse(readFileSync(QUERIES, 'utf8')) as LabelledQuery[];
  const unknown = queries.flatMap((q) => q.needed.flat()).filter((name) => !snapshot.skills.has(name));
  if (unknown.length > 0)
    throw new Error(`The query set names skills the corpus does not load: ${[...new Set(unknown)].join(', ')}`);

  const byKind = new Map<string, Tally>();
  const all = emptyTally();
  const offeredForNone: number[] = [];
  const listedCounts: number[] = [];
  const catalogueTokens: number[] = [];
  const misses: { query: string; kind: string; missing: string[][]; got: string[] }[] = [];
  for (const labelled of queries) {
    const ranked = snapshot.index.search(snapshot, labelled.query, { limit: 20 }).map((match) => match.name);
    const choice = chooseCatalogue(snapshot, LIMITS, { message: labelled.query, searchable: true });
    listedCounts.push(choice.listed.length);
    catalogueTokens.push(choice.tokens);
    if (labelled.needed.length === 0) {
      offeredForNone.push(ranked.length);
      continue;
    }
    let tally = byKind.get(labelled.kind);
    if (tally === undefined) byKind.set(labelled.kind, (tally = emptyTally()));
    for (const target of [tally, all]) target.queries++;
    for (const slot of labelled.needed) {
      const at = ranked.findIndex((name) => slot.includes(name));
      const listed = choice.listed.some((name) => slot.includes(name));
      for (const target of [tally, all]) {
        target.slots++;
        for (const cut of CUTS) if (at !== -1 && at < cut) target.filled[cut]++;
        if (listed) target.filled.budget++;
      }
    }
    const missing = labelled.needed.filter((slot) => !ranked.some((name) => slot.includes(name)));
    if (missing.length > 0)
      misses.push({ query: labelled.query, kind: labelled.kind, missing, got: ranked.slice(0, 5) });
  }

  const cost = measureCost(
    discovered,
    queries.map((q) => q.query),
  );
  const result = {
    recordedAt: new Date().toISOString(),
    machine: machineName(),
    corpusSkills: snapshot.skills.size,
    queries: queries.length,
    queryFile: relative(ROOT, QUERIES),
    limits: LIMITS,
    all,
    byKind: Object.fromEntries(byKind),
    none: {
      queries: offeredForNone.length,
      offeredP50: percentile(offeredForNone, 50),
      offeredMax: Math.max(0, ...offeredForNone),
    },
    catalogue: {
      listedP50: percentile(listedCounts, 50),
      listedMin: Math.min(...listedCounts),
      tokensP50: percentile(catalogueTokens, 50),
      tokensMax: Math.max(...catalogueTokens),
      // What every prompt would carry if the whole catalogue were listed.
      wholeTokens: countTokens(snapshot.catalogue(LIMITS.format)),
      wholeBytes: Buffer.byteLength(snapshot.catalogue(LIMITS.format)),
    },
    cost,
    misses,
  };
  recordResults(RESULTS_NAME, result, markdown(result), summaryOf(result));
}

/**
 * Recall has no same-run baseline (the old matcher is gone; its figures are in NOTES); the budgeted catalogue is
 * compared with the whole one it replaces.
 */
function summaryOf(r: {
  all: Tally;
  limits: CatalogueLimits;
  catalogue: { tokensMax: number; wholeTokens: number };
  cost: ReturnType<typeof measureCost>;
}): SummaryLine[] {
  const share = (cut: Cut) => (r.all.slots === 0 ? NaN : r.all.filled[cut] / r.all.slots);
  return [
    { measure: 'recall@20, all requests', value: share(20), unit: '' },
    { measure: 'needed slots in the budgeted catalogue', value: share('budget'), unit: '' },
    {
      measure: "a turn's catalogue, most tokens",
      value: r.catalogue.tokensMax,
      unit: 'tokens',
      baseline: { name: 'the whole catalogue', value: r.catalogue.wholeTokens },
      target: `≤ ${r.limits.budgetTokens} tokens`,
      met: r.catalogue.tokensMax <= r.limits.budgetTokens,
    },
    {
      measure: `a turn's catalogue with ${r.cost.skills} skills (rank, fill, render), p99`,
      value: r.cost.chooseMs.p99,
      unit: 'ms',
    },
    {
      measure: "slowest hostile request, a turn's catalogue, p50",
      value: Math.max(...r.cost.hostile.map((h) => h.p50)),
      unit: 'ms',
    },
  ];
}

/** One timing run: each request ranked and chosen for, TIMING_ROUNDS times. */
function timeRun(snapshot: CatalogueSnapshot, requests: readonly string[]) {
  const search: number[] = [];
  const turnRank: number[] = [];
  const choose: number[] = [];
  // CPU time beside wall time: on a shared machine a call can wait for a core, which is not its cost.
  const chooseCpu: number[] = [];
  for (let round = 0; round < TIMING_ROUNDS; round++) {
    for (const request of requests) {
      const context = requests[(round * 7) % requests.length];
      let started = performance.now();
      snapshot.index.search(snapshot, request, { limit: 20 });
      search.push(performance.now() - started);
      started = performance.now();
      snapshot.index.search(snapshot, request, { limit: LIMITS.maxSkills * 3, context });
      turnRank.push(performance.now() - started);
      started = performance.now();
      const cpu = process.cpuUsage();
      chooseCatalogue(snapshot, LIMITS, { message: request, context, searchable: true });
      const used = process.cpuUsage(cpu);
      choose.push(performance.now() - started);
      chooseCpu.push((used.user + used.system) / 1000);
    }
  }
  return { search, turnRank, choose, chooseCpu };
}

/** Ranking and choosing with 2,250 skills (the corpus, then copies under other names), and the index's heap. */
function measureCost(discovered: DiscoveryResult, requests: readonly string[]) {
  const skills: SkillRecord[] = [...discovered.skills];
  for (let i = 0; skills.length < SCALE_SKILLS; i++) {
    const original = discovered.skills[i];
    skills.push({ ...original, name: `${original.name}-copy` });
  }
  const snapshot = snapshotOf({ ...discovered, skills });
  // Warm-up: the first rounds compile the code and load the lexicons.
  for (const request of requests) chooseCatalogue(snapshot, LIMITS, { message: request, searchable: true });
  // Three runs of TIMING_ROUNDS rounds; each percentile is the median of the three runs' (a pause of
  // the machine or a collection in one run moves its p99, not the figure).
  const runs = Array.from({ length: 3 }, () => timeRun(snapshot, requests));
  const median = (pick: (run: ReturnType<typeof timeRun>) => number) => runs.map(pick).sort((a, b) => a - b)[1];
  const hostile = Object.entries(HOSTILE_REQUESTS).map(([label, request]) => {
    const times: number[] = [];
    for (let run = 0; run < 21; run++) {
      const started = performance.now();
      chooseCatalogue(snapshot, LIMITS, { message: request, context: request, searchable: true });
      times.push(performance.now() - started);
    }
    return { label, p50: percentile(times, 50), max: Math.max(...times) };
  });
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  gc?.();
  const before = process.memoryUsage().heapUsed;
  const indexes = Array.from({ length: 4 }, () => runThrough(CatalogueIndex.building(skills, LIMITS.format, false)));
  gc?.();
  gc?.();
  const bytesPerSkill = (process.memoryUsage().heapUsed - before) / indexes.length / skills.length;
  return {
    skills: skills.length,
    searchMs: { p50: median((run) => percentile(run.search, 50)), p99: median((run) => percentile(run.search, 99)) },
    turnRankMs: {
      p50: median((run) => percentile(run.turnRank, 50)),
      p99: median((run) => percentile(run.turnRank, 99)),
    },
    chooseMs: { p50: median((run) => percentile(run.choose, 50)), p99: median((run) => percentile(run.choose, 99)) },
    chooseCpuMs: {
      p50: median((run) => percentile(run.chooseCpu, 50)),
      p99: median((run) => percentile(run.chooseCpu, 99)),
    },
    p99Runs: runs.map((run) => ({
      search: percentile(run.search, 99),
      turnRank: percentile(run.turnRank, 99),
      choose: percentile(run.choose, 99),
    })),
    load: loadavg()[0],
    indexBytesPerSkill: gc === undefined ? null : Math.round(bytesPerSkill),
    serializedBytesPerSkill: Math.round(indexes[0].serializedBytes() / skills.length),
    vocabulary: indexes[0].vocabularySize,
    hostile,
  };
}

/** How the figures came about: kept with the results, so they are read together. */
const NOTES = [
  '## What got the ranker here',
  '',
  'Measured on this set, recall@20 / in budget, each step on top of the one before:',
  '',
  "- Baseline, `use_skill`'s old matcher (MiniSearch BM25 over name ×3 and description, Porter stems, prefix " +
    'and one-typo matching, ordered by the share of words matched): 0.84 at 20 (recorded with the set, commit ' +
    '5ae6a2b).',
  '- Ordered by BM25 relevance instead of the share of words, accent folding, a Spanish glossary (unknown words ' +
    'and phrases put into English by Snowball stems), everyday-to-technical related terms at 0.35: 0.93 / 0.95. ' +
    'Spanish went from 0.60 to 1.00, typos from 0.87 to 0.93.',
  '- Unknown words tried with two letters swapped and as two words run together (`blogpost`): typos 1.00.',
  '- Related phrases weighted 0.7 (more specific than single words): 0.94 at 20; a Spanish request read as ' +
    'Spanish (its function words dropped even where English has them): no change here.',
  "- Fixes after review (a word's forms counted once, a glossary entry that gives the word back not treated as " +
    'Spanish, a prefix only for words fewer than 5% of skills have, common words looked for in names only): 0.93 ' +
    '/ 0.95.',
  '- Cost: a request read in one pass that stops when enough words are read (hostile 1 MB requests 10–28 ms → ' +
    "2–6 ms); common words (over 20% of skills) and the context's 4 rarest words matched in names and triggers " +
    'only (the slowest requests 2.3 → 1.1 ms p50; a turn with context costs little more than without). The p99 ' +
    'figures move by ±0.5 ms from run to run on this machine: most of the tail is collection pauses.',
  '',
  'Tried and left out: indexing the start of each SKILL.md body (+0.02 at 20, but four times the index and a ' +
    'read of every body at each scan); BM25 k1/b and field weights (flat within ±0.01); ordering by relevance × ' +
    'share (no better); the start of a long stem as a prefix (one gain, one loss).',
  '',
  'A second set, 80 requests (bench/fixtures/skill-queries-heldout.json), was written after the ranker by a ' +
    'helper that saw neither its lexicons nor the first set, and measured once, with nothing changed for it: ' +
    'recall@5/@10/@20 0.85/0.88/0.90, 0.93 in budget; the old matcher 0.75/0.79/0.80 on it. Plain, typo, Spanish ' +
    'and two-skill requests 1.00 at 20; paraphrases 0.47 (old 0.33). Results: ' +
    'bench/results/skill-ranking-skill-queries-heldout.md.',
  '',
  'Caveats: the lexicons (packages/core/src/ranking/spanish-glossary.json, related-terms.json) were written ' +
    "without reading this set, but their brief named about ten needs taken from the baseline's misses (small " +
    'screens, the pager, the books, closing the month…): paraphrase figures here flatter them. A second, held-out ' +
    'set measures the same with `BENCH_QUERIES=<file>`. Index size: MiniSearch keeps its postings in JavaScript ' +
    'Maps; the heap figure counts everything the index holds (terms, postings, ids, token counts); its serialised ' +
    'form (`JSON.stringify`) is about a tenth of that.',
  '',
];

function markdown(r: {
  recordedAt: string;
  machine: string;
  corpusSkills: number;
  queries: number;
  queryFile: string;
  limits: CatalogueLimits;
  all: Tally;
  byKind: Record<string, Tally>;
  none: { queries: number; offeredP50: number; offeredMax: number };
  catalogue: {
    listedP50: number;
    listedMin: number;
    tokensP50: number;
    tokensMax: number;
    wholeTokens: number;
    wholeBytes: number;
  };
  cost: ReturnType<typeof measureCost>;
  misses: { query: string; kind: string; missing: string[][]; got: string[] }[];
}): string {
  const share = (t: Tally, cut: Cut) => (t.slots === 0 ? '–' : (t.filled[cut] / t.slots).toFixed(2));
  const row = (label: string, t: Tally) =>
    `| ${label} | ${t.queries} | ${t.slots} | ${share(t, 5)} | ${share(t, 10)} | ${share(t, 20)} | ` +
    `${share(t, 'budget')} |`;
  return [
    '# Skill ranking quality',
    '',
    `Recorded ${r.recordedAt} on ${r.machine}; \`npm run bench:skill-ranking\`.`,
    `${r.corpusSkills} corpus skills (lenient, max_depth 6); ${r.queries} labelled requests (${r.queryFile}).`,
    'Ranker: `SkillRanker` (src/domain/skills/ranking): MiniSearch BM25 over name (×3), triggers (×2) and ' +
      'description; accent folding, Porter stems; unknown words tried as Spanish (glossary, Snowball stems) and ' +
      'as typos (two letters swapped, edit distance 1) and compounds; related terms at 0.35.',
    '',
    `Share of needed slots with an acceptable skill among the first 5, 10 and 20 ranked, and in the catalogue a ` +
      `turn lists within the default budget (${r.limits.budgetTokens} ` +
      `tokens, ${r.limits.maxSkills} skills, ${r.limits.format}):`,
    '',
    '| requests | n | slots | recall@5 | recall@10 | recall@20 | in budget |',
    '|---|---:|---:|---:|---:|---:|---:|',
    row('all', r.all),
    ...Object.entries(r.byKind)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([kind, t]) => row(kind, t)),
    '',
    `The whole catalogue of the corpus would be ${r.catalogue.wholeTokens} tokens (${r.catalogue.wholeBytes} ` +
      `bytes) in every prompt; the budgeted one listed ${r.catalogue.listedP50} skills (p50; at least ` +
      `${r.catalogue.listedMin}, for a request nothing matches and no usage yet) in ${r.catalogue.tokensP50} ` +
      `tokens (p50; at most ${r.catalogue.tokensMax}).`,
    `Requests no skill serves: ${r.none.queries}; the ranker still matched ${r.none.offeredP50} skill(s) (p50), ` +
      `at most ${r.none.offeredMax}.`,
    '',
    `## Cost, ${r.cost.skills} skills`,
    '',
    `- \`skills.search\` (rank, 20 results): p50 ${r.cost.searchMs.p50.toFixed(2)} ms, p99 ` +
      `${r.cost.searchMs.p99.toFixed(2)} ms.`,
    `- p99 of each run (search / turn's ranking / turn's catalogue, ms): ${r.cost.p99Runs
      .map((run) => `${run.search.toFixed(2)} / ${run.turnRank.toFixed(2)} / ${run.choose.toFixed(2)}`)
      .join('; ')}; the figures here are the median run's.`,
    `- A turn's ranking (the message with another request as context, 150 candidates for 50 places): p50 ` +
      `${r.cost.turnRankMs.p50.toFixed(2)} ` +
      `ms, p99 ${r.cost.turnRankMs.p99.toFixed(2)} ms.`,
    `- A turn's catalogue (rank with context, fill the budget, render): p50 ${r.cost.chooseMs.p50.toFixed(2)} ` +
      `ms, p99 ${r.cost.chooseMs.p99.toFixed(2)} ms; CPU time p50 ${r.cost.chooseCpuMs.p50.toFixed(2)} ms, p99 ` +
      `${r.cost.chooseCpuMs.p99.toFixed(2)} ms (load average ${r.cost.load.toFixed(2)} on ` +
      `${cpus().length} cores while measured).`,
    `- Index (MiniSearch, vocabulary of ${r.cost.vocabulary} terms, token counts): ` +
      `${r.cost.indexBytesPerSkill ?? '(run with --expose-gc)'} bytes of heap per skill; serialised, ` +
      `${r.cost.serializedBytesPerSkill} bytes per skill.`,
    `- Hostile requests (the same text as the message and as the context), a turn's catalogue: ${r.cost.hostile
      .map((h) => `${h.label} p50 ${h.p50.toFixed(2)} ms (max ${h.max.toFixed(2)})`)
      .join('; ')}.`,
    '',
    ...NOTES,
    '',
    `Slots missed within 20 (${r.misses.length} request(s)), with what was ranked first:`,
    '',
    ...r.misses.map(
      (m) =>
        `- [${m.kind}] "${m.query}": missing ${m.missing.map((slot) => slot.join(' | ')).join('; ')} — got ` +
        `${m.got.join(', ') || 'nothing'}`,
    ),
    '',
  ].join('\n');
}

main();
