/**
 * Rate-limit check benchmark: what one call's check costs the request path with the shared limits
 * (src/domain/limits: `LeasedLimiter` over the real `RateLimitRepository` on PostgreSQL) against the per-instance,
 * in-memory sliding window they replaced (bench/baselines/sliding-window-limiter.ts), in the same run.
 *
 * - far: a limit no caller nears (1,000,000 a minute), one caller and 1,000 callers round-robin: the leases' fast
 *   path, one store take per 100 calls.
 * - spent: the default 600 a minute, 100 callers each spending their whole budget: batches shrink near the limit,
 *   so more calls ask the store.
 *
 * A third limiter, the leases over an in-memory store, shows what the leases themselves cost without the database.
 *
 * Time is wall time per call over the loop (awaiting only the calls that ask the store); CPU is this process's user +
 * system time per call, the pg client's included. ROUNDS rounds, medians shown.
 *
 *   npm run bench:rate-limit      (writes bench/results/rate-limit.{md,json})
 */
import { LeasedLimiter, type LimitVerdict, StoreOutage } from '../src/domain/limits/leased-limiter.js';
import type { LimitSpec, RateLimitStore } from '../src/domain/limits/rate-limit-store.js';
import { createDataSource, runPendingMigrations } from '../src/infra/database/data-source.js';
import { RateLimitRepository } from '../src/infra/database/rate-limit.repository.js';
import { SlidingWindowLimiter } from './baselines/sliding-window-limiter.js';
import { databaseUrl, machineName, recordResults, type SummaryLine } from './bench-support.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const FAR_CALLS = Number(process.env.BENCH_CALLS ?? 500_000);

interface Scenario {
  name: string;
  max: number;
  callers: number;
  calls: number;
}

const SCENARIOS: Scenario[] = [
  { name: 'far, 1 caller', max: 1_000_000, callers: 1, calls: FAR_CALLS },
  { name: 'far, 1,000 callers', max: 1_000_000, callers: 1000, calls: FAR_CALLS },
  { name: 'spent, 100 callers × 600', max: 600, callers: 100, calls: 60_000 },
];

interface Measured {
  nsPerCall: number;
  cpuNsPerCall: number;
  allowed: number;
  /** Calls that asked the store (a promise), per 1,000 calls. */
  askedPerThousand: number;
}

const BASELINE = 'sliding window (per instance, replaced)';
const SHARED = 'leases over PostgreSQL (shared)';
const LEASES_ALONE = 'leases over an in-memory store';

/**
 * A store without a database, answering at once (one window per key: each run uses keys of its own, within a
 * minute): what the leases themselves cost.
 */
function inMemoryStore(): RateLimitStore {
  const used = new Map<string, number>();
  return {
    take: async (limit, key, points) => {
      const before = used.get(key) ?? 0;
      const granted = Math.min(points, limit.max - before);
      used.set(key, before + granted);
      return { granted, remaining: limit.max - before - granted, msBeforeNext: 60_000 };
    },
  };
}

type Hit = (key: string) => LimitVerdict | Promise<LimitVerdict>;

async function run(hit: Hit, scenario: Scenario, round: number): Promise<Measured> {
  const keys = Array.from({ length: scenario.callers }, (_, i) => `user:${scenario.name}:${round}:${i}`);
  let allowed = 0;
  let asked = 0;
  const cpu = process.cpuUsage();
  const started = process.hrtime.bigint();
  for (let i = 0; i < scenario.calls; i++) {
    let verdict = hit(keys[i % keys.length]);
    if (verdict instanceof Promise) {
      asked++;
      verdict = await verdict;
    }
    if (verdict.allowed) allowed++;
  }
  const ns = Number(process.hrtime.bigint() - started);
  const used = process.cpuUsage(cpu);
  return {
    nsPerCall: ns / scenario.calls,
    cpuNsPerCall: ((used.user + used.system) * 1000) / scenario.calls,
    allowed,
    askedPerThousand: (asked * 1000) / scenario.calls,
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function medianOf(runs: Measured[]): Measured {
  return {
    nsPerCall: median(runs.map((r) => r.nsPerCall)),
    cpuNsPerCall: median(runs.map((r) => r.cpuNsPerCall)),
    allowed: median(runs.map((r) => r.allowed)),
    askedPerThousand: median(runs.map((r) => r.askedPerThousand)),
  };
}

async function main(): Promise<void> {
  const db = await databaseUrl();
  const dataSource = createDataSource(db.url, { poolSize: 2 });
  await dataSource.initialize();
  await runPendingMigrations(dataSource);
  const store: RateLimitStore = new RateLimitRepository(dataSource);
  const outage = new StoreOutage(5000, {
    failed: (error) => {
      throw error;
    },
    unchecked: () => undefined,
    recovered: () => undefined,
  });
  const rows: { scenario: string; limiter: string; result: Measured }[] = [];
  try {
    for (const scenario of SCENARIOS) {
      const spec: LimitSpec = { name: 'requests_per_minute', max: scenario.max, windowMs: 60_000 };
      const baseline: Measured[] = [];
      const shared: Measured[] = [];
      const leasesAlone: Measured[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const old = new SlidingWindowLimiter(scenario.max, 60_000);
        baseline.push(await run((key) => old.hit(key, Date.now()), scenario, round));
        const leased = new LeasedLimiter(spec, store, outage);
        shared.push(await run((key) => leased.hit(key), scenario, round));
        const instant = new LeasedLimiter(spec, inMemoryStore(), outage);
        leasesAlone.push(await run((key) => instant.hit(key), scenario, round));
      }
      rows.push({ scenario: scenario.name, limiter: BASELINE, result: medianOf(baseline) });
      rows.push({ scenario: scenario.name, limiter: SHARED, result: medianOf(shared) });
      rows.push({ scenario: scenario.name, limiter: LEASES_ALONE, result: medianOf(leasesAlone) });
    }
  } finally {
    await (store as RateLimitRepository).onApplicationShutdown();
    await dataSource.destroy();
    await db.stop();
  }
  recordResults('rate-limit', { rounds: ROUNDS, scenarios: SCENARIOS, rows }, report(rows), summaryOf(rows));
}

/** The shared limits' CPU per call in each scenario, against the replaced per-instance window's. */
function summaryOf(rows: { scenario: string; limiter: string; result: Measured }[]): SummaryLine[] {
  return rows
    .filter((r) => r.limiter === SHARED)
    .map((r) => ({
      measure: `${r.scenario}: shared limits, CPU per call`,
      value: r.result.cpuNsPerCall,
      unit: 'ns',
      baseline: {
        name: BASELINE,
        value: rows.find((b) => b.scenario === r.scenario && b.limiter === BASELINE)!.result.cpuNsPerCall,
      },
    }));
}

function report(rows: { scenario: string; limiter: string; result: Measured }[]): string {
  const lines = [
    '# Rate-limit check',
    '',
    `Recorded ${new Date().toISOString()} on ${machineName()}; \`npm run bench:rate-limit\`.`,
    `${ROUNDS} rounds, medians. One call is one \`hit\` of the limiter, as the guard makes per request (twice per ` +
      'turn). The shared limiter runs over the real store on PostgreSQL on this machine; its store takes are ' +
      'awaited in the loop, so their round trips are in its time.',
    '',
    '| scenario | limiter | ns per call | CPU ns per call | × baseline (time) | allowed | store takes per 1,000 ' +
      'calls |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
  ];
  const baselines = new Map<string, number>();
  for (const { scenario, limiter, result } of rows) {
    if (!baselines.has(scenario)) baselines.set(scenario, result.nsPerCall);
    const ratio = result.nsPerCall / (baselines.get(scenario) ?? result.nsPerCall);
    lines.push(
      `| ${scenario} | ${limiter} | ${Math.round(result.nsPerCall)} | ${Math.round(result.cpuNsPerCall)} | ` +
        `${ratio.toFixed(2)} | ${result.allowed} | ${result.askedPerThousand.toFixed(1)} |`,
    );
  }
  lines.push('', '## Verdict', '');
  for (const scenario of SCENARIOS) {
    const of = (limiter: string) => rows.find((r) => r.scenario === scenario.name && r.limiter === limiter)!.result;
    const [old, shared, alone] = [of(BASELINE), of(SHARED), of(LEASES_ALONE)];
    lines.push(
      `- ${scenario.name}: the shared limits cost ${(shared.cpuNsPerCall / 1000).toFixed(2)} µs of CPU per call ` +
        `(the replaced window ${(old.cpuNsPerCall / 1000).toFixed(2)} µs, the leases alone ` +
        `${(alone.cpuNsPerCall / 1000).toFixed(2)} µs); ${shared.askedPerThousand.toFixed(1)} calls in 1,000 wait ` +
        'for a query.',
    );
  }
  return `${lines.join('\n')}\n`;
}

await main();
