import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { corpusPath } from '../support/files/corpus.js';
import { type AgentRun, run } from './clients/gemini-cli.js';
import { type AgentSkillhost, startAgentSkillhost } from './harness.js';
import { GeminiProvider, type GeminiScript, type GeminiStep } from './providers/gemini.js';
import { mentions } from './providers/recording-server.js';

/**
 * Gemini CLI (clients.json `gemini-cli`) against Skillhost, headless (`gemini -p`), configured as
 * the README says (clients/gemini-cli.ts `readmeSettings`), its model a scripted Gemini API.
 */

/**
 * A line of a corpus file's body (after any frontmatter) that nothing else would send: long, without quotes or
 * backslashes (which some paths escape).
 */
function distinctiveLine(...path: string[]): string {
  const text = readFileSync(corpusPath(...path), 'utf8').replace(/^---\n[\s\S]*?\n---\n/, '');
  const line = text
    .split('\n')
    .map((candidate) => candidate.trim())
    .find((candidate) => candidate.length >= 30 && !/["\\]/.test(candidate));
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
  return contents === undefined
    ? `(no model request ${turn}; ${provider.modelRequests.length} made)`
    : JSON.stringify(contents[contents.length - 1]).slice(0, 2000);
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

  async function runGemini(
    script: GeminiScript,
    prompt: string,
    options: { key?: string; args?: string[] } = {},
  ): Promise<{ result: AgentRun; provider: GeminiProvider }> {
    const provider = await GeminiProvider.start(script);
    try {
      const result = await run({
        mcpUrl: skillhost.mcpUrl,
        key: options.key ?? skillhost.key,
        modelUrl: provider.url,
        prompt,
        args: options.args,
        timeoutMs: 120_000,
      });
      return { result, provider };
    } finally {
      await provider.stop();
    }
  }

  /** What the user saw, for a failure message. */
  const shown = (result: AgentRun) =>
    `exit ${result.code}${result.timedOut ? ' (timed out)' : ''}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`;

  it(
    "sends each served skill's description in its first model request, both in the server instructions (the first " +
      "user message) and in activate_team_skill's function declaration",
    async () => {
      const { result, provider } = await runGemini(steps({ text: 'done' }), 'Which skills do you have?');
      expect(provider.modelRequests.length).toBeGreaterThan(0);
      const first = provider.modelRequests[0].body;
      // The server's instructions reach the model wrapped as context in the first user message
      // (McpClientManager.getMcpInstructions).
      const missingFromInstructions = skillhost.skills
        .filter((skill) => !mentions(first.contents, skill.description))
        .map((skill) => skill.name);
      const activation = first.tools
        ?.flatMap((tool) => tool.functionDeclarations ?? [])
        .find((declaration) => declaration.name === 'mcp_skillhost_activate_team_skill');
      const missingFromTool = skillhost.skills
        .filter((skill) => !mentions(activation?.description, skill.description))
        .map((skill) => skill.name);
      const run = missingFromInstructions.length + missingFromTool.length > 0 ? shown(result) : '';
      expect({
        instructions: mentions(first.contents, SERVER_INSTRUCTIONS),
        missingFromInstructions,
        missingFromTool,
        run,
      }).toEqual({ instructions: true, missingFromInstructions: [], missingFromTool: [], run: '' });
    },
  );

  it(
    'headless with the README snippet (--trust), without yolo, the model is offered activate_team_skill and it ' +
      'returns the skill body',
    async () => {
      const { result, provider } = await runGemini(
        steps({ toolCall: { name: 'activate_team_skill', arguments: { name: 'internal-comms' } } }),
        'Help me write internal comms.',
      );
      expect({ failures: provider.failures, run: provider.failures.length > 0 ? shown(result) : '' }).toEqual({
        failures: [],
        run: '',
      });
      expect(provider.offeredTools()).toEqual(
        expect.arrayContaining(['mcp_skillhost_activate_team_skill', 'mcp_skillhost_read_skill_file']),
      );
      expect(mentions(provider.modelRequests[0].body, SKILL_BODY_LINE)).toBe(false);
      expect(found(provider, 1, SKILL_BODY_LINE)).toBe('found');
      expect(result.code).toBe(0);
    },
  );

  it("reads a skill's other file with read_skill_file", async () => {
    const { result, provider } = await runGemini(
      steps({
        toolCall: { name: 'read_skill_file', arguments: { name: 'internal-comms', path: 'examples/3p-updates.md' } },
      }),
      'Show me how 3P updates are written.',
    );
    expect({ failures: provider.failures, run: provider.failures.length > 0 ? shown(result) : '' }).toEqual({
      failures: [],
      run: '',
    });
    expect(mentions(provider.modelRequests[0].body, EXAMPLE_LINE)).toBe(false);
    expect(found(provider, 1, EXAMPLE_LINE)).toBe('found');
    expect(result.code).toBe(0);
  });

  it(
    "reads a skill's other file with its own read_mcp_resource tool, given the skill:// URI resources/list " +
      'returned',
    async () => {
      // Gemini CLI reads only URIs that resources/list returned (McpClientManager.findResourceByUri);
      // any other is "Resource not found for URI" without asking the server.
      const { result, provider } = await runGemini(
        steps({
          toolCall: { name: 'read_mcp_resource', arguments: { uri: 'skill://internal-comms/examples/3p-updates.md' } },
        }),
        'Show me how 3P updates are written.',
      );
      expect({ failures: provider.failures, run: provider.failures.length > 0 ? shown(result) : '' }).toEqual({
        failures: [],
        run: '',
      });
      expect(mentions(provider.modelRequests[0].body, EXAMPLE_LINE)).toBe(false);
      expect(found(provider, 1, EXAMPLE_LINE)).toBe('found');
      expect(result.code).toBe(0);
    },
  );

  it(
    '`gemini -p "/internal-comms <request>"` sends the server\'s prompt message whole, as a JSON string literal, ' +
      'and the activation it asks for returns the body',
    async () => {
      // Headless, a leading slash command is resolved like the interactive one (nonInteractiveCliCommands.ts
      // handleSlashCommand, with McpPromptLoader): prompts/get with the rest of the line as `request`.
      // McpPromptLoader submits `JSON.stringify(message.text)`, so the model gets the text quoted, its
      // quotes escaped and its line breaks as `\n`: all of it, but not as the server wrote it.
      const { result, provider } = await runGemini(
        steps({ toolCall: { name: 'activate_team_skill', arguments: { name: 'internal-comms' } } }),
        `/internal-comms ${REQUEST}`,
      );
      expect({ failures: provider.failures, run: provider.failures.length > 0 ? shown(result) : '' }).toEqual({
        failures: [],
        run: '',
      });
      const message =
        `Use the skill "internal-comms" for my request. First call the activate_team_skill tool with {"name": ` +
        `"internal-comms"} and follow the instructions it returns.\n\nMy request: ${REQUEST}`;
      // The user's turn: the session context part, then the prompt's text.
      const parts = provider.modelRequests[0].body.contents?.at(-1)?.parts ?? [];
      expect(parts.at(-1)).toEqual({ text: JSON.stringify(message) });
      expect(mentions(provider.modelRequests[0].body, SKILL_BODY_LINE)).toBe(false);
      expect(found(provider, 1, SKILL_BODY_LINE)).toBe('found');
      expect(result.code).toBe(0);
    },
  );

  it.each([
    ['wrong', (host: AgentSkillhost) => host.wrongKey, 'The API key is not valid.'],
    ['revoked', (host: AgentSkillhost) => host.revokedKey, 'The API key has been revoked.'],
  ])(
    'a %s key: the run goes on without Skillhost; --debug shows only Gemini CLI\'s own "requires authentication ' +
      'using: /mcp auth skillhost", and `gemini mcp list` only "Disconnected", never the server\'s message',
    async (_kind, keyOf, message) => {
      // Gemini CLI (connectToMcpServer) turns any 401 of a server without `oauth` configured into its
      // own diagnostic, which headless mode prints only with --debug; `gemini mcp list` catches the
      // error and prints only the status. The server's WWW-Authenticate and body go nowhere.
      const key = keyOf(skillhost);
      const { result, provider } = await runGemini(steps({ text: 'done' }), 'Which skills do you have?', {
        key,
        args: ['--debug'],
      });
      expect(result.stderr).toContain("MCP server 'skillhost' requires authentication using: /mcp auth skillhost");
      expect(result.stdout + result.stderr).not.toContain(message);
      expect(result.code).toBe(0);
      expect(provider.offeredTools().filter((name) => name.startsWith('mcp_skillhost_'))).toEqual([]);
      expect(mentions(provider.modelRequests[0].body, SERVER_INSTRUCTIONS)).toBe(false);

      const list = await run({
        mcpUrl: skillhost.mcpUrl,
        key,
        modelUrl: 'http://127.0.0.1:9',
        command: ['mcp', 'list'],
        env: { GEMINI_CLI_TRUST_WORKSPACE: 'true' },
        timeoutMs: 60_000,
      });
      expect(list.stdout + list.stderr).toContain(`skillhost: ${skillhost.mcpUrl} (http) - Disconnected`);
      expect(list.stdout + list.stderr).not.toContain(message);
    },
  );

  it('`gemini mcp list` with the right key calls skillhost Connected', async () => {
    const list = await run({
      mcpUrl: skillhost.mcpUrl,
      key: skillhost.key,
      modelUrl: 'http://127.0.0.1:9',
      command: ['mcp', 'list'],
      env: { GEMINI_CLI_TRUST_WORKSPACE: 'true' },
      timeoutMs: 60_000,
    });
    expect(list.stdout + list.stderr).toContain(`skillhost: ${skillhost.mcpUrl} (http) - Connected`);
  });
});
