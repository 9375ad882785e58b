/**
 * Worst-request benchmark: how long one hostile request keeps the server from answering anyone
 * else. For each route of the report (and the tool route, a query string, GraphQL and MCP), a
 * normal valid request (the baseline) and the worst requests of test/hardening/worst-request.e2e-spec.ts:
 * 1 MiB of unknown fields (about 116,000), an object as wide as allowed, a body holding as many
 * values as allowed in a declared field, nesting as deep as allowed, a thousand unstorable strings.
 * The server runs in its own process and reports its event loop's longest delay while each
 * request is handled (monitorEventLoopDelay, 1 ms resolution); meanwhile this process asks
 * `GET /health` again and again and records the longest wait for an answer.
 *
 *   npm run bench:worst-request         (writes bench/results/worst-request.{md,json})
 *   BENCH_BEFORE=<folder> npm run bench:worst-request
 *     also runs every request against the build in <folder> (its package.json and dist/, e.g. a
 *     copy of main's before a fix) on the same database, and records both.
 *   BENCH_ONLY=graphql BENCH_RUNS=9 …   only the routes whose name contains "graphql".
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { JSON_LIMITS } from '../src/api/http/pipes/json-body.js';
import { ScriptedModelServer } from '../test/support/scripted-model-server.js';
import {
  benchWorkspace,
  closeWorkspace,
  createBenchKey,
  type LoopDelay,
  loopDelayOf,
  machineName,
  recordResults,
  serveApp,
  startChild,
  type SummaryLine,
} from './bench-support.js';

const SELF = join(import.meta.dirname, 'worst-request.bench.js');
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const BEFORE = process.env.BENCH_BEFORE;
/** Only the routes whose name contains this (a quick look at one; the results file is then partial). */
const ONLY = process.env.BENCH_ONLY;

/**
 * `{"0":0,"1":0,…,"2bi3":0}`: unknown fields with the shortest names, as many as fit in `bytes` (or exactly `count`).
 */
function unknownFields(bytes: number, count = Infinity): string {
  const members: string[] = [];
  let size = 2;
  for (let i = 0; i < count; i++) {
    const member = `"${i.toString(36)}":0`;
    if (size + member.length + 1 > bytes) break;
    members.push(member);
    size += member.length + 1;
  }
  return `{${members.join(',')}}`;
}

/** `{"field": [[0,…],…]}` holding exactly as many values as a body may (the lists at most maxWidth long). */
function manyValues(field: string): string {
  const lists: string[] = [];
  let left = JSON_LIMITS.maxValues - 1;
  while (left > 0) {
    const items = Math.min(JSON_LIMITS.maxWidth, left - 1);
    lists.push(`[${Array(items).fill('0').join(',')}]`);
    left -= items + 1;
  }
  return `{${JSON.stringify(field)}:[${lists.join(',')}]}`;
}

const nested = (field: string) =>
  `{${JSON.stringify(field)}:${'['.repeat(JSON_LIMITS.maxDepth - 1)}${']'.repeat(JSON_LIMITS.maxDepth - 1)}}`;
const unstorable = (field: string) => JSON.stringify({ [field]: Array(1000).fill('\u0000') });
const WIDEST = unknownFields(Infinity, JSON_LIMITS.maxWidth);

interface Case {
  route: string;
  request: string;
  method: string;
  /** `{chat}` stands for the bench chat's id. */
  path: string;
  body?: string;
  accept?: string;
  /** Run this after the request (a valid one that changed something). */
  undo?: { method: string; path: string; body: string };
}

const RUN_TOOL =
  'mutation ($chat: ID!, $args: JSON!) { runSkillTool(chatId: $chat, tool: "skills.activate", arguments: $args) ' +
  '{ toolCard { status } } }';
const graphqlBody = (args: string) =>
  `{"query":${JSON.stringify(RUN_TOOL)},"variables":{"chat":"{chat}","args":${args}}}`;
const mcpBody = (args: string) =>
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"activate_team_skill","arguments":${args}}}`;
const MCP_ACCEPT = 'application/json, text/event-stream';

/** The requests, for bodies of up to `bodyLimit` bytes. */
function cases(bodyLimit: number): Case[] {
  // Room left for what wraps the fields (a GraphQL query, a JSON-RPC envelope).
  const oneMibOfFields = unknownFields(bodyLimit - 1024);
  const rest = (
    route: string,
    method: string,
    path: string,
    field: string,
    valid: string,
    more: Partial<Record<string, string>> = {},
    undo?: Case['undo'],
  ): Case[] => [
    { route, request: 'valid (baseline)', method, path, body: valid, undo },
    ...Object.entries({
      '1 MiB of unknown fields': oneMibOfFields,
      [`${JSON_LIMITS.maxWidth} unknown fields (the width limit)`]: WIDEST,
      [`${JSON_LIMITS.maxValues} values in \`${field}\` (the values limit)`]: manyValues(field),
      [`\`${field}\` nested ${JSON_LIMITS.maxDepth} deep (the depth limit)`]: nested(field),
      [`1000 strings with NUL in \`${field}\``]: unstorable(field),
      ...more,
    }).map(([request, body]) => ({ route, request, method, path, body, undo })),
  ];
  const names = Array.from({ length: 200 }, (_, i) => `${'s'.repeat(60)}-${String(i).padStart(3, '0')}`);
  const longQuery = Array.from({ length: 15 * 128 }, (_, i) => `u${String(i).padStart(4, '0')}=1`).join('&');
  return [
    ...rest('POST /v1/chats', 'POST', '/v1/chats', 'title', '{"title":"bench"}'),
    ...rest('POST /v1/me/keys', 'POST', '/v1/me/keys', 'label', '{"label":"bench"}'),
    ...rest(
      'POST /v1/chats/:id/messages',
      'POST',
      '/v1/chats/{chat}/messages',
      'content',
      '{"content":"Write a commit message."}',
      {
        'a 100,000-character message (accepted)': JSON.stringify({ content: 'word '.repeat(20_000) }),
      },
    ),
    ...rest(
      'PUT /v1/me/skills',
      'PUT',
      '/v1/me/skills',
      'include',
      '{"include":["pdf"]}',
      { '200 names of 64 characters (accepted)': JSON.stringify({ include: names }) },
      { method: 'PUT', path: '/v1/me/skills', body: '{}' },
    ),
    ...rest(
      'POST /v1/chats/:id/tools/skills.activate',
      'POST',
      '/v1/chats/{chat}/tools/skills.activate',
      'name',
      '{"name":"pdf"}',
    ),
    { route: 'GET /v1/chats', request: 'valid (baseline)', method: 'GET', path: '/v1/chats' },
    {
      route: 'GET /v1/chats',
      request: '15 KiB of unknown query parameters',
      method: 'GET',
      path: `/v1/chats?${longQuery}`,
    },
    {
      route: 'POST /graphql runSkillTool',
      request: 'valid (baseline)',
      method: 'POST',
      path: '/graphql',
      body: graphqlBody('{"name":"pdf"}'),
    },
    {
      route: 'POST /graphql runSkillTool',
      request: '1 MiB of unknown fields in the variables',
      method: 'POST',
      path: '/graphql',
      body: graphqlBody(oneMibOfFields),
    },
    {
      route: 'POST /graphql runSkillTool',
      request: `${JSON_LIMITS.maxWidth} unknown arguments`,
      method: 'POST',
      path: '/graphql',
      body: graphqlBody(WIDEST),
    },
    {
      route: 'POST /mcp tools/call',
      request: 'valid (baseline)',
      method: 'POST',
      path: '/mcp',
      body: mcpBody('{"name":"pdf"}'),
      accept: MCP_ACCEPT,
    },
    {
      route: 'POST /mcp tools/call',
      request: '1 MiB of unknown arguments',
      method: 'POST',
      path: '/mcp',
      body: mcpBody(oneMibOfFields),
      accept: MCP_ACCEPT,
    },
    {
      route: 'POST /mcp tools/call',
      request: `${JSON_LIMITS.maxWidth} unknown arguments`,
      method: 'POST',
      path: '/mcp',
      body: mcpBody(WIDEST),
      accept: MCP_ACCEPT,
    },
  ];
}

interface Sample {
  status: number;
  answerBytes: number;
  requestMs: number;
  loop: LoopDelay;
  probes: number;
  longestProbeMs: number;
}

interface Server {
  child: Awaited<ReturnType<typeof startChild>>['child'];
  base: string;
  headers: Record<string, string>;
  chat: string;
}

/** One request while `GET /health` is asked back to back; the server's longest event-loop delay meanwhile. */
async function measure(server: Server, c: Case): Promise<Sample> {
  const path = c.path.replace('{chat}', server.chat);
  const body = c.body?.replace('{chat}', server.chat);
  await loopDelayOf(server.child);
  let outstanding = true;
  const probeMs: number[] = [];
  const probing = (async () => {
    do {
      const started = performance.now();
      await (await fetch(`${server.base}/health`)).arrayBuffer();
      probeMs.push(performance.now() - started);
    } while (outstanding);
  })();
  const started = performance.now();
  const headers = {
    ...server.headers,
    accept: c.accept ?? 'application/json',
    ...(body === undefined ? {} : { 'content-type': 'application/json' }),
  };
  const response = await fetch(`${server.base}${path}`, { method: c.method, headers, body });
  const answer = await response.arrayBuffer();
  const requestMs = performance.now() - started;
  outstanding = false;
  await probing;
  const loop = await loopDelayOf(server.child);
  if (c.undo !== undefined)
    await fetch(`${server.base}${c.undo.path}`, {
      method: c.undo.method,
      headers: { ...server.headers, 'content-type': 'application/json' },
      body: c.undo.body,
    });
  return {
    status: response.status,
    answerBytes: answer.byteLength,
    requestMs,
    loop,
    probes: probeMs.length,
    longestProbeMs: Math.max(...probeMs),
  };
}

/** The median run by the server's longest block (the middle of RUNS). */
function medianRun(samples: Sample[]): Sample {
  return [...samples].sort((a, b) => a.loop.max - b.loop.max)[Math.floor(samples.length / 2)];
}

/** The app of `build` (this build when undefined) in its own process, on the bench database. */
async function startServer(
  build: string | undefined,
  configFile: string,
  dbUrl: string,
): Promise<Pick<Server, 'child' | 'base'>> {
  const args =
    build === undefined ? ['serve-app'] : ['serve-app', pathToFileURL(join(resolve(build), 'dist', 'src', '/')).href];
  const { child, port } = await startChild(SELF, args, { SKILLHOST_CONFIG: configFile, DATABASE_URL: dbUrl });
  return { child, base: `http://127.0.0.1:${port}` };
}

/** The member's key on every request, and a chat of theirs for the chat routes. */
async function asMember(server: Pick<Server, 'child' | 'base'>, key: string): Promise<Server> {
  const headers = { authorization: `Bearer ${key}` };
  const created = await fetch(`${server.base}/v1/chats`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: '{"title":"bench"}',
  });
  return { ...server, headers, chat: ((await created.json()) as { id: string }).id };
}

async function stop(server: Pick<Server, 'child'>): Promise<void> {
  server.child.kill('SIGTERM');
  await new Promise((done) => server.child.once('exit', done));
}

async function runAll(server: Server, list: Case[]): Promise<Sample[]> {
  // Warm-up: every valid request once, so the first measured one does not pay for compiling.
  for (const c of list.filter((item) => item.request.startsWith('valid'))) await measure(server, c);
  const results: Sample[] = [];
  for (const c of list) {
    const samples: Sample[] = [];
    for (let run = 0; run < RUNS; run++) samples.push(await measure(server, c));
    results.push(medianRun(samples));
    process.stderr.write(`${c.route} · ${c.request}: ${medianRun(samples).loop.max} ms\n`);
  }
  return results;
}

async function main(): Promise<void> {
  const model = await new ScriptedModelServer().start();
  model.answerWith(() => {
    model.requests.length = 0;
    return { text: 'Fix the thing.' };
  });
  const writeSkills = (dir: string) => {
    mkdirSync(join(dir, 'pdf', 'references'), { recursive: true });
    writeFileSync(
      join(dir, 'pdf', 'SKILL.md'),
      '---\nname: pdf\ndescription: Works with PDF files. Use for PDFs.\n---\n\n# PDF\n\nSee references/forms.md.\n',
    );
    writeFileSync(join(dir, 'pdf', 'references', 'forms.md'), 'FORMS\n');
  };
  const { work, db, configFile } = await benchWorkspace('skillhost-bench-worst-', writeSkills, {
    auth: { mode: 'api_key' },
    limits: { requests_per_minute: 1_000_000, turns_per_minute: 1_000_000 },
    models: { scripted: { provider: 'openai-compatible', base_url: model.url, model: 'scripted-1', max_retries: 0 } },
  });
  const loadBefore = loadavg();
  // Imported here, not at the top: the child that serves another build must not load this build's app too.
  const { BODY_LIMIT_BYTES } = await import('../src/app/app.factory.js');
  const list = cases(BODY_LIMIT_BYTES).filter((c) => ONLY === undefined || c.route.includes(ONLY));
  // The first start creates the tables the key goes in.
  let server = await startServer(undefined, configFile, db.url);
  try {
    const key = await createBenchKey(db.url);
    const after = await runAll(await asMember(server, key), list);
    let before: Sample[] | undefined;
    if (BEFORE !== undefined) {
      await stop(server);
      server = await startServer(BEFORE, configFile, db.url);
      before = await runAll(await asMember(server, key), list);
    }
    const result = {
      recordedAt: new Date().toISOString(),
      machine: machineName(),
      loadAverage: {
        atStart: loadBefore.map((n) => Math.round(n * 100) / 100),
        atEnd: loadavg().map((n) => Math.round(n * 100) / 100),
      },
      runs: RUNS,
      limits: { ...JSON_LIMITS, bodyBytes: BODY_LIMIT_BYTES },
      unknownFieldsInOneMib: unknownFields(BODY_LIMIT_BYTES).split(',').length,
      before: BEFORE,
      cases: list.map((c, i) => ({
        route: c.route,
        request: c.request,
        bodyBytes: Buffer.byteLength(c.body ?? c.path),
        after: after[i],
        before: before?.[i],
      })),
    };
    recordResults('worst-request', result, markdown(result), summaryOf(result.cases));
  } finally {
    await closeWorkspace(server.child, db, work);
    await model.stop();
  }
}

/** The worst of the hostile requests against the worst of the valid ones (same server, same run). */
function summaryOf(cases: { request: string; after: Sample; before?: Sample }[]): SummaryLine[] {
  const valid = cases.filter((c) => c.request.startsWith('valid'));
  const hostile = cases.filter((c) => !c.request.startsWith('valid'));
  const worst = (of: typeof cases, pick: (s: Sample) => number) => Math.max(...of.map((c) => pick(c.after)));
  const lines: SummaryLine[] = [
    {
      measure: 'longest event-loop block, worst hostile request',
      value: worst(hostile, (s) => s.loop.max),
      unit: 'ms',
      baseline: { name: 'worst valid request', value: worst(valid, (s) => s.loop.max) },
    },
    {
      measure: 'longest wait of a GET /health beside it, worst hostile request',
      value: worst(hostile, (s) => s.longestProbeMs),
      unit: 'ms',
      baseline: { name: 'worst valid request', value: worst(valid, (s) => s.longestProbeMs) },
    },
  ];
  if (hostile.some((c) => c.before !== undefined))
    lines.push({
      measure: 'longest event-loop block, worst hostile request, against the build before',
      value: worst(hostile, (s) => s.loop.max),
      unit: 'ms',
      baseline: { name: 'BENCH_BEFORE build', value: Math.max(...hostile.map((c) => c.before?.loop.max ?? 0)) },
    });
  return lines;
}

function markdown(r: {
  recordedAt: string;
  machine: string;
  loadAverage: { atStart: number[]; atEnd: number[] };
  runs: number;
  limits: Record<string, number>;
  unknownFieldsInOneMib: number;
  before?: string;
  cases: { route: string; request: string; bodyBytes: number; after: Sample; before?: Sample }[];
}): string {
  const ms = (value: number) => (value >= 100 ? value.toFixed(0) : value.toFixed(1));
  const size = (bytes: number) =>
    bytes >= 1024 * 1024
      ? `${(bytes / 1024 / 1024).toFixed(1)} MiB`
      : bytes >= 1024
        ? `${(bytes / 1024).toFixed(1)} KiB`
        : `${bytes} B`;
  const cell = (s: Sample | undefined) =>
    s === undefined ? '' : `${s.status} · ${size(s.answerBytes)} · **${ms(s.loop.max)}** · ${ms(s.longestProbeMs)}`;
  const withBefore = r.cases.some((c) => c.before !== undefined);
  const lines = [
    '# Worst-request benchmark',
    '',
    `Recorded ${r.recordedAt} on ${r.machine}; load average ${r.loadAverage.atStart.join(' / ')} at the start, ` +
      `${r.loadAverage.atEnd.join(' / ')} at the end (the machine was shared). \`npm run ` +
      `bench:worst-request\`${withBefore ? ' with `BENCH_BEFORE`' : ''}.`,
    '',
    `Limits: bodies up to ${size(r.limits.bodyBytes)}, ${r.limits.maxDepth} levels deep, ${r.limits.maxWidth} ` +
      `members to an array or object, ${r.limits.maxValues} values in all; "1 MiB of unknown fields" is ` +
      `${r.unknownFieldsInOneMib.toLocaleString('en')} of them (1,024 bytes fewer for GraphQL and MCP, whose ` +
      `envelope takes the rest). Each request is sent ${r.runs} times to a server in its own process (API keys ` +
      `on, a member's key); the run shown is the median by the server's longest event-loop delay while the ` +
      `request was handled (1 ms resolution, so ~1–2 ms is an idle loop). Meanwhile this process asks \`GET ` +
      `/health\` back to back; "probe" is its longest wait for an answer.`,
    '',
    `Each cell: status · answer size · **longest event-loop block, ms** · longest probe wait, ms.${
      withBefore
        ? ` "Before": the same requests against the build in ${r.before}, on the same database, in the same run.`
        : ''
    }`,
    '',
    withBefore ? '| route | request | body | after | before |' : '| route | request | body | after |',
    withBefore ? '|---|---|---:|---|---|' : '|---|---|---:|---|',
    ...r.cases.map(
      (c) =>
        `| ${c.route} | ${c.request} | ${size(c.bodyBytes)} | ${cell(c.after)} ` +
        `|${withBefore ? ` ${cell(c.before)} |` : ''}`,
    ),
    '',
  ];
  return lines.join('\n');
}

if (process.argv[2] === 'serve-app')
  await serveApp(process.argv[3] === undefined ? undefined : new URL(process.argv[3]));
else await main();
