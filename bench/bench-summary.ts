import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';

/**
 * Every benchmark's headline figures in one shape, so `npm run bench` can put them in one table. Read by
 * recordResults (each bench's own files) and by run-all (the table of all of them); nothing here loads the app.
 */

/** From the built file (dist/bench/), as every bench runs. */
export const RESULTS_DIR = fileURLToPath(new URL('../../bench/results', import.meta.url));

/** One headline figure, beside the same quantity measured in the same run on what it is compared with. */
export interface SummaryLine {
  measure: string;
  value: number;
  unit: string;
  /** Measured in the same run; absent where the bench has nothing to compare with (shown as "no baseline"). */
  baseline?: { name: string; value: number };
  /** As a person reads it, e.g. "≥ 60% of baseline", "≤ 3 ms". */
  target?: string;
  met?: boolean;
}

/** A line as written to a result's JSON: `ratio` is value / baseline.value. */
export interface RecordedLine extends SummaryLine {
  ratio?: number;
}

/** Where a result was measured: cores × CPU model, Node version. */
export function machineName(): string {
  return `${cpus().length} × ${cpus()[0]?.model.trim() ?? 'unknown CPU'}, Node ${process.version}`;
}

export function withRatios(summary: SummaryLine[]): RecordedLine[] {
  return summary.map((line) =>
    line.baseline === undefined ? line : { ...line, ratio: line.value / line.baseline.value },
  );
}

/** Three significant figures or so: 17819, 538, 12.4, 0.65, 0.012. */
export function formatFigure(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const size = Math.abs(n);
  if (size >= 100 || Number.isInteger(n)) return n.toFixed(0);
  if (size >= 10) return n.toFixed(1);
  if (size >= 0.1) return n.toFixed(2);
  return n.toPrecision(2);
}

const withUnit = (n: number, unit: string) => (unit === '' ? formatFigure(n) : `${formatFigure(n)} ${unit}`);

/** The cells after the leading ones: measure, value, same-run baseline, ratio, target, met. */
export function summaryCells(line: RecordedLine): string[] {
  const ratio = line.ratio ?? (line.baseline === undefined ? undefined : line.value / line.baseline.value);
  return [
    line.measure,
    withUnit(line.value, line.unit),
    line.baseline === undefined ? 'no baseline' : `${line.baseline.name}: ${withUnit(line.baseline.value, line.unit)}`,
    ratio === undefined ? '' : `${ratio.toFixed(2)}×`,
    line.target ?? '',
    line.met === undefined ? '' : line.met ? 'yes' : '**no**',
  ];
}

export const SUMMARY_HEADER = ['measure', 'value', 'same-run baseline', 'ratio', 'target', 'met'];

/** A markdown table; `right` names the columns aligned right; a short row is padded with empty cells. */
export function markdownTable(header: string[], rows: string[][], right: string[] = ['value', 'ratio']): string {
  const cellText = (cell: string) => cell.replaceAll('|', '\\|').replaceAll('\n', ' ');
  return [
    `| ${header.join(' | ')} |`,
    `|${header.map((h) => (right.includes(h) ? '---:' : '---')).join('|')}|`,
    ...rows.map((row) => `| ${header.map((_, i) => cellText(row[i] ?? '')).join(' | ')} |`),
  ].join('\n');
}

/** The section recordResults appends to a bench's markdown. */
export function summarySection(summary: SummaryLine[], machine: string): string {
  return [
    '## Summary',
    '',
    `Machine: ${machine}. The baseline is measured in the same run; ratio = value / baseline.`,
    '',
    markdownTable(SUMMARY_HEADER, withRatios(summary).map(summaryCells)),
    '',
  ].join('\n');
}

/** Writes markdown formatted as `npm run lint` checks it (tables padded), so a fresh result lands as it is. */
export function writeMarkdown(file: string, text: string): void {
  writeFileSync(file, text);
  const biome = fileURLToPath(new URL('../../node_modules/@biomejs/biome/bin/biome', import.meta.url));
  execFileSync(process.execPath, [biome, 'format', '--write', file], { stdio: 'ignore' });
}

/** What `npm run bench` runs and gathers (bench/run-all.ts does the running and the files). */

const BUILD = 'npm run build && ';

export interface Bench {
  name: string;
  /** The script's node command, without the build every script starts with. */
  args: string[];
}

/** The `bench:*` scripts of package.json's `scripts`, each as the node command it runs after building. */
export function benchScripts(scripts: Record<string, string>): Bench[] {
  return Object.entries(scripts)
    .filter(([script]) => script.startsWith('bench:'))
    .map(([script, command]) => {
      const node = command.startsWith(BUILD) ? command.slice(BUILD.length) : command;
      const [program, ...args] = node.trim().split(/\s+/);
      if (program !== 'node')
        throw new Error(`package.json's "${script}" runs "${node}"; run-all expects "${BUILD}node [flags] <file>"`);
      return { name: script.slice('bench:'.length), args };
    })
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** A bench/results/<name>.json as run-all reads it. */
export interface Recorded {
  name: string;
  recordedAt?: string;
  machine?: string;
  summary?: RecordedLine[];
  /** A bench:* script with no result file yet. */
  absent?: boolean;
}

/** The table of every recorded summary, and when and where each was recorded. */
export function summaryMarkdown(results: Recorded[], failed: string[]): string {
  const link = (name: string) => `[${name}](${name}.md)`;
  const rows = results.flatMap((r) => {
    if (Array.isArray(r.summary)) return r.summary.map((line) => [link(r.name), ...summaryCells(line)]);
    return [[link(r.name), r.absent ? 'no results (run it)' : 'no summary (re-run it)']];
  });
  return [
    '# Benchmarks: summary',
    '',
    'Written by `npm run bench` (every benchmark, then this table) or `npm run bench -- --table` (the table alone), ' +
      "from each result's `summary` in bench/results/*.json. Each baseline was measured in the same run as its " +
      'value, on the same machine; ratio = value / baseline.',
    '',
    markdownTable(['bench', ...SUMMARY_HEADER], rows),
    '',
    markdownTable(
      ['bench', 'recorded', 'machine'],
      results.map((r) => [link(r.name), r.recordedAt ?? '', r.machine ?? '']),
      [],
    ),
    '',
    ...(failed.length === 0
      ? []
      : [`Failed in the last run (their results above are older): ${failed.join(', ')}.`, '']),
  ].join('\n');
}
