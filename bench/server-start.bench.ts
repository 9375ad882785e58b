/**
 * How soon a restarted server takes traffic: from spawning `node dist/src/main.js` to the first 200
 * on `GET /health/ready` (the database answers, the skills snapshot is loaded), with 2,000 skill
 * folders on disk and PostgreSQL at DATABASE_URL (a fresh database for the run; an embedded server
 * without it). The database is migrated by a first start outside the rounds (recorded on its own).
 * Baselines in the same run: the same server with no skills, and a bare `node` answering 200.
 * Rounds interleave the rows. Target: ready within 3 s with 2,000 skills.
 * BENCH_CPU_PROF=<folder> writes a --cpu-prof profile of each server start there. BENCH_BEFORE=<checkout> adds a
 * row for another checkout's build (e.g. main's, built), started the same way: a before/after in one run.
 *
 *   npm run bench:server-start        (records bench/results/server-start.{json,md})
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../test/support/ports.js';
import {
  benchWorkspace,
  machineName,
  percentile,
  recordResults,
  type SummaryLine,
  writeBenchSkills,
} from './bench-support.js';

const ROOT = join(import.meta.dirname, '..', '..');
const SKILLS = Number(process.env.BENCH_SKILLS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const CPU_PROF = process.env.BENCH_CPU_PROF;
const TARGET_MS = 3000;
const BARE_SERVER =
  "require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.env.PORT), '127.0.0.1')";

const BEFORE = process.env.BENCH_BEFORE;

type Row =
  | 'server, 2,000 skills'
  | 'server, no skills'
  | 'before (BENCH_BEFORE), 2,000 skills'
  | 'baseline: bare node answering 200';
const ROWS: Row[] = [
  'server, 2,000 skills',
  'server, no skills',
  ...(BEFORE ? (['before (BENCH_BEFORE), 2,000 skills'] as const) : []),
  'baseline: bare node answering 200',
];

interface Start {
  /** From the spawn to the first 200. */
  wall: number;
  /** CPU the process had used by then (user + system): steadier than the wall time on a shared machine. */
  cpu: number;
}

/** CPU milliseconds a process has used, from /proc (utime and stime, in clock ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** From spawning `args` until `path` on `port` answers 200. */
async function timeToReady(
  args: string[],
  env: Record<string, string>,
  port: number,
  path: string,
  cwd = ROOT,
): Promise<Start> {
  const started = performance.now();
  const child: ChildProcess = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the server exited before it was ready: ${stderr}`);
      const status = await fetch(`http://127.0.0.1:${port}${path}`).then(
        (response) => response.status,
        () => 0,
      );
      if (status === 200) return { wall: performance.now() - started, cpu: cpuMsOf(child.pid!) };
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    child.kill('SIGTERM');
    await exited;
  }
}

type Workspace = Awaited<ReturnType<typeof benchWorkspace>>;

/** One start of a row; `profile` names the --cpu-prof file when BENCH_CPU_PROF is set. */
async function start(row: Row, spaces: Record<'many' | 'none', Workspace>, profile: string): Promise<Start> {
  const port = await freePort();
  if (row === 'baseline: bare node answering 200')
    return timeToReady(['-e', BARE_SERVER], { PORT: String(port) }, port, '/');
  const space = row === 'server, no skills' ? spaces.none : spaces.many;
  const profiling = CPU_PROF
    ? ['--cpu-prof', '--cpu-prof-dir', CPU_PROF, '--cpu-prof-name', `${profile}.cpuprofile`]
    : [];
  // DATABASE_URL would override the config file's database with the run's own server.
  const env = {
    SKILLHOST_CONFIG: space.configFile,
    DATABASE_URL: space.db.url,
    SKILLHOST_HOST: '127.0.0.1',
    SKILLHOST_PORT: String(port),
  };
  const cwd = row === 'before (BENCH_BEFORE), 2,000 skills' ? BEFORE : ROOT;
  return timeToReady([...profiling, 'dist/src/main.js'], env, port, '/health/ready', cwd);
}

/** A work folder with `count` skills, a database of its own, and the config file the server reads. */
function workspace(count: number): Promise<Workspace> {
  return benchWorkspace('skillhost-server-start-', (dir) => writeBenchSkills(dir, count), {
    logging: { level: 'warn' },
  });
}

async function main(): Promise<void> {
  if (CPU_PROF) mkdirSync(CPU_PROF, { recursive: true });
  const spaces = { many: await workspace(SKILLS), none: await workspace(0) };
  const times = new Map<Row, Start[]>(ROWS.map((row) => [row, []]));
  let firstStart: Start;
  try {
    // The first start of each database runs the migrations: measured once, outside the rounds.
    firstStart = await start('server, 2,000 skills', spaces, 'migrate');
    await start('server, no skills', spaces, 'migrate-none');
    for (let round = 1; round <= ROUNDS; round++)
      for (const row of ROWS) times.get(row)!.push(await start(row, spaces, `round-${round}-${ROWS.indexOf(row)}`));
  } finally {
    for (const space of Object.values(spaces)) {
      await space.db.stop();
      rmSync(space.work, { recursive: true, force: true });
    }
  }
  const ms = (starts: Start[]) => {
    const walls = starts.map((one) => one.wall);
    return {
      p50: Math.round(percentile(walls, 50)),
      min: Math.round(Math.min(...walls)),
      max: Math.round(Math.max(...walls)),
      cpuP50: Math.round(
        percentile(
          starts.map((one) => one.cpu),
          50,
        ),
      ),
    };
  };
  const result = {
    recordedAt: new Date().toISOString(),
    machine: machineName(),
    database: process.env.DATABASE_URL ? 'DATABASE_URL (a fresh database on that server)' : 'embedded PostgreSQL',
    skills: SKILLS,
    rounds: ROUNDS,
    targetMs: TARGET_MS,
    firstStartWithMigrationsMs: Math.round(firstStart.wall),
    ms: Object.fromEntries(ROWS.map((row) => [row, ms(times.get(row)!)])),
  };
  const text = [
    '# Server start',
    '',
    `Recorded ${result.recordedAt} on ${result.machine}; \`npm run bench:server-start\`.`,
    `From spawning \`node dist/src/main.js\` to the first 200 on \`GET /health/ready\`, ${SKILLS} skill folders ` +
      `on disk, PostgreSQL: ${result.database}; ${ROUNDS} rounds, interleaved, on a migrated database. CPU: what ` +
      'the process had used when it answered (from /proc).',
    `Target: ready within ${TARGET_MS} ms with 2,000 skills. The first start on the fresh database (migrations ` +
      `included): ${result.firstStartWithMigrationsMs} ms.`,
    '',
    '| start | p50 ms | min ms | max ms | CPU p50 ms |',
    '|---|---:|---:|---:|---:|',
    ...ROWS.map((row) => {
      const { p50, min, max, cpuP50 } = result.ms[row];
      return `| ${row} | ${p50} | ${min} | ${max} | ${cpuP50} |`;
    }),
    '',
  ].join('\n');
  const server = result.ms['server, 2,000 skills'];
  const bare = result.ms['baseline: bare node answering 200'];
  const summary: SummaryLine[] = [
    {
      measure: `server ready with ${SKILLS} skills, wall p50`,
      value: server.p50,
      unit: 'ms',
      baseline: { name: 'bare node answering 200', value: bare.p50 },
      target: `≤ ${TARGET_MS} ms`,
      met: server.p50 <= TARGET_MS,
    },
    {
      measure: `server ready with ${SKILLS} skills, CPU p50`,
      value: server.cpuP50,
      unit: 'ms',
      baseline: { name: 'the server without skills', value: result.ms['server, no skills'].cpuP50 },
    },
  ];
  recordResults('server-start', result, text, summary);
}

await main();
