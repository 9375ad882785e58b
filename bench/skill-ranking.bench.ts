/**
 * Ranking quality: a labelled set of requests as users type them (bench/fixtures/skill-queries.json:
 * plain, paraphrased, with typos, in Spanish, needing two skills, or served by no skill) over the
 * shared corpus, loaded as a server would (lenient, max_depth 6). For each request the ranker's first
 * 20 skills are compared with the request's needed slots, each slot being the skills any one of
 * which would serve it: recall@5/@10/@20 is the share of needed slots with an acceptable skill in the
 * first 5/10/20. For requests no skill serves, how many skills the ranker still offered.
 *
 * The ranker measured is the one `use_skill` uses today (SkillMatcher: MiniSearch BM25 over name and
 * description, stemmed, prefix and one-typo matching): the baseline a budgeted catalogue must beat.
 *
 *   npm run bench:skill-ranking          (writes bench/results/skill-ranking.{md,json})
 *   BENCH_QUERIES=held-out.json npm run bench:skill-ranking
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, relative } from 'node:path';
import { SkillMatcher } from '../src/chat/tools/skill-matcher.js';
import { discoverSkills } from '../src/skills/skill-discovery.js';
import { corpusPath } from '../test/support/corpus.js';
import { percentile } from './bench-support.js';

const ROOT = join(import.meta.dirname, '..', '..');
const RESULTS_DIR = join(ROOT, 'bench', 'results');
/** Another labelled set (the same shape) can be measured with BENCH_QUERIES=<file>. */
const QUERIES = process.env.BENCH_QUERIES ?? join(ROOT, 'bench', 'fixtures', 'skill-queries.json');
const CUTS = [5, 10, 20] as const;

interface LabelledQuery {
  query: string;
  lang: string;
  kind: string;
  /** Slots: each lists the skills any one of which serves that part of the request. */
  needed: string[][];
}

interface Tally {
  queries: number;
  slots: number;
  filled: Record<(typeof CUTS)[number], number>;
}

function main(): void {
  const path = corpusPath();
  const { skills } = discoverSkills({ directories: [{ configured: path, path }], mode: 'lenient', maxDepth: 6, maxSkills: 1_000_000 });
  const names = new Set(skills.map((skill) => skill.name));
  const queries = JSON.parse(readFileSync(QUERIES, 'utf8')) as LabelledQuery[];
  const unknown = queries.flatMap((q) => q.needed.flat()).filter((name) => !names.has(name));
  if (unknown.length > 0) throw new Error(`The query set names skills the corpus does not load: ${[...new Set(unknown)].join(', ')}`);

  const ranker = new SkillMatcher(skills.map(({ name, description }) => ({ name, description })));
  const byKind = new Map<string, Tally>();
  const all: Tally = { queries: 0, slots: 0, filled: { 5: 0, 10: 0, 20: 0 } };
  const offeredForNone: number[] = [];
  const misses: { query: string; kind: string; missing: string[][]; got: string[] }[] = [];
  const latencies: number[] = [];
  for (const labelled of queries) {
    const started = performance.now();
    const ranked = ranker.rank(labelled.query, 20).map((match) => match.name);
    latencies.push(performance.now() - started);
    if (labelled.needed.length === 0) {
      offeredForNone.push(ranked.length);
      continue;
    }
    let tally = byKind.get(labelled.kind);
    if (tally === undefined) byKind.set(labelled.kind, (tally = { queries: 0, slots: 0, filled: { 5: 0, 10: 0, 20: 0 } }));
    for (const target of [tally, all]) target.queries++;
    for (const slot of labelled.needed) {
      const at = ranked.findIndex((name) => slot.includes(name));
      for (const target of [tally, all]) {
        target.slots++;
        for (const cut of CUTS) if (at !== -1 && at < cut) target.filled[cut]++;
      }
    }
    const missing = labelled.needed.filter((slot) => !ranked.some((name) => slot.includes(name)));
    if (missing.length > 0) misses.push({ query: labelled.query, kind: labelled.kind, missing, got: ranked.slice(0, 5) });
  }
  const result = {
    recordedAt: new Date().toISOString(),
    machine: `${cpus().length} × ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}`,
    corpusSkills: skills.length,
    queries: queries.length,
    queryFile: relative(ROOT, QUERIES),
    ranker: 'SkillMatcher (use_skill): MiniSearch BM25 over name (boost 3) and description, stemmed, prefix and one-typo matching',
    all,
    byKind: Object.fromEntries(byKind),
    none: { queries: offeredForNone.length, offeredP50: percentile(offeredForNone, 50), offeredMax: Math.max(0, ...offeredForNone) },
    rankMs: { p50: percentile(latencies, 50), p99: percentile(latencies, 99) },
    misses,
  };
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, 'skill-ranking.json'), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(join(RESULTS_DIR, 'skill-ranking.md'), markdown(result));
  console.log(markdown(result));
}

function markdown(r: {
  recordedAt: string;
  machine: string;
  corpusSkills: number;
  queries: number;
  queryFile: string;
  ranker: string;
  all: Tally;
  byKind: Record<string, Tally>;
  none: { queries: number; offeredP50: number; offeredMax: number };
  rankMs: { p50: number; p99: number };
  misses: { query: string; kind: string; missing: string[][]; got: string[] }[];
}): string {
  const share = (t: Tally, cut: (typeof CUTS)[number]) => (t.slots === 0 ? '–' : (t.filled[cut] / t.slots).toFixed(2));
  const row = (label: string, t: Tally) => `| ${label} | ${t.queries} | ${t.slots} | ${share(t, 5)} | ${share(t, 10)} | ${share(t, 20)} |`;
  return [
    '# Skill ranking quality',
    '',
    `Recorded ${r.recordedAt} on ${r.machine}; \`npm run bench:skill-ranking\`.`,
    `${r.corpusSkills} corpus skills (lenient, max_depth 6); ${r.queries} labelled requests (${r.queryFile}). Ranker: ${r.ranker}.`,
    '',
    'Share of needed slots with an acceptable skill among the first 5, 10 and 20 ranked:',
    '',
    '| requests | n | slots | recall@5 | recall@10 | recall@20 |',
    '|---|---:|---:|---:|---:|---:|',
    row('all', r.all),
    ...Object.entries(r.byKind)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([kind, t]) => row(kind, t)),
    '',
    `Requests no skill serves: ${r.none.queries}; the ranker still offered ${r.none.offeredP50} skill(s) (p50), at most ${r.none.offeredMax}.`,
    `rank() over the whole corpus: p50 ${r.rankMs.p50.toFixed(2)} ms, p99 ${r.rankMs.p99.toFixed(2)} ms.`,
    '',
    `Slots missed within 20 (${r.misses.length} request(s)), with what was ranked first:`,
    '',
    ...r.misses.map((m) => `- [${m.kind}] "${m.query}": missing ${m.missing.map((slot) => slot.join(' | ')).join('; ')} — got ${m.got.join(', ') || 'nothing'}`),
    '',
  ].join('\n');
}

main();
