import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import pg from 'pg';
import { pino } from 'pino';
import { stringify } from 'smol-toml';
import { generateApiKey } from '../src/domain/users/api-key.js';
import { EmbeddedPostgresServer } from '../src/infra/database/embedded-postgres.server.js';
import { freePort } from '../test/support/ports.js';
import { runFolder } from '../test/support/files/run-folder.js';
import { ScriptedModelServer } from '../test/support/scripted-model-server.js';
import {
  machineName,
  RESULTS_DIR,
  type SummaryLine,
  summarySection,
  withRatios,
  writeMarkdown,
} from './bench-summary.js';

export { machineName, type SummaryLine, writeMarkdown } from './bench-summary.js';

/** What the benchmarks share: child processes that serve, a database of their own, and percentiles. */

/** A fresh database on DATABASE_URL's server, or on an embedded PostgreSQL started for the run. */
export async function databaseUrl(): Promise<{ url: string; stop: () => Promise<void> }> {
  let base = process.env.DATABASE_URL;
  let embedded: EmbeddedPostgresServer | undefined;
  if (!base) {
    // In this process's own temp folder, on a free port: two benchmarks never share a server.
    embedded = new EmbeddedPostgresServer({ dataDir: runFolder('bench-pg', 'data'), port: await freePort() });
    base = await embedded.start();
  }
  const name = `skillhost_bench_${Date.now()}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    stop: async () => {
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
      await embedded?.stop();
    },
  };
}

/**
 * A server of its own for one benchmark: a work folder, `skills/` filled by `writeSkills`, a fresh
 * database, and a config file (no rate limits in the way, `app` sections on top) the child reads.
 */
export async function benchWorkspace(
  prefix: string,
  writeSkills: (dir: string) => void,
  app: Record<string, Record<string, unknown>>,
) {
  const work = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(work, 0o755);
  const skillsDir = join(work, 'skills');
  writeSkills(skillsDir);
  const db = await databaseUrl();
  const configFile = join(work, 'config.toml');
  const sections = {
    limits: { requests_per_minute: 1_000_000 },
    ...app,
    skills: { enabled: true, directories: [skillsDir], ...app.skills },
    database: { url: db.url },
  };
  writeFileSync(configFile, stringify({ app: sections }));
  return { work, skillsDir, db, configFile };
}

/** `count` skill folders in `dir`, each a SKILL.md (a description on one of 97 topics) and a 480-byte reference. */
export function writeBenchSkills(dir: string, count: number): void {
  for (let i = 0; i < count; i++) {
    const name = `bench-skill-${String(i).padStart(4, '0')}`;
    mkdirSync(join(dir, name, 'references'), { recursive: true });
    writeFileSync(
      join(dir, name, 'SKILL.md'),
      `---\nname: ${name}\ndescription: Benchmark skill ${i}. Use when a request is about topic ${i % 97} or ` +
        `area ${i % 13}.\n---\n\n# ${name}\n\nRead references/guide.md.\n`,
    );
    writeFileSync(join(dir, name, 'references', 'guide.md'), `Guide ${i}.\n`.repeat(40));
  }
}

/**
 * The configuration of a server for turn benchmarks: keys required, the repository's skills and the shared corpus,
 * the scripted model at `modelUrl`, no limits in the way; `app` adds lines under `[app]`, `sections` whole sections.
 */
export function scriptedTurnsConfig(
  dbUrl: string,
  modelUrl: string,
  options: { app?: string[]; sections?: string[] } = {},
): string {
  const root = resolve(import.meta.dirname, '..', '..');
  return [
    '[app]',
    ...(options.app ?? []),
    'default_model = "scripted"',
    '[app.auth]',
    'mode = "api_key"',
    // One key drives every connection: the per-user limits would measure the limiter, not the app.
    '[app.limits]',
    'requests_per_minute = 1000000',
    'turns_per_minute = 1000000',
    ...(options.sections ?? []),
    '[app.skills]',
    'enabled = true',
    `directories = [${JSON.stringify(join(root, 'skills'))}, ` +
      `${JSON.stringify(resolve(root, '..', 'shared', 'corpus', 'anthropics-skills'))}]`,
    '[app.database]',
    `url = ${JSON.stringify(dbUrl)}`,
    '[app.models.scripted]',
    'provider = "openai-compatible"',
    `base_url = ${JSON.stringify(modelUrl)}`,
    'model = "scripted-1"',
    'max_retries = 0',
  ].join('\n');
}

/**
 * Writes `bench/results/<name>.{json,md}` and prints the markdown. The JSON gets the machine and the summary (each
 * line with its ratio to the same-run baseline); the markdown ends with the summary's table, which `npm run bench`
 * gathers into one.
 */
export function recordResults(name: string, result: object, text: string, summary: SummaryLine[]): void {
  const machine = machineName();
  const recorded = {
    recordedAt: new Date().toISOString(),
    ...result,
    machine,
    summary: withRatios(summary),
  };
  const markdown = `${text.trimEnd()}\n\n${summarySection(summary, machine)}`;
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, `${name}.json`), `${JSON.stringify(recorded, null, 2)}\n`);
  writeMarkdown(join(RESULTS_DIR, `${name}.md`), markdown);
  console.log(markdown);
}

/** A user and key made the way the service makes them (only the hash stored), straight in the bench database. */
export async function createBenchKey(
  url: string,
  name = 'bench',
  role: 'member' | 'admin' = 'member',
): Promise<string> {
  const { key, prefix, hash } = generateApiKey();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string }>('INSERT INTO users (name, role) VALUES ($1, $2) RETURNING id', [
      name,
      role,
    ]);
    await client.query('INSERT INTO api_keys (user_id, label, prefix, key_hash) VALUES ($1, $2, $3, $4)', [
      rows[0].id,
      'bench',
      prefix,
      hash,
    ]);
  } finally {
    await client.end();
  }
  return key;
}

/** Stops a benchmark's server process, drops its database and removes its work folder. */
export async function closeWorkspace(
  child: ChildProcess,
  db: { stop: () => Promise<void> },
  work: string,
): Promise<void> {
  child.kill('SIGTERM');
  await new Promise((done) => child.once('exit', done));
  await db.stop();
  rmSync(work, { recursive: true, force: true });
}

export function percentile(values: number[], p: number): number {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/**
 * Child mode `serve-app`: the real application from its config file (SKILLHOST_CONFIG), on a free
 * port it prints as `READY <port>`. On SIGUSR2 it prints the event loop's delay since the last
 * SIGUSR2 (or the start) as `LOOP {p50, p99, max}` in milliseconds: how long the server kept
 * everything else waiting; with the CPU time it has used so far (`cpuMs`). `src`: another build's
 * `dist/src/` (e.g. main's, for a before/after).
 */
export async function serveApp(src = new URL('../src/', import.meta.url)): Promise<void> {
  const { loadConfig } = (await import(
    new URL('config/config-loader.js', src).href
  )) as typeof import('../src/config/config-loader.js');
  const { createApp } = (await import(
    new URL('app/app.factory.js', src).href
  )) as typeof import('../src/app/app.factory.js');
  // Logged as `[app.logging]` says (info by default), as a deployed server is: every request's line is
  // serialised and written, to /dev/null rather than to the pipe the parent reads (its CPU is the load generator's).
  const options =
    process.env.BENCH_APP_LOGGING === 'off'
      ? { logger: false as const }
      : { logDestination: pino.destination({ dest: '/dev/null', sync: true }) };
  const app = await createApp(loadConfig(), options);
  await app.listen(0, '127.0.0.1');
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  let gc = { count: 0, longestMs: 0 };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries())
      gc = { count: gc.count + 1, longestMs: Math.max(gc.longestMs, entry.duration) };
  }).observe({ entryTypes: ['gc'] });
  process.on('SIGUSR2', () => {
    const ms = (ns: number) => Math.round((ns / 1e6) * 100) / 100;
    const gcLongestMs = Math.round(gc.longestMs * 100) / 100;
    console.log(
      `LOOP ${JSON.stringify({
        p50: ms(delay.percentile(50)),
        p99: ms(delay.percentile(99)),
        max: ms(delay.max),
        gcCount: gc.count,
        gcLongestMs,
        cpuMs: cpuMsOf(process.cpuUsage()),
      })}`,
    );
    delay.reset();
    gc = { count: 0, longestMs: 0 };
  });
  // A clean exit on SIGTERM, so what Node writes at exit (a --cpu-prof profile) is written.
  process.once('SIGTERM', () => void app.close().finally(() => process.exit(0)));
  console.log(`READY ${(app.getHttpServer().address() as { port: number }).port}`);
}

export interface LoopDelay {
  p50: number;
  p99: number;
  max: number;
  /** Garbage collections meanwhile, and the longest pause among them. */
  gcCount: number;
  gcLongestMs: number;
  /** CPU time (user + system) the server process has used since it started; not reset by an ask. */
  cpuMs: number;
}

/** USER_HZ, 100 on every Linux this runs on: /proc's CPU times are in these ticks. */
export const CLOCK_TICKS = 100;

/** CPU seconds a process has used so far (user + system), from /proc on Linux; NaN elsewhere. */
export function cpuSeconds(pid: number | undefined): number {
  try {
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return Number.NaN;
  }
}

/** The whole machine's busy and total CPU time so far, from /proc/stat; NaN elsewhere. */
export function machineCpu(): { busy: number; total: number } {
  try {
    const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
    const total = ticks.reduce((a, b) => a + b, 0);
    return { busy: total - ticks[3] - ticks[4], total };
  } catch {
    return { busy: Number.NaN, total: Number.NaN };
  }
}

/** `process.cpuUsage()`'s user + system time in milliseconds. */
export function cpuMsOf(usage: NodeJS.CpuUsage): number {
  return (usage.user + usage.system) / 1000;
}

/** The child's event-loop delay since the last ask (see serveApp). */
export function loopDelayOf(child: ChildProcess): Promise<LoopDelay> {
  return new Promise((resolveDelay) => {
    const onData = (chunk: Buffer) => {
      const match = /LOOP (\{.*\})/.exec(chunk.toString());
      if (match === null) return;
      child.stdout!.off('data', onData);
      resolveDelay(JSON.parse(match[1]) as LoopDelay);
    };
    child.stdout!.on('data', onData);
    child.kill('SIGUSR2');
  });
}

/** Runs `script` with `args` in a child Node process and waits for the `READY <port>` line it prints. */
export function startChild(
  script: string,
  args: string[],
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolvePort, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      const match = /READY (\d+)/.exec(chunk.toString());
      if (match) resolvePort({ child, port: Number(match[1]) });
    });
    child.on('exit', (code) => reject(new Error(`child ${args[0]} exited with ${code}`)));
  });
}

/**
 * Child mode of the turn benches (gateway, telemetry): the scripted model. `[skill]` in the last user message: an
 * activation of `git-commit` first, then the answer.
 */
export async function serveSkillTurnModel(): Promise<void> {
  const model = await new ScriptedModelServer().start();
  model.answerWith((sent) => {
    model.requests.length = 0;
    const messages = sent.body.messages;
    let lastUser = messages.length - 1;
    while (lastUser > 0 && messages[lastUser].role !== 'user') lastUser--;
    const said = JSON.stringify(messages[lastUser]?.content ?? '');
    const results = messages.slice(lastUser).filter((message) => message.role === 'tool').length;
    if (said.includes('[skill]') && results === 0)
      return { toolCalls: [{ name: 'skills_activate', arguments: { name: 'git-commit' } }] };
    return { text: 'Here is your answer.' };
  });
  console.log(`READY ${new URL(model.url).port}`);
}

/** One POST over a keep-alive agent, its body read whole; its time in ms. */
export function postJson(agent: Agent, url: string, body: string, headers: Record<string, string>): Promise<number> {
  const started = performance.now();
  const target = new URL(url);
  return new Promise((resolvePost, reject) => {
    const req = request(
      {
        agent,
        host: target.hostname,
        port: target.port,
        method: 'POST',
        path: target.pathname,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          if ((res.statusCode ?? 0) >= 300)
            reject(new Error(`${url} answered ${res.statusCode}: ${Buffer.concat(chunks).toString().slice(0, 300)}`));
          else resolvePost(performance.now() - started);
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
