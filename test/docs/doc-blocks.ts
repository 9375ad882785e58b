/**
 * The fenced code blocks of a Markdown file, as the docs test runs them (test/docs/doc-examples.e2e-spec.ts).
 *
 * How an author marks a block: an HTML comment on the line just above the fence (invisible on
 * GitHub), `<!-- docs-test: DIRECTIVE -->`, where DIRECTIVE is one of
 * - `server`: a shell block that starts Skillhost; the test starts it in the background and waits
 *   until it is ready, and the blocks after it run against it;
 * - `not run: REASON`: a block that cannot run here (a Docker engine, a real agent CLI…); the test
 *   lists it with its reason;
 * - `skill`: a Markdown block that is a whole SKILL.md, validated as discovery validates one;
 * - `command NAME`: a Markdown block that is the command file NAME.md;
 * - `codex config`, `claude config`, `gemini config`, `goose config`: an agent's MCP configuration,
 *   checked for what that agent reads.
 * Every other block runs by its language, and a block with neither a runner nor a directive fails.
 */
export type Directive =
  | { kind: 'server' }
  | { kind: 'not-run'; reason: string }
  | { kind: 'skill' }
  | { kind: 'command'; name: string }
  | { kind: 'agent-config'; agent: AgentName };

export const AGENTS = ['codex', 'claude', 'gemini', 'opencode', 'goose'] as const;
export type AgentName = (typeof AGENTS)[number];

export interface DocBlock {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The first word of the info string, lower-cased ('' when none). */
  lang: string;
  /** The block's text, its list indentation removed. */
  text: string;
  directive?: Directive;
  /** A directive comment this file has that could not be read (reported as a failure). */
  directiveError?: string;
}

export type Runner =
  | 'shell'
  | 'server'
  | 'toml'
  | 'json'
  | 'yaml'
  | 'typescript'
  | 'javascript'
  | 'graphql'
  | 'skill'
  | 'command'
  | 'agent-config';

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([^`]*)$/;
const DIRECTIVE = /^\s*<!--\s*docs-test:\s*(.*?)\s*-->\s*$/;

export function extractBlocks(file: string, markdown: string): DocBlock[] {
  const lines = markdown.split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (open === null) continue;
    const [, indent, fence] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const close = lines[j].trim();
      if (close.startsWith(fence[0].repeat(fence.length)) && /^(`+|~+)$/.test(close)) break;
      body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j].trimStart());
    }
    const block: DocBlock = {
      file,
      line: i + 1,
      lang: (open[3].trim().split(/\s+/)[0] ?? '').toLowerCase(),
      text: body.join('\n'),
    };
    const above = i > 0 ? DIRECTIVE.exec(lines[i - 1]) : null;
    if (above !== null) {
      const parsed = parseDirective(above[1]);
      if (typeof parsed === 'string') block.directiveError = parsed;
      else block.directive = parsed;
    }
    blocks.push(block);
    i = j;
  }
  return blocks;
}

export function parseDirective(text: string): Directive | string {
  const notRun = /^not run:\s*(.*)$/.exec(text);
  if (notRun !== null)
    return notRun[1].trim().length >= 10
      ? { kind: 'not-run', reason: notRun[1].trim() }
      : `"not run:" needs a reason a reader can check (got "${notRun[1].trim()}")`;
  if (text === 'server') return { kind: 'server' };
  if (text === 'skill') return { kind: 'skill' };
  const command = /^command ([a-z0-9_-]+)$/.exec(text);
  if (command !== null) return { kind: 'command', name: command[1] };
  const agent = /^(\w+) config$/.exec(text);
  if (agent !== null && (AGENTS as readonly string[]).includes(agent[1]))
    return { kind: 'agent-config', agent: agent[1] as AgentName };
  return (
    `unknown docs-test directive "${text}"; expected server, not run: REASON, skill, command NAME or one of ` +
    `${AGENTS.map((a) => `${a} config`).join(', ')}`
  );
}

const LANG_RUNNERS: Record<string, Runner> = {
  sh: 'shell',
  bash: 'shell',
  shell: 'shell',
  toml: 'toml',
  json: 'json',
  yaml: 'yaml',
  yml: 'yaml',
  ts: 'typescript',
  typescript: 'typescript',
  js: 'javascript',
  mjs: 'javascript',
  javascript: 'javascript',
  graphql: 'graphql',
};

/** How the test runs a block; undefined for a block marked `not run` or one nothing can run (a failure). */
export function runnerOf(block: DocBlock): Runner | undefined {
  const directive = block.directive;
  if (directive?.kind === 'not-run') return undefined;
  if (directive?.kind === 'server') return LANG_RUNNERS[block.lang] === 'shell' ? 'server' : undefined;
  if (directive?.kind === 'skill' || directive?.kind === 'command')
    return block.lang === 'markdown' || block.lang === 'md' ? directive.kind : undefined;
  if (directive?.kind === 'agent-config') return 'agent-config';
  return LANG_RUNNERS[block.lang];
}

/**
 * One command of a shell block with the output the block says it prints: comment lines right
 * after it that start with `# → ` (`…` matches anything, also across lines; a line that is only
 * `…` any number of lines), and `# [exit N]` when it is meant to end with status N.
 */
export interface ShellStep {
  /** 1-based line within the block. */
  line: number;
  command: string;
  expected: string[];
  exitCode: number;
}

const EXPECTED = /^#\s*→\s?(.*)$/;
const EXIT = /^#\s*\[exit (\d+)\]\s*$/;

export function splitShellSteps(text: string): ShellStep[] {
  const lines = text.split('\n');
  const steps: ShellStep[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const trimmed = line.trim();
    if (EXPECTED.test(trimmed) || EXIT.test(trimmed)) {
      const last = steps[steps.length - 1];
      if (last === undefined) throw new Error(`line ${i + 1}: "${trimmed}" follows no command`);
      const exit = EXIT.exec(trimmed);
      if (exit !== null) last.exitCode = Number(exit[1]);
      else last.expected.push(EXPECTED.exec(trimmed)![1]);
      continue;
    }
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const start = i;
    const command = [line];
    // A command goes on past a trailing backslash and through a here-document.
    const heredoc = /<<-?\s*'?"?(\w+)'?"?/.exec(line);
    while (/\\$/.test(lines[i]) && i + 1 < lines.length) command.push(lines[++i]);
    if (heredoc !== null) while (i + 1 < lines.length && lines[i].trim() !== heredoc[1]) command.push(lines[++i]);
    steps.push({ line: start + 1, command: command.join('\n'), expected: [], exitCode: 0 });
  }
  return steps;
}

/** Whether `output` is what the expected lines say (trailing blanks ignored; `…` is a wildcard). */
export function matchesExpected(expected: readonly string[], output: string): boolean {
  // Each output line is matched with its line end, so a line that is only `…` can stand for none.
  const pattern = expected
    .map((line) =>
      line.trim() === '…' ? '(?:[^\\n]*\\n)*?' : `${line.trimEnd().split('…').map(escapeRegExp).join('[\\s\\S]*?')}\\n`,
    )
    .join('');
  return new RegExp(`^${pattern}$`).test(`${normalise(output)}\n`);
}

export function normalise(output: string): string {
  return output
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trim();
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The addresses a reader uses, and what the test puts in their place. */
export interface Addresses {
  /** `http://127.0.0.1:<port>` of the live server. */
  server: string;
  /** The scripted model's base URL (`http://127.0.0.1:<port>/v1`). */
  model: string;
}

/** Rewrites the documented addresses (the default port 3000, a local Ollama) to the live ones. */
export function rewriteAddresses(text: string, to: Addresses): string {
  const port = new URL(to.server).port;
  return text
    .replaceAll('http://127.0.0.1:11434/v1', to.model)
    .replace(
      /\b(https?|wss?):\/\/(127\.0\.0\.1|localhost):3000\b/g,
      (_match, scheme: string, host: string) => `${scheme}://${host}:${port}`,
    );
}
