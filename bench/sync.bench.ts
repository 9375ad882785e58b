/**
 * Sync and import benchmark: what carrying a team's skills to and from the outside costs.
 *
 * - `skillhost sync` of 500 skills (a SKILL.md and a reference each: 1,000 files) from a live server into an empty
 *   folder, against the same-run baseline of a naive mirror (the index, then every file, written as it comes: no
 *   digest checked, nothing atomic); then the same sync with nothing changed (one request, a 304), and with one skill
 *   changed (the index and that skill's changed file only).
 * - `versions.json` and `index.json` for those 500 skills, warm.
 * - `POST /v1/admin/skills/import` of a git repository of 50 skills over `git+file://`, against the same-run
 *   baseline of `git clone --depth 1` of that repository alone.
 *
 * The server runs in its own process; sync runs in this one (the CLI's own code), with fetch counted.
 *
 *   npm run bench:sync        (writes bench/results/sync.{md,json})
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  benchWorkspace,
  closeWorkspace,
  createBenchKey,
  percentile,
  recordResults,
  serveApp,
  startChild,
  type SummaryLine,
  writeBenchSkills,
} from './bench-support.js';

const SELF = join(import.meta.dirname, 'sync.bench.js');
const SKILLS = Number(process.env.BENCH_SKILLS ?? 500);
const IMPORT_SKILLS = Number(process.env.BENCH_IMPORT_SKILLS ?? 50);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);

/** Requests this process made through fetch (sync's and the naive mirror's). */
let requests = 0;
const realFetch = globalThis.fetch;
globalThis.fetch = ((...args: Parameters<typeof fetch>) => {
  requests++;
  return realFetch(...args);
}) as typeof fetch;

interface Timed {
  ms: number;
  requests: number;
}

async function timed(run: () => Promise<unknown>): Promise<Timed> {
  const before = requests;
  const started = performance.now();
  await run();
  return { ms: performance.now() - started, requests: requests - before };
}

function median(values: number[]): number {
  return percentile(values, 50);
}

async function main(): Promise<void> {
  const { work, skillsDir, db, configFile } = await benchWorkspace(
    'skillhost-bench-sync-',
    (dir) => writeBenchSkills(dir, SKILLS),
    { auth: { mode: 'api_key' } },
  );
  const app = await startChild(SELF, ['serve-app'], { SKILLHOST_CONFIG: configFile, DATABASE_URL: db.url });
  const base = `http://127.0.0.1:${app.port}`;
  const member = await createBenchKey(db.url, 'dev', 'member');
  const admin = await createBenchKey(db.url, 'root', 'admin');
  const { runCli } = (await import(new URL('../src/cli/skillhost.js', import.meta.url).href)) as {
    runCli: (argv: string[], io: object) => Promise<number>;
  };
  const io = (dir: string) => ({
    out: () => {},
    err: (line: string) => console.error(line),
    cwd: dir,
    env: { SKILLHOST_API_KEY: member },
    home: dir,
  });
  const sync = async (dir: string) => {
    const code = await runCli(['sync', '--server', base, '--dir', 'out'], io(dir));
    if (code !== 0) throw new Error(`sync exited with ${code}`);
  };
  const headers = { authorization: `Bearer ${member}` };
  try {
    const first: Timed[] = [];
    const naive: Timed[] = [];
    const unchanged: Timed[] = [];
    const oneChanged: Timed[] = [];
    for (let run = 0; run < RUNS; run++) {
      const dir = mkdtempSync(join(tmpdir(), 'skillhost-bench-sync-run-'));
      // Turn about, so neither is always the one that finds the server's caches cold.
      if (run % 2 === 0) naive.push(await timed(() => naiveMirror(base, headers, join(dir, 'naive'))));
      first.push(await timed(() => sync(dir)));
      if (run % 2 === 1) naive.push(await timed(() => naiveMirror(base, headers, join(dir, 'naive'))));
      unchanged.push(await timed(() => sync(dir)));
      writeFileSync(join(skillsDir, 'bench-skill-0007', 'references', 'guide.md'), `Guide 7, edit ${run}.\n`);
      const reload = await fetch(`${base}/v1/admin/skills/reload`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}` },
      });
      if (reload.status !== 200) throw new Error(`reload answered ${reload.status}`);
      oneChanged.push(await timed(() => sync(dir)));
      rmSync(dir, { recursive: true, force: true });
    }
    const listing = async (path: string) => {
      const times: number[] = [];
      for (let i = 0; i < 20; i++) {
        const t = await timed(async () => {
          const answer = await fetch(`${base}${path}`, { headers });
          await answer.arrayBuffer();
        });
        times.push(t.ms);
      }
      return median(times.slice(5));
    };
    const indexMs = await listing('/.well-known/agent-skills/index.json');
    const versionsMs = await listing('/.well-known/agent-skills/versions.json');
    const imports = await importBench(base, admin);

    const m = (list: Timed[]) => median(list.map((t) => t.ms));
    const r = (list: Timed[]) => median(list.map((t) => t.requests));
    const summary: SummaryLine[] = [
      {
        measure: `sync of ${SKILLS} skills into an empty folder`,
        value: m(first),
        unit: 'ms',
        baseline: { name: 'naive mirror (index + every file, unchecked)', value: m(naive) },
        target: '≤ 2× baseline',
        met: m(first) <= 2 * m(naive),
      },
      {
        measure: 'sync again, nothing changed: requests',
        value: r(unchanged),
        unit: 'requests',
        target: '1 (a 304)',
        met: r(unchanged) === 1,
      },
      {
        measure: 'sync again, one skill changed: requests',
        value: r(oneChanged),
        unit: 'requests',
        target: '≤ 3',
        met: r(oneChanged) <= 3,
      },
      {
        measure: `versions.json of ${SKILLS} skills, warm`,
        value: versionsMs,
        unit: 'ms',
        baseline: { name: 'index.json of the same skills', value: indexMs },
        target: '≤ 2× baseline',
        met: versionsMs <= 2 * indexMs,
      },
      {
        measure: `git import of ${IMPORT_SKILLS} skills`,
        value: imports.importMs,
        unit: 'ms',
        baseline: { name: 'git clone --depth 1 of the repository', value: imports.cloneMs },
      },
    ];
    const text = [
      '# Sync and import',
      '',
      `${SKILLS} skills (SKILL.md and a 480-byte reference each) served by a live Skillhost; medians of ${RUNS} runs.`,
      '',
      '| What | ms | requests |',
      '| --- | --- | --- |',
      `| naive mirror: index + every file, unchecked (baseline) | ${m(naive).toFixed(0)} | ${r(naive)} |`,
      `| skillhost sync into an empty folder | ${m(first).toFixed(0)} | ${r(first)} |`,
      `| skillhost sync, nothing changed | ${m(unchanged).toFixed(1)} | ${r(unchanged)} |`,
      `| skillhost sync, one skill changed | ${m(oneChanged).toFixed(1)} | ${r(oneChanged)} |`,
      `| GET index.json (warm) | ${indexMs.toFixed(1)} | 1 |`,
      `| GET versions.json (warm) | ${versionsMs.toFixed(1)} | 1 |`,
      '',
      `Git import of ${IMPORT_SKILLS} skills over git+file:// (median of 3): ${imports.importMs.toFixed(0)} ms; ` +
        `git clone --depth 1 of the same repository: ${imports.cloneMs.toFixed(0)} ms.`,
    ].join('\n');
    recordResults('sync', { skills: SKILLS, runs: RUNS, importSkills: IMPORT_SKILLS }, text, summary);
  } finally {
    await closeWorkspace(app.child, db, work);
  }
}

/** What a script without sync would do: the index, then every file, each written as it comes. */
async function naiveMirror(base: string, headers: Record<string, string>, dir: string): Promise<void> {
  const index = (await (await fetch(`${base}/.well-known/agent-skills/index.json`, { headers })).json()) as {
    skills: { name: string; files: { path: string; url: string }[] }[];
  };
  for (const skill of index.skills)
    for (const file of skill.files) {
      const bytes = Buffer.from(await (await fetch(`${base}${file.url}`, { headers })).arrayBuffer());
      const path = join(dir, skill.name, file.path);
      mkdirSync(join(path, '..'), { recursive: true });
      writeFileSync(path, bytes);
    }
}

/** A bare repository of IMPORT_SKILLS skills, imported (a fresh name each run) and cloned, 3 times each. */
async function importBench(base: string, admin: string): Promise<{ importMs: number; cloneMs: number }> {
  const root = mkdtempSync(join(tmpdir(), 'skillhost-bench-import-'));
  try {
    const imports: number[] = [];
    const clones: number[] = [];
    for (let run = 0; run < 3; run++) {
      const repo = join(root, `repo-${run}`);
      writeBenchSkills(join(repo, 'skills'), IMPORT_SKILLS);
      // A fresh set of names per run, so each import installs every skill anew.
      const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, stdio: 'ignore' });
      for (const folder of readdirSync(join(repo, 'skills'))) {
        const renamed = folder.replace('bench-skill-', `run${run}-skill-`);
        const skillMd = join(repo, 'skills', folder, 'SKILL.md');
        writeFileSync(skillMd, readFileSync(skillMd, 'utf8').replace(`name: ${folder}`, `name: ${renamed}`));
        renameSync(join(repo, 'skills', folder), join(repo, 'skills', renamed));
      }
      git('init', '-q', '-b', 'main');
      git('-c', 'user.name=bench', '-c', 'user.email=bench@example.test', 'add', '.');
      git('-c', 'user.name=bench', '-c', 'user.email=bench@example.test', 'commit', '-qm', 'skills');
      execFileSync('git', ['clone', '-q', '--bare', repo, `${repo}.git`], { stdio: 'ignore' });
      const url = pathToFileURL(`${repo}.git`).href;
      const clone = await timed(async () =>
        execFileSync('git', ['clone', '-q', '--depth', '1', url, join(root, `clone-${run}`)], { stdio: 'ignore' }),
      );
      clones.push(clone.ms);
      const imported = await timed(async () => {
        const answer = await fetch(`${base}/v1/admin/skills/import`, {
          method: 'POST',
          headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
          body: JSON.stringify({ source: `git+${url}#main:skills` }),
        });
        if (answer.status >= 300) throw new Error(`import answered ${answer.status}: ${await answer.text()}`);
      });
      imports.push(imported.ms);
    }
    return { importMs: median(imports), cloneMs: median(clones) };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (process.argv[2] === 'serve-app') void serveApp();
else
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
