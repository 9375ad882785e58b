/**
 * MCP benchmark: the whole catalogue of 2,000 skills (each a SKILL.md, a reference and a script)
 * through `skills/list`, every page walked by the official MCP client (`SkillsClient.list()`), in
 * both protocol eras, against `GET /v1/skills` (the same skills as one JSON answer, without files)
 * and the discovery index (every skill with every file's digest). The server runs in its own
 * process; the first walk after start (each SKILL.md read once for its frontmatter) is reported
 * apart from the warm ones. Then what an agent without the extension does first: connect (the
 * server's instructions carry the catalogue) and `tools/list` (the activation tool's description
 * carries it too), and `resources/list` walked to its end (every file of every skill).
 *
 *   npm run bench:mcp          (writes bench/results/mcp.{md,json})
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { benchWorkspace, closeWorkspace, recordResults, percentile, serveApp, startChild } from './bench-support.js';

const SELF = join(import.meta.dirname, 'mcp.bench.js');
const SKILLS = Number(process.env.BENCH_SKILLS ?? 2000);
const RUNS = Number(process.env.BENCH_RUNS ?? 20);
const PAGE_SIZE = 100;

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

interface Walk {
  ms: number;
  skills: number;
  bytes?: number;
}

async function mcpWalk(port: number, mode: 'legacy' | 'auto'): Promise<Walk> {
  const client = new Client({ name: 'bench', version: '1.0.0' }, { versionNegotiation: { mode }, listMaxPages: 1000 });
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
  await client.connect(transport);
  try {
    const started = performance.now();
    const listing = await new SkillsClient(client).list();
    const ms = performance.now() - started;
    if (listing.skills.length !== SKILLS)
      throw new Error(`skills/list walked ${listing.skills.length} skills, expected ${SKILLS}`);
    return { ms, skills: listing.skills.length };
  } finally {
    if (mode === 'legacy') await transport.terminateSession();
    await client.close();
  }
}

/**
 * A client's start as an agent makes it: the handshake (whose answer carries the instructions) and tools/list, timed
 * together.
 */
async function agentStart(port: number, mode: 'legacy' | 'auto'): Promise<Walk> {
  const client = new Client({ name: 'bench', version: '1.0.0' }, { versionNegotiation: { mode } });
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
  const started = performance.now();
  await client.connect(transport);
  try {
    const { tools } = await client.listTools();
    const ms = performance.now() - started;
    const bytes = Buffer.byteLength(JSON.stringify(tools)) + Buffer.byteLength(client.getInstructions() ?? '');
    return {
      ms,
      skills: (tools[0]?.description ?? '').split('\n').filter((line) => line.startsWith('- ')).length,
      bytes,
    };
  } finally {
    if (mode === 'legacy') await transport.terminateSession();
    await client.close();
  }
}

/** resources/list walked page by page to its end, as Gemini CLI does at connect. */
async function resourcesWalk(port: number): Promise<Walk & { resources: number }> {
  const client = new Client({ name: 'bench', version: '1.0.0' }, { listMaxPages: 1000 });
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
  await client.connect(transport);
  try {
    const started = performance.now();
    const { resources } = await client.listResources();
    const ms = performance.now() - started;
    return {
      ms,
      skills: new Set(resources.map((resource) => resource.uri.split('/')[2])).size,
      resources: resources.length,
      bytes: Buffer.byteLength(JSON.stringify(resources)),
    };
  } finally {
    await transport.terminateSession();
    await client.close();
  }
}

async function httpGet(port: number, path: string, count: (body: unknown) => number): Promise<Walk> {
  const started = performance.now();
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  const text = await response.text();
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`${path} answered ${response.status}`);
  return { ms, skills: count(JSON.parse(text)), bytes: Buffer.byteLength(text) };
}

function summary(walks: Walk[]) {
  const ms = walks.map((walk) => walk.ms);
  return {
    n: walks.length,
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
    max: Math.max(...ms),
    skills: walks[0].skills,
    bytes: walks[0].bytes,
  };
}

async function main(): Promise<void> {
  const { work, db, configFile } = await benchWorkspace('skillhost-bench-mcp-', writeSkills, {
    skills: { max_skills: SKILLS },
    mcp: { page_size: PAGE_SIZE },
  });
  const app = await startChild(SELF, ['serve-app'], { SKILLHOST_CONFIG: configFile, DATABASE_URL: db.url });
  try {
    const cold = await mcpWalk(app.port, 'legacy');
    const runs = {
      legacy: [] as Walk[],
      modern: [] as Walk[],
      rest: [] as Walk[],
      index: [] as Walk[],
      startLegacy: [] as Walk[],
      startModern: [] as Walk[],
      resources: [] as Walk[],
    };
    for (let i = 0; i < RUNS; i++) {
      runs.startLegacy.push(await agentStart(app.port, 'legacy'));
      runs.startModern.push(await agentStart(app.port, 'auto'));
      runs.resources.push(await resourcesWalk(app.port));
      runs.legacy.push(await mcpWalk(app.port, 'legacy'));
      runs.modern.push(await mcpWalk(app.port, 'auto'));
      runs.rest.push(await httpGet(app.port, '/v1/skills', (body) => (body as { skills: unknown[] }).skills.length));
      runs.index.push(
        await httpGet(
          app.port,
          '/.well-known/agent-skills/index.json',
          (body) => (body as { skills: unknown[] }).skills.length,
        ),
      );
    }
    const result = {
      recordedAt: new Date().toISOString(),
      machine: `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${process.version}`,
      skills: SKILLS,
      pageSize: PAGE_SIZE,
      runs: RUNS,
      coldWalkMs: cold.ms,
      skillsListLegacy: summary(runs.legacy),
      skillsListModern: summary(runs.modern),
      restList: summary(runs.rest),
      discoveryIndex: summary(runs.index),
      agentStartLegacy: summary(runs.startLegacy),
      agentStartModern: summary(runs.startModern),
      resourcesList: {
        ...summary(runs.resources),
        resources: (runs.resources[0] as Walk & { resources: number }).resources,
      },
    };
    recordResults('mcp', result, markdown(result));
  } finally {
    await closeWorkspace(app.child, db, work);
  }
}

function markdown(r: {
  recordedAt: string;
  machine: string;
  skills: number;
  pageSize: number;
  runs: number;
  coldWalkMs: number;
  skillsListLegacy: ReturnType<typeof summary>;
  skillsListModern: ReturnType<typeof summary>;
  restList: ReturnType<typeof summary>;
  discoveryIndex: ReturnType<typeof summary>;
  agentStartLegacy: ReturnType<typeof summary>;
  agentStartModern: ReturnType<typeof summary>;
  resourcesList: ReturnType<typeof summary> & { resources: number };
}): string {
  const ms = (value: number) => value.toFixed(1);
  const row = (what: string, s: ReturnType<typeof summary>, requests: string) =>
    `| ${what} | ${requests} | ${s.skills} | ${ms(s.p50)} | ${ms(s.p99)} | ${ms(s.max)} | ` +
    `${s.bytes === undefined ? '' : Math.round(s.bytes / 1024)} |`;
  const pages = Math.ceil(r.skills / r.pageSize);
  return [
    '# MCP benchmark',
    '',
    `Recorded ${r.recordedAt} on ${r.machine}; \`npm run bench:mcp\`.`,
    `${r.skills} skills on disk (each a SKILL.md with license and metadata, a 480-byte reference and a script). ` +
      `Each row is one whole answer: the official MCP client walking every \`skills/list\` page (${r.pageSize} a ` +
      `page, ${pages} requests, each entry with its three files' digests and sizes; a new connection and ` +
      `handshake each time, not timed), or one GET. ${r.runs} runs each, after one untimed cold walk.`,
    '',
    '| what | requests | skills | p50 ms | p99 ms | max ms | KiB |',
    '|---|---:|---:|---:|---:|---:|---:|',
    row('`skills/list`, all pages, 2025-11-25 session', r.skillsListLegacy, String(pages)),
    row('`skills/list`, all pages, 2026-07-28', r.skillsListModern, String(pages)),
    row('`GET /v1/skills` (names, descriptions, frontmatter; no files)', r.restList, '1'),
    row('`GET /.well-known/agent-skills/index.json` (every file with its digest)', r.discoveryIndex, '1'),
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
    '| what | requests | skills | p50 ms | p99 ms | max ms | KiB |',
    '|---|---:|---:|---:|---:|---:|---:|',
    row('connect + `tools/list`, 2025-11-25 session', r.agentStartLegacy, '3'),
    row('connect + `tools/list`, 2026-07-28', r.agentStartModern, '2'),
    row('`resources/list`, all pages', r.resourcesList, String(pages)),
    '',
  ].join('\n');
}

if (process.argv[2] === 'serve-app') await serveApp();
else await main();
