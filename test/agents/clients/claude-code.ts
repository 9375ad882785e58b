import { type CliRun, runCli } from './cli-run.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/** The pinned Claude Code (test/agents/clients.json), installed by test/agents/install.mjs: a native executable. */
export const CLAUDE = resolve(process.cwd(), '.agents', 'claude-code', 'node_modules', '.bin', 'claude');

/** The URL in the README's snippet; a run puts the test server's in its place. */
const README_URL = 'http://127.0.0.1:3000/mcp';

/**
 * What the README tells a Claude Code user to run: the shell puts the key in, and Claude Code
 * stores the header in ~/.claude.json for the folder it was run in (its default `local` scope).
 */
export const README_SNIPPET =
  `claude mcp add --transport http skillhost ${README_URL} --header "Authorization: ` + `Bearer $SKILLHOST_API_KEY"`;

/** What a user must also know, as measured by test/agents/claude-code.agents-spec.ts. */
export const README_NOTES: string[] = [
  'Run it in your project folder: it adds Skillhost for that folder only (add `--scope user` for every folder).',
  'The shell puts the key into ~/.claude.json as it is; for a new key, run `claude mcp remove skillhost` and ' +
    'the command again.',
  'Allow the tools: Claude Code asks before each Skillhost tool call, and `claude -p` refuses them unless run ' +
    'with `--allowedTools mcp__skillhost`.',
  "`claude mcp list` shows whether Skillhost connected, with the server's message when the key is refused; " +
    '`claude -p` does not say.',
  "A skill's prompt is `/mcp__skillhost__<skill> <request>`: the model sees the whole request, but Claude Code " +
    'passes only its first word to Skillhost.',
];

export interface RunOptions {
  /** Skillhost's `/mcp` URL. */
  mcpUrl: string;
  /** The API key the user puts in `SKILLHOST_API_KEY`. */
  key: string;
  /** The scripted model's origin (`ANTHROPIC_BASE_URL`). */
  modelUrl: string;
  /** What the user types: a request, or a slash command such as `/mcp__skillhost__internal-comms …`. */
  prompt: string;
  timeoutMs: number;
  /** More arguments for `claude -p` (a permission a test needs). */
  args?: string[];
}

export type RunResult = CliRun;

/**
 * Everything that would call a server other than the scripted model and Skillhost is switched off
 * (update checks, telemetry, error reports, feature flags, surveys), so a run never waits on the
 * closed network.
 */
export const QUIET_ENV = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  DISABLE_AUTOUPDATER: '1',
  DISABLE_TELEMETRY: '1',
  DISABLE_ERROR_REPORTING: '1',
  DISABLE_BUG_COMMAND: '1',
  CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: '1',
};

/**
 * Runs Claude Code headless for one prompt, as a user who followed the README would: in a fresh
 * HOME and project folder, a shell runs README_SNIPPET (the test server's URL in place of the
 * README's, the key in SKILLHOST_API_KEY), then `claude -p <prompt>`. The model is the scripted
 * one, reached with a dummy key. On timeout the CLI and its children are killed.
 */
export function run(options: RunOptions): Promise<RunResult> {
  return afterAdding(options, ['-p', options.prompt, ...(options.args ?? [])]);
}

/**
 * `claude mcp list` after the README's command: where a user sees whether Skillhost connected
 * (headless `-p` runs say nothing of a server that failed; the interactive UI points to `/mcp`).
 */
export function listServers(options: Omit<RunOptions, 'prompt' | 'args'>): Promise<RunResult> {
  return afterAdding(options, ['mcp', 'list']);
}

async function afterAdding(options: Omit<RunOptions, 'prompt' | 'args'>, args: string[]): Promise<RunResult> {
  const home = mkdtempSync(join(tmpdir(), 'claude-home-'));
  const project = mkdtempSync(join(tmpdir(), 'claude-project-'));
  const env = {
    // The snippet's `claude` is the pinned one.
    PATH: `${dirname(CLAUDE)}:${process.env.PATH ?? '/usr/bin:/bin'}`,
    HOME: home,
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    SKILLHOST_API_KEY: options.key,
    ANTHROPIC_BASE_URL: options.modelUrl,
    ANTHROPIC_API_KEY: 'sk-ant-scripted',
    ...QUIET_ENV,
  };
  const spawnOptions = { cwd: project, env, timeoutMs: options.timeoutMs };
  try {
    const added = await runCli(
      '/bin/sh',
      ['-c', README_SNIPPET.replace(README_URL, () => options.mcpUrl)],
      spawnOptions,
    );
    if (added.code !== 0) return added;
    return await runCli(CLAUDE, args, spawnOptions);
  } finally {
    rmSync(home, { recursive: true, force: true });
    rmSync(project, { recursive: true, force: true });
  }
}
