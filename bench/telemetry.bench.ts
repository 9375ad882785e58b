/**
 * What OpenTelemetry costs a turn: four servers on one database and one scripted model, the same in all but
 * `[app.telemetry]`: off (the default), on (exporting traces and metrics to a local OTLP/HTTP receiver), off again, and
 * all off (the usage funnel off too: "on" against it is what telemetry and the funnel cost together), started in that
 * order. The same chat turns (`POST /v1/chats/:id/messages`) go to each, one connection, one at a time,
 * turn by turn in fours whose order rotates: a plain turn (one model call) and a turn where the model activates a
 * skill (two model calls, a tool call). Fours, not blocks of turns: whatever else the machine runs slows the turns of
 * a four alike. Two servers that differ in nothing differ all the same on a shared machine (where each was started,
 * which core it runs on): the second off server measures that in the same run, and "on" is compared with the mean of
 * the two off servers started before and after it. App CPU per turn is read from /proc.
 *
 *   npm run bench:telemetry          (writes bench/results/telemetry.{md,json})
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SkillTool } from '@skillhost/core';
import type { ToolExecution } from '@skillhost/ai-sdk';
import { annotateTurn, traceToolCall, traceTurn } from '../src/domain/chats/turn-telemetry.js';
import { OtlpReceiver } from '../test/support/otlp-receiver.js';
import {
  CLOCK_TICKS,
  cpuSeconds,
  createBenchKey,
  databaseUrl,
  machineCpu,
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
/** Turns of each kind to each server. */
const ROUNDS = Number(process.env.BENCH_REQUESTS ?? 600);

type ServerName = 'off' | 'on' | 'off again' | 'all off';
/** `all off`: telemetry off and the usage funnel off too (the others count the funnel, its default). */
const SERVER_NAMES: readonly ServerName[] = ['off', 'on', 'off again', 'all off'];

interface Server {
  name: ServerName;
  url: string;
  pid: number | undefined;
  chatId: string;
}

interface Measured {
  telemetry: ServerName;
  turn: string;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  appCpuMsPerTurn: number;
}

/** A median over the rounds, and a 95% confidence interval of it. */
interface Median {
  medianMs: number;
  lowMs: number;
  highMs: number;
}

/** One kind of turn, round by round (each server's turn of a round met the same machine). */
interface Paired {
  turn: string;
  rounds: number;
  /** on − the mean of the two off servers': telemetry's own latency. */
  telemetry: Median;
  /** The second off server − the first: what two servers that differ in nothing differ by on this machine. */
  control: Median;
  /** on (telemetry and the usage funnel) − all off (neither): what both cost the turn path together. */
  both: Median;
}

/** What else the machine did meanwhile: the share of both cores busy, and this run's own processes' share of it. */
interface MachineLoad {
  loadAverageBefore: number;
  busyShare: number;
  ownShare: number;
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
  const versions = { pinned: () => undefined, current: () => 'sha256:0' };
  const answer = { assistantMessage: { model: 'scripted' } };
  const bare = async () => {
    await (async () => execution)();
    await (async () => execution)();
    return answer;
  };
  const traced = () =>
    traceTurn({ chatId: 'c', door: 'chat' }, undefined, async () => {
      annotateTurn('scripted', 'skillhost', 'openai-compatible');
      await traceToolCall(tool, versions, async () => execution);
      await traceToolCall(tool, versions, async () => execution);
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

/**
 * The median of `values` and a 95% confidence interval of it: the order statistics n/2 ± 0.98·√n (the sign test's, no
 * assumption about the distribution).
 */
function medianWithInterval(values: number[]): Median {
  const sorted = [...values].sort((a, b) => a - b);
  const k = Math.max(0, Math.floor(sorted.length / 2 - 0.98 * Math.sqrt(sorted.length)));
  return { medianMs: percentile(values, 50), lowMs: sorted[k], highMs: sorted[sorted.length - 1 - k] };
}

/** CPU seconds used so far by the run's own processes: the servers, the model and this one. */
function ownCpuSeconds(servers: Server[], model: { child: { pid?: number } }): number {
  const children = [...servers.map((server) => server.pid), model.child.pid].map(cpuSeconds);
  const self = process.cpuUsage();
  return children.reduce((total, seconds) => total + seconds, 0) + (self.user + self.system) / 1e6;
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
  const children: { name: ServerName; child: Awaited<ReturnType<typeof startChild>> }[] = [];
  const telemetryOn = ['[app.telemetry]', `endpoint = "${receiver.url}"`, 'metrics_interval_ms = 5000'];
  for (const name of SERVER_NAMES) {
    const sections = name === 'on' ? telemetryOn : name === 'all off' ? ['[app.skills.usage]', 'enabled = false'] : [];
    const config = configOf(name.replace(' ', '-'), sections);
    children.push({
      name,
      child: await startChild(SELF, ['serve-app'], { SKILLHOST_CONFIG: config, DATABASE_URL: db.url }),
    });
  }
  const on = children.find((c) => c.name === 'on')!.child;
  const key = { authorization: `Bearer ${await createBenchKey(db.url)}` };
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const servers: Server[] = [];
    for (const { name, child } of children) {
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
    const measuredAt = { machine: machineCpu(), loadAverage: loadavg()[0], own: ownCpuSeconds(servers, model) };
    let sent = 1000;
    const measured: Measured[] = [];
    const paired: Paired[] = [];
    for (const turn of TURNS) {
      const times: Record<ServerName, number[]> = { off: [], on: [], 'off again': [], 'all off': [] };
      const diffs = { telemetry: [] as number[], control: [] as number[], both: [] as number[] };
      const cpuBefore = servers.map((server) => cpuSeconds(server.pid));
      for (let i = 0; i < ROUNDS; i++) {
        // The order rotates: the first of a round may find the machine warmer or busier than the last.
        for (let k = 0; k < servers.length; k++) {
          const server = servers[(i + k) % servers.length];
          times[server.name].push(await turnOn(server, turn.content(sent++)));
        }
        const [off, on, offAgain, allOff] = SERVER_NAMES.map((name) => times[name][i]);
        diffs.telemetry.push(on - (off + offAgain) / 2);
        diffs.control.push(offAgain - off);
        diffs.both.push(on - allOff);
      }
      for (const [index, server] of servers.entries())
        measured.push({
          telemetry: server.name,
          turn: turn.name,
          requests: ROUNDS,
          p50Ms: percentile(times[server.name], 50),
          p99Ms: percentile(times[server.name], 99),
          appCpuMsPerTurn: ((cpuSeconds(server.pid) - cpuBefore[index]) * 1000) / ROUNDS,
        });
      paired.push({
        turn: turn.name,
        rounds: ROUNDS,
        telemetry: medianWithInterval(diffs.telemetry),
        control: medianWithInterval(diffs.control),
        both: medianWithInterval(diffs.both),
      });
    }
    const machineNow = machineCpu();
    const elapsed = machineNow.total - measuredAt.machine.total;
    const load: MachineLoad = {
      loadAverageBefore: measuredAt.loadAverage,
      busyShare: (machineNow.busy - measuredAt.machine.busy) / elapsed,
      // /proc/stat's first line sums every core's ticks, and a process's CPU seconds sum its threads' on any core:
      // the two are in the same unit, so this is a share of the whole machine (not of one core).
      ownShare: (ownCpuSeconds(servers, model) - measuredAt.own) / (elapsed / CLOCK_TICKS),
    };
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
      measured,
      paired,
      load,
      exported,
      offPath,
    };
    recordResults('telemetry', result, report(result), summaryOf(measured, paired, offPath));
  } finally {
    agent.destroy();
    const all = [...children.map((c) => c.child.child), model.child];
    for (const child of all) if (child.exitCode === null) child.kill('SIGTERM');
    await Promise.all(
      all.map((child) => new Promise((done) => (child.exitCode === null ? child.once('exit', done) : done(undefined)))),
    );
    await receiver.stop();
    await db.stop();
  }
}

function summaryOf(
  measured: Measured[],
  paired: Paired[],
  offPath: { bareUs: number; tracedUs: number },
): SummaryLine[] {
  const find = (telemetry: ServerName, index: number) =>
    measured.find((m) => m.telemetry === telemetry && m.turn === TURNS[index].name)!;
  const offLine: SummaryLine = {
    measure: "telemetry off: the turn path's API calls (a turn, 2 tool calls), per turn",
    value: offPath.tracedUs,
    unit: 'µs',
    baseline: { name: 'the same callbacks bare', value: offPath.bareUs },
  };
  const onLines = TURNS.flatMap((turn, index): SummaryLine[] => {
    const [off, on] = [find('off', index), find('on', index)];
    return [
      {
        measure: `telemetry on, ${turn.name}, p50`,
        value: on.p50Ms,
        unit: 'ms',
        baseline: { name: 'telemetry off, p50', value: off.p50Ms },
      },
      {
        measure: `telemetry on − the two off servers' mean, ${turn.name}, median of the rounds`,
        value: paired[index].telemetry.medianMs,
        unit: 'ms',
      },
      {
        measure: `the yardstick: the second off server − the first, ${turn.name}, median of the rounds`,
        value: paired[index].control.medianMs,
        unit: 'ms',
      },
      {
        measure: `telemetry and the usage funnel on − both off, ${turn.name}, median of the rounds`,
        value: paired[index].both.medianMs,
        unit: 'ms',
      },
      {
        measure: `telemetry on, ${turn.name}, app CPU per turn`,
        value: on.appCpuMsPerTurn,
        unit: 'ms',
        baseline: { name: 'telemetry off', value: off.appCpuMsPerTurn },
      },
      {
        measure: `telemetry and the usage funnel on, ${turn.name}, app CPU per turn`,
        value: on.appCpuMsPerTurn,
        unit: 'ms',
        baseline: { name: 'both off', value: find('all off', index).appCpuMsPerTurn },
      },
    ];
  });
  return [...onLines, offLine];
}

const RESULTS_FILE = join(import.meta.dirname, '..', '..', 'bench', 'results', 'telemetry.md');
const KEPT_HEADING = '## Before and after';

/** The hand-written section of the last results (how the figures came to be what they are), carried into the next. */
function keptSection(): string {
  let text: string;
  try {
    text = readFileSync(RESULTS_FILE, 'utf8');
  } catch {
    return '';
  }
  const start = text.indexOf(`\n${KEPT_HEADING}`);
  if (start < 0) return '';
  const end = text.indexOf('\n## Summary', start + 1);
  return text.slice(start + 1, end < 0 ? undefined : end).trimEnd();
}

function report(result: {
  recordedAt: string;
  machine: string;
  measured: Measured[];
  paired: Paired[];
  load: MachineLoad;
  exported: { spans: number; requests: number; byName: Record<string, number> };
  offPath: { bareUs: number; tracedUs: number };
}): string {
  const rows = result.measured.map(
    (m) =>
      `| ${m.turn} | ${m.telemetry} | ${m.requests} | ${m.p50Ms.toFixed(2)} | ${m.p99Ms.toFixed(2)} | ` +
      `${m.appCpuMsPerTurn.toFixed(2)} |`,
  );
  const interval = (m: Median) => `${m.medianMs.toFixed(2)} (${m.lowMs.toFixed(2)} to ${m.highMs.toFixed(2)})`;
  const pairRows = result.paired.map(
    (p) => `| ${p.turn} | ${p.rounds} | ${interval(p.telemetry)} | ${interval(p.control)} | ${interval(p.both)} |`,
  );
  const percent = (share: number) => `${Math.round(share * 100)}%`;
  return [
    '# Telemetry benchmark',
    '',
    `Recorded ${result.recordedAt} on ${result.machine}; \`npm run bench:telemetry\`.`,
    '',
    'Four servers on one database and one scripted model (which answers at once), the same but for ' +
      '`[app.telemetry]`, started in this order: off (no endpoint, the default); on, exporting traces and metrics ' +
      '(every 5 s) over OTLP/HTTP to a receiver on 127.0.0.1; off again; and all off, with the usage funnel ' +
      '(`[app.skills.usage]`, on in the other three, its default) off too. The same chat turns ' +
      '(`POST /v1/chats/:id/messages`, an API key) to each, one connection, one turn at a time, in rounds: a turn to ' +
      'each server, the order rotating from one round to the next. App CPU: the server process per turn, from /proc, ' +
      'exports included.',
    '',
    '| turn | telemetry | turns | p50 ms | p99 ms | app CPU ms / turn |',
    '| --- | --- | ---: | ---: | ---: | ---: |',
    ...rows,
    '',
    "Telemetry's own latency, round by round (the turns of a round meet the same machine): on less the mean of the " +
      'two off servers, started before and after it. Beside it, as a yardstick, what two servers that differ in ' +
      'nothing differ by on this machine in this run. Medians, and their 95% intervals within this run (from one ' +
      'run to the next, on a machine that runs other work, a median moves by more), in ms:',
    '',
    '| turn | rounds | on − the mean of the two off | the second off − the first off | on − all off (telemetry ' +
      'and funnel) |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...pairRows,
    '',
    `While it measured, the machine was busy ${percent(result.load.busyShare)} of the time (both cores), ` +
      `${percent(result.load.ownShare)} by the four servers, the model and the bench (PostgreSQL and anything else ` +
      `running make the rest); the load average was ${result.load.loadAverageBefore.toFixed(2)} when it began.`,
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
    keptSection(),
    '',
  ].join('\n');
}

if (process.argv[2] === 'serve-app') void serveApp();
else if (process.argv[2] === 'serve-model') void serveSkillTurnModel();
else await main();
