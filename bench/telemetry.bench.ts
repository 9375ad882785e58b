/**
 * What OpenTelemetry costs a turn: two servers on one database and one scripted model, the same in all but
 * `[app.telemetry]`: one off (the default), one exporting traces and metrics to a local OTLP/HTTP receiver. The same
 * chat turns (`POST /v1/chats/:id/messages`) go to each, one connection, one at a time, in rounds that alternate the
 * servers: a plain turn (one model call) and a turn where the model activates a skill (two model calls, a tool call).
 * App CPU per turn is read from /proc.
 *
 *   npm run bench:telemetry          (writes bench/results/telemetry.{md,json})
 */
import { writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SkillTool } from '@skillhost/core';
import type { ToolExecution } from '@skillhost/ai-sdk';
import { annotateTurn, traceToolCall, traceTurn } from '../src/domain/chats/turn-telemetry.js';
import { OtlpReceiver } from '../test/support/otlp-receiver.js';
import {
  cpuSeconds,
  createBenchKey,
  databaseUrl,
  machineName,
  percentile,
  recordResults,
  scriptedTurnsConfig,
  serveApp,
  startChild,
  type SummaryLine,
  postJson,
  serveSkillTurnModel,
} from './bench-support.js';

const SELF = join(import.meta.dirname, 'telemetry.bench.js');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const PER_ROUND = Number(process.env.BENCH_REQUESTS ?? 100);

interface Server {
  name: 'off' | 'on';
  url: string;
  pid: number | undefined;
  chatId: string;
}

interface Measured {
  telemetry: 'off' | 'on';
  turn: string;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  appCpuMsPerTurn: number;
}

/**
 * Telemetry off, in this process (no SDK registered): what the turn path's API calls cost, a turn span with two tool
 * call spans and their counters, against the same callbacks called bare; µs per turn.
 */
async function offPathCost(): Promise<{ bareUs: number; tracedUs: number }> {
  const execution = {
    card: { id: 'c', tool: 'skills.activate', status: 'ok', summary: { skill: 'pdf', truncated: false } },
    activated: 'pdf',
    version: 'sha256:0',
  } as unknown as ToolExecution;
  const tool = { name: 'skills.activate' } as SkillTool;
  const pins = new Map<string, string>();
  const answer = { assistantMessage: { model: 'scripted' } };
  const bare = async () => {
    await (async () => execution)();
    await (async () => execution)();
    return answer;
  };
  const traced = () =>
    traceTurn({ chatId: 'c', door: 'chat' }, undefined, async () => {
      annotateTurn('scripted', 'skillhost', 'openai-compatible');
      await traceToolCall(tool, pins, async () => execution);
      await traceToolCall(tool, pins, async () => execution);
      return answer;
    });
  const timeOf = async (turn: () => Promise<unknown>) => {
    for (let i = 0; i < 20_000; i++) await turn();
    const started = performance.now();
    for (let i = 0; i < 200_000; i++) await turn();
    return ((performance.now() - started) / 200_000) * 1000;
  };
  const runs = { bare: [] as number[], traced: [] as number[] };
  for (let round = 0; round < 3; round++) {
    runs.bare.push(await timeOf(bare));
    runs.traced.push(await timeOf(traced));
  }
  return { bareUs: percentile(runs.bare, 50), tracedUs: percentile(runs.traced, 50) };
}

const TURNS = [
  { name: 'a plain turn (1 model call)', content: (i: number) => `Question ${i}` },
  { name: 'the model activates a skill (2 model calls, 1 tool call)', content: (i: number) => `Commit ${i} [skill]` },
];

async function main(): Promise<void> {
  const db = await databaseUrl();
  const receiver = await new OtlpReceiver().start();
  const model = await startChild(SELF, ['serve-model']);
  const modelUrl = `http://127.0.0.1:${model.port}/v1`;
  const configOf = (name: string, sections: string[]) => {
    const file = join(tmpdir(), `skillhost-bench-telemetry-${name}.toml`);
    writeFileSync(file, scriptedTurnsConfig(db.url, modelUrl, { sections }));
    return file;
  };
  const off = await startChild(SELF, ['serve-app'], { SKILLHOST_CONFIG: configOf('off', []), DATABASE_URL: db.url });
  const on = await startChild(SELF, ['serve-app'], {
    SKILLHOST_CONFIG: configOf('on', ['[app.telemetry]', `endpoint = "${receiver.url}"`, 'metrics_interval_ms = 5000']),
    DATABASE_URL: db.url,
  });
  const key = { authorization: `Bearer ${await createBenchKey(db.url)}` };
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const servers: Server[] = [];
    for (const [name, child] of [
      ['off', off],
      ['on', on],
    ] as const) {
      const url = `http://127.0.0.1:${child.port}`;
      const chat = (await (
        await fetch(`${url}/v1/chats`, {
          method: 'POST',
          headers: { ...key, 'content-type': 'application/json' },
          body: '{}',
        })
      ).json()) as { id: string };
      servers.push({ name, url, pid: child.child.pid, chatId: chat.id });
    }
    const turnOn = (server: Server, content: string) =>
      postJson(agent, `${server.url}/v1/chats/${server.chatId}/messages`, JSON.stringify({ content }), key);
    for (const server of servers)
      for (const turn of TURNS) for (let i = 0; i < 30; i++) await turnOn(server, turn.content(i));
    const label = (server: Server, turn: (typeof TURNS)[number]) => `${server.name} ${turn.name}`;
    const times = new Map<string, number[]>();
    const cpu = new Map<string, number>();
    let sent = 1000;
    for (let round = 0; round < ROUNDS; round++)
      // Alternate which server goes first: the machine's speed drifts.
      for (const server of round % 2 === 0 ? servers : [...servers].reverse())
        for (const turn of TURNS) {
          const samples = times.get(label(server, turn)) ?? [];
          const before = cpuSeconds(server.pid);
          for (let i = 0; i < PER_ROUND; i++) samples.push(await turnOn(server, turn.content(sent++)));
          cpu.set(label(server, turn), (cpu.get(label(server, turn)) ?? 0) + cpuSeconds(server.pid) - before);
          times.set(label(server, turn), samples);
        }
    const measured: Measured[] = servers.flatMap((server) =>
      TURNS.map((turn) => {
        const samples = times.get(label(server, turn))!;
        return {
          telemetry: server.name,
          turn: turn.name,
          requests: samples.length,
          p50Ms: percentile(samples, 50),
          p99Ms: percentile(samples, 99),
          appCpuMsPerTurn: (cpu.get(label(server, turn))! * 1000) / samples.length,
        };
      }),
    );
    // The "on" server's spans reach the receiver in batches; its last ones when it closes.
    on.child.kill('SIGTERM');
    await new Promise((done) => on.child.once('exit', done));
    const names = new Map<string, number>();
    for (const span of receiver.spans) names.set(span.name, (names.get(span.name) ?? 0) + 1);
    const exported = {
      spans: receiver.spans.length,
      requests: receiver.requests.length,
      byName: Object.fromEntries([...names].sort((a, b) => b[1] - a[1])),
    };
    const offPath = await offPathCost();
    const result = {
      recordedAt: new Date().toISOString(),
      machine: machineName(),
      rounds: ROUNDS,
      measured,
      exported,
      offPath,
    };
    recordResults('telemetry', result, report(result), summaryOf(measured, offPath));
  } finally {
    agent.destroy();
    for (const child of [off.child, on.child, model.child]) if (child.exitCode === null) child.kill('SIGTERM');
    await new Promise((done) => (off.child.exitCode === null ? off.child.once('exit', done) : done(undefined)));
    await receiver.stop();
    await db.stop();
  }
}

function summaryOf(measured: Measured[], offPath: { bareUs: number; tracedUs: number }): SummaryLine[] {
  const find = (telemetry: 'off' | 'on', index: number) =>
    measured.find((m) => m.telemetry === telemetry && m.turn === TURNS[index].name)!;
  const offLine: SummaryLine = {
    measure: "telemetry off: the turn path's API calls (a turn, 2 tool calls), per turn",
    value: offPath.tracedUs,
    unit: 'µs',
    baseline: { name: 'the same callbacks bare', value: offPath.bareUs },
  };
  const onLines = TURNS.flatMap((turn, index) => {
    const [off, on] = [find('off', index), find('on', index)];
    return [
      {
        measure: `telemetry on, ${turn.name}, p50`,
        value: on.p50Ms,
        unit: 'ms',
        baseline: { name: 'telemetry off, p50', value: off.p50Ms },
      },
      {
        measure: `telemetry on, ${turn.name}, app CPU per turn`,
        value: on.appCpuMsPerTurn,
        unit: 'ms',
        baseline: { name: 'telemetry off', value: off.appCpuMsPerTurn },
      },
    ];
  });
  return [...onLines, offLine];
}

function report(result: {
  recordedAt: string;
  machine: string;
  rounds: number;
  measured: Measured[];
  exported: { spans: number; requests: number; byName: Record<string, number> };
  offPath: { bareUs: number; tracedUs: number };
}): string {
  const rows = result.measured.map(
    (m) =>
      `| ${m.turn} | ${m.telemetry} | ${m.requests} | ${m.p50Ms.toFixed(2)} | ${m.p99Ms.toFixed(2)} | ` +
      `${m.appCpuMsPerTurn.toFixed(2)} |`,
  );
  return [
    '# Telemetry benchmark',
    '',
    `Recorded ${result.recordedAt} on ${result.machine}; \`npm run bench:telemetry\`.`,
    '',
    'Two servers on one database and one scripted model (which answers at once), the same but for ' +
      '`[app.telemetry]`: off (no endpoint, the default), and on, exporting traces and metrics (every 5 s) over ' +
      'OTLP/HTTP to a receiver on 127.0.0.1. The same chat turns (`POST /v1/chats/:id/messages`, an API key) to ' +
      'each, ' +
      `one connection, one turn at a time, ${result.rounds} rounds alternating the servers. App CPU: the server ` +
      'process per turn, from /proc, exports included.',
    '',
    '| turn | telemetry | turns | p50 ms | p99 ms | app CPU ms / turn |',
    '| --- | --- | ---: | ---: | ---: | ---: |',
    ...rows,
    '',
    `The "on" server exported ${result.exported.spans} spans in ${result.exported.requests} OTLP requests ` +
      '(traces and metrics) over the run, warm-up included: ' +
      `${Object.entries(result.exported.byName)
        .map(([name, count]) => `${count} \`${name}\``)
        .join(', ')}.`,
    '',
    "Off, in the bench's own process (no SDK registered): a turn span with two tool call spans and their counters, " +
      `the API's no-op calls, take ${result.offPath.tracedUs.toFixed(2)} µs per turn against ` +
      `${result.offPath.bareUs.toFixed(2)} µs for the same callbacks bare (median of 3 runs of 200,000).`,
    '',
  ].join('\n');
}

if (process.argv[2] === 'serve-app') void serveApp();
else if (process.argv[2] === 'serve-model') void serveSkillTurnModel();
else await main();
