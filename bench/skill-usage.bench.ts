/**
 * The skills usage funnel's cost on the turn path: the same chat turns (`POST /v1/chats/:id/messages`, the model
 * activating a skill and reading its reference, then answering) with `[app.skills.usage] enabled` on and off, in
 * alternating rounds of the same run, each round on a fresh app over the same database and scripted model. The app is
 * driven in-process (Fastify's inject: no sockets), so the figures are Skillhost's own time and this process's CPU
 * (the scripted model's included, the same in both). With the funnel on, the round ends with a flush (one multi-row
 * upsert), timed apart: it runs on a timer, never on a turn.
 *
 *   npm run bench:skill-usage      (writes bench/results/skill-usage.{md,json})
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { createApp } from '../src/app/app.factory.js';
import { configWith } from '../src/config/config-loader.js';
import type { AppConfig } from '../src/config/app-config.js';
import { SKILL_USAGE_RECORDER, type UsageRecorder, type UsageStore } from '../src/domain/skills/usage/skill-usage.js';
import { turnUsageEvents } from '../src/domain/skills/usage/turn-usage.js';
import { BufferedUsageRecorder } from '../src/infra/database/buffered-usage-recorder.js';
import { ScriptedModelServer } from '../test/support/scripted-model-server.js';
import {
  databaseUrl,
  machineName,
  percentile,
  recordResults,
  type SummaryLine,
  writeBenchSkills,
} from './bench-support.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const TURNS = Number(process.env.BENCH_TURNS ?? 200);
const SKILLS = Number(process.env.BENCH_SKILLS ?? 50);
const SKILL = 'bench-skill-0007';
const COUNTS_SQL =
  'SELECT coalesce(sum(offered + activated_tool + resources_read + turns), 0)::int AS n FROM skill_usage_daily';

interface Round {
  msPerTurn: number;
  p99Ms: number;
  cpuMsPerTurn: number;
  flushMs: number | null;
  flushedRows: number | null;
}

async function runRound(
  build: (enabled: boolean) => Promise<NestFastifyApplication>,
  enabled: boolean,
  dbQuery: (sql: string) => Promise<number>,
): Promise<Round> {
  const app = await build(enabled);
  try {
    const inject = app.getHttpAdapter().getInstance();
    const chats: string[] = [];
    for (let i = 0; i < 10; i++)
      chats.push(JSON.parse((await inject.inject({ method: 'POST', url: '/v1/chats', payload: {} })).body).id);
    // Counted from the round's start: the interval's flushes (every 10 s, the default) may run during the turns.
    const before = enabled ? await dbQuery(COUNTS_SQL) : 0;
    const times: number[] = [];
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let i = 0; i < TURNS; i++) {
      const at = performance.now();
      const res = await inject.inject({
        method: 'POST',
        url: `/v1/chats/${chats[i % chats.length]}/messages`,
        payload: { content: `Turn ${i}: [skill] please` },
      });
      if (res.statusCode !== 201) throw new Error(`turn ${i}: ${res.statusCode} ${res.body.slice(0, 300)}`);
      times.push(performance.now() - at);
    }
    const wall = performance.now() - started;
    const used = process.cpuUsage(cpu);
    let flushMs: number | null = null;
    let flushedRows: number | null = null;
    if (enabled) {
      const flushStarted = performance.now();
      await app.get<symbol, UsageRecorder>(SKILL_USAGE_RECORDER).flush();
      flushMs = performance.now() - flushStarted;
      const added = (await dbQuery(COUNTS_SQL)) - before;
      // Each turn: every skill offered, one activation, one read, one turn that used it.
      if (added !== TURNS * (SKILLS + 3))
        throw new Error(`the flush added ${added} counts, not ${TURNS * (SKILLS + 3)}`);
      flushedRows = await dbQuery('SELECT count(*)::int AS n FROM skill_usage_daily');
    }
    return {
      msPerTurn: wall / TURNS,
      p99Ms: percentile(times, 99),
      cpuMsPerTurn: (used.user + used.system) / 1000 / TURNS,
      flushMs,
      flushedRows,
    };
  } finally {
    await app.close();
  }
}

/**
 * What the turn path itself adds, alone: one answered turn's events (every skill offered, an activation, a read, the
 * turn) made and added to the in-memory counts, as TurnRunner does at a turn's end. The store is never reached here.
 */
function recordCostNs(): number {
  const idle: UsageStore = { add: async () => undefined, summary: async () => [], deleteBefore: async () => 0 };
  const config = { app: { skills: { usage: { enabled: true, flushIntervalMs: 10_000, retentionDays: 400 } } } };
  const recorder = new BufferedUsageRecorder(config as unknown as AppConfig, idle);
  const offered = Array.from({ length: SKILLS }, (_, i) => `bench-skill-${String(i).padStart(4, '0')}`);
  const card = (tool: string) => ({
    id: tool,
    tool,
    args: {},
    status: 'ok' as const,
    summary: { skill: SKILL, truncated: false },
    output: '',
    durationMs: 0,
  });
  const turn = {
    model: 'scripted',
    gateway: false,
    offered,
    activations: [{ skillName: SKILL, how: 'tool' as const, version: 'sha256:x' }],
    cards: [card('skills.activate'), card('skills.readResource')],
    versionOf: () => 'sha256:x',
    known: () => true,
  };
  const runs = 100_000;
  for (let i = 0; i < 1000; i++) recorder.record(turnUsageEvents(turn));
  const started = process.hrtime.bigint();
  for (let i = 0; i < runs; i++) recorder.record(turnUsageEvents(turn));
  return Number(process.hrtime.bigint() - started) / runs;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'skillhost-usage-bench-'));
  writeBenchSkills(join(work, 'skills'), SKILLS);
  const db = await databaseUrl();
  const model = await new ScriptedModelServer().start();
  model.answerWith((sent) => {
    model.requests.length = 0;
    const tools = sent.body.messages.filter((message) => message.role === 'tool').length;
    const last = sent.body.messages.at(-1);
    if (last?.role === 'user' && tools === 0 && JSON.stringify(last.content).includes('[skill]'))
      return { toolCalls: [{ name: 'skills_activate', arguments: { name: SKILL } }] };
    if (last?.role === 'tool' && tools % 2 === 1)
      return { toolCalls: [{ name: 'skills_readResource', arguments: { name: SKILL, path: 'references/guide.md' } }] };
    return { text: 'Here is your answer.' };
  });
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: db.url });
  const build = (enabled: boolean) =>
    createApp(
      configWith({
        'app.skills.enabled': true,
        'app.skills.directories': [join(work, 'skills')],
        'app.skills.usage.enabled': enabled,
        'app.database.url': db.url,
        'app.limits.requests_per_minute': 1_000_000,
        'app.limits.turns_per_minute': 1_000_000,
        'app.models': {
          scripted: { provider: 'openai-compatible', base_url: model.url, model: 'scripted-1', max_retries: 0 },
        },
      }),
      { logger: false },
    );
  const on: Round[] = [];
  const off: Round[] = [];
  try {
    await client.connect();
    const count = async (sql: string) => (await client.query<{ n: number }>(sql)).rows[0].n;
    // A first app migrates the database and warms the code paths; its round is not counted.
    await runRound(build, true, count);
    for (let round = 0; round < ROUNDS; round++) {
      // Alternating which goes first, so neither always has the warmer machine.
      const order = round % 2 === 0 ? [true, false] : [false, true];
      for (const enabled of order) (enabled ? on : off).push(await runRound(build, enabled, count));
    }
  } finally {
    await client.end().catch(() => undefined);
    await model.stop();
    await db.stop();
    rmSync(work, { recursive: true, force: true });
  }
  const of = (rounds: Round[]) => ({
    msPerTurn: median(rounds.map((r) => r.msPerTurn)),
    p99Ms: median(rounds.map((r) => r.p99Ms)),
    cpuMsPerTurn: median(rounds.map((r) => r.cpuMsPerTurn)),
  });
  const [withFunnel, without] = [of(on), of(off)];
  const recordNs = median([recordCostNs(), recordCostNs(), recordCostNs()]);
  const flushMs = median(on.map((r) => r.flushMs ?? 0));
  const flushedRows = median(on.map((r) => r.flushedRows ?? 0));
  const summary: SummaryLine[] = [
    {
      measure: `usage funnel: one turn's events recorded in memory (${SKILLS} skills offered)`,
      value: recordNs / 1000,
      unit: 'µs',
    },
    {
      measure: 'chat turn with the usage funnel on, CPU per turn',
      value: withFunnel.cpuMsPerTurn,
      unit: 'ms',
      baseline: { name: 'funnel off, same run', value: without.cpuMsPerTurn },
    },
    {
      measure: 'chat turn with the usage funnel on, wall time per turn',
      value: withFunnel.msPerTurn,
      unit: 'ms',
      baseline: { name: 'funnel off, same run', value: without.msPerTurn },
    },
  ];
  const f = (n: number) => n.toFixed(3);
  const text = [
    '# Skills usage funnel on the turn path',
    '',
    `Recorded ${new Date().toISOString()} on ${machineName()}; \`npm run bench:skill-usage\`.`,
    `${ROUNDS} rounds each of ${TURNS} turns (10 chats, ${SKILLS} skills, all listed in each turn's catalogue), ` +
      'funnel on and off alternating, medians of the rounds. Each turn: the model activates a skill, reads its ' +
      'reference, answers (three model requests to an in-process scripted model).',
    '',
    '| funnel | ms per turn | p99 ms | CPU ms per turn |',
    '| --- | ---: | ---: | ---: |',
    `| on | ${f(withFunnel.msPerTurn)} | ${f(withFunnel.p99Ms)} | ${f(withFunnel.cpuMsPerTurn)} |`,
    `| off | ${f(without.msPerTurn)} | ${f(without.p99Ms)} | ${f(without.cpuMsPerTurn)} |`,
    '',
    `Alone, what a turn adds at its end (its ${SKILLS + 3} events made and counted in memory, no I/O): ` +
      `${(recordNs / 1000).toFixed(2)} µs (median of 3 × 100,000).`,
    '',
    `The flushes of a round of ${TURNS} turns (every 10 s, and one at its end) added its ${TURNS * (SKILLS + 3)} ` +
      `counts (checked) to ${flushedRows} rows; the last one took ${f(flushMs)} ms (median), off the turn path.`,
  ].join('\n');
  recordResults('skill-usage', { rounds: ROUNDS, turns: TURNS, skills: SKILLS, recordNs, on, off }, text, summary);
}

await main();
