import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The pinned Gemini CLI (clients.json `gemini-cli`), installed by test/agents/install.mjs. */
export const GEMINI_BIN = resolve(process.cwd(), '.agents', 'gemini-cli', 'node_modules', '@google', 'gemini-cli', 'bundle', 'gemini.js');

/**
 * The `mcpServers` entry the README gives Gemini CLI users (docs/mcp-and-agents.md), for
 * `~/.gemini/settings.json`, with the server's URL put in: what `gemini mcp add --scope user
 * --transport http --trust -H 'Authorization: Bearer $SKILLHOST_API_KEY' skillhost <url>` writes
 * (`url` with `type: "http"`; `httpUrl` is the older spelling). Gemini CLI expands `$VAR` in every
 * string of a settings file when it loads it (packages/cli/src/utils/envVarResolver.ts), so the key
 * stays in the environment. `trust: true` becomes a policy rule allowing `mcp_skillhost_*`: without
 * it a tool would ask each time, and headless (`-p`) a tool that would ask is not even offered (the
 * policy engine's default decision is DENY when not interactive).
 */
export function readmeSettings(mcpUrl: string): Record<string, unknown> {
  return {
    mcpServers: {
      skillhost: {
        url: mcpUrl,
        type: 'http',
        headers: { Authorization: 'Bearer $SKILLHOST_API_KEY' },
        trust: true,
      },
    },
  };
}

/**
 * What a test adds to the README's settings: no usage statistics, telemetry, update checks or IDE
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
  prompt: string;
  timeoutMs?: number;
  /** More environment, over the run's own. */
  env?: Record<string, string>;
  /** More command-line arguments, before `-p` (e.g. `--debug`). */
  args?: string[];
}

export interface AgentRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Whether it was killed for running past `timeoutMs`. */
  timedOut: boolean;
}

/**
 * Runs Gemini CLI once, headless (`gemini -p <prompt>`), in a fresh HOME holding only the README's
 * settings and the test's, from an empty working folder. Past `timeoutMs` the whole process group
 * is killed (the CLI spawns a child of itself).
 */
export async function run(options: GeminiRunOptions): Promise<AgentRun> {
  const home = mkdtempSync(join(tmpdir(), 'gemini-home-'));
  const work = join(home, 'work');
  mkdirSync(join(home, '.gemini'), { recursive: true });
  mkdirSync(work);
  // Its error reports (gemini-client-error-*.json) go to the temp folder: keep them in the run's.
  mkdirSync(join(home, 'tmp'));
  writeFileSync(join(home, '.gemini', 'settings.json'), JSON.stringify({ ...readmeSettings(options.mcpUrl), ...TEST_SETTINGS }, null, 2));
  try {
    // Headless, an untrusted folder is fatal (FatalUntrustedWorkspaceError); --skip-trust trusts it for this run.
    return await spawnCli(['--skip-trust', ...(options.args ?? []), '-p', options.prompt], work, {
      PATH: process.env.PATH ?? '',
      HOME: home,
      TMPDIR: join(home, 'tmp'),
      LANG: 'C.UTF-8',
      TERM: 'dumb',
      NO_COLOR: '1',
      NO_BROWSER: 'true',
      GEMINI_API_KEY: 'scripted-model-key',
      GOOGLE_GEMINI_BASE_URL: options.modelUrl,
      SKILLHOST_API_KEY: options.key,
      ...options.env,
    }, options.timeoutMs ?? 120_000);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

function spawnCli(args: string[], cwd: string, env: Record<string, string>, timeoutMs: number): Promise<AgentRun> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [GEMINI_BIN, ...args], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      fail(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      // Whatever it left running (an MCP connection's helper, a relaunched child) goes with it.
      killGroup(child.pid);
      done({ code, stdout, stderr, timedOut });
    });
  });
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // The group is gone already.
  }
}
