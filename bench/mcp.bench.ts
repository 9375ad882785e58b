/**
 * MCP benchmark: the whole catalogue of 2,000 skills (each a SKILL.md, a reference and a script)
 * through `skills/list`, every page walked by the official MCP client (`SkillsClient.list()`), in
 * both protocol eras, against `GET /v1/skills` (the same skills as one JSON answer, without files)
 * and the discovery index (every skill with every file's digest). The server runs in its own
 * process; the first walk after start (each SKILL.md read once for its frontmatter) is reported
 * apart from the warm ones. Then what an agent without the extension does first: connect (the
 * server's instructions carry the catalogue) and `tools/list` (the activation tool's description
 * carries it too), and `resources/list` walked to its end (every file of every skill). Every request carries
 * the same member's API key. The ratio of a whole `skills/list` walk to one `GET /v1/skills` is the figure to watch
 * (target: at most 5×).
 *
 *   npm run bench:mcp          (writes bench/results/mcp.{md,json})
 *   BENCH_BEFORE=<folder> npm run bench:mcp
 *     also runs every measurement against the build in <folder> (its dist/, e.g. a copy of main's before a change),
 *     same skills, database and key, and records both.
 *   BENCH_APP_NODE_ARGS=--cpu-prof BENCH_RUNS=5 …   the server's own Node flags (a CPU profile of a run).
 *   BENCH_MCP_PAGE_SIZE=500 …   `[app.mcp] page_size` (default 100): fewer, larger pages.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import {
  benchWorkspace,
  closeWorkspace,
  cpuMsOf,
  createBenchKey,
  loopDelayOf,
  machineName,
  percentile,
  recordResults,
  serveApp,
  startChild,
  type SummaryLine,
} from './bench-support.js';

const SELF = join(import.meta.dirname, 'mcp.bench.js');
const SKILLS = Number(process.env.BENCH_SKILLS ?? 2000);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const PAGE_SIZE = Number(process.env.BENCH_MCP_PAGE_SIZE ?? 100);
const BEFORE = process.env.BENCH_BEFORE;
/** What a whole `skills/list` walk may cost, in `GET /v1/skills` of the same skills. */
const TARGET_RATIO = 5;
/** The member's key, sent on every request (set once the server has made its tables). */
let authorization = '';

function writeSkills(dir: string): void {
  for (let i = 0; i < SKILLS; i++) {
    const name = `bench-skill-${String(i).padStart(4, '0')}`;
    const folder = join(dir, name);
    mkdirSync(join(folder, 'references'), { recursive: true });
    mkdirSync(join(folder, 'scripts'), { recursive: true });
    writeFileSync(
      join(folder, 'SKILL.md'),
      `---\nname: ${name}\ndescription: Benchmark skill ${i}. Use when a request is about topic ${i % 97} or ` +
        `area ${i % 13}.\nlicense: MIT\nmetadata:\n  owner: bench\n  version: "1.${i % 10}"\n---\n\n# ` +
        `${name}\n\nSee references/guide.md and run scripts/run.sh.\n`,
    );
    writeFileSync(join(folder, 'references', 'guide.md'), `Guide ${i}.\n`.repeat(40));
    writeFileSync(join(folder, 'scripts', 'run.sh'), `#!/bin/sh\necho ${i}\n`);
  }
}

function mcpTransport(port: number): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
    requestInit: { headers: { authorization } },
  });
}

/** A server of the run: its port, and its process (asked for the CPU time it has used). */
interface Server {
  port: number;
  child: ChildProcess;
}

/**
 * Times one measured stretch three ways: wall clock, the server's CPU time (what the answer cost the server, steady
 * on a busy machine) and this process's (what the client spent: the official client checks every entry it gets).
 */
class Meter {
  private constructor(
    private readonly child: ChildProcess,
    private readonly serverCpu: number,
    private readonly clientCpu: NodeJS.CpuUsage,
    private readonly started: number,
  ) {}

  static async start(child: ChildProcess): Promise<Meter> {
    const serverCpu = (await loopDelayOf(child)).cpuMs;
    return new Meter(child, serverCpu, process.cpuUsage(), performance.now());
  }

  async stop(): Promise<Omit<Walk, 'skills'>> {
    const ms = performance.now() - this.started;
    const clientCpuMs = cpuMsOf(process.cpuUsage(this.clientCpu));
    return { ms, serverCpuMs: (await loopDelayOf(this.child)).cpuMs - this.serverCpu, clientCpuMs };
  }
}

interface Walk {
  ms: number;
  serverCpuMs: number;
  clientCpuMs: number;
  skills: number;
  bytes?: number;
}

async function mcpWalk(server: Server, mode: 'legacy' | 'auto'): Promise<Walk> {
  const client = new Client({ name: 'bench', version: '1.0.0' }, { versionNegotiation: { mode }, listMaxPages: 1000 });
  const transport = mcpTransport(server.port);
  await client.connect(transport);
  try {
    const meter = await Meter.start(server.child);
    const listing = await new SkillsClient(client).list();
    const spent = await meter.stop();
    if (listing.skills.length !== SKILLS)
      throw new Error(`skills/list walked ${listing.skills.length} skills, expected ${SKILLS}`);
    return { ...spent, skills: listing.skills.length };
  } finally {
    if (mode === 'legacy') await transport.terminateSession();
    await client.close();
  }
}

/**
 * A client's start as an agent makes it: the handshake (whose answer carries the instructions) and tools/list, timed
 * together.
 */
async function agentStart(server: Server, mode: 'legacy' | 'auto'): Promise<Walk> {
  const client = new Client({ name: 'bench', version: '1.0.0' }, { versionNegotiation: { mode } });
  const transport = mcpTransport(server.port);
  const meter = await Meter.start(server.child);
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    const spent = await meter.stop();
    const bytes = Buffer.byteLength(JSON.stringify(tools)) + Buffer.byteLength(client.getInstructions() ?? '');
    return {
      ...spent,
      skills: (tools[0]?.description ?? '').split('\n').filter((line) => line.startsWith('- ')).length,
      bytes,
    };
  } finally {
    if (mode === 'legacy') await transport.terminateSession();
    await client.close();
  }
}

/**
 * As many `ping`s in one 2025-11-25 session as a walk has pages: what that many requests cost through the same door
 * (key, Fastify, the SDK's transport) with nothing to list.
 */
async function pings(server: Server, count: number): Promise<Walk> {
  const client = new Client({ name: 'bench', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
  const transport = mcpTransport(server.port);
  await client.connect(transport);
  try {
    const meter = await Meter.start(server.child);
    for (let i = 0; i < count; i++) await client.ping();
    return { ...(await meter.stop()), skills: 0 };
  } finally {
    await transport.terminateSession();
    await client.close();
  }
}

/**
 * As many `GET /v1/models` (a small answer from the configuration) as a walk has pages, one after the other on one
 * connection: what that many requests cost through the same key check, Fastify and Nest, without MCP.
 */
async function smallGets(server: Server, count: number): Promise<Walk> {
  const meter = await Meter.start(server.child);
  for (let i = 0; i < count; i++) {
    const response = await fetch(`http://127.0.0.1:${server.port}/v1/models`, { headers: { authorization } });
    await response.text();
    if (response.status !== 200) throw new Error(`/v1/models answered ${response.status}`);
  }
  return { ...(await meter.stop()), skills: 0 };
}

/** resources/list walked page by page to its end, as Gemini CLI does at connect. */
async function resourcesWalk(server: Server): Promise<Walk & { resources: number }> {
  const client = new Client({ name: 'bench', version: '1.0.0' }, { listMaxPages: 1000 });
  const transport = mcpTransport(server.port);
  await client.connect(transport);
  try {
    const meter = await Meter.start(server.child);
    const { resources } = await client.listResources();
    const spent = await meter.stop();
    return {
      ...spent,
      skills: new Set(resources.map((resource) => resource.uri.split('/')[2])).size,
      resources: resources.length,
      bytes: Buffer.byteLength(JSON.stringify(resources)),
    };
  } finally {
    await transport.terminateSession();
    await client.close();
  }
}

async function httpGet(server: Server, path: string, count: (body: unknown) => number): Promise<Walk> {
  const meter = await Meter.start(server.child);
  const response = await fetch(`http://127.0.0.1:${server.port}${path}`, { headers: { authorization } });
  const text = await response.text();
  const spent = await meter.stop();
  if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
  return { ...spent, skills: count(JSON.parse(text)), bytes: Buffer.byteLength(text) };
}

function summary(walks: Walk[]) {
  const ms = walks.map((walk) => walk.ms);
  return {
    n: walks.length,
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
    max: Math.max(...ms),
    serverCpuP50: percentile(
      walks.map((walk) => walk.serverCpuMs),
      50,
    ),
    clientCpuP50: percentile(
      walks.map((walk) => walk.clientCpuMs),
      50,
    ),
    skills: walks[0].skills,
    bytes: walks[0].bytes,
  };
}

/** Every measurement against one running server: a cold walk, then RUNS rounds of each. */
async function measureServer(server: Server) {
  const cold = await mcpWalk(server, 'legacy');
  const runs = {
    legacy: [] as Walk[],
    modern: [] as Walk[],
    rest: [] as Walk[],
    index: [] as Walk[],
    startLegacy: [] as Walk[],
    startModern: [] as Walk[],
    resources: [] as Walk[],
    pings: [] as Walk[],
    smallGets: [] as Walk[],
  };
  for (let i = 0; i < RUNS; i++) {
    runs.startLegacy.push(await agentStart(server, 'legacy'));
    runs.startModern.push(await agentStart(server, 'auto'));
    runs.resources.push(await resourcesWalk(server));
    runs.pings.push(await pings(server, Math.ceil(SKILLS / PAGE_SIZE)));
    runs.smallGets.push(await smallGets(server, Math.ceil(SKILLS / PAGE_SIZE)));
    runs.legacy.push(await mcpWalk(server, 'legacy'));
    runs.modern.push(await mcpWalk(server, 'auto'));
    runs.rest.push(await httpGet(server, '/v1/skills', (body) => (body as { skills: unknown[] }).skills.length));
    runs.index.push(
      await httpGet(
        server,
        '/.well-known/agent-skills/index.json',
        (body) => (body as { skills: unknown[] }).skills.length,
      ),
    );
  }
  const skillsListLegacy = summary(runs.legacy);
  const skillsListModern = summary(runs.modern);
  const restList = summary(runs.rest);
  return {
    coldWalkMs: cold.ms,
    skillsListLegacy,
    skillsListModern,
    restList,
    /** A whole walk's p50 over one `GET /v1/skills`'s p50, same run, same key. */
    walkOverGet: { legacy: skillsListLegacy.p50 / restList.p50, modern: skillsListModern.p50 / restList.p50 },
    /** The same in the server's CPU time: what a walk costs the server, whatever the client spends. */
    walkOverGetServerCpu: {
      legacy: skillsListLegacy.serverCpuP50 / restList.serverCpuP50,
      modern: skillsListModern.serverCpuP50 / restList.serverCpuP50,
    },
    discoveryIndex: summary(runs.index),
    pings: summary(runs.pings),
    smallGets: summary(runs.smallGets),
    agentStartLegacy: summary(runs.startLegacy),
    agentStartModern: summary(runs.startModern),
    resourcesList: {
      ...summary(runs.resources),
      resources: (runs.resources[0] as Walk & { resources: number }).resources,
    },
  };
}

type Measured = Awaited<ReturnType<typeof measureServer>>;

/** The app of `build` (this build when undefined) in its own process. */
function startServer(build: string | undefined, env: Record<string, string>) {
  const args =
    build === undefined ? ['serve-app'] : ['serve-app', pathToFileURL(join(resolve(build), 'dist', 'src', '/')).href];
  const nodeArgs = process.env.BENCH_APP_NODE_ARGS ? process.env.BENCH_APP_NODE_ARGS.split(' ') : [];
  return startChild(SELF, args, env, nodeArgs);
}

async function stopServer(child: ChildProcess): Promise<void> {
  child.kill('SIGTERM');
  await new Promise((done) => child.once('exit', done));
}

async function main(): Promise<void> {
  const { work, db, configFile } = await benchWorkspace('skillhost-bench-mcp-', writeSkills, {
    auth: { mode: 'api_key' },
    skills: { max_skills: SKILLS },
    mcp: { page_size: PAGE_SIZE },
  });
  const env = { SKILLHOST_CONFIG: configFile, DATABASE_URL: db.url };
  // The first start creates the tables the key goes in.
  let app = await startServer(undefined, env);
  try {
    authorization = `Bearer ${await createBenchKey(db.url)}`;
    const after = await measureServer(app);
    let before: Recorded['before'];
    if (BEFORE !== undefined) {
      await stopServer(app.child);
      app = await startServer(BEFORE, env);
      before = { build: BEFORE, ...(await measureServer(app)) };
    }
    const result: Recorded = {
      recordedAt: new Date().toISOString(),
      machine: machineName(),
      skills: SKILLS,
      pageSize: PAGE_SIZE,
      runs: RUNS,
      targetWalkOverGet: TARGET_RATIO,
      ...after,
      ...(before === undefined ? {} : { before }),
    };
    recordResults('mcp', result, markdown(result), summaryOf(result));
  } finally {
    await closeWorkspace(app.child, db, work);
  }
}

/** Each whole walk's server CPU against one `GET /v1/skills` of the same skills, in the same run. */
function summaryOf(r: Recorded): SummaryLine[] {
  const get = { name: 'GET /v1/skills', value: r.restList.serverCpuP50 };
  const walk = (era: string, s: { serverCpuP50: number }): SummaryLine => ({
    measure: `skills/list walk of ${r.skills} skills (${r.pageSize} a page), ${era}, server CPU`,
    value: s.serverCpuP50,
    unit: 'ms',
    baseline: get,
    target: `≤ ${r.targetWalkOverGet}× baseline`,
    met: s.serverCpuP50 <= r.targetWalkOverGet * get.value,
  });
  return [
    walk('2025-11-25 session', r.skillsListLegacy),
    walk('2026-07-28', r.skillsListModern),
    { measure: 'as many pings as pages, server CPU', value: r.pings.serverCpuP50, unit: 'ms', baseline: get },
    { measure: 'resources/list walk, server CPU', value: r.resourcesList.serverCpuP50, unit: 'ms', baseline: get },
  ];
}

interface Recorded extends Measured {
  recordedAt: string;
  machine: string;
  skills: number;
  pageSize: number;
  runs: number;
  targetWalkOverGet: number;
  before?: Measured & { build: string };
}

const ms = (value: number) => value.toFixed(1);
const times = (value: number) => `${value.toFixed(1)}×`;

function markdown(r: Recorded): string {
  const row = (what: string, s: ReturnType<typeof summary>, requests: string) =>
    `| ${what} | ${requests} | ${s.skills} | ${ms(s.p50)} | ${ms(s.p99)} | ${ms(s.max)} | ` +
    `${ms(s.serverCpuP50)} | ${ms(s.clientCpuP50)} | ${s.bytes === undefined ? '' : Math.round(s.bytes / 1024)} |`;
  const pages = Math.ceil(r.skills / r.pageSize);
  return [
    '# MCP benchmark',
    '',
    `Recorded ${r.recordedAt} on ${r.machine}; \`npm run bench:mcp\`${r.before ? ' with `BENCH_BEFORE`' : ''}.`,
    `${r.skills} skills on disk (each a SKILL.md with license and metadata, a 480-byte reference and a script). ` +
      `Each row is one whole answer: the official MCP client walking every \`skills/list\` page (${r.pageSize} a ` +
      `page, ${pages} requests, each entry with its three files' digests and sizes; a new connection and ` +
      `handshake each time, not timed), or one GET. Every request carries the same member's API key. ${r.runs} ` +
      'runs each, after one untimed cold walk.',
    '',
    `A whole \`skills/list\` walk costs the server ${times(r.walkOverGetServerCpu.legacy)} (2025-11-25 session) ` +
      `and ${times(r.walkOverGetServerCpu.modern)} (2026-07-28) the CPU time of one \`GET /v1/skills\` of the same ` +
      `skills, and takes ${times(r.walkOverGet.legacy)} and ${times(r.walkOverGet.modern)} its wall-clock time with ` +
      `the official client (p50 over p50, same run); the target is at most ${r.targetWalkOverGet}×. The client's ` +
      'own CPU time is apart: `SkillsClient` checks every entry it is sent. ' +
      `As many \`ping\`s as the walk has pages cost the server ${ms(r.pings.serverCpuP50)} ms ` +
      `(${times(r.pings.serverCpuP50 / r.restList.serverCpuP50)} the GET): that much of a walk is the door's cost ` +
      "per request (the key, Fastify, the SDK's transport), whatever is listed; the listing itself adds " +
      `${ms(r.skillsListLegacy.serverCpuP50 - r.pings.serverCpuP50)} ms in a session. As many small REST GETs ` +
      `cost ${ms(r.smallGets.serverCpuP50)} ms (${times(r.smallGets.serverCpuP50 / r.restList.serverCpuP50)} the ` +
      'GET): what that many HTTP requests cost whatever answers them.',
    '',
    '| what | requests | skills | p50 ms | p99 ms | max ms | server CPU ms p50 | client CPU ms p50 | KiB |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    row('`skills/list`, all pages, 2025-11-25 session', r.skillsListLegacy, String(pages)),
    row('`skills/list`, all pages, 2026-07-28', r.skillsListModern, String(pages)),
    row('`GET /v1/skills` (names, descriptions, frontmatter; no files)', r.restList, '1'),
    row('`GET /.well-known/agent-skills/index.json` (every file with its digest)', r.discoveryIndex, '1'),
    row(
      `\`ping\` ${pages} times, 2025-11-25 session (as many requests as a walk, nothing listed)`,
      r.pings,
      String(pages),
    ),
    row(`\`GET /v1/models\` ${pages} times (as many requests as a walk, no MCP)`, r.smallGets, String(pages)),
    '',
    `The first walk after start took ${ms(r.coldWalkMs)} ms: each SKILL.md is read once there, for the ` +
      `frontmatter as the MCP SDK parses it; digests come from the scan. Later walks read no file.`,
    '',
    '## An agent without the extension',
    '',
    `What every agent does today: connect (the answer's instructions list skills) and \`tools/list\` (the ` +
      `activation tool's description lists them, within the budget: the "skills" column counts the entries it ` +
      `listed), timed together from the first byte of the handshake; and \`resources/list\` walked to its end ` +
      `(${r.resourcesList.resources} files). KiB: the tools' JSON and the instructions; the resources' JSON.`,
    '',
    '| what | requests | skills | p50 ms | p99 ms | max ms | server CPU ms p50 | client CPU ms p50 | KiB |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    row('connect + `tools/list`, 2025-11-25 session', r.agentStartLegacy, '3'),
    row('connect + `tools/list`, 2026-07-28', r.agentStartModern, '2'),
    row('`resources/list`, all pages', r.resourcesList, String(pages)),
    '',
    ...(r.before === undefined ? [] : beforeAfter(r.before, r)),
  ].join('\n');
}

/** The same measurements against the build in BENCH_BEFORE, p50 beside p50. */
function beforeAfter(before: Measured & { build: string }, after: Measured): string[] {
  const pair = (what: string, pick: (m: Measured) => ReturnType<typeof summary>) =>
    `| ${what} | ${ms(pick(before).p50)} | ${ms(pick(after).p50)} | ${ms(pick(before).serverCpuP50)} | ` +
    `${ms(pick(after).serverCpuP50)} | ${times(pick(before).serverCpuP50 / pick(after).serverCpuP50)} |`;
  return [
    '## Before and after',
    '',
    `The same server, skills, database and key, run from the build in \`${before.build}\` (before) right after this ` +
      'one (after). "Server CPU saved": before over after.',
    '',
    '| what | before p50 ms | after p50 ms | before server CPU ms | after server CPU ms | server CPU saved |',
    '|---|---:|---:|---:|---:|---:|',
    pair('`skills/list`, all pages, 2025-11-25 session', (m) => m.skillsListLegacy),
    pair('`skills/list`, all pages, 2026-07-28', (m) => m.skillsListModern),
    pair('`GET /v1/skills`', (m) => m.restList),
    pair('`GET /.well-known/agent-skills/index.json`', (m) => m.discoveryIndex),
    pair('`ping` × pages, 2025-11-25 session', (m) => m.pings),
    pair('`GET /v1/models` × pages', (m) => m.smallGets),
    pair('connect + `tools/list`, 2025-11-25 session', (m) => m.agentStartLegacy),
    pair('connect + `tools/list`, 2026-07-28', (m) => m.agentStartModern),
    pair('`resources/list`, all pages', (m) => m.resourcesList),
    `| walk / GET, 2025-11-25 session | ${times(before.walkOverGet.legacy)} | ${times(after.walkOverGet.legacy)} | ` +
      `${times(before.walkOverGetServerCpu.legacy)} | ${times(after.walkOverGetServerCpu.legacy)} | |`,
    `| walk / GET, 2026-07-28 | ${times(before.walkOverGet.modern)} | ${times(after.walkOverGet.modern)} | ` +
      `${times(before.walkOverGetServerCpu.modern)} | ${times(after.walkOverGetServerCpu.modern)} | |`,
    '',
  ];
}

if (process.argv[2] === 'serve-app')
  await serveApp(process.argv[3] === undefined ? undefined : new URL(process.argv[3]));
else await main();
