import { type CliRun, runCli } from './cli-run.js';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The pinned Gemini CLI (clients.json `gemini-cli`), installed by test/agents/install.mjs. */
export const GEMINI_BIN = resolve(
  process.cwd(),
  '.agents',
  'gemini-cli',
  'node_modules',
  '@google',
  'gemini-cli',
  'bundle',
  'gemini.js',
);

/**
 * What the README gives Gemini CLI users to paste, with its URL. It adds the server to the user's
 * `~/.gemini/settings.json` (`url` with `type: "http"`, the headers, `trust: true`), leaving their
 * other settings be. The single quotes keep `$SKILLHOST_API_KEY` unexpanded in the file: Gemini CLI
 * expands `$VAR` in every settings string when it loads them (packages/cli/src/utils/envVarResolver.ts),
 * so the key stays in the environment. `--trust` becomes a policy rule allowing `mcp_skillhost_*`:
 * without it each call would ask, and headless (`-p`) a tool that would ask is not even offered
 * (the policy engine's default decision is DENY when not interactive).
 */
export const README_SNIPPET =
  "gemini mcp add --scope user --transport http --trust -H 'Authorization: Bearer $SKILLHOST_API_KEY' skillhost " +
  'http://127.0.0.1:3000/mcp';

/** What else a user must know, from what this suite measured with the pinned version. */
export const README_NOTES: string[] = [
  "Set SKILLHOST_API_KEY in the environment Gemini CLI starts in; the settings file keeps only the variable's name.",
  'Trust the folder you start Gemini CLI in (it asks on first start; headless `gemini -p` refuses an untrusted ' +
    'folder unless given --skip-trust).',
  'Keep --trust: without it Gemini CLI asks before each Skillhost tool call, and headless (`gemini -p`) it does ' +
    'not offer them to the model at all.',
  'A wrong or revoked key is not named as such: Gemini CLI goes on without the skills, `gemini mcp list` shows ' +
    'skillhost Disconnected, and only `gemini --debug` says "requires authentication using: /mcp auth skillhost" ' +
    '(ignore that advice: Skillhost takes API keys, not OAuth; check SKILLHOST_API_KEY).',
];

/** The README's snippet for a server at `mcpUrl`: only the URL differs. */
export function readmeSnippet(mcpUrl: string): string {
  return README_SNIPPET.replace('http://127.0.0.1:3000/mcp', mcpUrl);
}

/**
 * The test's own settings: no usage statistics, telemetry, update checks or IDE
 * integration (nothing may wait on the closed network), the Gemini API key auth (the base URL comes
 * from `GOOGLE_GEMINI_BASE_URL`), and a fixed model so no routing side call picks one.
 */
const TEST_SETTINGS = {
  privacy: { usageStatisticsEnabled: false },
  telemetry: { enabled: false },
  general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
  ide: { enabled: false, hasSeenNudge: true },
  model: { name: 'gemini-2.5-flash' },
  // With only GOOGLE_GEMINI_BASE_URL set the CLI picks the "gateway" auth type, which headless
  // validation refuses ("Invalid auth method selected."): name the API key type, which still
  // honours the base URL (packages/core/src/core/contentGenerator.ts).
  security: { auth: { selectedType: 'gemini-api-key' } },
};

export interface GeminiRunOptions {
  mcpUrl: string;
  /** The API key the user puts in `SKILLHOST_API_KEY`. */
  key: string;
  /** The scripted Gemini API's base URL. */
  modelUrl: string;
  /** What the user types: `gemini -p <prompt>` (a `/prompt-name …` is a slash command there too). */
  prompt?: string;
  /** Instead of a prompt, another command line after `gemini` (e.g. `['mcp', 'list']`). */
  command?: string[];
  timeoutMs?: number;
  /** More environment, over the run's own. */
  env?: Record<string, string>;
  /** More command-line arguments, before `-p` (e.g. `--debug`). */
  args?: string[];
}

export type AgentRun = CliRun;

/**
 * Runs Gemini CLI once, headless (`gemini -p <prompt>`), in a fresh HOME, from an empty working
 * folder. The HOME starts with the test's settings in `~/.gemini/settings.json`, as a user's own
 * settings would be there already; then the README's snippet runs as a shell command (with `gemini`
 * on PATH) and adds the server to them; then the prompt. (A system defaults file would keep them
 * apart, but Gemini CLI skips one under a world-writable folder such as /tmp.) Past `timeoutMs` the
 * whole process group is killed (the CLI spawns a child of itself).
 */
export async function run(options: GeminiRunOptions): Promise<AgentRun> {
  const home = mkdtempSync(join(tmpdir(), 'gemini-home-'));
  const work = join(home, 'work');
  const bin = join(home, 'bin');
  for (const folder of [work, bin, join(home, 'tmp'), join(home, '.gemini')]) mkdirSync(folder);
  writeFileSync(join(bin, 'gemini'), `#!/bin/sh\nexec '${process.execPath}' '${GEMINI_BIN}' "$@"\n`, { mode: 0o755 });
  writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify(TEST_SETTINGS, null, 2));
  const env = {
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    HOME: home,
    // Its error reports (gemini-client-error-*.json) go to the temp folder: keep them in the run's.
    TMPDIR: join(home, 'tmp'),
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    NO_COLOR: '1',
    NO_BROWSER: 'true',
    GEMINI_API_KEY: 'scripted-model-key',
    GOOGLE_GEMINI_BASE_URL: options.modelUrl,
    SKILLHOST_API_KEY: options.key,
    ...options.env,
  };
  const timeoutMs = options.timeoutMs ?? 120_000;
  try {
    const setup = await runCli('/bin/sh', ['-c', readmeSnippet(options.mcpUrl)], { cwd: work, env, timeoutMs });
    if (setup.code !== 0)
      throw new Error(`The README's snippet failed (exit ${setup.code}):\n${setup.stdout}\n${setup.stderr}`);
    // Headless, an untrusted folder is fatal (FatalUntrustedWorkspaceError); --skip-trust trusts it for this run.
    const argv = options.command ?? ['--skip-trust', ...(options.args ?? []), '-p', options.prompt ?? ''];
    return await runCli(process.execPath, [GEMINI_BIN, ...argv], { cwd: work, env, timeoutMs });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
