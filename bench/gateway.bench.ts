/**
 * The OpenAI-compatible gateway's own cost: the same chat completion sent straight to the scripted model and through
 * Skillhost's `/openai/v1/chat/completions` (API key, catalogue and skill tools added, the conversation found or
 * opened and stored), one connection, one request at a time, alternating in rounds. Each request's time minus the
 * direct call's median is the gateway's overhead; the app's CPU per request is read from /proc. Shapes: a first
 * message (a new conversation), the same streamed, a conversation going on (history resent, found by its digest), and
 * a turn where the model activates a skill (two model calls, the skill run by Skillhost); and Skillhost's own chat
 * turn (`POST /v1/chats/:id/messages`) for comparison.
 *
 *   npm run bench:gateway          (writes bench/results/gateway.{md,json})
 *   BENCH_APP_NODE_ARGS=--cpu-prof …   the server's own Node flags (a CPU profile of a run).
 */
import { writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

const SELF = join(import.meta.dirname, 'gateway.bench.js');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const PER_ROUND = Number(process.env.BENCH_REQUESTS ?? 100);

interface Shape {
  name: string;
  /** The request's URL and body (`index`: the request's number, so each first message is new). */
  url: string;
  body: (index: number) => string;
  headers?: Record<string, string>;
  /** Whether it goes through Skillhost (its CPU is counted). */
  app: boolean;
}

interface Measured {
  name: string;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  appCpuMsPerRequest: number | null;
}

async function main(): Promise<void> {
  const db = await databaseUrl();
  const model = await startChild(SELF, ['serve-model']);
  const modelUrl = `http://127.0.0.1:${model.port}/v1`;
  const configFile = join(tmpdir(), 'skillhost-bench-gateway.toml');
  writeFileSync(configFile, scriptedTurnsConfig(db.url, modelUrl));
  const nodeArgs = process.env.BENCH_APP_NODE_ARGS ? process.env.BENCH_APP_NODE_ARGS.split(' ') : [];
  const app = await startChild(SELF, ['serve-app'], { SKILLHOST_CONFIG: configFile, DATABASE_URL: db.url }, nodeArgs);
  const appUrl = `http://127.0.0.1:${app.port}`;
  const key = { authorization: `Bearer ${await createBenchKey(db.url)}` };
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const chat = (await (
      await fetch(`${appUrl}/v1/chats`, {
        method: 'POST',
        headers: { ...key, 'content-type': 'application/json' },
        body: '{}',
      })
    ).json()) as { id: string };
    const completion = (messages: unknown[], extra: Record<string, unknown> = {}) =>
      JSON.stringify({ model: 'scripted', messages, ...extra });
    const history = [
      { role: 'user', content: 'Write a commit message for my change.' },
      { role: 'assistant', content: 'Here is your answer.' },
      { role: 'user', content: 'Shorter, please.' },
      { role: 'assistant', content: 'Here is your answer.' },
    ];
    const shapes: Shape[] = [
      {
        name: 'direct to the model (baseline)',
        url: `${modelUrl}/chat/completions`,
        body: (i) => completion([{ role: 'user', content: `Question ${i}` }]),
        app: false,
      },
      {
        name: 'gateway, a first message',
        url: `${appUrl}/openai/v1/chat/completions`,
        body: (i) => completion([{ role: 'user', content: `Question ${i}` }]),
        headers: key,
        app: true,
      },
      {
        name: 'gateway, a first message, streamed',
        url: `${appUrl}/openai/v1/chat/completions`,
        body: (i) => completion([{ role: 'user', content: `Question ${i}` }], { stream: true }),
        headers: key,
        app: true,
      },
      {
        name: 'gateway, a conversation going on (4 messages resent)',
        url: `${appUrl}/openai/v1/chat/completions`,
        body: (i) => completion([...history, { role: 'user', content: `And ${i}?` }]),
        headers: key,
        app: true,
      },
      {
        name: 'gateway, the model activates a skill (2 model calls)',
        url: `${appUrl}/openai/v1/chat/completions`,
        body: (i) => completion([{ role: 'user', content: `Commit message ${i} [skill]` }]),
        headers: key,
        app: true,
      },
      {
        name: "Skillhost's own chat turn (POST /v1/chats/:id/messages)",
        url: `${appUrl}/v1/chats/${chat.id}/messages`,
        body: (i) => JSON.stringify({ content: `Question ${i}` }),
        headers: key,
        app: true,
      },
    ];
    // Warm-up, then rounds that alternate the shapes: this machine's speed drifts between runs.
    for (const shape of shapes)
      for (let i = 0; i < 30; i++) await postJson(agent, shape.url, shape.body(i), shape.headers ?? {});
    const times = new Map<string, number[]>(shapes.map((shape) => [shape.name, []]));
    const cpu = new Map<string, number>(shapes.map((shape) => [shape.name, 0]));
    let sent = 1000;
    for (let round = 0; round < ROUNDS; round++)
      for (const shape of shapes) {
        const before = cpuSeconds(app.child.pid);
        for (let i = 0; i < PER_ROUND; i++)
          times.get(shape.name)!.push(await postJson(agent, shape.url, shape.body(sent++), shape.headers ?? {}));
        cpu.set(shape.name, cpu.get(shape.name)! + cpuSeconds(app.child.pid) - before);
      }
    const measured: Measured[] = shapes.map((shape) => {
      const samples = times.get(shape.name)!;
      return {
        name: shape.name,
        requests: samples.length,
        p50Ms: percentile(samples, 50),
        p99Ms: percentile(samples, 99),
        appCpuMsPerRequest: shape.app ? (cpu.get(shape.name)! * 1000) / samples.length : null,
      };
    });
    const result = { recordedAt: new Date().toISOString(), machine: machineName(), rounds: ROUNDS, measured };
    recordResults('gateway', result, report(result), summaryOf(measured));
  } finally {
    agent.destroy();
    app.child.kill('SIGTERM');
    model.child.kill('SIGTERM');
    await new Promise((done) => app.child.once('exit', done));
    await db.stop();
  }
}

function summaryOf(measured: Measured[]): SummaryLine[] {
  const [direct, first, streamed, going, skill] = measured;
  const baseline = { name: 'the model called directly, p50', value: direct.p50Ms };
  return [
    {
      measure: 'gateway chat completion, a first message, p50 (1 connection)',
      value: first.p50Ms,
      unit: 'ms',
      baseline,
    },
    { measure: 'the same, streamed, p50', value: streamed.p50Ms, unit: 'ms', baseline },
    { measure: 'a conversation going on (history resent), p50', value: going.p50Ms, unit: 'ms', baseline },
    { measure: 'the model activates a skill (2 model calls), p50', value: skill.p50Ms, unit: 'ms', baseline },
    {
      measure: 'gateway, a first message: app CPU per request',
      value: first.appCpuMsPerRequest ?? Number.NaN,
      unit: 'ms',
    },
  ];
}

function report(result: { recordedAt: string; machine: string; rounds: number; measured: Measured[] }): string {
  const direct = result.measured[0].p50Ms;
  const rows = result.measured.map(
    (m) =>
      `| ${m.name} | ${m.requests} | ${m.p50Ms.toFixed(2)} | ${m.p99Ms.toFixed(2)} | ` +
      `${m === result.measured[0] ? '' : (m.p50Ms - direct).toFixed(2)} | ` +
      `${m.appCpuMsPerRequest === null ? '' : m.appCpuMsPerRequest.toFixed(2)} |`,
  );
  return [
    '# Gateway benchmark',
    '',
    `Recorded ${result.recordedAt} on ${result.machine}; \`npm run bench:gateway\`.`,
    '',
    "The same chat completion straight to the scripted model (which answers at once) and through Skillhost's " +
      '`/openai/v1/chat/completions` with an API key, one connection, one request at a time, ' +
      `${result.rounds} rounds alternating the shapes. Over the model: each shape's p50 minus the direct call's ` +
      "(Skillhost's whole cost: the key, the catalogue and tools, the conversation found or opened, the turn " +
      'stored, the answer shaped). App CPU: the server process per request, from /proc.',
    '',
    '| what | requests | p50 ms | p99 ms | over the model, p50 ms | app CPU ms / request |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
    '',
  ].join('\n');
}

if (process.argv[2] === 'serve-app') void serveApp();
else if (process.argv[2] === 'serve-model') void serveSkillTurnModel();
else await main();
