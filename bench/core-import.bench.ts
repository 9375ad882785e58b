/**
 * What importing `@skillhost/core` costs an app: a fresh Node process imports the built package
 * (packages/core/dist, resolved as an app resolves it) and reports the import's wall time and the
 * CPU it used (CPU time is steadier than wall time on a machine shared with other work). Rows for
 * each of core's own dependencies imported alone say where the time goes. Baseline in the same run:
 * the same process importing an empty module. Rounds interleave the rows. Target: ≤ 100 ms.
 * BENCH_BEFORE=<checkout> adds a row for another checkout's built core (e.g. main's): a before/after in one run.
 *
 *   npm run bench:core-import        (records bench/results/core-import.{json,md})
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { machineName, percentile, recordResults, type SummaryLine } from './bench-support.js';

const ROOT = join(import.meta.dirname, '..', '..');
const CORE = join(ROOT, 'packages', 'core');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 21);
const TARGET_MS = 100;
/** Core's dependencies, each alone: what the package cannot import for less. */
const DEPENDENCIES = ['zod', 'js-yaml', 'minisearch', 'stemmer', '@nlpjs/lang-es'];
const BEFORE = process.env.BENCH_BEFORE;

interface Sample {
  wall: number;
  cpu: number;
}

/** One fresh process importing `specifier` from packages/core; the import's wall and CPU milliseconds. */
function importOnce(specifier: string): Sample {
  const script = [
    'const cpu = process.cpuUsage(), started = performance.now();',
    `await import(${JSON.stringify(specifier)});`,
    'const wall = performance.now() - started, used = process.cpuUsage(cpu);',
    'console.log(JSON.stringify({ wall, cpu: (used.user + used.system) / 1000 }));',
  ].join(' ');
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: CORE, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`importing ${specifier} failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as Sample;
}

function summary(samples: Sample[]) {
  const round = (ms: number) => Math.round(ms * 10) / 10;
  const walls = samples.map((sample) => sample.wall);
  const cpu = samples.map((sample) => sample.cpu);
  return {
    wallP50: round(percentile(walls, 50)),
    wallMin: round(Math.min(...walls)),
    wallMax: round(Math.max(...walls)),
    cpuP50: round(percentile(cpu, 50)),
  };
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'skillhost-core-import-'));
  const empty = join(work, 'empty.mjs');
  writeFileSync(empty, 'export {};\n');
  const rows: [string, string][] = [
    ['baseline: an empty module', empty],
    ['`@skillhost/core`', '@skillhost/core'],
    ...(BEFORE
      ? [['before: BENCH_BEFORE’s core', join(BEFORE, 'packages', 'core', 'dist', 'index.js')] as [string, string]]
      : []),
    ...DEPENDENCIES.map((name): [string, string] => [`\`${name}\` alone`, name]),
  ];
  const samples = new Map<string, Sample[]>(rows.map(([label]) => [label, []]));
  try {
    // One warm-up of each, so the first row does not pay for a cold file cache.
    for (const [, specifier] of rows) importOnce(specifier);
    for (let i = 0; i < ROUNDS; i++)
      for (const [label, specifier] of rows) samples.get(label)!.push(importOnce(specifier));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const result = {
    recordedAt: new Date().toISOString(),
    machine: machineName(),
    rounds: ROUNDS,
    targetMs: TARGET_MS,
    ms: Object.fromEntries(rows.map(([label]) => [label, summary(samples.get(label)!)])),
  };
  const core = result.ms['`@skillhost/core`'];
  const text = [
    '# Importing @skillhost/core',
    '',
    `Recorded ${result.recordedAt} on ${result.machine}; \`npm run bench:core-import\`.`,
    `A fresh \`node\` imports each from packages/core (the built \`dist/\`), ${ROUNDS} rounds interleaved; ` +
      'the time of the `import()` itself (Node’s own start-up is not in it), wall and CPU.',
    `Target: ≤ ${TARGET_MS} ms. \`@skillhost/core\`: p50 ${core.wallP50} ms wall, ${core.cpuP50} ms CPU.`,
    '',
    '| import | wall p50 ms | wall min ms | wall max ms | CPU p50 ms |',
    '|---|---:|---:|---:|---:|',
    ...rows.map(([label]) => {
      const row = result.ms[label];
      return `| ${label} | ${row.wallP50} | ${row.wallMin} | ${row.wallMax} | ${row.cpuP50} |`;
    }),
    '',
  ].join('\n');
  const emptyModule = result.ms['baseline: an empty module'];
  const before = result.ms['before: BENCH_BEFORE’s core'];
  const headline: SummaryLine[] = [
    {
      measure: 'import `@skillhost/core`, wall p50',
      value: core.wallP50,
      unit: 'ms',
      baseline: { name: 'an empty module', value: emptyModule.wallP50 },
      target: `≤ ${TARGET_MS} ms`,
      met: core.wallP50 <= TARGET_MS,
    },
    {
      measure: 'import `@skillhost/core`, CPU p50',
      value: core.cpuP50,
      unit: 'ms',
      ...(before === undefined
        ? { baseline: { name: 'an empty module', value: emptyModule.cpuP50 } }
        : { baseline: { name: 'BENCH_BEFORE’s core', value: before.cpuP50 } }),
    },
  ];
  recordResults('core-import', result, text, headline);
}

await main();
