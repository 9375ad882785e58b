/**
 * Every benchmark, one after the other, then one table of their summaries:
 *
 *   npm run bench                   every `bench:*` script of package.json (built once, by the npm script)
 *   npm run bench -- http reload    only those
 *   npm run bench -- --table        only the table, from the results recorded in bench/results/
 *
 * Each bench's output goes to bench/.tmp/logs/<name>.log; one failing bench is reported and the others still run.
 * The table (bench, measure, value, same-run baseline, ratio, target, met) is printed and written to
 * bench/results/summary.md, from each bench/results/*.json's `summary` (see recordResults).
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import {
  type Bench,
  benchScripts,
  RESULTS_DIR,
  type Recorded,
  summaryMarkdown,
  writeMarkdown,
} from './bench-summary.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const LOGS = join(ROOT, 'bench', '.tmp', 'logs');

interface Outcome {
  name: string;
  code: number | null;
  seconds: number;
  log: string;
}

/** The `bench:*` scripts of package.json. */
function benches(): Bench[] {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  return benchScripts(scripts);
}

function run(bench: Bench): Promise<Outcome> {
  mkdirSync(LOGS, { recursive: true });
  const log = join(LOGS, `${bench.name}.log`);
  const out = openSync(log, 'w');
  const started = performance.now();
  const child = spawn(process.execPath, bench.args, { cwd: ROOT, stdio: ['ignore', out, out] });
  return new Promise((done) => {
    const finish = (code: number | null) => {
      closeSync(out);
      done({ name: bench.name, code, seconds: (performance.now() - started) / 1000, log: relative(ROOT, log) });
    };
    child.once('error', () => finish(null));
    child.once('exit', (code) => finish(code));
  });
}

/** Every result in bench/results/, and a bench that has none yet as an empty one. */
function recordedResults(all: Bench[]): Recorded[] {
  const files = readdirSync(RESULTS_DIR).filter((file) => file.endsWith('.json'));
  const recorded = files.map((file) => ({
    name: basename(file, '.json'),
    ...(JSON.parse(readFileSync(join(RESULTS_DIR, file), 'utf8')) as Omit<Recorded, 'name'>),
  }));
  const missing = all
    .filter((b) => !recorded.some((r) => r.name === b.name))
    .map((b) => ({ name: b.name, absent: true }));
  return [...recorded, ...missing].sort((a, b) => a.name.localeCompare(b.name));
}

async function main(argv: string[]): Promise<number> {
  const tableOnly = argv.includes('--table');
  const asked = argv.filter((arg) => !arg.startsWith('--'));
  const all = benches();
  const unknown = asked.filter((name) => !all.some((b) => b.name === name));
  if (unknown.length > 0) {
    console.error(`No bench named ${unknown.join(', ')}; there are: ${all.map((b) => b.name).join(', ')}.`);
    return 2;
  }
  const outcomes: Outcome[] = [];
  if (!tableOnly) {
    const chosen = asked.length === 0 ? all : all.filter((b) => asked.includes(b.name));
    console.log(`Running ${chosen.map((b) => b.name).join(', ')}; each one's output in ${relative(ROOT, LOGS)}/.`);
    for (const bench of chosen) {
      console.log(`${bench.name}: node ${bench.args.join(' ')}`);
      const outcome = await run(bench);
      outcomes.push(outcome);
      const took = `in ${outcome.seconds.toFixed(0)} s`;
      const failure = `FAILED (exit ${outcome.code ?? 'none'}) ${took}, see ${outcome.log}`;
      console.log(`${bench.name}: ${outcome.code === 0 ? `done ${took}` : failure}`);
    }
  }
  const failed = outcomes.filter((o) => o.code !== 0);
  const markdown = summaryMarkdown(
    recordedResults(all),
    failed.map((o) => o.name),
  );
  const file = join(RESULTS_DIR, 'summary.md');
  writeMarkdown(file, markdown);
  console.log(`\n${readFileSync(file, 'utf8')}`);
  console.log(`Written to ${relative(ROOT, file)}.`);
  return failed.length === 0 ? 0 : 1;
}

process.exitCode = await main(process.argv.slice(2));
