/**
 * How soon a newcomer's server answers: from `npm start` to the first 200 on `GET /health`, with
 * the build from `npm ci` in place (its `prepare` script builds), on a fresh embedded data folder
 * (the very first start: initdb and the migrations) and on an existing one. The baseline, in the
 * same run, is the former `npm start` (`npm run build && node dist/src/main.js`), which compiled
 * everything on every start. Target: the first answer after `npm ci && npm start` within 10 s.
 *
 *   npm run bench:first-start        (records bench/results/first-start.{json,md})
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'smol-toml';
import { freePort } from '../test/support/ports.js';
import { machineName, percentile, recordResults, type SummaryLine } from './bench-support.js';

const ROUNDS = 3;
const ROOT = join(import.meta.dirname, '..', '..');

type Kind = 'fresh data folder' | 'existing data folder' | 'baseline: build on every start';

/** Milliseconds from spawning `command` until the server it starts answers `GET /health` with 200. */
async function timeToFirstAnswer(command: string[], configFile: string, port: number): Promise<number> {
  const started = performance.now();
  const child: ChildProcess = spawn(command[0], command.slice(1), {
    cwd: ROOT,
    env: { ...process.env, SKILLHOST_CONFIG: configFile },
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the server exited before answering: ${stderr}`);
      const status = await fetch(`http://127.0.0.1:${port}/health`).then(
        (r) => r.status,
        () => 0,
      );
      if (status === 200) return performance.now() - started;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
  } finally {
    // The whole group: npm, the start script and the server.
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
  }
}

async function round(kind: Kind, work: string, index: number): Promise<number> {
  const port = await freePort();
  const dataDir = kind === 'fresh data folder' ? join(work, `fresh-${index}`, 'data') : join(work, 'kept', 'data');
  const configFile = join(work, `config-${port}.toml`);
  writeFileSync(
    configFile,
    stringify({
      app: {
        port,
        host: '127.0.0.1',
        logging: { level: 'warn' },
        skills: { enabled: true, directories: [join(ROOT, 'skills')] },
        database: { url: '', embedded_dir: dataDir, embedded_port: await freePort() },
      },
    }),
  );
  const command =
    kind === 'baseline: build on every start'
      ? ['sh', '-c', 'npm run --silent build && node dist/src/main.js']
      : ['npm', 'start', '--silent'];
  return timeToFirstAnswer(command, configFile, port);
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'skillhost-first-start-'));
  // As root the embedded PostgreSQL runs as `postgres`, which must reach its data folders.
  chmodSync(work, 0o755);
  const kinds: Kind[] = ['fresh data folder', 'existing data folder', 'baseline: build on every start'];
  const times = new Map<Kind, number[]>(kinds.map((kind) => [kind, []]));
  try {
    // The existing folder is made once, outside the measured rounds.
    await round('existing data folder', work, 0);
    for (let index = 1; index <= ROUNDS; index++)
      for (const kind of kinds) times.get(kind)!.push(await round(kind, work, index));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const ms = (values: number[]) => ({
    p50: Math.round(percentile(values, 50)),
    max: Math.round(Math.max(...values)),
    rounds: values.map(Math.round),
  });
  const result = {
    recordedAt: new Date().toISOString(),
    machine: machineName(),
    rounds: ROUNDS,
    ms: Object.fromEntries(kinds.map((kind) => [kind, ms(times.get(kind)!)])),
  };
  const text = [
    '# First start',
    '',
    `Recorded ${result.recordedAt} on ${result.machine}; \`npm run bench:first-start\`.`,
    `From \`npm start\` to the first 200 on \`GET /health\`, with the embedded PostgreSQL and the bundled ` +
      `skills; ${ROUNDS} rounds each, interleaved.`,
    'Target: the first answer after `npm ci && npm start` within 10 s (the fresh data folder row: `npm ci` has ' +
      'built already).',
    '',
    '| start | p50 ms | max ms | rounds |',
    '|---|---:|---:|---|',
    ...kinds.map(
      (kind) => `| ${kind} | ${result.ms[kind].p50} | ${result.ms[kind].max} | ${result.ms[kind].rounds.join(' / ')} |`,
    ),
    '',
  ].join('\n');
  recordResults('first-start', result, text, summaryOf(result.ms));
}

/** The first start against the former build-on-every-start, and the target on the fresh data folder. */
function summaryOf(ms: Record<string, { p50: number }>): SummaryLine[] {
  const baseline = { name: 'build on every start', value: ms['baseline: build on every start'].p50 };
  return [
    {
      measure: 'npm start to the first 200, fresh data folder',
      value: ms['fresh data folder'].p50,
      unit: 'ms',
      baseline,
      target: '≤ 10000 ms',
      met: ms['fresh data folder'].p50 <= 10_000,
    },
    {
      measure: 'npm start to the first 200, existing data folder',
      value: ms['existing data folder'].p50,
      unit: 'ms',
      baseline,
    },
  ];
}

await main();
