import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { corpusPath } from '../support/corpus.js';
import { type AgentRun, run } from './clients/gemini-cli.js';
import { type AgentSkillhost, startAgentSkillhost } from './harness.js';
import { GeminiProvider, type GeminiScript, type GeminiStep } from './providers/gemini.js';
import { mentions } from './providers/recording-server.js';

/**
 * Gemini CLI (clients.json `gemini-cli`) against Skillhost, headless (`gemini -p`), configured as
 * the README says (clients/gemini-cli.ts `readmeSettings`), its model a scripted Gemini API.
 */

/** A line of a corpus file's body (after any frontmatter) that nothing else would send: long, without quotes or backslashes (which some paths escape). */
function distinctiveLine(...path: string[]): string {
  const text = readFileSync(corpusPath(...path), 'utf8').replace(/^---\n[\s\S]*?\n---\n/, '');
  const line = text.split('\n').map((candidate) => candidate.trim()).find((candidate) => candidate.length >= 30 && !/["\\]/.test(candidate));
  if (line === undefined) throw new Error(`No distinctive line in ${path.join('/')}`);
  return line;
}

const SKILL_BODY_LINE = distinctiveLine('anthropics-skills', 'internal-comms', 'SKILL.md');
const EXAMPLE_LINE = distinctiveLine('anthropics-skills', 'internal-comms', 'examples', '3p-updates.md');
const REQUEST = 'write a 3P update for the data team about the Q3 launch';
/** How Gemini CLI introduces a server's `instructions` to the model. */
const SERVER_INSTRUCTIONS = "instructions provided by the tool server 'skillhost'";

/** The last message of a model request, for a failure message: what the tool answered, or what the user sent. */
function lastMessage(provider: GeminiProvider, turn: number): string {
  const contents = provider.modelRequests[turn]?.body.contents;
  return contents === undefined ? `(no model request ${turn}; ${provider.modelRequests.length} made)` : JSON.stringify(contents[contents.length - 1]).slice(0, 2000);
}

/** `found`, or what was there instead, so a failure says what the model got. */
function found(provider: GeminiProvider, turn: number, text: string): string {
  return mentions(provider.modelRequests[turn]?.body, text) ? 'found' : lastMessage(provider, turn);
}

/** Steps in order, then `done` for any further turn. */
function steps(...scripted: GeminiStep[]): GeminiScript {
  return (_request, turn) => scripted[turn] ?? { text: 'done' };
}

describe('Gemini CLI with Skillhost', () => {
  let skillhost: AgentSkillhost;
  beforeAll(async () => {
    skillhost = await startAgentSkillhost();
  }, 300_000);
  afterAll(() => skillhost?.stop());

  async function runGemini(script: GeminiScript, prompt: string, options: { key?: string; args?: string[] } = {}): Promise<{ result: AgentRun; provider: GeminiProvider }> {
    const provider = await GeminiProvider.start(script);
    try {
      const result = await run({ mcpUrl: skillhost.mcpUrl, key: options.key ?? skillhost.key, modelUrl: provider.url, prompt, args: options.args, timeoutMs: 120_000 });
      return { result, provider };
    } finally {
      await provider.stop();
    }
  }

  /** What the user saw, for a failure message. */
  const shown = (result: AgentRun) => `exit ${result.code}${result.timedOut ? ' (timed out)' : ''}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;

  it("sends each served skill's description in its first model request", async () => {
    const { result, provider } = await runGemini(steps({ text: 'done' }), 'Which skills do you have?');
    expect(provider.modelRequests.length).toBeGreaterThan(0);
    const first = provider.modelRequests[0].body;
    // The server's instructions reach the model, wrapped as project context in the first user message (McpClientManager.getMcpInstructions).
    expect(mentions(first, SERVER_INSTRUCTIONS)).toBe(true);
    const missing = skillhost.skills.filter((skill) => !mentions(first, skill.description)).map((skill) => skill.name);
    expect({ missing, run: missing.length > 0 ? shown(result) : '' }).toEqual({ missing: [], run: '' });
  });

  it('headless with the README settings (trust: true), the model is offered activate_skill and it returns the skill body', async () => {
    // Gemini CLI 0.61 hides an MCP tool whose own name is a built-in tool's (its `activate_skill`)
    // whenever that built-in is denied, as every tool without an allow rule is headless
    // (ToolRegistry.isActiveTool matches the unprefixed name against the policy's exclusions).
    const { result, provider } = await runGemini(steps({ toolCall: { name: 'activate_skill', arguments: { name: 'internal-comms' } } }), 'Help me write internal comms.');
    expect({ failures: provider.failures, run: provider.failures.length > 0 ? shown(result) : '' }).toEqual({ failures: [], run: '' });
    expect(mentions(provider.modelRequests[0].body, SKILL_BODY_LINE)).toBe(false);
    expect(found(provider, 1, SKILL_BODY_LINE)).toBe('found');
    expect(result.code).toBe(0);
  });

  it('with --approval-mode yolo, activate_skill is offered and returns the skill body', async () => {
    const { result, provider } = await runGemini(steps({ toolCall: { name: 'activate_skill', arguments: { name: 'internal-comms' } } }), 'Help me write internal comms.', { args: ['--approval-mode', 'yolo'] });
    expect({ failures: provider.failures, run: provider.failures.length > 0 ? shown(result) : '' }).toEqual({ failures: [], run: '' });
    expect(provider.offeredTools()).toEqual(expect.arrayContaining(['mcp_skillhost_activate_skill', 'activate_skill']));
    expect(mentions(provider.modelRequests[0].body, SKILL_BODY_LINE)).toBe(false);
    expect(found(provider, 1, SKILL_BODY_LINE)).toBe('found');
    expect(result.code).toBe(0);
  });

  it("reads a skill's other file with read_skill_file", async () => {
    const { result, provider } = await runGemini(steps({ toolCall: { name: 'read_skill_file', arguments: { name: 'internal-comms', path: 'examples/3p-updates.md' } } }), 'Show me how 3P updates are written.');
    expect({ failures: provider.failures, run: provider.failures.length > 0 ? shown(result) : '' }).toEqual({ failures: [], run: '' });
    expect(mentions(provider.modelRequests[0].body, EXAMPLE_LINE)).toBe(false);
    expect(found(provider, 1, EXAMPLE_LINE)).toBe('found');
  });

  it("reads a skill's other file with its own read_mcp_resource tool, given the skill:// URI", async () => {
    // Gemini CLI reads only URIs that resources/list returned (McpClientManager.findResourceByUri);
    // any other is "Resource not found for URI" without asking the server.
    const { result, provider } = await runGemini(steps({ toolCall: { name: 'read_mcp_resource', arguments: { uri: 'skill://internal-comms/examples/3p-updates.md' } } }), 'Show me how 3P updates are written.');
    expect({ failures: provider.failures, run: provider.failures.length > 0 ? shown(result) : '' }).toEqual({ failures: [], run: '' });
    expect(found(provider, 1, EXAMPLE_LINE)).toBe('found');
  });

  it('runs the skill prompt as `gemini -p "/internal-comms <request>"` and the model gets the whole request', async () => {
    // Headless, a leading slash command is resolved like the interactive one (nonInteractiveCliCommands.ts
    // handleSlashCommand, with McpPromptLoader): prompts/get, then the prompt's first message is the turn.
    const { result, provider } = await runGemini(steps({ text: 'done' }), `/internal-comms ${REQUEST}`);
    expect(provider.modelRequests.length).toBeGreaterThan(0);
    const first = provider.modelRequests[0].body;
    expect(mentions(first, SKILL_BODY_LINE)).toBe(true);
    expect(found(provider, 0, REQUEST)).toBe('found');
    expect(result.code).toBe(0);
  });

  it.each([
    ['wrong', (host: AgentSkillhost) => host.wrongKey, 'The API key is not valid.'],
    ['revoked', (host: AgentSkillhost) => host.revokedKey, 'The API key has been revoked.'],
  ])('a %s key: the 401 is swallowed; the run goes on without Skillhost and the user sees nothing of why', async (_kind, keyOf, message) => {
    // The 401's message is what a user would need. Gemini CLI (connectToMcpServer) turns any 401 of a
    // server without `oauth` configured into its own "requires authentication using: /mcp auth skillhost",
    // a diagnostic that headless mode keeps silent; the server's body never reaches the user.
    const { result, provider } = await runGemini(steps({ text: 'done' }), 'Which skills do you have?', { key: keyOf(skillhost) });
    const output = result.stdout + result.stderr;
    expect(output).not.toContain(message);
    expect(result.code).toBe(0);
    expect(provider.offeredTools().filter((name) => name.startsWith('mcp_skillhost_'))).toEqual([]);
    expect(mentions(provider.modelRequests[0].body, SERVER_INSTRUCTIONS)).toBe(false);
  });
});
