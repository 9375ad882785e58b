import { describe, expect, it } from '@jest/globals';
import {
  benchScripts,
  markdownTable,
  type SummaryLine,
  summaryMarkdown,
  summarySection,
  withRatios,
} from '../../bench/bench-summary.js';

/** What `npm run bench` and every result's Summary section are made of: pure, so tested without running a bench. */
describe('bench summary', () => {
  const line = (overrides: Partial<SummaryLine> = {}): SummaryLine => ({
    measure: 'GET /v1/skills requests/s',
    value: 6000,
    unit: 'req/s',
    baseline: { name: 'bare node:http', value: 15000 },
    target: '≥ 0.60× baseline',
    met: false,
    ...overrides,
  });

  it('gives each line with a baseline its ratio, and none to a line without', () => {
    const [withBaseline, without] = withRatios([line(), line({ baseline: undefined })]);
    expect(withBaseline.ratio).toBeCloseTo(0.4);
    expect(without).not.toHaveProperty('ratio');
  });

  it("appends a table that shows the value beside its baseline, the ratio, the target and whether it's met", () => {
    const section = summarySection(
      [line(), line({ measure: 'rescan', value: 2.1, unit: 'ms', baseline: undefined })],
      '2 × CPU, Node v20',
    );
    expect(section).toContain('Machine: 2 × CPU, Node v20.');
    expect(section).toContain(
      '| GET /v1/skills requests/s | 6000 req/s | bare node:http: 15000 req/s | 0.40× | ≥ 0.60× baseline | **no** |',
    );
    expect(section).toContain('| rescan | 2.10 ms | no baseline |  | ≥ 0.60× baseline | **no** |');
  });

  it('pads short rows and escapes a pipe inside a cell', () => {
    expect(markdownTable(['a', 'value'], [['x|y']])).toBe('| a | value |\n|---|---:|\n| x\\|y |  |');
  });

  it("runs each bench:* script's node command without the build, flags kept, in name order", () => {
    const scripts = {
      build: 'tsc',
      'bench:reload': 'npm run build && node dist/bench/reload.bench.js',
      'bench:discovery': 'npm run build && node --expose-gc dist/bench/discovery.bench.js',
    };
    expect(benchScripts(scripts)).toEqual([
      { name: 'discovery', args: ['--expose-gc', 'dist/bench/discovery.bench.js'] },
      { name: 'reload', args: ['dist/bench/reload.bench.js'] },
    ]);
  });

  it('refuses a bench script that is not a node command, naming it and the shape it expects', () => {
    expect(() => benchScripts({ 'bench:odd': 'npm run build && sh bench.sh' })).toThrow(
      'package.json\'s "bench:odd" runs "sh bench.sh"; run-all expects "npm run build && node [flags] <file>"',
    );
  });

  it('lists every result, one without a summary as to re-run, one never run as to run, and the failed ones', () => {
    const markdown = summaryMarkdown(
      [
        { name: 'http', recordedAt: '2026-11-27T15:30:44Z', machine: '2 × CPU', summary: withRatios([line()]) },
        { name: 'mcp', recordedAt: '2026-11-27T05:45:02Z', machine: '2 × CPU' },
        { name: 'store', absent: true },
      ],
      ['store'],
    );
    expect(markdown).toContain(
      '| [http](http.md) | GET /v1/skills requests/s | 6000 req/s | bare node:http: 15000 req/s | 0.40× |',
    );
    expect(markdown).toContain('| [mcp](mcp.md) | no summary (re-run it) |');
    expect(markdown).toContain('| [store](store.md) | no results (run it) |');
    expect(markdown).toContain('| [http](http.md) | 2026-11-27T15:30:44Z | 2 × CPU |');
    expect(markdown).toContain('Failed in the last run (their results above are older): store.');
  });
});
