import { copyButton, h } from './dom.js';

/** A tool card as the API stores it (`toolCards` of an assistant message, `tool-result` events). */
export interface ToolCard {
  id: string;
  tool: string;
  args: Record<string, unknown>;
  status: 'ok' | 'error';
  summary: {
    skill: string | null;
    path?: string;
    truncated: boolean;
    version?: string;
    versionWarning?: string;
    count?: number;
    command?: string;
    exitCode?: number | null;
  };
  output: string;
  durationMs?: number;
}

/** Output longer than this is announced with its length in the summary line. */
const LONG_OUTPUT = 280;

/** One card: tool, skill, path, status, truncated, duration and version; the output collapsible, with copy. */
export function renderCard(card: ToolCard): HTMLElement {
  const error = card.status === 'error';
  const facts = h(
    'dl',
    { class: 'facts' },
    ...fact('skill', card.summary.skill ?? undefined),
    ...fact('path', card.summary.path),
    ...fact('status', card.status),
    ...fact('truncated', card.summary.truncated ? 'yes' : 'no'),
    ...fact('duration', card.durationMs === undefined ? undefined : `${card.durationMs} ms`),
    ...fact('version', card.summary.version === undefined ? undefined : card.summary.version.slice(0, 19)),
  );
  // Focusable, so its scrolling works from the keyboard too.
  const output = h('pre', {
    class: 'output',
    tabindex: '0',
    'aria-label': `Output of ${card.tool}`,
    text: card.output,
  });
  const copy = copyButton(() => card.output, output, `Copy the output of ${card.tool}`);
  const long = card.output.length > LONG_OUTPUT;
  // Collapsed until asked for (RemcoChat: a skill's body is not dumped into the conversation, but it is there to expand
  // and copy).
  const details = h(
    'details',
    { class: 'card-output' },
    h('summary', { text: long ? `Output (${card.output.length} characters)` : 'Output' }),
    output,
    copy,
  );
  return h(
    'article',
    {
      class: error ? 'card card-error' : 'card',
      'data-tool': card.tool,
      'data-status': card.status,
      'aria-label': `${card.tool} ${card.status === 'ok' ? 'succeeded' : 'failed'}`,
    },
    h(
      'header',
      {},
      h('strong', { class: 'tool', text: card.tool }),
      h('span', { class: `badge badge-${card.status}`, text: error ? 'error' : 'ok' }),
    ),
    facts,
    error ? h('p', { class: 'card-message', role: 'note', text: firstLine(card.output) }) : null,
    details,
  );
}

/** A call that has not answered yet. */
export function renderPendingCard(call: { id: string; tool: string; args: Record<string, unknown> }): HTMLElement {
  const skill =
    typeof call.args.name === 'string'
      ? call.args.name
      : typeof call.args.skill === 'string'
        ? call.args.skill
        : undefined;
  return h(
    'article',
    { class: 'card card-pending', 'data-call': call.id, 'aria-busy': 'true' },
    h('header', {}, h('strong', { class: 'tool', text: call.tool }), h('span', { class: 'badge', text: 'running' })),
    skill === undefined ? null : h('p', { text: `skill ${skill}` }),
  );
}

function fact(term: string, value: string | undefined): HTMLElement[] {
  return value === undefined ? [] : [h('dt', { text: term }), h('dd', { text: value })];
}

function firstLine(text: string): string {
  return text.split('\n')[0].slice(0, 300);
}
