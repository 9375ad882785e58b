/**
 * Reload benchmark: 10,000 skills on disk, the app in its own process, and GET /v1/skills sent
 * from BENCH_CONNECTIONS connections (default 1; each request after the previous answer; the list of
 * 10,000 skills is about 2 MB, so more connections measure the transfer) first with the catalogue at rest,
 * then while POST /v1/admin/skills/reload rescans all 10,000 again and again. The target: the
 * GET p99 during the rescans stays under 20 ms (the scan gives the event loop a turn every few
 * milliseconds instead of blocking it for the whole scan).
 *
 *   npm run bench:reload          (writes bench/results/reload.{md,json})
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import {
  benchWorkspace,
  closeWorkspace,
  type LoopDelay,
  loopDelayOf,
  machineName,
  recordResults,
  percentile,
  serveApp,
  startChild,
  type SummaryLine,
} from './bench-support.js';

const SELF = join(import.meta.dirname, 'reload.bench.js');
const SKILLS = Number(process.env.BENCH_SKILLS ?? 10_000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 1);
const PHASE_MS = Number(process.env.BENCH_PHASE_MS ?? 15_000);
const TARGET_P99_MS = 20;

function writeSkills(root: string): void {
  for (let i = 0; i < SKILLS; i++) {
    const name = `skill-${String(i).padStart(5, '0')}`;
    mkdirSync(join(root, name, 'references'), { recursive: true });
    writeFileSync(
      join(root, name, 'SKILL.md'),
      `---\nname: ${name}\ndescription: Benchmark skill number ${i}. Use when a benchmark needs many ` +
        `skills.\n---\n\n# ${name}\n\nSteps.\n`,
    );
    writeFileSync(join(root, name, 'references', 'REFERENCE.md'), 'Reference.\n');
  }
}

function send(agent: Agent, port: number, method: string, path: string): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolveAnswer, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, agent }, (res) => {
      res.resume();
      res.on('end', () => resolveAnswer({ status: res.statusCode ?? 0, ms: performance.now() - started }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** GET /v1/skills from CONNECTIONS loops until `until()` says stop; the latencies, and how many were not 200. */
async function load(port: number, until: () => boolean): Promise<{ latencies: number[]; failures: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  const latencies: number[] = [];
  let failures = 0;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (!until()) {
        const { status, ms } = await send(agent, port, 'GET', '/v1/skills');
        if (status === 200) latencies.push(ms);
        else failures++;
      }
    }),
  );
  agent.destroy();
  return { latencies, failures };
}

function summary(latencies: number[]) {
  return {
    requests: latencies.length,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: Math.max(...latencies),
  };
}

async function main(): Promise<void> {
  const { work, db, configFile } = await benchWorkspace('skillhost-bench-reload-', writeSkills, {
    skills: { max_skills: SKILLS },
  });
  const app = await startChild(SELF, ['serve-app'], { SKILLHOST_CONFIG: configFile, DATABASE_URL: db.url });
  try {
    const reloadAgent = new Agent({ keepAlive: true, maxSockets: 1 });
    // Warm up: the list's JSON is built once per snapshot, on its first request.
    await send(reloadAgent, app.port, 'GET', '/v1/skills');

    await loopDelayOf(app.child);
    let stopAt = performance.now() + PHASE_MS;
    const rest = summary((await load(app.port, () => performance.now() >= stopAt)).latencies);
    const restLoop = await loopDelayOf(app.child);

    const reloads: number[] = [];
    let reloading = true;
    stopAt = performance.now() + PHASE_MS;
    const reloadLoop = (async () => {
      while (performance.now() < stopAt) {
        const { status, ms } = await send(reloadAgent, app.port, 'POST', '/v1/admin/skills/reload');
        if (status !== 200) throw new Error(`reload answered ${status}`);
        reloads.push(ms);
      }
      reloading = false;
    })();
    const during = await load(app.port, () => !reloading);
    await reloadLoop;
    const busyLoop = await loopDelayOf(app.child);
    reloadAgent.destroy();
    const busy = summary(during.latencies);
    const result = {
      recordedAt: new Date().toISOString(),
      machine: machineName(),
      skills: SKILLS,
      connections: CONNECTIONS,
      phaseMs: PHASE_MS,
      atRest: rest,
      loopDelay: { atRest: restLoop, duringReloads: busyLoop },
      duringReloads: {
        ...busy,
        failures: during.failures,
        reloads: reloads.length,
        reloadP50Ms: percentile(reloads, 50),
        reloadMaxMs: Math.max(...reloads),
      },
      targetP99Ms: TARGET_P99_MS,
      met: busy.p99 < TARGET_P99_MS,
    };
    recordResults('reload', result, markdown(result), summaryOf(result));
  } finally {
    await closeWorkspace(app.child, db, work);
  }
}

/** GET /v1/skills during back-to-back rescans against the same requests at rest, and the rescan's own time. */
function summaryOf(r: {
  atRest: ReturnType<typeof summary>;
  duringReloads: ReturnType<typeof summary> & { reloadP50Ms: number };
  loopDelay: { atRest: LoopDelay; duringReloads: LoopDelay };
  skills: number;
  targetP99Ms: number;
  met: boolean;
}): SummaryLine[] {
  return [
    {
      measure: 'GET /v1/skills p99 during rescans',
      value: r.duringReloads.p99,
      unit: 'ms',
      baseline: { name: 'at rest', value: r.atRest.p99 },
      target: `< ${r.targetP99Ms} ms`,
      met: r.met,
    },
    {
      measure: "server's event-loop delay p99 during rescans",
      value: r.loopDelay.duringReloads.p99,
      unit: 'ms',
      baseline: { name: 'at rest', value: r.loopDelay.atRest.p99 },
    },
    { measure: `one rescan of ${r.skills} skills under load, p50`, value: r.duringReloads.reloadP50Ms, unit: 'ms' },
  ];
}

function markdown(r: {
  recordedAt: string;
  machine: string;
  skills: number;
  connections: number;
  phaseMs: number;
  atRest: ReturnType<typeof summary>;
  loopDelay: { atRest: LoopDelay; duringReloads: LoopDelay };
  duringReloads: ReturnType<typeof summary> & {
    failures: number;
    reloads: number;
    reloadP50Ms: number;
    reloadMaxMs: number;
  };
  targetP99Ms: number;
  met: boolean;
}): string {
  const ms = (value: number) => value.toFixed(2);
  return [
    '# Reload benchmark',
    '',
    `Recorded ${r.recordedAt} on ${r.machine}; \`npm run bench:reload\`.`,
    `${r.skills} skills on disk (each a SKILL.md and one reference); GET /v1/skills from ${r.connections} ` +
      `connections, each request after the previous answer, for ${r.phaseMs / 1000} s at rest, then for ` +
      `${r.phaseMs / 1000} s while POST /v1/admin/skills/reload rescans all of them back to back.`,
    '',
    '| phase | requests | p50 ms | p99 ms | max ms |',
    '|---|---:|---:|---:|---:|',
    `| at rest | ${r.atRest.requests} | ${ms(r.atRest.p50)} | ${ms(r.atRest.p99)} | ${ms(r.atRest.max)} |`,
    `| during reloads | ${r.duringReloads.requests} | ${ms(r.duringReloads.p50)} | ${ms(r.duringReloads.p99)} | ` +
      `${ms(r.duringReloads.max)} |`,
    '',
    "The server's event-loop delay (`monitorEventLoopDelay` in the server process: how long everything else waited):",
    '',
    '| phase | p50 ms | p99 ms | max ms | GCs | longest GC ms |',
    '|---|---:|---:|---:|---:|---:|',
    `| at rest | ${ms(r.loopDelay.atRest.p50)} | ${ms(r.loopDelay.atRest.p99)} | ${ms(r.loopDelay.atRest.max)} ` +
      `| ${r.loopDelay.atRest.gcCount} | ${ms(r.loopDelay.atRest.gcLongestMs)} |`,
    `| during reloads | ${ms(r.loopDelay.duringReloads.p50)} | ${ms(r.loopDelay.duringReloads.p99)} | ` +
      `${ms(r.loopDelay.duringReloads.max)} | ${r.loopDelay.duringReloads.gcCount} | ` +
      `${ms(r.loopDelay.duringReloads.gcLongestMs)} |`,
    '',
    `Reloads: ${r.duringReloads.reloads}, each ${ms(r.duringReloads.reloadP50Ms)} ms (p50), at most ` +
      `${ms(r.duringReloads.reloadMaxMs)} ms; failed GETs: ${r.duringReloads.failures}.`,
    `Target: GET p99 under ${r.targetP99Ms} ms during the rescans — ${r.met ? 'met' : 'not met'}.`,
    '',
  ].join('\n');
}

if (process.argv[2] === 'serve-app') await serveApp();
else await main();
