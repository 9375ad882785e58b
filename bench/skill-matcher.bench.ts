/**
 * Skill matcher benchmark (`use_skill` without a skill name): building the matcher over every skill
 * of the shared corpus (and the corpus repeated to 10,000 skills), and `rank()` latency for typical
 * requests and hostile ones (1 MB, 10,000 distinct words, stop words only).
 *
 *   npm run bench:skill-matcher          (writes bench/results/skill-matcher.md)
 *
 * The corpus is ../shared/corpus beside the repository, or SKILLHOST_CORPUS.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { SkillMatcher } from '../src/chat/tools/skill-matcher.js';
import { discoverSkills } from '../src/skills/skill-discovery.js';
import { corpusPath } from '../test/support/corpus.js';

const RESULTS_DIR = join(import.meta.dirname, '..', '..', 'bench', 'results');
const BUILD_RUNS = 11;
const TYPICAL_ROUNDS = 300;
const HOSTILE_RUNS = 51;

type Entry = { name: string; description: string };

const TYPICAL_REQUESTS = [
  'extract the text from this PDF',
  'make a powerpoint deck for the quarterly review',
  'write a commit message for these changes',
  'review my pull request',
  'build an MCP server in TypeScript',
  'test my web app with Playwright',
  'Can you please summarise this research paper for me?',
  'debug a failing jest test in the checkout service',
  'deploy my Next.js app to Vercel',
  'write a status report for leadership about the migration',
  'make me a GIF of a cat dancing for Slack',
  'what is the weather like in Paris tomorrow?',
];

function corpusSkills(): Entry[] {
  const path = corpusPath();
  const { skills } = discoverSkills({ directories: [{ configured: path, path }], mode: 'lenient', maxDepth: 8, maxSkills: 1_000_000 });
  return skills.map(({ name, description }) => ({ name, description }));
}

/** The corpus repeated under new names up to `size` skills: the same vocabulary, more documents. */
function scaled(skills: readonly Entry[], size: number): Entry[] {
  return Array.from({ length: size }, (_, i) => ({ name: `${skills[i % skills.length].name}-${Math.floor(i / skills.length)}`, description: skills[i % skills.length].description }));
}

function hostileRequests(): Record<string, string> {
  const MB = 1_048_576;
  const prose = TYPICAL_REQUESTS.join(' ') + ' ';
  return {
    '1 MB of typical requests repeated': prose.repeat(Math.ceil(MB / prose.length)).slice(0, MB),
    '1 MB of distinct words': Array.from({ length: MB / 8 }, (_, i) => `w${String(i).padStart(6, '0')}`).join(' ').slice(0, MB),
    '10,000 distinct words': Array.from({ length: 10_000 }, (_, i) => `word${i}`).join(' '),
    '1 MB of stop words': 'the a please me '.repeat(MB / 16),
    '1 MB of punctuation': '!?.,;:-_'.repeat(MB / 8),
    '1 MB, one word': 'a'.repeat(MB),
    '1 MB of emoji, NUL and lone surrogates': '📄\0\uD800 '.repeat(MB / 5),
  };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

function time(fn: () => unknown): number {
  const started = performance.now();
  fn();
  return performance.now() - started;
}

/** Heap held by one matcher, per skill (needs node --expose-gc). */
function heapPerSkill(skills: readonly Entry[]): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with node --expose-gc');
  gc();
  const before = process.memoryUsage().heapUsed;
  const matcher = new SkillMatcher(skills);
  gc();
  const heap = process.memoryUsage().heapUsed - before;
  matcher.rank('keep alive');
  return heap / skills.length;
}

interface BuildRow {
  skills: number;
  runs: number;
  medianMs: number;
  perSkillUs: number;
  heapPerSkillBytes: number;
}

interface RankRow {
  request: string;
  skills: number;
  samples: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

function measureBuild(skills: readonly Entry[]): BuildRow {
  new SkillMatcher(skills);
  const samples = Array.from({ length: BUILD_RUNS }, () => time(() => new SkillMatcher(skills)));
  const medianMs = percentile(samples, 50);
  return { skills: skills.length, runs: BUILD_RUNS, medianMs, perSkillUs: (medianMs * 1000) / skills.length, heapPerSkillBytes: heapPerSkill(skills) };
}

function measureRank(matcher: SkillMatcher, skills: number, request: string, label: string, runs: number): RankRow {
  matcher.rank(request);
  const samples = Array.from({ length: runs }, () => time(() => matcher.rank(request)));
  return { request: label, skills, samples: runs, p50Ms: percentile(samples, 50), p99Ms: percentile(samples, 99), maxMs: Math.max(...samples) };
}

/** Every typical request in turn, `TYPICAL_ROUNDS` times: one latency distribution for all of them. */
function measureTypical(matcher: SkillMatcher, skills: number): RankRow {
  for (const request of TYPICAL_REQUESTS) matcher.rank(request);
  const samples: number[] = [];
  for (let round = 0; round < TYPICAL_ROUNDS; round++) for (const request of TYPICAL_REQUESTS) samples.push(time(() => matcher.rank(request)));
  return { request: `typical (${TYPICAL_REQUESTS.length} requests below)`, skills, samples: samples.length, p50Ms: percentile(samples, 50), p99Ms: percentile(samples, 99), maxMs: Math.max(...samples) };
}

function render(machine: string, load: number, corpusSize: number, builds: BuildRow[], ranks: RankRow[]): string {
  const fmt = (n: number, digits = 2) => n.toFixed(digits);
  return [
    '# Skill matcher benchmark',
    '',
    `Recorded ${new Date().toISOString()} on ${machine} (load average ${fmt(load)} when it started); \`npm run bench:skill-matcher\`.`,
    `Skills: the whole shared corpus (${corpusSize} skills loaded in lenient mode from every collection), and the corpus repeated under new names to 10,000.`,
    'Build: `new SkillMatcher(entries)` (MiniSearch index of names and descriptions, stop words dropped, Porter stems), one untimed build first, median of the runs;',
    'heap is the heap held by one matcher after a full GC. Rank: `rank(request)` with the default limit of 3, after one untimed call.',
    '',
    '## Build',
    '',
    '| skills | runs | median ms | µs per skill | heap per skill |',
    '|---:|---:|---:|---:|---:|',
    ...builds.map((b) => `| ${b.skills} | ${b.runs} | ${fmt(b.medianMs, 1)} | ${fmt(b.perSkillUs, 1)} | ${fmt(b.heapPerSkillBytes / 1024, 1)} KiB |`),
    '',
    '## rank()',
    '',
    '| request | skills | samples | p50 ms | p99 ms | max ms |',
    '|---|---:|---:|---:|---:|---:|',
    ...ranks.map((r) => `| ${r.request} | ${r.skills} | ${r.samples} | ${fmt(r.p50Ms, 3)} | ${fmt(r.p99Ms, 3)} | ${fmt(r.maxMs, 3)} |`),
    '',
    'Typical requests:',
    '',
    ...TYPICAL_REQUESTS.map((request) => `- ${request}`),
    '',
  ].join('\n');
}

function main(): void {
  const [load] = loadavg();
  const corpus = corpusSkills();
  const sets = [corpus, scaled(corpus, 10_000)];
  const builds = sets.map(measureBuild);
  for (const row of builds) console.log(JSON.stringify(row));

  const ranks: RankRow[] = [];
  for (const skills of sets) {
    const matcher = new SkillMatcher(skills);
    ranks.push(measureTypical(matcher, skills.length));
    console.log(JSON.stringify(ranks.at(-1)));
    for (const [label, request] of Object.entries(hostileRequests())) {
      ranks.push(measureRank(matcher, skills.length, request, label, HOSTILE_RUNS));
      console.log(JSON.stringify(ranks.at(-1)));
    }
  }

  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}`;
  const markdown = render(machine, load, corpus.length, builds, ranks);
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, 'skill-matcher.md'), markdown);
  console.log(markdown);
}

main();
