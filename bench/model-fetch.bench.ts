/**
 * Model-call client benchmark: what one provider call costs the server's CPU with the `fetch` the providers get
 * (src/infra/llm/model-fetch.ts: undici's `request` on an EnvHttpProxyAgent), against the hand-written node:http one
 * it replaced (bench/baselines/node-http-fetch.ts) and Node's global `fetch`, in the same run. The model is a child
 * process answering an OpenAI-shaped JSON completion (about 1 kB) and an event stream (24 events); a second child
 * is an HTTP proxy (the `proxy` package), through which the new client is measured once more.
 *
 * CPU is this process's user + system time over the calls (`process.cpuUsage`), so it is the client's alone. The
 * clients alternate, ROUNDS rounds each, and the medians are shown.
 *
 *   npm run bench:model-fetch      (writes bench/results/model-fetch.{md,json})
 */
import { modelDispatcher, modelFetch } from '../src/infra/llm/model-fetch.js';
import { nodeFetch } from './baselines/node-http-fetch.js';
import { machineName, recordResults, type SummaryLine, startChild } from './bench-support.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONCURRENCY = [1, 16];

type Fetch = (input: string, init: RequestInit) => Promise<Response>;

const MODEL_SERVER =
  `
const http = require('node:http');
const json = JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model: 'm',
  choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'x'.repeat(800) } }],
  usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 } });
const events = Array.from({ length: 24 }, (_, i) => 'data: ' + JSON.stringify({ id: 'c', object: ` +
  `'chat.completion.chunk',
  created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'word' + i + ' ' } }] }) + '\\n\\n').join('') +
  'data: [DONE]\\n\\n';
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    if (req.url.endsWith('/stream')) res.writeHead(200, { 'content-type': 'text/event-stream' }).end(events);
    else res.writeHead(200, { 'content-type': 'application/json' }).end(json);
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log('READY ' + server.address().port));
`;

const PROXY_SERVER = `
import { createServer } from 'node:http';
import { createProxy } from 'proxy';
const server = createProxy(createServer());
server.listen(0, '127.0.0.1', () => console.log('READY ' + server.address().port));
`;

const BODY = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'Hello there.' }], stream: false });

async function call(fetch: Fetch, url: string): Promise<void> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY });
  await response.text();
}

/** CPU µs per call and calls per second, `CALLS` calls at `concurrency` at once. */
async function measure(fetch: Fetch, url: string, concurrency: number): Promise<{ cpuUs: number; perSecond: number }> {
  let next = 0;
  const worker = async () => {
    while (next++ < CALLS) await call(fetch, url);
  };
  const cpu = process.cpuUsage();
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  return { cpuUs: (used.user + used.system) / CALLS, perSecond: CALLS / seconds };
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main(): Promise<void> {
  const model = await startChild('-e', [MODEL_SERVER]);
  const proxy = await startChild('--input-type=module', ['-e', PROXY_SERVER]);
  const direct = modelDispatcher({ http: '', https: '', noProxy: '' });
  const proxied = modelDispatcher({ http: `http://127.0.0.1:${proxy.port}`, https: '', noProxy: '' });
  const clients: [string, Fetch][] = [
    ['node:http (the baseline, replaced)', nodeFetch],
    ['undici request (model-fetch.ts)', modelFetch(direct)],
    ['global fetch (Node 20)', (input, init) => globalThis.fetch(input, init)],
    ['undici request through the proxy', modelFetch(proxied)],
  ];
  const base = `http://127.0.0.1:${model.port}/v1/chat/completions`;
  const rows: Row[] = [];
  try {
    for (const kind of ['json', 'stream']) {
      const url = kind === 'json' ? base : `${base}/stream`;
      for (const concurrency of CONCURRENCY) {
        const runs = new Map<string, { cpuUs: number; perSecond: number }[]>();
        for (const [, fetch] of clients) await measure(fetch, url, concurrency); // warm-up
        for (let round = 0; round < ROUNDS; round++)
          for (const [name, fetch] of clients)
            runs.set(name, [...(runs.get(name) ?? []), await measure(fetch, url, concurrency)]);
        for (const [name, results] of runs)
          rows.push({
            client: name,
            kind,
            concurrency,
            cpuUs: median(results.map((r) => r.cpuUs)),
            perSecond: median(results.map((r) => r.perSecond)),
          });
      }
    }
  } finally {
    await direct.destroy();
    await proxied.destroy();
    model.child.kill();
    proxy.child.kill();
  }
  recordResults('model-fetch', { calls: CALLS, rounds: ROUNDS, rows }, report(rows), summaryOf(rows));
}

type Row = { client: string; kind: string; concurrency: number; cpuUs: number; perSecond: number };

/** The client the app uses against node:http's, CPU per call, for each answer kind and connection count. */
function summaryOf(rows: Row[]): SummaryLine[] {
  const find = (kind: string, concurrency: number, client: string) =>
    rows.find((r) => r.kind === kind && r.concurrency === concurrency && r.client.startsWith(client))!;
  return rows
    .filter((r) => r.client.startsWith('undici request ('))
    .map((r) => ({
      measure:
        `undici request, ${r.kind} answer, ${r.concurrency} ` +
        `connection${r.concurrency === 1 ? '' : 's'}: CPU per call`,
      value: r.cpuUs,
      unit: 'µs',
      baseline: { name: 'node:http client', value: find(r.kind, r.concurrency, 'node:http').cpuUs },
    }));
}

function report(rows: Row[]) {
  const baseline = (kind: string, concurrency: number) =>
    rows.find((r) => r.kind === kind && r.concurrency === concurrency && r.client.startsWith('node:http'))!;
  const lines = rows.map((r) => {
    const b = baseline(r.kind, r.concurrency);
    return (
      `| ${r.kind} | ${r.concurrency} | ${r.client} | ${r.cpuUs.toFixed(0)} | ${(r.cpuUs / b.cpuUs).toFixed(2)} | ` +
      `${r.perSecond.toFixed(0)} |`
    );
  });
  const ours = (kind: string) =>
    rows.find((r) => r.kind === kind && r.concurrency === 1 && r.client.startsWith('undici request ('))!;
  const verdict = ['json', 'stream'].map((kind) => {
    const ratio = ours(kind).cpuUs / baseline(kind, 1).cpuUs;
    return `- ${kind}: the new client costs ${ratio.toFixed(2)}× the baseline's CPU per call at 1 connection.`;
  });
  return [
    '# Model-call client',
    '',
    `Recorded ${new Date().toISOString()} on ${machineName()}; \`npm run bench:model-fetch\`.`,
    `${CALLS} calls per run, ${ROUNDS} rounds, the clients interleaved; medians. CPU is the client process's ` +
      'user + system time per call; the model server and the proxy are other processes on this machine.',
    '',
    '| answer | connections | client | CPU µs per call | × baseline | calls/s |',
    '| --- | ---: | --- | ---: | ---: | ---: |',
    ...lines,
    '',
    '## Verdict',
    '',
    ...verdict,
    '',
  ].join('\n');
}

await main();
