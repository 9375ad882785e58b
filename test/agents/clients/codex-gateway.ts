import { type CodexResult, providerConfig, runCodex } from './codex.js';

/**
 * Codex CLI (`codex exec`, headless) with Skillhost's OpenAI-compatible gateway as its model provider: a
 * `[model_providers.skillhost]` entry speaking the Responses API at `<skillhost>/openai/v1`, the Skillhost key in
 * SKILLHOST_API_KEY (sent as `Authorization: Bearer`). No MCP server: the skills reach the model through the gateway
 * alone. The network switches are those of the MCP runs (clients/codex.ts `providerConfig`).
 */
export interface CodexGatewayRun {
  /** `http://127.0.0.1:<port>/openai/v1`. */
  gatewayUrl: string;
  /** Put in SKILLHOST_API_KEY. */
  key: string;
  /** A model Skillhost has configured (`[app.models.<name>]`). */
  model: string;
  prompt: string;
  timeoutMs?: number;
  args?: string[];
  /**
   * Codex's `multi_agent` feature (on by default in 0.171.0) offers its sub-agent tools inside one
   * `{"type": "namespace", "name": "multi_agent_v1"}` tool, whose functions the gateway offers the model as
   * `multi_agent_v1__<name>`. `false` adds `multi_agent = false` to `[features]`, leaving only function tools.
   */
  multiAgent?: boolean;
  /** Codex's default web search (a `web_search` tool in every request) instead of `web_search = "disabled"`. */
  webSearch?: boolean;
}

export function gatewayConfig(
  gatewayUrl: string,
  model: string,
  { multiAgent = true, webSearch = false }: Pick<CodexGatewayRun, 'multiAgent' | 'webSearch'> = {},
): string {
  return providerConfig({
    id: 'skillhost',
    name: 'Skillhost',
    url: gatewayUrl,
    model,
    envKey: 'SKILLHOST_API_KEY',
    features: multiAgent ? {} : { multi_agent: false },
    webSearch,
  });
}

export function runThroughGateway(options: CodexGatewayRun): Promise<CodexResult> {
  return runCodex({
    config: gatewayConfig(options.gatewayUrl, options.model, options),
    env: { SKILLHOST_API_KEY: options.key },
    prompt: options.prompt,
    args: options.args,
    timeoutMs: options.timeoutMs,
  });
}
