/**
 * Skill store benchmark:
 *   1. installing a 1 MiB skill (16 files) as a zip, a tar.gz and a multipart form, each upload new
 *      content (one byte changed), and the same content again (the idempotent 200);
 *   2. what pinning adds to an activation, in the server's own process: activating without a chat
 *      (nothing kept), in a chat with the version already kept (the common case: a stat of each file
 *      shows the folder unchanged), in a chat right after a reload of unchanged files, and in a chat
 *      with content never seen (read, hashed and written to PostgreSQL);
 *   3. two server processes on one database: how long an install on one takes to be listed by the
 *      other (LISTEN/NOTIFY; the periodic check set to a minute so it does not help).
 *
 *   npm run bench:store          (writes bench/results/store.{md,json})
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';
import { ZipFile } from 'yazl';
import {
  databaseUrl,
  machineName,
  percentile,
  recordResults,
  serveApp,
  startChild,
  type SummaryLine,
} from './bench-support.js';

const SELF = join(import.meta.dirname, 'store.bench.js');
const INSTALLS = Number(process.env.BENCH_INSTALLS ?? 30);
const ACTIVATIONS = Number(process.env.BENCH_ACTIVATIONS ?? 300);
const FILE_BYTES = 64 * 1024;
const FILES = 16;

type Files = Record<string, Buffer>;

/** A skill of 16 files of 64 KiB (1 MiB in all), varied by `variant` in its first byte of text. */
function skillFiles(name: string, variant: number): Files {
  const files: Files = {
    [`${name}/SKILL.md`]: Buffer.from(
      `---\nname: ${name}\ndescription: A 1 MiB benchmark skill, variant ${variant}.\n---\n\n# ` +
        `${name}\n\nRead the references.\n`,
    ),
  };
  for (let i = 0; i < FILES - 1; i++) {
    const text = Buffer.alloc(FILE_BYTES, `line ${i} of a benchmark reference, variant ${variant}.\n`);
    files[`${name}/references/part-${i}.md`] = text;
  }
  return files;
}

async function zipOf(files: Files): Promise<Buffer> {
  const zip = new ZipFile();
  for (const [path, content] of Object.entries(files)) zip.addBuffer(content, path);
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function tarGzOf(files: Files): Promise<Buffer> {
  const tar = pack();
  for (const [name, content] of Object.entries(files)) tar.entry({ name }, content);
  tar.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of tar) chunks.push(chunk as Buffer);
  return gzipSync(Buffer.concat(chunks));
}

function multipartOf(files: Files): { body: Buffer; boundary: string } {
  const boundary = `----bench${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [path, content] of Object.entries(files)) {
    parts.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${path}"\r\n\r\n`),
      content,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), boundary };
}

async function timed(send: () => Promise<Response>, expected: number): Promise<number> {
  const started = performance.now();
  const response = await send();
  await response.arrayBuffer();
  if (response.status !== expected) throw new Error(`answered ${response.status}, expected ${expected}`);
  return performance.now() - started;
}

function summary(ms: number[]) {
  return { n: ms.length, p50: percentile(ms, 50), p99: percentile(ms, 99), max: Math.max(...ms) };
}

/** Part 1, against a server process. */
async function installs(base: string) {
  const post = (body: Buffer, type: string) => () =>
    fetch(`${base}/v1/admin/skills`, { method: 'POST', headers: { 'content-type': type }, body });
  const zip: number[] = [];
  const tarGz: number[] = [];
  const multipart: number[] = [];
  const again: number[] = [];
  let variant = 0;
  for (let i = 0; i < INSTALLS; i++) {
    zip.push(await timed(post(await zipOf(skillFiles('big-zip', variant++)), 'application/zip'), 201));
    tarGz.push(await timed(post(await tarGzOf(skillFiles('big-tar', variant++)), 'application/gzip'), 201));
    const form = multipartOf(skillFiles('big-form', variant++));
    multipart.push(await timed(post(form.body, `multipart/form-data; boundary=${form.boundary}`), 201));
  }
  const same = await zipOf(skillFiles('big-zip', 0));
  for (let i = 0; i < INSTALLS; i++) again.push(await timed(post(same, 'application/zip'), 200));
  return { zip: summary(zip), tarGz: summary(tarGz), multipart: summary(multipart), sameAgain: summary(again) };
}

/** Part 2, in this process (the app's own services, no HTTP): what pinning adds to SkillResourcesService.activate. */
async function activations(dbUrl: string, skillsDir: string) {
  const { configWith } = await import('../src/config/config-loader.js');
  const { createApp } = await import('../src/app/app.factory.js');
  const { SkillResourcesService } = await import('@skillhost/nest');
  const { SkillRegistryService } = await import('@skillhost/nest');
  const app = await createApp(
    configWith({
      'app.skills.enabled': true,
      'app.skills.directories': [skillsDir],
      'app.database.url': dbUrl,
      'app.skills.store_directory': join(skillsDir, '..', 'store-in-process'),
    }),
    { logger: false },
  );
  try {
    const resources = app.get(SkillResourcesService);
    const registry = app.get(SkillRegistryService);
    const time = async (work: () => Promise<unknown>) => {
      const started = performance.now();
      await work();
      return performance.now() - started;
    };
    const without: number[] = [];
    const kept: number[] = [];
    for (let i = 0; i < ACTIVATIONS; i++) without.push(await time(() => resources.activate('pinned')));
    await resources.activate('pinned', { pins: new Map() });
    for (let i = 0; i < ACTIVATIONS; i++)
      kept.push(await time(() => resources.activate('pinned', { pins: new Map() })));
    const afterReload: number[] = [];
    const newContent: number[] = [];
    const rounds = Math.min(ACTIVATIONS, 40);
    for (let i = 0; i < rounds; i++) {
      await registry.reload();
      afterReload.push(await time(() => resources.activate('pinned', { pins: new Map() })));
    }
    for (let i = 0; i < rounds; i++) {
      writeFileSync(join(skillsDir, 'pinned', 'references', 'changing.md'), `change ${i} ${Date.now()}\n`);
      await registry.reload();
      newContent.push(await time(() => resources.activate('pinned', { pins: new Map() })));
    }
    return {
      withoutChat: summary(without),
      versionKept: summary(kept),
      afterReload: summary(afterReload),
      newContent: summary(newContent),
    };
  } finally {
    await app.close();
  }
}

/** Part 3: two server processes; an install on the first, listed by the second. */
async function propagation(configA: string, configB: string, dbUrl: string) {
  const a = await startChild(SELF, ['serve-app'], { SKILLHOST_CONFIG: configA, DATABASE_URL: dbUrl });
  const b = await startChild(SELF, ['serve-app'], { SKILLHOST_CONFIG: configB, DATABASE_URL: dbUrl });
  try {
    const delays: number[] = [];
    for (let i = 0; i < 20; i++) {
      const name = `spread-${i}`;
      const archive = await zipOf({
        [`${name}/SKILL.md`]: Buffer.from(`---\nname: ${name}\ndescription: Propagation probe ${i}.\n---\nBody.\n`),
      });
      const response = await fetch(`http://127.0.0.1:${a.port}/v1/admin/skills`, {
        method: 'POST',
        headers: { 'content-type': 'application/zip' },
        body: archive,
      });
      await response.arrayBuffer();
      const installed = performance.now();
      for (;;) {
        const detail = await fetch(`http://127.0.0.1:${b.port}/v1/skills/${name}`);
        await detail.arrayBuffer();
        if (detail.status === 200) break;
        if (performance.now() - installed > 10_000)
          throw new Error(`${name} did not reach the second instance in 10 s`);
      }
      delays.push(performance.now() - installed);
    }
    return summary(delays);
  } finally {
    for (const child of [a.child, b.child]) child.kill('SIGTERM');
    await Promise.all([a.child, b.child].map((child) => new Promise((done) => child.once('exit', done))));
  }
}

function config(dbUrl: string, skillsDir: string, store: string): string {
  return [
    '[app.limits]',
    'requests_per_minute = 1000000',
    '[app.skills]',
    'enabled = true',
    `directories = [${JSON.stringify(skillsDir)}]`,
    `store_directory = ${JSON.stringify(store)}`,
    'sync_interval_ms = 60000',
    '[app.database]',
    `url = ${JSON.stringify(dbUrl)}`,
  ].join('\n');
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'skillhost-bench-store-'));
  chmodSync(work, 0o755);
  const skillsDir = join(work, 'skills');
  mkdirSync(join(skillsDir, 'pinned', 'references'), { recursive: true });
  writeFileSync(
    join(skillsDir, 'pinned', 'SKILL.md'),
    '---\nname: pinned\ndescription: A disk skill whose activations are pinned.\n---\n\n# Pinned\n\nSteps.\n',
  );
  for (let i = 0; i < 8; i++)
    writeFileSync(join(skillsDir, 'pinned', 'references', `ref-${i}.md`), 'A reference line.\n'.repeat(500));
  const db = await databaseUrl();
  const configA = join(work, 'a.toml');
  const configB = join(work, 'b.toml');
  writeFileSync(configA, config(db.url, skillsDir, join(work, 'store-a')));
  writeFileSync(configB, config(db.url, skillsDir, join(work, 'store-b')));
  try {
    const server = await startChild(SELF, ['serve-app'], { SKILLHOST_CONFIG: configA, DATABASE_URL: db.url });
    let install: Awaited<ReturnType<typeof installs>>;
    try {
      install = await installs(`http://127.0.0.1:${server.port}`);
    } finally {
      server.child.kill('SIGTERM');
      await new Promise((done) => server.child.once('exit', done));
    }
    const activation = await activations(db.url, skillsDir);
    const spread = await propagation(configA, configB, db.url);
    const result = {
      recordedAt: new Date().toISOString(),
      machine: machineName(),
      install,
      activation,
      propagation: spread,
    };
    recordResults('store', result, markdown(result), summaryOf(result));
  } finally {
    await db.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

type Summary = ReturnType<typeof summary>;

/** An upload of new content against the same content again; pinning's activation against one without a chat. */
function summaryOf(r: {
  install: Record<string, Summary>;
  activation: Record<string, Summary>;
  propagation: Summary;
}): SummaryLine[] {
  return [
    {
      measure: 'install a 1 MiB skill as a zip, new content, p50',
      value: r.install.zip.p50,
      unit: 'ms',
      baseline: { name: 'the same content again (200)', value: r.install.sameAgain.p50 },
    },
    {
      measure: 'activation in a chat, version already kept, p50',
      value: r.activation.versionKept.p50,
      unit: 'ms',
      baseline: { name: 'without a chat (nothing pinned)', value: r.activation.withoutChat.p50 },
    },
    {
      measure: 'activation in a chat, content never seen, p50',
      value: r.activation.newContent.p50,
      unit: 'ms',
      baseline: { name: 'without a chat (nothing pinned)', value: r.activation.withoutChat.p50 },
    },
    {
      measure: 'install on one instance → listed by the other, max',
      value: r.propagation.max,
      unit: 'ms',
      target: '≤ 2000 ms',
      met: r.propagation.max <= 2000,
    },
  ];
}

function markdown(r: {
  recordedAt: string;
  machine: string;
  install: Record<string, Summary>;
  activation: Record<string, Summary>;
  propagation: Summary;
}): string {
  const ms = (value: number) => value.toFixed(2);
  const row = (label: string, s: Summary) => `| ${label} | ${s.n} | ${ms(s.p50)} | ${ms(s.p99)} | ${ms(s.max)} |`;
  return [
    '# Skill store benchmark',
    '',
    `Recorded ${r.recordedAt} on ` +
      `${r.machine}; \`npm run bench:store\`. The database is DATABASE_URL's server (or an embedded PostgreSQL).`,
    '',
    `## Installing a 1 MiB skill (${FILES} files of ${FILE_BYTES / 1024} KiB), over HTTP, one at a time`,
    '',
    '| upload | n | p50 ms | p99 ms | max ms |',
    '|---|---:|---:|---:|---:|',
    row('zip, new content (201)', r.install.zip),
    row('tar.gz, new content (201)', r.install.tarGz),
    row('multipart, new content (201)', r.install.multipart),
    row('zip, same content again (200)', r.install.sameAgain),
    '',
    '## What pinning adds to an activation (SkillResourcesService.activate, in process; a disk skill of 9 ' +
      'files, 72 KB)',
    '',
    '| activation | n | p50 ms | p99 ms | max ms |',
    '|---|---:|---:|---:|---:|',
    row('without a chat (nothing pinned)', r.activation.withoutChat),
    row('in a chat, version already kept (a stat of each file to see it is unchanged)', r.activation.versionKept),
    row('in a chat, first after a reload of unchanged files', r.activation.afterReload),
    row('in a chat, content never seen (read + hash + written)', r.activation.newContent),
    '',
    '## Two instances on one database: install on one, listed by the other',
    '',
    '| | n | p50 ms | p99 ms | max ms |',
    '|---|---:|---:|---:|---:|',
    row('install answered → GET /v1/skills/:name 200 on the other', r.propagation),
    '',
    'Target: every instance within 2 s (the periodic check, here once a minute, is only the fallback).',
    '',
  ].join('\n');
}

if (process.argv[2] === 'serve-app') await serveApp();
else await main();
