import { api, ApiFailure } from './api.js';
import { byId, h } from './dom.js';

/**
 * The admins' Skills dashboard (GET /v1/admin/skills/usage): usage over time, the funnel, the skills nothing
 * activated, and error rates. Charts are inline SVG drawn here: a few rectangles need no chart library.
 */

interface Counts {
  offered: number;
  activatedTool: number;
  activatedSlash: number;
  activatedCommand: number;
  activatedMcp: number;
  activatedGateway: number;
  activatedApi: number;
  resourcesRead: number;
  scriptsRun: number;
  errors: number;
  turns: number;
}

interface UsageRow extends Counts {
  skill: string;
  day?: string;
}

interface UsageReport {
  from: string;
  to: string;
  rows: UsageRow[];
  totals: Counts;
  neverActivated: string[];
}

const SVG = 'http://www.w3.org/2000/svg';

function svg<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes: Record<string, string | number>,
  ...children: (Node | string)[]
): SVGElementTagNameMap[K] {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  element.append(...children);
  return element;
}

export function activations(counts: Counts): number {
  return (
    counts.activatedTool +
    counts.activatedSlash +
    counts.activatedCommand +
    counts.activatedMcp +
    counts.activatedGateway +
    counts.activatedApi
  );
}

/** Shows the bar's "Skills dashboard" button to admins. */
export function offerUsageDashboard(role: string | undefined): void {
  byId('open-usage').hidden = role !== 'admin';
}

export function wireUsageDashboard(): void {
  const dialog = byId<HTMLDialogElement>('usage-dialog');
  byId('open-usage').addEventListener('click', () => {
    byId('usage-error').textContent = '';
    dialog.showModal();
    refreshUsage().catch(showUsageProblem);
  });
}

async function refreshUsage(): Promise<void> {
  const [byDay, bySkill] = await Promise.all([
    api<UsageReport>('GET', '/v1/admin/skills/usage?groupBy=day'),
    api<UsageReport>('GET', '/v1/admin/skills/usage'),
  ]);
  byId('usage-range').textContent = `${bySkill.from} to ${bySkill.to} (UTC days)`;
  byId('usage-over-time').replaceChildren(overTimeChart(byDay));
  byId('usage-funnel').replaceChildren(funnelChart(bySkill.totals));
  byId('usage-never').replaceChildren(
    ...(bySkill.neverActivated.length === 0
      ? [h('li', { text: 'Every skill was activated in this range.' })]
      : bySkill.neverActivated.map((name) => h('li', { text: name }))),
  );
  byId('usage-errors').replaceChildren(errorRates(bySkill.rows));
}

/** Activations and turns per day over the range, as bars (activations) with the day's turns written under. */
function overTimeChart(report: UsageReport): Element {
  const days = daysOf(report.from, report.to);
  const perDay = new Map(days.map((day) => [day, { activated: 0, turns: 0 }]));
  for (const row of report.rows) {
    const day = perDay.get(row.day ?? '');
    if (day === undefined) continue;
    day.activated += activations(row);
    day.turns += row.turns;
  }
  const max = Math.max(1, ...[...perDay.values()].map((d) => d.activated));
  const width = 600;
  const height = 160;
  const slot = width / days.length;
  const bars = days.map((day) => {
    const { activated, turns } = perDay.get(day)!;
    const barHeight = (activated / max) * (height - 20);
    return svg(
      'rect',
      {
        x: (days.indexOf(day) * slot + 1).toFixed(1),
        y: (height - barHeight).toFixed(1),
        width: Math.max(1, slot - 2).toFixed(1),
        height: barHeight.toFixed(1),
        class: 'usage-bar',
        'data-day': day,
        'data-activations': activated,
      },
      svg('title', {}, `${day}: ${activated} activations, ${turns} turns`),
    );
  });
  return svg(
    'svg',
    {
      viewBox: `0 0 ${width} ${height}`,
      role: 'img',
      'aria-label': `Activations per day, most ${max}`,
      class: 'usage-chart',
    },
    ...bars,
  );
}

/** The funnel's steps over the range, each a bar as wide as its share of the widest. */
function funnelChart(totals: Counts): Element {
  const steps: [string, number][] = [
    ['Offered', totals.offered],
    ['Activated', activations(totals)],
    ['Resources read', totals.resourcesRead],
    ['Scripts run', totals.scriptsRun],
    ['Turns', totals.turns],
  ];
  const max = Math.max(1, ...steps.map(([, n]) => n));
  const width = 600;
  const row = 28;
  const label = 130;
  const parts = steps.flatMap(([name, n], index) => [
    svg('text', { x: 0, y: index * row + 18, class: 'usage-label' }, name),
    svg('rect', {
      x: label,
      y: index * row + 4,
      width: (((width - label - 60) * n) / max).toFixed(1),
      height: row - 8,
      class: 'usage-bar',
      'data-step': name,
      'data-count': n,
    }),
    svg('text', { x: width - 50, y: index * row + 18, class: 'usage-label' }, String(n)),
  ]);
  return svg(
    'svg',
    { viewBox: `0 0 ${width} ${steps.length * row}`, role: 'img', 'aria-label': 'The funnel', class: 'usage-chart' },
    ...parts,
  );
}

/** Per skill: failed calls out of its activations, reads and script runs, worst first. */
function errorRates(rows: UsageRow[]): Element {
  const rated = rows
    .map((row) => {
      const calls = activations(row) + row.resourcesRead + row.scriptsRun;
      return { skill: row.skill, errors: row.errors, calls, rate: calls === 0 ? 0 : row.errors / calls };
    })
    .filter((row) => row.calls > 0 || row.errors > 0)
    .sort((a, b) => b.rate - a.rate || a.skill.localeCompare(b.skill));
  if (rated.length === 0) return h('p', { text: 'No skill was used in this range.' });
  return h(
    'table',
    { class: 'usage-errors' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { text: 'Skill' }),
        h('th', { text: 'Errors' }),
        h('th', { text: 'Calls' }),
        h('th', { text: 'Error rate' }),
      ),
    ),
    h(
      'tbody',
      {},
      ...rated.map((row) =>
        h(
          'tr',
          { 'data-skill': row.skill },
          h('td', { text: row.skill }),
          h('td', { text: String(row.errors) }),
          h('td', { text: String(row.calls) }),
          h('td', { text: `${Math.round(row.rate * 100)}%` }),
        ),
      ),
    ),
  );
}

/** Every UTC day from `from` to `to`, inclusive. */
function daysOf(from: string, to: string): string[] {
  const days: string[] = [];
  for (let at = Date.parse(`${from}T00:00:00Z`); at <= Date.parse(`${to}T00:00:00Z`); at += 86_400_000)
    days.push(new Date(at).toISOString().slice(0, 10));
  return days;
}

function showUsageProblem(error: unknown): void {
  const problem = error instanceof ApiFailure ? `${error.error.message} (${error.error.code})` : String(error);
  byId('usage-error').textContent = problem;
}
