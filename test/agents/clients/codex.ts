import { type CliRun, runCli } from './cli-run.js';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Codex CLI (`@openai/codex`, a native binary) run headless, `codex exec PROMPT`, against a
 * Skillhost and a scripted model, each run in a fresh HOME and CODEX_HOME and an empty working
 * folder. The config holds README_SNIPPET as it is, only its URL changed; the key is in
 * SKILLHOST_API_KEY, which the snippet names. Everything else in the config is the model provider
 * and switches that keep Codex off the network.
 */

/** What the README tells a Codex user to put in `~/.codex/config.toml` (docs/mcp-and-agents.md). */
export const README_SNIPPET = `[mcp_servers.skillhost]
url = "http://127.0.0.1:3000/mcp"
bearer_token_env_var = "SKILLHOST_API_KEY"
`;

/** What else a user must know, each measured by codex.agents-spec.ts. */
export const README_NOTES: string[] = [
  'Export SKILLHOST_API_KEY in the shell that starts Codex; when it is unset or empty Codex starts without the ' +
    'skills and says nothing.',
  "With a wrong or revoked key Codex also starts without the skills; the server's reason is in an ERROR line " +
    'on stderr (`AuthRequired … error_description="The API key is not valid."`).',
  'Nothing to approve: `codex exec` runs the skill tools without asking, as Skillhost marks them read-only.',
  'Codex has no MCP prompts: `/internal-comms …` is not a command there, it reaches the model as typed, which ' +
    "still sees every skill in activate_team_skill's description.",
];

const README_URL = 'http://127.0.0.1:3000/mcp';

export const CODEX_BIN = resolve(
  fileURLToPath(new URL('.', import.meta.url)),
  '../../../.agents/codex/node_modules/.bin/codex',
);

export interface CodexRun {
  mcpUrl: string;
  /** Put in SKILLHOST_API_KEY (the snippet's `bearer_token_env_var`); left unset when undefined. */
  key: string | undefined;
  /** The scripted provider's `base_url` (`http://127.0.0.1:<port>/v1`). */
  modelUrl: string;
  prompt: string;
  timeoutMs?: number;
  /**
   * The model slug sent. Codex shapes the request by the model's metadata: an unknown slug (the
   * default, `scripted`) gets every tool inline; a known one like `gpt-5.5` gets MCP tools deferred
   * behind `tool_search`.
   */
  model?: string;
  /** Extra `codex exec` arguments (`-c key=value`…). */
  args?: string[];
}

export type CodexResult = CliRun;

/** README_SNIPPET with the server's URL in place of the README's. */
export function readmeSnippetFor(mcpUrl: string): string {
  return README_SNIPPET.replace(README_URL, mcpUrl);
}

/**
 * The model provider (a custom `model_providers` entry speaking the Responses API, no retries so
 * a script error shows at once) and every switch that would reach the network: update checks,
 * analytics, OpenTelemetry export, the feedback upload, the web search tool, and the plugins
 * feature (on by default, it syncs the curated plugins from github.com and chatgpt.com at start:
 * seen as DNS look-ups under strace, gone with `features.plugins = false`). No `approval_policy`:
 * `codex exec` runs with `never` whatever the config says (its banner reads `approval: never` even
 * with `-c approval_policy="on-request"`), so a user's run is this one.
 */
export function providerConfig({
  id,
  name,
  url,
  model,
  envKey,
  features = {},
  webSearch = false,
}: CodexProvider): string {
  return [
    `model = ${JSON.stringify(model)}`,
    `model_provider = ${JSON.stringify(id)}`,
    'check_for_update_on_startup = false',
    ...(webSearch ? [] : ['web_search = "disabled"']),
    '',
    `[model_providers.${id}]`,
    `name = ${JSON.stringify(name)}`,
    `base_url = ${JSON.stringify(url)}`,
    'wire_api = "responses"',
    `env_key = ${JSON.stringify(envKey)}`,
    'request_max_retries = 0',
    'stream_max_retries = 0',
    '',
    '[analytics]',
    'enabled = false',
    '',
    '[feedback]',
    'enabled = false',
    '',
    '[otel]',
    'exporter = "none"',
    'trace_exporter = "none"',
    'metrics_exporter = "none"',
    '',
    '[features]',
    'plugins = false',
    ...Object.entries(features).map(([feature, on]) => `${feature} = ${on}`),
  ].join('\n');
}

/** A `[model_providers.<id>]` entry speaking the Responses API, its key read from `envKey`. */
export interface CodexProvider {
  id: string;
  name: string;
  /** `base_url`: Codex posts to `<url>/responses`. */
  url: string;
  model: string;
  envKey: string;
  /** More `[features]` switches. */
  features?: Record<string, boolean>;
  /** Leave `web_search` at Codex's default (cached results, offered as a `web_search` tool) instead of disabled. */
  webSearch?: boolean;
}

export async function run(options: CodexRun): Promise<CodexResult> {
  const provider = providerConfig({
    id: 'scripted',
    name: 'Scripted',
    url: options.modelUrl,
    model: options.model ?? 'scripted',
    envKey: 'SCRIPTED_API_KEY',
  });
  return runCodex({
    config: `${provider}\n\n${readmeSnippetFor(options.mcpUrl)}`,
    env: {
      ...(options.key === undefined ? {} : { SKILLHOST_API_KEY: options.key }),
      SCRIPTED_API_KEY: 'scripted',
    },
    prompt: options.prompt,
    args: options.args,
    timeoutMs: options.timeoutMs,
  });
}

/**
 * `codex exec PROMPT` with `config` as `~/.codex/config.toml`, in a fresh HOME and CODEX_HOME and an empty working
 * folder, with only PATH, the homes and `env` in its environment.
 */
export async function runCodex(options: {
  config: string;
  env: Record<string, string>;
  prompt: string;
  args?: string[];
  timeoutMs?: number;
}): Promise<CodexResult> {
  const home = mkdtempSync(join(tmpdir(), 'skillhost-codex-'));
  const codexHome = join(home, '.codex');
  const work = join(home, 'work');
  mkdirSync(codexHome);
  mkdirSync(work);
  writeFileSync(join(codexHome, 'config.toml'), options.config);
  try {
    return await runCli(
      CODEX_BIN,
      ['exec', '--skip-git-repo-check', '--ephemeral', '--color', 'never', ...(options.args ?? []), options.prompt],
      {
        cwd: work,
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: home,
          CODEX_HOME: codexHome,
          ...options.env,
          TERM: 'dumb',
          NO_COLOR: '1',
        },
        timeoutMs: options.timeoutMs ?? 120_000,
      },
    );
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}
