/**
 * Discovery benchmark (issue 2): Skillhost's discovery + validation + catalogue against the I/O
 * floor and the naive approach, on generated trees of 1,000 / 10,000 / 50,000 skill folders.
 *
 *   npm run bench:discovery            (writes bench/results/discovery.{md,json})
 *   BENCH_SIZES=1000,10000 npm run bench:discovery
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fg from 'fast-glob';
import matter from 'gray-matter';
import { buildSnapshot, type CatalogueSnapshot, discoverSkills, NO_COMMANDS } from '@skillhost/core';
import { machineName, recordResults, type SummaryLine } from './bench-support.js';

const SIZES = (process.env.BENCH_SIZES ?? '1000,10000,50000').split(',').map(Number);

function frontmatterFor(i: number): string {
  const name = `skill-${String(i).padStart(6, '0')}`;
  return [
    '---',
    `name: ${name}`,
    `description: Generates quarterly ${name} reports from CSV exports, checks totals against the ledger and ` +
      `drafts a summary. Use when the user asks for a report on ${name} data.`,
    'license: Apache-2.0',
    'compatibility: Requires Python 3.11 and network access to the ledger API',
    'metadata:',
    '  author: bench',
    `  version: "1.${i % 10}"`,
    '---',
    '',
  ].join('\n');
}

const BODY = `# Instructions\n\n${'Follow the steps carefully and report each result in a table. '.repeat(64)}\n`;

/** Writes the tree once per size and reuses it (a marker file says it is complete). */
function ensureTree(size: number): string {
  const root = join(tmpdir(), `skillhost-bench-${size}`);
  const marker = join(root, '.complete');
  if (existsSync(marker)) return root;
  mkdirSync(root, { recursive: true });
  for (let i = 0; i < size; i++) {
    const folder = join(root, `skill-${String(i).padStart(6, '0')}`);
    mkdirSync(join(folder, 'references'), { recursive: true });
    mkdirSync(join(folder, 'assets'), { recursive: true });
    writeFileSync(join(folder, 'SKILL.md'), frontmatterFor(i) + BODY);
    writeFileSync(join(folder, 'references', 'REFERENCE.md'), '# Reference\n\nDetails.\n');
    writeFileSync(join(folder, 'assets', 'template.json'), '{"columns":["a","b"]}\n');
  }
  writeFileSync(marker, new Date().toISOString());
  return root;
}

/** The least any scanner must do: list the folder, then open + read 4 KiB + close each SKILL.md. */
function floor(root: string): number {
  const buffer = Buffer.allocUnsafe(4096);
  let bytes = 0;
  for (const name of readdirSync(root)) {
    let fd: number;
    try {
      fd = openSync(join(root, name, 'SKILL.md'), 'r');
    } catch {
      continue;
    }
    bytes += readSync(fd, buffer, 0, 4096, 0);
    closeSync(fd);
  }
  return bytes;
}

function skillhost(root: string): CatalogueSnapshot {
  const started = performance.now();
  const result = discoverSkills({
    directories: [{ configured: root, path: root }],
    mode: 'standard',
    maxDepth: 1,
    maxSkills: 1_000_000,
  });
  return buildSnapshot(
    result,
    { validation: 'standard', includeLocation: false, catalogueFormat: 'json' },
    { scannedAt: new Date(), durationMs: performance.now() - started },
    NO_COMMANDS,
  );
}

/** What a quick implementation does: glob for SKILL.md, read each whole file, parse with gray-matter. */
function naive(root: string): number {
  (matter as unknown as { clearCache(): void }).clearCache();
  let count = 0;
  for (const file of fg.sync('**/SKILL.md', { cwd: root, absolute: true })) {
    const parsed = matter(readFileSync(file, 'utf8'));
    if (typeof parsed.data.name === 'string' && typeof parsed.data.description === 'string') count++;
  }
  return count;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

function time(fn: () => unknown): number {
  const started = performance.now();
  fn();
  return performance.now() - started;
}

/** Heap held by one snapshot beyond the bytes of its strings, per skill. */
function snapshotOverheadPerSkill(
  root: string,
  size: number,
): { heapPerSkill: number; stringsPerSkill: number; overheadPerSkill: number } {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with node --expose-gc');
  gc();
  const before = process.memoryUsage().heapUsed;
  const snapshot = skillhost(root);
  gc();
  const heap = process.memoryUsage().heapUsed - before;
  const seen = new Set<string>();
  let stringBytes = 0;
  const count = (value: unknown): void => {
    if (typeof value === 'string') {
      if (!seen.has(value)) {
        seen.add(value);
        // V8 stores Latin-1 strings one byte per character, others two; plus a 16-byte header.
        // biome-ignore lint/suspicious/noControlCharactersInRegex: the Latin-1 range starts at U+0000
        stringBytes += 16 + (/^[\x00-\xff]*$/.test(value) ? value.length : value.length * 2);
      }
    } else if (value !== null && typeof value === 'object') {
      for (const inner of Object.values(value)) count(inner);
    }
  };
  for (const skill of snapshot.skills.values()) count(skill);
  count(snapshot.catalogue('json'));
  if (snapshot.skills.size !== size) throw new Error(`expected ${size} skills, got ${snapshot.skills.size}`);
  return {
    heapPerSkill: heap / size,
    stringsPerSkill: stringBytes / size,
    overheadPerSkill: (heap - stringBytes) / size,
  };
}

interface Row {
  size: number;
  runs: number;
  floorMs: number;
  skillhostMs: number;
  naiveMs: number;
  skillhostOverFloor: number;
  naiveOverSkillhost: number;
  perSkillUs: number;
}

function main(): void {
  const rows: Row[] = [];
  for (const size of SIZES) {
    const root = ensureTree(size);
    const runs = size >= 50_000 ? 5 : 9;
    // One untimed pass of each warms the page cache and the JIT.
    floor(root);
    skillhost(root);
    naive(root);
    const samples = { floor: [] as number[], skillhost: [] as number[], naive: [] as number[] };
    for (let run = 0; run < runs; run++) {
      samples.floor.push(time(() => floor(root)));
      samples.skillhost.push(time(() => skillhost(root)));
      samples.naive.push(time(() => naive(root)));
    }
    const row: Row = {
      size,
      runs,
      floorMs: median(samples.floor),
      skillhostMs: median(samples.skillhost),
      naiveMs: median(samples.naive),
      skillhostOverFloor: median(samples.skillhost) / median(samples.floor),
      naiveOverSkillhost: median(samples.naive) / median(samples.skillhost),
      perSkillUs: (median(samples.skillhost) * 1000) / size,
    };
    rows.push(row);
    console.log(JSON.stringify(row));
  }
  const memorySize = SIZES.includes(10_000) ? 10_000 : SIZES[0];
  const memory = snapshotOverheadPerSkill(ensureTree(memorySize), memorySize);
  console.log(JSON.stringify({ memorySize, ...memory }));

  const fmt = (n: number, digits = 1) => n.toFixed(digits);
  const ten = rows.find((r) => r.size === 10_000);
  const lines = [
    '# Discovery benchmark',
    '',
    `Recorded ${new Date().toISOString()} on ${machineName()}; \`npm run bench:discovery\`.`,
    'Each tree: N skill folders, ~300-byte frontmatter + ~4 KiB body, plus references/ and assets/ files. Warm ' +
      'page cache;',
    'one untimed pass of each approach first, then the three interleaved; medians in milliseconds.',
    '',
    '- **floor**: readdir, then open + read the first 4 KiB + close of each SKILL.md (no parsing at all)',
    '- **skillhost**: discovery + frontmatter parsing + validation (standard mode) + the snapshot with the ' +
      'configured (json) catalogue rendered',
    '- **naive**: fast-glob `**/SKILL.md`, read each whole file, parse with gray-matter',
    '',
    '| skills | runs | floor ms | skillhost ms | naive ms | skillhost / floor | naive / skillhost | µs per skill |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map(
      (r) =>
        `| ${r.size} | ${r.runs} | ${fmt(r.floorMs)} | ${fmt(r.skillhostMs)} | ${fmt(r.naiveMs)} | ` +
        `${fmt(r.skillhostOverFloor, 2)}× | ${fmt(r.naiveOverSkillhost, 2)}× | ${fmt(r.perSkillUs, 2)} |`,
    ),
    '',
    `Snapshot memory at ${memorySize} skills: ${fmt(memory.heapPerSkill, 0)} B heap per skill, of which ` +
      `${fmt(memory.stringsPerSkill, 0)} B are its strings (names, descriptions, paths, frontmatter values, ` +
      `catalogue text); **${fmt(memory.overheadPerSkill, 0)} B per skill beyond its strings**.`,
    '',
    '## Targets (issue 2, at 10,000 skills)',
    '',
    ten
      ? `- Skillhost ≤ 2.5× the floor: **${fmt(ten.skillhostOverFloor, 2)}×** — ` +
        `${ten.skillhostOverFloor <= 2.5 ? 'met' : 'NOT met'}`
      : '- (10,000 not run)',
    ten
      ? `- Skillhost ≥ 3× faster than naive: **${fmt(ten.naiveOverSkillhost, 2)}×** — ` +
        `${ten.naiveOverSkillhost >= 3 ? 'met' : 'NOT met'}`
      : '',
    `- Snapshot ≤ 1 KiB per skill beyond its strings: **${fmt(memory.overheadPerSkill, 0)} B** — ` +
      `${memory.overheadPerSkill <= 1024 ? 'met' : 'NOT met'}`,
    '',
  ];
  recordResults(
    'discovery',
    { rows, memory: { size: memorySize, ...memory } },
    lines.join('\n'),
    summaryOf(rows, memory),
  );
}

/** At 10,000 skills (or the largest size run): Skillhost against the I/O floor and the naive approach. */
function summaryOf(rows: Row[], memory: { overheadPerSkill: number }): SummaryLine[] {
  const row = rows.find((r) => r.size === 10_000) ?? rows[rows.length - 1];
  const at = `${row.size} skills`;
  return [
    {
      measure: `Skillhost discovery + snapshot, ${at}`,
      value: row.skillhostMs,
      unit: 'ms',
      baseline: { name: 'the floor (readdir + first 4 KiB)', value: row.floorMs },
      target: '≤ 2.5× baseline',
      met: row.skillhostOverFloor <= 2.5,
    },
    {
      measure: `Skillhost discovery + snapshot, ${at}`,
      value: row.skillhostMs,
      unit: 'ms',
      baseline: { name: 'naive (fast-glob + gray-matter)', value: row.naiveMs },
      target: '≤ 0.33× baseline (3× faster)',
      met: row.naiveOverSkillhost >= 3,
    },
    {
      measure: 'snapshot heap per skill beyond its strings',
      value: memory.overheadPerSkill,
      unit: 'B',
      target: '≤ 1024 B',
      met: memory.overheadPerSkill <= 1024,
    },
  ];
}

main();
