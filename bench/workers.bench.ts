/**
 * `[app] workers`: the built server (`dist/src/main.js`, as `npm start` runs it) with 1 and with 2 worker processes,
 * in the same run, on the same database and scripted model, keys required (every request sends one):
 *   1. GET /v1/skills, autocannon with 32 connections;
 *   2. chat turns (POST /v1/chats/:id/messages) against a scripted model that answers at once (one tool call, then
 *      text), 32 connections.
 * Both servers run at once and take turns in short runs (1, 2, 1, 2, …); each result is the median of its rounds, and
 * the ratio the median of each pair's: this machine's throughput drifts between runs. CPU is the whole server's (the
 * primary and its workers) and the machine's.
 *
 *   npm run bench:workers          (writes bench/results/workers.{md,json})
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { freePort } from '../test/support/ports.js';
import {
  CLOCK_TICKS,
  createBenchKey,
  databaseUrl,
  machineCpu,
  machineName,
  percentile,
  recordResults,
  scriptedTurnsConfig,
  startChild,
  type SummaryLine,
} from './bench-support.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const CONNECTIONS = 32;
const DURATION_S = Number(process.env.BENCH_DURATION ?? 3);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const SETTINGS = [1, 2] as const;

/** CPU seconds the process and its children still running have used (user + system), from /proc. */
function treeCpuSeconds(root: number): number {
  let total = 0;
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // After the command: state, ppid, … utime and stime are the 12th and 13th fields of the rest.
      if (Number(entry) === root || Number(fields[1]) === root)
        total += (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
    } catch {
      // A process that ended meanwhile.
    }
  }
  return total;
}

interface Measured {
  rps: number;
  latencyP50Ms: number;
  latencyP99Ms: number;
  /** The server's CPU (primary and workers), in cores. */
  serverCores: number;
  machineBusyShare: number;
  failures: number;
}

async function measure(server: ServerProcess, options: autocannon.Options): Promise<Measured> {
  const cpu = treeCpuSeconds(server.pid);
  const machine = machineCpu();
  const run = await autocannon({ connections: CONNECTIONS, duration: DURATION_S, ...options });
  const seconds = run.duration || DURATION_S;
  const machineNow = machineCpu();
  return {
    rps: run.requests.average,
    latencyP50Ms: run.latency.p50,
    latencyP99Ms: run.latency.p99,
    serverCores: (treeCpuSeconds(server.pid) - cpu) / seconds,
    machineBusyShare: (machineNow.busy - machine.busy) / (machineNow.total - machine.total),
    failures: run.errors + run.non2xx,
  };
}

function configText(dbUrl: string, modelUrl: string, workers: number, port: number): string {
  return scriptedTurnsConfig(dbUrl, modelUrl, {
    app: [`port = ${port}`, `workers = ${workers}`],
    sections: ['[app.logging]', 'format = "json"', 'level = "warn"'],
  });
}

/** A server process started from the built `dist/src/main.js`, once `/health` answers on its port. */
interface ServerProcess {
  pid: number;
  baseUrl: string;
  stop(): Promise<void>;
}

/**
 * Logs at `warn` (a line per request would cost the server and this process CPU), so readiness is asked over HTTP
 * rather than read from the listening line.
 */
async function startServer(configFile: string, port: number): Promise<ServerProcess> {
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'src', 'main.js')], {
    cwd: tmpdir(),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SKILLHOST_CONFIG: configFile },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const baseUrl = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited with code ${child.exitCode} before it answered`);
    if (Date.now() > deadline) throw new Error('the server did not answer within 120 s');
    const ok = await fetch(`${baseUrl}/health`).then(
      (res) => res.ok,
      () => false,
    );
    if (ok) break;
    await new Promise((done) => setTimeout(done, 200));
  }
  return {
    pid: child.pid!,
    baseUrl,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function createChats(baseUrl: string, authorization: string, count: number): Promise<string[]> {
  const chats: string[] = [];
  for (let i = 0; i < count; i++) {
    const res = await fetch(`${baseUrl}/v1/chats`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ title: `bench ${i}` }),
    });
    chats.push(((await res.json()) as { id: string }).id);
  }
  return chats;
}

/** The two loads, on one server: GET /v1/skills, and turns spread over `chats`. */
function loadsOf(server: ServerProcess, authorization: string, chats: string[]) {
  let next = 0;
  const turnBody = JSON.stringify({ content: 'Write a commit message for my change.' });
  return {
    skills: { url: `${server.baseUrl}/v1/skills`, headers: { authorization } },
    turns: {
      url: server.baseUrl,
      requests: [
        {
          method: 'POST' as const,
          headers: { authorization, 'content-type': 'application/json' },
          setupRequest: (request: autocannon.Request) => ({
            ...request,
            path: `/v1/chats/${chats[next++ % chats.length]}/messages`,
            body: turnBody,
          }),
        },
      ],
    },
  };
}

type Load = 'skills' | 'turns';

/**
 * Both servers run side by side (an idle one costs nothing) and take turns in short runs, 1 then 2, `ROUNDS` times
 * per load: the other work on this shared machine comes and goes over seconds, so each pair of runs sees about the
 * same machine, and the pair's ratio is what is kept.
 */
async function alternate(servers: Record<string, ServerProcess>, authorization: string, chats: string[]) {
  const loads = Object.fromEntries(
    SETTINGS.map((workers) => [workers, loadsOf(servers[workers], authorization, chats)]),
  );
  // Warm-up: every worker compiles its hot paths.
  for (const workers of SETTINGS)
    for (const load of ['skills', 'turns'] as const)
      await autocannon({ ...loads[workers][load], connections: CONNECTIONS, duration: 3 });
  const samples: Record<string, Record<Load, Measured[]>> = {
    1: { skills: [], turns: [] },
    2: { skills: [], turns: [] },
  };
  for (const load of ['skills', 'turns'] as const)
    for (let r = 0; r < ROUNDS; r++)
      for (const workers of SETTINGS)
        samples[workers][load].push(await measure(servers[workers], loads[workers][load]));
  return samples;
}

function median(values: Measured[]): Measured {
  const pick = (key: keyof Measured) =>
    percentile(
      values.map((value) => value[key]),
      50,
    );
  return {
    rps: pick('rps'),
    latencyP50Ms: pick('latencyP50Ms'),
    latencyP99Ms: pick('latencyP99Ms'),
    serverCores: pick('serverCores'),
    machineBusyShare: pick('machineBusyShare'),
    failures: values.reduce((sum, value) => sum + value.failures, 0),
  };
}

const f = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '—');

function report(result: {
  recordedAt: string;
  loadAverageBefore: number;
  loadAverageAfter: number;
  machine: string;
  database: string;
  rounds: number;
  durationS: number;
  runs: Record<string, { skills: Measured; turns: Measured }>;
  ratio: Record<Load, number>;
  samples: Record<string, Record<Load, Measured[]>>;
}): string {
  const one = result.runs['1'];
  const two = result.runs['2'];
  const row = (name: string, workers: string, m: Measured) =>
    `| ${name} | ${workers} | ${f(m.rps, 0)} | ${f(m.latencyP50Ms, 0)} / ${f(m.latencyP99Ms, 0)} | ` +
    `${f(m.serverCores, 2)} | ${f(m.machineBusyShare * 100, 0)}% | ${m.failures} | ${rounds(name, workers)} |`;
  const rounds = (name: string, workers: string) =>
    result.samples[workers][name === 'chat turns' ? 'turns' : 'skills'].map((sample) => f(sample.rps, 0)).join(', ');
  return [
    '# `[app] workers`: 1 and 2 server processes on one port',
    '',
    `Recorded ${result.recordedAt} on ${result.machine}; database: ${result.database}; \`npm run bench:workers\`. ` +
      `Load average (1 min) ${f(result.loadAverageBefore, 1)} before, ${f(result.loadAverageAfter, 1)} after: ` +
      'other work on the machine takes cores from both settings alike.',
    '',
    `The built server (\`dist/src/main.js\`), keys required, ${CONNECTIONS} connections (autocannon), each ` +
      `setting ${result.rounds} times in turn (1, 2, 1, 2, …; both servers up, the idle one waiting), ` +
      `${result.durationS} s per run after a warm-up; medians. Turns run against a scripted model that answers at ` +
      'once (one tool call, then text). The servers, PostgreSQL, the scripted model and autocannon share the machine.',
    '',
    '| run | workers | req/s | latency p50 / p99 ms | server CPU, cores | machine busy | failures | ' +
      'each round, req/s |',
    '|---|---:|---:|---:|---:|---:|---:|---|',
    row('GET /v1/skills', '1', one.skills),
    row('GET /v1/skills', '2', two.skills),
    row('chat turns', '1', one.turns),
    row('chat turns', '2', two.turns),
    '',
    `Ratio, 2 workers to 1 (the median of each pair of runs side by side): GET /v1/skills ` +
      `×${f(result.ratio.skills, 2)}, chat turns ×${f(result.ratio.turns, 2)}.`,
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const db = await databaseUrl();
  const model = await startChild(join(import.meta.dirname, 'http.bench.js'), ['serve-model']);
  // Other work on the machine takes cores from both settings: the load average says how much there was.
  const loadAverageBefore = loadavg()[0];
  const ports: Record<string, number> = { 1: await freePort(), 2: await freePort() };
  const servers: ServerProcess[] = [];
  const configs = Object.fromEntries(
    SETTINGS.map((workers) => {
      const file = join(tmpdir(), `skillhost-bench-workers-${workers}.toml`);
      writeFileSync(file, configText(db.url, `http://127.0.0.1:${model.port}/v1`, workers, ports[workers]));
      return [workers, file];
    }),
  );
  try {
    // The first server runs the migrations; then the key and the chats both use.
    const one = await startServer(configs[1], ports[1]);
    servers.push(one);
    const authorization = `Bearer ${await createBenchKey(db.url)}`;
    const chats = await createChats(one.baseUrl, authorization, 200);
    servers.push(await startServer(configs[2], ports[2]));
    const samples = await alternate({ 1: one, 2: servers[1] }, authorization, chats);
    const runs = Object.fromEntries(
      SETTINGS.map((workers) => [
        workers,
        { skills: median(samples[workers].skills), turns: median(samples[workers].turns) },
      ]),
    );
    const pairedRatio = (load: Load) =>
      percentile(
        samples[2][load].map((two, r) => two.rps / samples[1][load][r].rps),
        50,
      );
    const result = {
      recordedAt: new Date().toISOString(),
      loadAverageBefore,
      loadAverageAfter: loadavg()[0],
      machine: machineName(),
      database: process.env.DATABASE_URL ? 'PostgreSQL at DATABASE_URL' : 'embedded PostgreSQL',
      rounds: ROUNDS,
      durationS: DURATION_S,
      runs,
      ratio: { skills: pairedRatio('skills'), turns: pairedRatio('turns') },
      samples,
    };
    const headline: SummaryLine[] = (['skills', 'turns'] as const).map((load) => ({
      measure: load === 'skills' ? 'GET /v1/skills with 2 workers, req/s' : 'chat turns with 2 workers, turns/s',
      value: runs[2][load].rps,
      unit: load === 'skills' ? 'req/s' : 'turns/s',
      baseline: { name: '1 worker', value: runs[1][load].rps },
    }));
    recordResults('workers', result, report(result), headline);
  } finally {
    for (const server of servers) await server.stop();
    model.child.kill('SIGTERM');
    for (const file of Object.values(configs)) rmSync(file, { force: true });
    await db.stop();
  }
}

void main();
