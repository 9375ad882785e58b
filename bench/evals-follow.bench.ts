/**
 * The trigger evals' catalogue level in the background (CatalogueEvalFollowerService): what a change of the catalogue
 * costs the server after the reload that brought it. At 1,000 and 5,000 skills on disk (the shared corpus's
 * descriptions, repeated past its size; 50 of them with 20 trigger cases each), the app in its own process; rounds of a
 * reload after
 *
 *   - nothing changed (the same-run baseline: the rescan, and the follower finding nothing to run),
 *   - one skill's description changed (every skill with trigger evals is run again),
 *   - one skill's body changed (that skill alone is run again),
 *
 * interleaved. Measured in the server: the reload (start to the swap), the background run (from the end of the
 * follower's half second of quiet to its end), the event-loop delay (`monitorEventLoopDelay`, 1 ms resolution) during
 * each, and how many results the follower compared and wrote. Then one more round of each kind while GET /v1/skills is
 * sent from one connection, against the same requests with nothing running.
 *
 *   npm run bench:evals-follow          (writes bench/results/evals-follow.{md,json})
 *   BENCH_SIZES=1000 BENCH_ROUNDS=2 npm run bench:evals-follow
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import { discoverSkills, type SkillRegistry } from '@skillhost/core';
import { SkillRegistryService } from '@skillhost/nest';
import { pino } from 'pino';
import { createApp } from '../src/app/app.factory.js';
import { loadConfig } from '../src/config/config-loader.js';
import {
  CatalogueEvalFollowerService,
  EVAL_FOLLOW_DELAY_MS,
} from '../src/domain/skills/evals/catalogue-eval-follower.service.js';
import { EVAL_RUN_STORE, type EvalRunStore } from '../src/domain/skills/evals/eval-run-store.js';
import { corpusPath } from '../test/support/files/corpus.js';
import {
  benchWorkspace,
  closeWorkspace,
  cpuMsOf,
  machineName,
  percentile,
  recordResults,
  type SummaryLine,
} from './bench-support.js';

const SELF = join(import.meta.dirname, 'evals-follow.bench.js');
const ROOT = join(import.meta.dirname, '..', '..');
const SIZES = (process.env.BENCH_SIZES ?? '1000,5000').split(',').map(Number);
const WITH_EVALS = 50;
const CASES = 20;
/** Rounds of each kind, measured with nothing else going on. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** How long GET /v1/skills is timed with nothing running, for the comparison with the rounds under requests. */
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 5000);

const KINDS = ['unchanged', 'description', 'body'] as const;
type Kind = (typeof KINDS)[number];
const KIND_TEXT: Record<Kind, string> = {
  unchanged: 'nothing changed',
  description: 'one description changed',
  body: "one skill's body changed",
};

// --- The skills ------------------------------------------------------------------------------------------------

/**
 * Real descriptions, so that the ranker meets a real vocabulary: the shared corpus's (about 2,250 skills, the same
 * one `bench:skill-ranking` ranks), repeated past its size as copies of a collection are.
 */
const descriptions = lazy(() => {
  const path = corpusPath();
  const found = discoverSkills({
    directories: [{ configured: path, path }],
    mode: 'lenient',
    maxDepth: 6,
    maxSkills: 1_000_000,
  });
  return found.skills
    .map((record) => record.description.replace(/\s+/g, ' ').trim().slice(0, 1000))
    .filter((text) => text.length > 0)
    .sort();
});
/** Requests as users type them (plain, paraphrased, with typos, in Spanish): bench:skill-ranking's labelled set. */
const requests = lazy(() =>
  (JSON.parse(readFileSync(join(ROOT, 'bench', 'fixtures', 'skill-queries.json'), 'utf8')) as { query: string }[]).map(
    (q) => q.query,
  ),
);

function lazy<T>(make: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= make());
}

const nameOf = (i: number) => `skill-${String(i).padStart(5, '0')}`;
const descriptionOf = (i: number, revision = 0) =>
  descriptions()[i % descriptions().length] + (revision === 0 ? '' : ` Revised ${revision} times.`);
const withEvals = (skills: number) => Array.from({ length: WITH_EVALS }, (_, k) => k * Math.floor(skills / WITH_EVALS));

function skillMd(i: number, revision: { description: number; body: number }): string {
  const body = revision.body === 0 ? 'Steps.' : `Steps, revision ${revision.body}.`;
  const description = JSON.stringify(descriptionOf(i, revision.description));
  return `---\nname: ${nameOf(i)}\ndescription: ${description}\n---\n\n# ${nameOf(i)}\n\n${body}\n`;
}

const OPENINGS = ['help me', 'I need to', 'can you', 'please', 'how do I', 'we want to', 'show me how to', 'time to'];

/**
 * 20 cases: ten requests made of the skill's own description (six words from ten places in it), ten of the labelled
 * requests that should not lead to it (half naming another skill as the one expected instead).
 */
function triggerCases(i: number, skills: number): object[] {
  const words = descriptionOf(i).split(' ');
  const cases: object[] = [];
  const seen = new Set<string>();
  for (let k = 0; cases.length < CASES / 2; k++) {
    const at = Math.floor((k * words.length) / (CASES / 2)) % Math.max(1, words.length - 5);
    // Past ten tries (a short description), numbered so that each request differs.
    const again = k >= CASES / 2 ? ` (${k})` : '';
    const query = `${OPENINGS[k % OPENINGS.length]} ${words.slice(at, at + 6).join(' ')}${again}`;
    if (seen.has(query.toLowerCase())) continue;
    seen.add(query.toLowerCase());
    cases.push({ query, should_trigger: true });
  }
  for (let k = 0; k < CASES / 2; k++) {
    const query = requests()[(i * 7 + k * 13) % requests().length];
    const other = nameOf((i + 1 + k * 97) % skills);
    cases.push(k % 2 === 0 ? { query, should_trigger: false } : { query, should_trigger: false, expect_skill: other });
  }
  return cases;
}

function writeSkills(root: string, skills: number): void {
  const evals = new Set(withEvals(skills));
  for (let i = 0; i < skills; i++) {
    const dir = join(root, nameOf(i));
    mkdirSync(join(dir, 'evals'), { recursive: true });
    writeFileSync(join(dir, 'SKILL.md'), skillMd(i, { description: 0, body: 0 }));
    if (evals.has(i)) writeFileSync(join(dir, 'evals', 'triggers.json'), JSON.stringify(triggerCases(i, skills)));
  }
}

// --- The server (child) ------------------------------------------------------------------------------------------

interface Delay {
  p50: number;
  p99: number;
  max: number;
}

/** One round as the server measured it. */
interface Measured {
  reloadMs: number;
  runMs: number;
  /** Event-loop delay during the reload (its start to the swap), and during the run (the quiet before it left out). */
  reloadLoop: Delay;
  runLoop: Delay;
  cpuMs: number;
  /** The follower's results of the round: looked at (compared with the kept one), and written. */
  looked: number;
  written: number;
}

type ToChild = { kind: Kind };
/** The server's first message: its port, the follower's run at start-up, the skills loaded. */
interface Ready {
  ready: number;
  startupMs: number;
  skills: number;
}
type FromChild = Ready | Measured;

const delayOf = (histogram: IntervalHistogram): Delay => {
  const ms = (ns: number) => Math.round((ns / 1e6) * 100) / 100;
  return { p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), max: ms(histogram.max) };
};

/**
 * Child mode `serve-follow`: the real application (SKILLHOST_CONFIG) on a free port. Each `{ kind }` from the parent
 * (the change already on disk) is a round: a reload, then until the follower has run what it had to.
 */
async function serveFollow(): Promise<void> {
  const app = await createApp(loadConfig(), { logDestination: pino.destination({ dest: '/dev/null', sync: true }) });
  await app.listen(0, '127.0.0.1');
  const registry = app.get<SkillRegistry>(SkillRegistryService);
  const follower = app.get(CatalogueEvalFollowerService);
  // Counted, not changed: how many results the follower looked at and how many it wrote.
  const store = app.get<symbol, EvalRunStore>(EVAL_RUN_STORE);
  const keep = store.keep.bind(store);
  const counts = { looked: 0, written: 0 };
  store.keep = async (run) => {
    const wrote = await keep(run);
    counts.looked++;
    if (wrote) counts.written++;
    return wrote;
  };
  const started = performance.now();
  await follower.settled();
  const send = (message: FromChild) => process.send!(message);
  send({
    ready: (app.getHttpServer().address() as { port: number }).port,
    startupMs: performance.now() - started,
    skills: registry.snapshot.skills.size,
  });

  // Two histograms, each enabled once a round: one enabled again would count the time it was off as one delay.
  const reloading = monitorEventLoopDelay({ resolution: 1 });
  const run = monitorEventLoopDelay({ resolution: 1 });
  process.on(
    'message',
    (message: ToChild) =>
      void round(message.kind).then(send, (error: unknown) => {
        console.error(error);
        process.exit(1);
      }),
  );

  async function round(kind: Kind): Promise<Measured> {
    counts.looked = counts.written = 0;
    reloading.reset();
    run.reset();
    const cpu = process.cpuUsage();
    let swapAt = Number.NaN;
    let runAt = Number.NaN;
    reloading.enable();
    const t0 = performance.now();
    const unfollow = registry.onSwap(() => {
      swapAt = performance.now();
      reloading.disable();
      // Just before the follower's own timer (set in the same swap): the run, and the comparison that starts it.
      setTimeout(() => {
        runAt = performance.now();
        run.enable();
      }, EVAL_FOLLOW_DELAY_MS - 1);
    });
    await registry.reload();
    unfollow();
    await follower.settled();
    const end = performance.now();
    run.disable();
    if (Number.isNaN(runAt)) throw new Error(`round ${kind}: the follower settled before its quiet was over`);
    const expected = { unchanged: 0, description: WITH_EVALS, body: 1 }[kind];
    if (counts.looked !== expected)
      throw new Error(`round ${kind}: the follower looked at ${counts.looked} results, expected ${expected}`);
    return {
      reloadMs: swapAt - t0,
      runMs: end - runAt,
      reloadLoop: delayOf(reloading),
      runLoop: delayOf(run),
      cpuMs: cpuMsOf(process.cpuUsage(cpu)),
      ...counts,
    };
  }
  process.once('SIGTERM', () => void app.close().finally(() => process.exit(0)));
}

// --- The parent ---------------------------------------------------------------------------------------------

function startServer(env: Record<string, string>): Promise<{ child: ChildProcess; ready: Ready }> {
  const child = spawn(process.execPath, [SELF, 'serve-follow'], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolveReady, reject) => {
    child.once('message', (message: FromChild) => resolveReady({ child, ready: message as Ready }));
    child.once('exit', (code) => reject(new Error(`the server exited with ${code}`)));
  });
}

function measure(child: ChildProcess, kind: Kind): Promise<Measured> {
  return new Promise((resolveRound) => {
    child.once('message', (message: FromChild) => resolveRound(message as Measured));
    child.send({ kind } satisfies ToChild);
  });
}

function get(agent: Agent, port: number): Promise<number> {
  const started = performance.now();
  return new Promise((resolveGet, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/v1/skills', agent }, (res) => {
      res.resume();
      res.on('end', () =>
        res.statusCode === 200
          ? resolveGet(performance.now() - started)
          : reject(new Error(`GET answered ${res.statusCode}`)),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/** GET /v1/skills from one connection, each after the previous answer, while `work` runs; the latencies. */
async function requestsDuring<T>(port: number, work: Promise<T>): Promise<{ result: T; latencies: number[] }> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const latencies: number[] = [];
  let done = false;
  const loop = (async () => {
    while (!done) latencies.push(await get(agent, port));
  })();
  const result = await work.finally(() => {
    done = true;
  });
  await loop;
  agent.destroy();
  return { result, latencies };
}

interface Latency {
  requests: number;
  p50: number;
  p99: number;
  max: number;
}

const latencyOf = (samples: number[]): Latency => ({
  requests: samples.length,
  p50: percentile(samples, 50),
  p99: percentile(samples, 99),
  max: Math.max(...samples),
});

/** The median round of each kind (the middle of ROUNDS), figure by figure. */
function medianOf(rounds: Measured[]): Measured {
  const mid = (pick: (m: Measured) => number) => percentile(rounds.map(pick), 50);
  const delay = (pick: (m: Measured) => Delay): Delay => ({
    p50: mid((m) => pick(m).p50),
    p99: mid((m) => pick(m).p99),
    max: mid((m) => pick(m).max),
  });
  return {
    reloadMs: mid((m) => m.reloadMs),
    runMs: mid((m) => m.runMs),
    reloadLoop: delay((m) => m.reloadLoop),
    runLoop: delay((m) => m.runLoop),
    cpuMs: mid((m) => m.cpuMs),
    looked: mid((m) => m.looked),
    written: mid((m) => m.written),
  };
}

interface SizeResult {
  skills: number;
  withEvals: number;
  casesEach: number;
  /** From the server listening to the end of the follower's run at start-up (every skill with evals). */
  startupRunMs: number;
  rounds: Record<Kind, Measured[]>;
  median: Record<Kind, Measured>;
  requests: { idle: Latency; during: Record<Kind, Latency & { round: Measured }> };
}

async function benchSize(skills: number): Promise<SizeResult> {
  const { work, skillsDir, db, configFile } = await benchWorkspace(
    'skillhost-bench-evals-follow-',
    (dir) => writeSkills(dir, skills),
    { skills: { max_skills: skills } },
  );
  const server = await startServer({ SKILLHOST_CONFIG: configFile, DATABASE_URL: db.url });
  const { child, ready } = server;
  try {
    if (ready.skills !== skills) throw new Error(`the server loaded ${ready.skills} skills, expected ${skills}`);
    const target = withEvals(skills)[0];
    const revision = { description: 0, body: 0 };
    const change = (kind: Kind) => {
      if (kind !== 'unchanged') revision[kind]++;
      writeFileSync(join(skillsDir, nameOf(target), 'SKILL.md'), skillMd(target, revision));
    };
    const rounds: Record<Kind, Measured[]> = { unchanged: [], description: [], body: [] };
    for (let r = 0; r < ROUNDS; r++)
      for (const kind of KINDS) {
        change(kind);
        rounds[kind].push(await measure(child, kind));
      }
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    await get(agent, ready.ready);
    agent.destroy();
    const idle = await requestsDuring(ready.ready, new Promise((resolveIdle) => setTimeout(resolveIdle, IDLE_MS)));
    const during = {} as SizeResult['requests']['during'];
    for (const kind of KINDS) {
      change(kind);
      const loaded = await requestsDuring(ready.ready, measure(child, kind));
      during[kind] = { ...latencyOf(loaded.latencies), round: loaded.result };
    }
    return {
      skills,
      withEvals: WITH_EVALS,
      casesEach: CASES,
      startupRunMs: ready.startupMs,
      rounds,
      median: {
        unchanged: medianOf(rounds.unchanged),
        description: medianOf(rounds.description),
        body: medianOf(rounds.body),
      },
      requests: { idle: latencyOf(idle.latencies), during },
    };
  } finally {
    await closeWorkspace(child, db, work);
  }
}

async function main(): Promise<void> {
  const sizes: SizeResult[] = [];
  for (const skills of SIZES) sizes.push(await benchSize(skills));
  const result = { rounds: ROUNDS, idleMs: IDLE_MS, quietMs: EVAL_FOLLOW_DELAY_MS, sizes };
  recordResults('evals-follow', result, markdown(sizes), summaryOf(sizes));
}

// --- The results -------------------------------------------------------------------------------------------

/**
 * Each size: the run after each change, and the event loop during it, against the reload with nothing changed (the
 * rescan every change costs anyway); the largest size: a request meanwhile against one with nothing running.
 */
function summaryOf(sizes: SizeResult[]): SummaryLine[] {
  const lines: SummaryLine[] = [];
  for (const size of sizes) {
    const { unchanged, description, body } = size.median;
    const reload = (value: number) => ({ name: 'the reload, nothing changed', value });
    const at = `${size.skills} skills`;
    lines.push(
      {
        measure: `background run after one description changed (${at}, all ${size.withEvals} with evals run)`,
        value: description.runMs,
        unit: 'ms',
        baseline: reload(unchanged.reloadMs),
      },
      {
        measure: `background run after one skill's body changed (${at}, that skill run)`,
        value: body.runMs,
        unit: 'ms',
        baseline: reload(unchanged.reloadMs),
      },
      {
        measure: `event-loop delay p99 during the run after a description change (${at})`,
        value: description.runLoop.p99,
        unit: 'ms',
        baseline: reload(unchanged.reloadLoop.p99),
      },
      {
        measure: `event-loop delay max during the run after a description change (${at})`,
        value: description.runLoop.max,
        unit: 'ms',
        baseline: reload(unchanged.reloadLoop.max),
      },
    );
  }
  const largest = sizes.at(-1);
  if (largest !== undefined)
    lines.push({
      measure: `GET /v1/skills p99 during a reload and the run after a description change (${largest.skills} skills)`,
      value: largest.requests.during.description.p99,
      unit: 'ms',
      baseline: { name: 'nothing running', value: largest.requests.idle.p99 },
    });
  return lines;
}

function markdown(sizes: SizeResult[]): string {
  const f = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));
  const roundHeader = [
    '| reload after | reload | its loop p99 | its loop max | run | run loop p50 | run loop p99 | run loop max | CPU ' +
      '| looked at | written |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const roundRow = (label: string, m: Measured) =>
    `| ${label} | ${f(m.reloadMs)} | ${f(m.reloadLoop.p99)} | ${f(m.reloadLoop.max)} | ${f(m.runMs)} | ` +
    `${f(m.runLoop.p50)} | ${f(m.runLoop.p99)} | ${f(m.runLoop.max)} | ${f(m.cpuMs)} | ${m.looked} | ${m.written} |`;
  const requestRow = (label: string, l: Latency) =>
    `| ${label} | ${l.requests} | ${f(l.p50)} | ${f(l.p99)} | ${f(l.max)} |`;
  const sections = sizes.flatMap((size) => [
    `## ${size.skills} skills`,
    '',
    `${size.withEvals} of them with ${size.casesEach} trigger cases each. At start-up the follower ran them all in ` +
      `${f(size.startupRunMs)} ms from the server listening (its half second of quiet included).`,
    '',
    `The median of ${ROUNDS} rounds of each kind (interleaved), in ms: the reload (its start to the swap) and the ` +
      "server's event-loop delay meanwhile; the background run (the end of the quiet to the end of the run) and the " +
      "delay meanwhile; the server's CPU time for the round; the results the follower compared with the kept ones " +
      'and wrote:',
    '',
    ...roundHeader,
    ...KINDS.map((kind) => roundRow(KIND_TEXT[kind], size.median[kind])),
    '',
    'GET /v1/skills from one connection (each request after the previous answer) for ' +
      `${IDLE_MS / 1000} s with nothing running, then during one more round of each kind (the reload, the quiet and ` +
      'the run), in ms:',
    '',
    '| while | requests | p50 | p99 | max |',
    '|---|---:|---:|---:|---:|',
    requestRow('nothing running', size.requests.idle),
    ...KINDS.map((kind) => requestRow(`reload after ${KIND_TEXT[kind]}`, size.requests.during[kind])),
    '',
    'Those rounds, as the server measured them:',
    '',
    ...roundHeader,
    ...KINDS.map((kind) => roundRow(KIND_TEXT[kind], size.requests.during[kind].round)),
    '',
  ]);
  return [
    '# Trigger evals in the background after a change of the catalogue',
    '',
    `Recorded ${new Date().toISOString()} on ${machineName()}; \`npm run bench:evals-follow\`. The app in its own ` +
      'process, its skills in a temp folder (a SKILL.md each, with the descriptions of the shared corpus, repeated ' +
      'past its size), a PostgreSQL ' +
      'database of its own. Each round changes one skill that has trigger evals on disk (or nothing) and reloads ' +
      `(\`SkillRegistry.reload()\` in the server); the follower starts ${EVAL_FOLLOW_DELAY_MS} ms after the swap. ` +
      '"Nothing changed" is the same-run baseline: the rescan every change costs, and a follower that finds nothing ' +
      "to run (its run is the comparison, timed only to 20 ms: how often the follower's `settled()` looks).",
    '',
    ...sections,
  ].join('\n');
}

if (process.argv[2] === 'serve-follow') await serveFollow();
else await main();
