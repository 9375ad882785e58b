import { type CliRun, runCli } from './cli-run.js';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The pinned OpenCode (test/agents/clients.json), installed by test/agents/install.mjs: a native (Bun) executable. */
export const OPENCODE = resolve(process.cwd(), '.agents', 'opencode', 'node_modules', '.bin', 'opencode');

export interface RunOptions {
  /** Skillhost's `/mcp` URL. */
  mcpUrl: string;
  /** The API key the user puts in `SKILLHOST_API_KEY`. */
  key: string;
  /** The scripted model's base URL (`…/v1`, the provider's `options.baseURL`). */
  modelUrl: string;
  /** What the user types; with `command`, the command's arguments. */
  prompt: string;
  timeoutMs: number;
  /**
   * A command to run instead of a plain message (`opencode run --command <name> <prompt>`): an MCP prompt is
   * `skillhost:<prompt name>`.
   */
  command?: string;
}

export interface RunResult extends CliRun {
  /** OpenCode's own log of the run (~/.local/share/opencode/log), for diagnosing a failure. */
  log: string;
}

/** The name OpenCode gives the scripted model's provider and model (`scripted/scripted`). */
const MODEL = 'scripted';

/**
 * Everything that would call a server other than the scripted model and Skillhost is off. OpenCode
 * has no telemetry of its own; it fetches models.dev's catalogue (MODELS_FETCH), checks for updates
 * (AUTOUPDATE), downloads language servers (LSP_DOWNLOAD) and shares sessions only when asked
 * (SHARE). In the background it also installs `@opencode-ai/plugin` from npm into each config folder
 * (its `Npm.install`, with npm's own config): `npm_config_offline` makes that fail at once, from an
 * empty cache, instead of reaching the registry.
 */
const QUIET_ENV = {
  OPENCODE_DISABLE_AUTOUPDATE: '1',
  OPENCODE_DISABLE_MODELS_FETCH: '1',
  OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
  OPENCODE_DISABLE_SHARE: '1',
  OPENCODE_DISABLE_CLAUDE_CODE: '1',
  npm_config_offline: 'true',
};

/**
 * What the README tells an OpenCode user to paste: a project's whole `opencode.json`. OpenCode
 * expands `{env:VAR}` in its config's strings. `"oauth": false` stops the OAuth flow it otherwise
 * starts on a 401: without it a wrong key shows as "needs authentication" and a key revoked
 * mid-session ends in a failed OAuth discovery, not the server's message.
 */
export const README_SNIPPET =
  `{
  "$schema": "https://opencode.ai/config.json",
  "mcp": {
    "skillhost": { "type": "remote", "url": "http://127.0.0.1:3000/mcp", "oauth": false, "headers": { ` +
  `"Authorization": "Bearer {env:SKILLHOST_API_KEY}" } }
  }
}
`;

/** What else the user must know, from the runs in opencode.agents-spec.ts. */
export const README_NOTES: string[] = [
  "OpenCode asks no permission for MCP tools by default, so nothing needs allowing; a skill's prompt is the " +
    'command `/skillhost:<skill> <request>` (in `opencode run`, `--command skillhost:<skill> "<request>"`).',
  'OpenCode does not show why a key was refused: with a wrong or revoked key it runs without Skillhost and says ' +
    'nothing, and `opencode mcp list` shows only `SSE error: Non-200 status code (401)`, so check the key with ' +
    '`curl -H "Authorization: Bearer $SKILLHOST_API_KEY" http://127.0.0.1:3000/v1/me`.',
];

/** The README's text with the test server's URL in place of the example's: the only change. */
export function readmeConfigText(mcpUrl: string): string {
  return README_SNIPPET.replace('http://127.0.0.1:3000/mcp', mcpUrl);
}

/**
 * The user's own settings (~/.config/opencode/opencode.json): the scripted model as a custom
 * OpenAI-compatible provider. `@ai-sdk/openai-compatible` is bundled in the executable, so nothing
 * is installed for it.
 */
function userConfig(modelUrl: string): Record<string, unknown> {
  return {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    provider: {
      [MODEL]: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Scripted model',
        options: { baseURL: modelUrl, apiKey: 'scripted' },
        models: { [MODEL]: { name: 'Scripted model' } },
      },
    },
    model: `${MODEL}/${MODEL}`,
  };
}

/**
 * Runs OpenCode headless for one prompt, as a user who followed the README would: a fresh HOME
 * with the model configured, a fresh project folder holding the README's `opencode.json`, the key
 * in `SKILLHOST_API_KEY`, then `opencode run <prompt>` (or `opencode run --command <name>
 * <prompt>`). On timeout OpenCode and its children are killed.
 */
export async function run(options: RunOptions): Promise<RunResult> {
  const args =
    options.command === undefined ? ['run', options.prompt] : ['run', '--command', options.command, options.prompt];
  return runOpencode(args, options);
}

/** `opencode mcp list` in the same setting: what a user runs to see why a server is missing. */
export async function mcpList(options: Omit<RunOptions, 'prompt' | 'command'>): Promise<RunResult> {
  return runOpencode(['mcp', 'list'], options);
}

async function runOpencode(args: string[], options: Omit<RunOptions, 'prompt' | 'command'>): Promise<RunResult> {
  const root = mkdtempSync(join(tmpdir(), 'skillhost-opencode-'));
  try {
    const home = join(root, 'home');
    const project = join(root, 'project');
    mkdirSync(join(home, '.config', 'opencode'), { recursive: true });
    mkdirSync(project);
    writeFileSync(
      join(home, '.config', 'opencode', 'opencode.json'),
      JSON.stringify(userConfig(options.modelUrl), null, 2),
    );
    writeFileSync(join(project, 'opencode.json'), readmeConfigText(options.mcpUrl));
    // A bare environment: nothing of this machine's HOME, XDG folders or npm settings reaches the run.
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      TERM: 'dumb',
      NO_COLOR: '1',
      SKILLHOST_API_KEY: options.key,
      ...QUIET_ENV,
    };
    const result = await runCli(OPENCODE, args, { cwd: project, env, timeoutMs: options.timeoutMs });
    return { ...result, log: readLogs(join(home, '.local', 'share', 'opencode', 'log')) };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

function readLogs(folder: string): string {
  try {
    return readdirSync(folder)
      .sort()
      .map((name) => readFileSync(join(folder, name), 'utf8'))
      .join('\n');
  } catch {
    return '';
  }
}
