import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { corpusPath } from '../support/corpus.js';
import { run, type CodexResult, type CodexRun } from './clients/codex.js';
import { type AgentSkillhost, startAgentSkillhost } from './harness.js';
import { inOrder, OpenAiResponsesProvider, type ResponsesRequest, type Script } from './providers/openai-responses.js';
import { mentions } from './providers/recording-server.js';

/**
 * Codex CLI (`codex exec`, headless) with the README's `[mcp_servers.skillhost]` entry, against
 * a fresh Skillhost and a scripted model. Unless a test says otherwise the model slug is one Codex
 * has no metadata for, so every tool is sent inline in the first request; `gpt-5.5` is a model
 * Codex defers MCP tools for (behind `tool_search`), as for its default models.
 */

/** A line of internal-comms/SKILL.md's body and one of examples/3p-updates.md, checked against the corpus below. */
const SKILL_BODY_LINE = 'To write internal communications, use this skill for:';
const EXAMPLE_FILE_LINE = 'You are being asked to write a 3P update.';
const USER_REQUEST = 'write a 3P update for the data team about the Q3 launch';

describe('Codex CLI with Skillhost', () => {
  let skillhost: AgentSkillhost;
  beforeAll(async () => {
    skillhost = await startAgentSkillhost();
  }, 300_000);
  afterAll(() => skillhost?.stop());

  /** One headless run with `script` as the model; the provider is stopped after it. */
  async function session(script: Script, prompt: string, options: Partial<CodexRun> = {}): Promise<{ requests: ResponsesRequest[]; result: CodexResult; failures: string[] }> {
    const provider = await OpenAiResponsesProvider.start(script);
    try {
      const result = await run({ mcpUrl: skillhost.mcpUrl, key: skillhost.key, modelUrl: provider.baseUrl, prompt, timeoutMs: 90_000, ...options });
      expect(result.timedOut).toBe(false);
      return { requests: provider.modelRequests, result, failures: provider.failures };
    } finally {
      await provider.stop();
    }
  }

  const activate = { toolCall: { name: 'activate_skill', arguments: { name: 'internal-comms' } } };

  it('reads lines that are in the corpus', () => {
    expect(readFileSync(corpusPath('anthropics-skills', 'internal-comms', 'SKILL.md'), 'utf8')).toContain(SKILL_BODY_LINE);
    expect(readFileSync(corpusPath('anthropics-skills', 'internal-comms', 'examples', '3p-updates.md'), 'utf8')).toContain(EXAMPLE_FILE_LINE);
  });

  it("shows the model every served skill's description in its first request", async () => {
    const { requests } = await session(inOrder(), 'hello');
    expect(requests.length).toBeGreaterThan(0);
    for (const skill of skillhost.skills) expect({ skill: skill.name, mentioned: mentions(requests[0].body, skill.description) }).toEqual({ skill: skill.name, mentioned: true });
  });

  it("offers the server's instructions as the description of the tools' namespace", async () => {
    const { requests } = await session(inOrder(), 'hello');
    const namespace = requests[0].body.tools?.find((tool) => tool.type === 'namespace' && tool.name === 'mcp__skillhost');
    expect(namespace?.description).toMatch(/activate_skill/);
  });

  it('with a tool-searching model, a search for the user task finds every skill', async () => {
    const { requests, failures } = await session(inOrder({ toolCall: { name: 'tool_search', arguments: { query: 'write a 3P update internal communications', limit: 8 } } }), USER_REQUEST, { model: 'gpt-5.5' });
    expect(failures).toEqual([]);
    // Before the search the model sees only the namespace, described by the first line of the instructions.
    expect(requests[0].tools.map((tool) => tool.fullName)).not.toContain('mcp__skillhost__activate_skill');
    expect(mentions(requests[0].body, '- mcp__skillhost: ')).toBe(true);
    expect(requests[1].tools.map((tool) => tool.fullName)).toContain('mcp__skillhost__activate_skill');
    for (const skill of skillhost.skills) expect({ skill: skill.name, found: mentions(requests[1].body.input, skill.description) }).toEqual({ skill: skill.name, found: true });
  });

  it("activates a skill: the next request holds the skill's body", async () => {
    const { requests, result, failures } = await session(inOrder(activate), USER_REQUEST);
    expect(failures).toEqual([]);
    expect(result.stderr).not.toContain('MCP tool call requires approval');
    expect(mentions(requests[1].body.input, SKILL_BODY_LINE)).toBe(true);
  });

  it('activates a skill today once the user adds default_tools_approval_mode = "approve" to the entry', async () => {
    const { requests, failures } = await session(inOrder(activate), USER_REQUEST, { mcpExtra: ['default_tools_approval_mode = "approve"'] });
    expect(failures).toEqual([]);
    expect(mentions(requests[1].body.input, SKILL_BODY_LINE)).toBe(true);
  });

  it('reads a file of a skill with read_skill_file', async () => {
    const { requests, failures } = await session(inOrder({ toolCall: { name: 'read_skill_file', arguments: { name: 'internal-comms', path: 'examples/3p-updates.md' } } }), USER_REQUEST);
    expect(failures).toEqual([]);
    expect(mentions(requests[1].body.input, EXAMPLE_FILE_LINE)).toBe(true);
  });

  it("reads a file of a skill as an MCP resource with Codex's read_mcp_resource (a URI not in resources/list)", async () => {
    const read = { toolCall: { name: 'read_mcp_resource', arguments: { server: 'skillhost', uri: 'skill://internal-comms/examples/3p-updates.md' } } };
    const { requests, failures } = await session(inOrder(read), USER_REQUEST);
    expect(failures).toEqual([]);
    expect(mentions(requests[1].body.input, EXAMPLE_FILE_LINE)).toBe(true);
  });

  it('lists every file of a skill with list_mcp_resources', async () => {
    const list = { toolCall: { name: 'list_mcp_resources', arguments: { server: 'skillhost' } } };
    const { requests, failures } = await session(inOrder(list), USER_REQUEST);
    expect(failures).toEqual([]);
    expect(mentions(requests[1].body.input, 'skill://internal-comms/examples/3p-updates.md')).toBe(true);
  });

  it('has no MCP prompts: `/internal-comms <request>` reaches the model as typed, and the skill is not put in', async () => {
    const typed = `/internal-comms ${USER_REQUEST}`;
    const { requests } = await session(inOrder(), typed);
    const lastInput = requests[0].body.input?.at(-1);
    expect(lastInput).toMatchObject({ role: 'user', content: [{ type: 'input_text', text: typed }] });
    expect(mentions(requests[0].body, SKILL_BODY_LINE)).toBe(false);
  });

  it.each([
    ['a wrong key', () => skillhost.wrongKey, 'The API key is not valid.'],
    ['a revoked key', () => skillhost.revokedKey, 'The API key has been revoked.'],
  ])("shows the server's 401 message for %s", async (_label, key, message) => {
    const { requests, result } = await session(inOrder(), 'hello', { key: key() });
    // The server's tools are gone, and the run still answers.
    expect(requests[0].tools.some((tool) => tool.namespace === 'mcp__skillhost')).toBe(false);
    expect(result.stderr).toContain('AuthRequired');
    expect(`${result.stdout}\n${result.stderr}`).toContain(message);
  });
});
