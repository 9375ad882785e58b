import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { corpusPath } from '../support/corpus.js';
import { mcpList, run, type RunResult } from './clients/opencode.js';
import { type AgentSkillhost, startAgentSkillhost } from './harness.js';
import { type ChatRequest, OpenAiChatProvider, type Script } from './providers/openai-chat.js';
import { mentions } from './providers/recording-server.js';

/*
 * OpenCode (opencode-ai, test/agents/clients.json) against a real Skillhost, configured as the README
 * says (clients/opencode.ts), its model a scripted OpenAI-compatible provider. OpenCode names an MCP
 * tool `<server>_<tool>` (`skillhost_activate_skill`), an MCP prompt becomes the command
 * `skillhost:<prompt>`, and it offers the model its own `read_mcp_resource` tool.
 */

const RUN_TIMEOUT_MS = 120_000;
const REQUEST = 'write a 3P update for the data team about the Q3 launch';

/** The first line of a skill file's text that is long enough to be its own (frontmatter skipped). */
function lineOf(path: string): string {
  const text = readFileSync(corpusPath('anthropics-skills', 'internal-comms', path), 'utf8').replace(/^---\n[\s\S]*?\n---\n/, '');
  const line = text.split('\n').find((candidate) => candidate.trim().length >= 40);
  if (line === undefined) throw new Error(`No line of 40 characters in ${path}.`);
  return line.trim();
}

function output(result: RunResult): string {
  return `${result.stdout}\n${result.stderr}`;
}

/** Whether the request offers the model a tool named `name`. */
function offers(request: ChatRequest | undefined, name: string): boolean {
  return (request?.tools ?? []).some((tool) => tool.function.name === name);
}

describe('OpenCode with Skillhost', () => {
  let skillhost: AgentSkillhost;
  const providers: OpenAiChatProvider[] = [];

  beforeAll(async () => {
    skillhost = await startAgentSkillhost();
  }, 300_000);
  afterAll(async () => {
    await Promise.all(providers.map((provider) => provider.stop()));
    await skillhost?.stop();
  });

  async function runWith(script: Script, options: { key?: string; prompt?: string; command?: string } = {}) {
    const provider = await new OpenAiChatProvider(script).start();
    providers.push(provider);
    const result = await run({
      mcpUrl: skillhost.mcpUrl,
      key: options.key ?? skillhost.key,
      modelUrl: provider.url,
      prompt: options.prompt ?? REQUEST,
      command: options.command,
      timeoutMs: RUN_TIMEOUT_MS,
    });
    const diagnosis = `exit ${result.code}${result.timedOut ? ' (timed out)' : ''}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}\n--- failures\n${provider.failures.join('\n')}\n--- log\n${result.log.slice(-4000)}`;
    return { provider, result, requests: provider.modelRequests, diagnosis };
  }

  const done: Script = () => ({ text: 'Done.' });

  it('sends the model every served skill with its description on the first request', async () => {
    const { requests, diagnosis } = await runWith(done);
    expect({ requests: requests.length, diagnosis }).toEqual({ requests: 1, diagnosis });
    for (const skill of skillhost.skills) expect({ skill: skill.name, mentioned: mentions(requests[0], skill.description) }).toEqual({ skill: skill.name, mentioned: true });
  });

  it('hands MCP server instructions to the model in its system prompt', async () => {
    const { requests, diagnosis } = await runWith(done);
    const system = requests[0]?.messages.find((message) => message.role === 'system');
    expect({ system: mentions(system, '<server name="skillhost">') && mentions(system, 'activate_skill'), diagnosis }).toEqual({ system: true, diagnosis });
  });

  it('returns the skill body when the model activates a skill', async () => {
    const { provider, requests, diagnosis } = await runWith((_request, turn) => (turn === 0 ? { toolCall: { name: 'activate_skill', arguments: { name: 'internal-comms' } } } : { text: 'Done.' }));
    expect({ failures: provider.failures, offered: offers(requests[0], 'skillhost_activate_skill'), diagnosis }).toEqual({ failures: [], offered: true, diagnosis });
    expect({ body: mentions(requests[1], lineOf('SKILL.md')), diagnosis }).toEqual({ body: true, diagnosis });
  });

  it('reads a skill file other than SKILL.md with read_skill_file', async () => {
    const { provider, requests, diagnosis } = await runWith((_request, turn) =>
      turn === 0 ? { toolCall: { name: 'read_skill_file', arguments: { name: 'internal-comms', path: 'examples/3p-updates.md' } } } : { text: 'Done.' },
    );
    expect({ failures: provider.failures, diagnosis }).toEqual({ failures: [], diagnosis });
    expect({ file: mentions(requests[1], lineOf('examples/3p-updates.md')), diagnosis }).toEqual({ file: true, diagnosis });
  });

  it("reads a skill file as a skill:// resource with OpenCode's read_mcp_resource tool", async () => {
    const { provider, requests, diagnosis } = await runWith((_request, turn) =>
      turn === 0 ? { toolCall: { name: 'read_mcp_resource', arguments: { server: 'skillhost', uri: 'skill://internal-comms/examples/3p-updates.md' } } } : { text: 'Done.' },
    );
    expect({ failures: provider.failures, diagnosis }).toEqual({ failures: [], diagnosis });
    expect({ file: mentions(requests[1], lineOf('examples/3p-updates.md')), diagnosis }).toEqual({ file: true, diagnosis });
  });

  it('runs the skill prompt as the command skillhost:internal-comms with the whole typed text', async () => {
    const { requests, diagnosis } = await runWith(done, { command: 'skillhost:internal-comms', prompt: REQUEST });
    expect({ requests: requests.length, diagnosis }).toEqual({ requests: 1, diagnosis });
    expect({ text: mentions(requests[0], REQUEST), body: mentions(requests[0], lineOf('SKILL.md')), diagnosis }).toEqual({ text: true, body: true, diagnosis });
  });

  it('sends a typed /skillhost:internal-comms line in a plain message as text, not as the command', async () => {
    const { requests, diagnosis } = await runWith(done, { prompt: `/skillhost:internal-comms ${REQUEST}` });
    expect({ typed: mentions(requests[0], `/skillhost:internal-comms ${REQUEST}`), body: mentions(requests[0], lineOf('SKILL.md')), diagnosis }).toEqual({ typed: true, body: false, diagnosis });
  });

  describe.each([
    ['a wrong key', () => skillhost.wrongKey, 'The API key is not valid.'],
    ['a revoked key', () => skillhost.revokedKey, 'The API key has been revoked.'],
  ])('with %s', (_label, key, message) => {
    it("shows the server's 401 message to the user", async () => {
      const { result, diagnosis } = await runWith(done, { key: key() });
      expect({ shown: output(result).includes(message), diagnosis }).toEqual({ shown: true, diagnosis });
    });

    it('today: runs the prompt without Skillhost, saying nothing, and `opencode mcp list` shows only the status', async () => {
      const { result, requests, diagnosis } = await runWith(done, { key: key() });
      expect({ code: result.code, offered: offers(requests[0], 'skillhost_activate_skill'), diagnosis }).toEqual({ code: 0, offered: false, diagnosis });
      expect({ shown: output(result).includes(message), diagnosis }).toEqual({ shown: false, diagnosis });
      const list = await mcpList({ mcpUrl: skillhost.mcpUrl, key: key(), modelUrl: 'http://127.0.0.1:9/v1', timeoutMs: RUN_TIMEOUT_MS });
      // The Streamable HTTP error (which carries the body) is replaced by the SSE fallback's.
      expect(output(list)).toContain('SSE error: Non-200 status code (401)');
      expect(output(list)).not.toContain(message);
    });
  });

  // Last: it revokes the working key.
  it("shows the server's 401 message to the user and the model when the key is revoked mid-session", async () => {
    const { result, requests, diagnosis } = await runWith(async (_request, turn) => {
      if (turn !== 0) return { text: 'Done.' };
      await skillhost.revoke(skillhost.key);
      return { toolCall: { name: 'activate_skill', arguments: { name: 'internal-comms' } } };
    });
    expect({ shown: output(result).includes('The API key has been revoked.'), toModel: mentions(requests[1], 'The API key has been revoked.'), diagnosis }).toEqual({ shown: true, toModel: true, diagnosis });
  });
});
