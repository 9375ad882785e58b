import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { corpusPath } from '../support/files/corpus.js';
import { listServers, run } from './clients/claude-code.js';
import { type AgentSkillhost, startAgentSkillhost } from './harness.js';
import {
  AnthropicProvider,
  lastToolResult,
  loadedTools,
  type MessagesRequest,
  type Script,
  shownToModel,
} from './providers/anthropic.js';
import { mentions, stringsIn } from './providers/recording-server.js';

const TIMEOUT_MS = 120_000;
/**
 * Headless Claude Code asks before every MCP tool call, and refuses it with no one to ask: the README tells users to
 * allow the server's tools.
 */
const ALLOW_SKILLHOST = ['--allowedTools', 'mcp__skillhost'];
const REQUEST = 'write a 3P update for the data team about the Q3 launch';

/**
 * A server's instructions as Claude Code shows them to the model: under `## <server>` in the
 * `# MCP Server Instructions` section of a message, up to the end of that message (other sections
 * follow it there, so this may hold more; none of them has Skillhost's text).
 */
function serverInstructions(request: MessagesRequest, server: string): string | undefined {
  const section = stringsIn(request.messages).find((text) => text.includes('# MCP Server Instructions\n'));
  const [, block] = section?.split('# MCP Server Instructions\n')[1]?.split(`\n## ${server}\n`) ?? [];
  return block;
}

/**
 * A line of a corpus file's text to look for in what the model was sent: the first long line after
 * the frontmatter, up to a quote or backslash (a tool result may carry the text JSON-encoded).
 */
function lineOf(...path: string[]): string {
  const text = readFileSync(corpusPath(...path), 'utf8').replace(/^---\n[\s\S]*?\n---\n/, '');
  const line = text
    .split('\n')
    .map((candidate) => candidate.split(/["\\]/)[0].trim())
    .find((candidate) => candidate.length >= 30);
  if (line === undefined) throw new Error(`No line of ${path.join('/')} to look for`);
  return line;
}

describe('Claude Code', () => {
  let skillhost: AgentSkillhost;
  beforeAll(async () => {
    skillhost = await startAgentSkillhost();
  }, 300_000);
  afterAll(() => skillhost?.stop());

  /** Runs Claude Code once against a scripted model; the model's requests, and what the CLI printed. */
  async function session(script: Script, prompt: string, options: { key?: string; args?: string[] } = {}) {
    const provider = await new AnthropicProvider(script).start();
    try {
      const result = await run({
        mcpUrl: skillhost.mcpUrl,
        key: options.key ?? skillhost.key,
        modelUrl: provider.url,
        prompt,
        timeoutMs: TIMEOUT_MS,
        args: options.args,
      });
      expect(result).toMatchObject({ timedOut: false });
      expect(provider.failures).toEqual([]);
      return { result, requests: provider.modelRequests };
    } finally {
      await provider.stop();
    }
  }

  /** Calls one tool on the first turn, then ends; the request after the call, and what the tool answered. */
  async function callOnce(
    name: string,
    args: Record<string, unknown>,
    options: { args?: string[] } = { args: ALLOW_SKILLHOST },
  ) {
    const { requests } = await session(
      (_request, turn) => (turn === 0 ? { toolCall: { name, arguments: args } } : { text: 'Done.' }),
      'Help me with an internal update.',
      options,
    );
    const after = requests[requests.length - 1];
    return { after, answer: lastToolResult(after) };
  }

  it(
    "shows the model every skill's description in its first request, in the server's instructions (the tools are " +
      'deferred)',
    async () => {
      const { requests } = await session(() => ({ text: 'Hello.' }), 'Hello');
      // Claude Code defers MCP tools: the model sees their names, and a tool's description only once
      // it loads the tool with ToolSearch. What it shows up front of Skillhost is the instructions.
      expect(loadedTools(requests[0]).map((tool) => tool.name)).not.toContain('mcp__skillhost__activate_team_skill');
      const instructions = serverInstructions(requests[0], 'skillhost');
      expect(instructions).toMatch(/^This team's Agent Skills/);
      for (const skill of skillhost.skills)
        expect({ skill: skill.name, shown: instructions?.includes(skill.description) }).toEqual({
          skill: skill.name,
          shown: true,
        });
    },
  );

  it('answers a scripted activate_team_skill with the body of internal-comms/SKILL.md', async () => {
    const { after, answer } = await callOnce('activate_team_skill', { name: 'internal-comms' });
    expect(answer).toContain(lineOf('anthropics-skills', 'internal-comms', 'SKILL.md'));
    expect(mentions(shownToModel(after), lineOf('anthropics-skills', 'internal-comms', 'SKILL.md'))).toBe(true);
  });

  it('refuses the activate_team_skill call headless without a permission rule for mcp__skillhost', async () => {
    const { answer } = await callOnce('activate_team_skill', { name: 'internal-comms' }, { args: [] });
    expect(answer).toContain(
      "Claude requested permissions to use mcp__skillhost__activate_team_skill, but you haven't granted it yet.",
    );
  });

  it('reads a file of a skill other than SKILL.md with read_skill_file', async () => {
    const { answer } = await callOnce('read_skill_file', { name: 'internal-comms', path: 'examples/3p-updates.md' });
    expect(answer).toContain(lineOf('anthropics-skills', 'internal-comms', 'examples', '3p-updates.md'));
  });

  it(
    'reads skill://internal-comms/examples/3p-updates.md with its own ReadMcpResourceTool, which needs no ' +
      'permission',
    async () => {
      const { answer } = await callOnce(
        'ReadMcpResourceTool',
        { server: 'skillhost', uri: 'skill://internal-comms/examples/3p-updates.md' },
        { args: [] },
      );
      expect(answer).toContain(lineOf('anthropics-skills', 'internal-comms', 'examples', '3p-updates.md'));
    },
  );

  describe('/mcp__skillhost__internal-comms <request>', () => {
    let first: MessagesRequest;
    beforeAll(async () => {
      ({
        requests: [first],
      } = await session(() => ({ text: 'Here is the update.' }), `/mcp__skillhost__internal-comms ${REQUEST}`));
    }, TIMEOUT_MS + 30_000);

    it('sends the model the whole typed text (Claude Code echoes it in <command-args>)', () => {
      expect(mentions(first.messages, `<command-args>${REQUEST}</command-args>`)).toBe(true);
    });

    it(
      'sends the model the prompt the server wrote, which names activate_team_skill and holds no text of ' +
        'the skill',
      () => {
        const prompt = stringsIn(first.messages).find((text) => text.startsWith('Use the skill "internal-comms"'));
        expect(prompt).toContain('First call the activate_team_skill tool with {"name": "internal-comms"}');
        expect(prompt).not.toContain(lineOf('anthropics-skills', 'internal-comms', 'SKILL.md'));
      },
    );

    it(
      'passes the server only the first word of the text (one word per declared argument, and the prompt declares ' +
        'one)',
      () => {
        const prompt = stringsIn(first.messages).find((text) => text.startsWith('Use the skill "internal-comms"'));
        expect(prompt?.split('\n').at(-1)).toBe(`My request: ${REQUEST.split(' ')[0]}`);
      },
    );
  });

  describe.each([
    ['a wrong key', 'wrongKey'],
    ['a revoked key', 'revokedKey'],
  ] as const)('with %s', (_label, which) => {
    it("shows the server's 401 message in `claude mcp list`", async () => {
      const refused = await fetch(skillhost.mcpUrl, {
        method: 'POST',
        headers: { authorization: `Bearer ${skillhost[which]}`, 'content-type': 'application/json' },
        body: '{}',
      });
      expect(refused.status).toBe(401);
      const { message } = (await refused.json()) as { message: string };
      const result = await listServers({
        mcpUrl: skillhost.mcpUrl,
        key: skillhost[which],
        modelUrl: 'http://127.0.0.1:9',
        timeoutMs: TIMEOUT_MS,
      });
      expect(result).toMatchObject({ code: 0, timedOut: false });
      expect(result.stdout).toContain('Failed to connect');
      expect(result.stdout).toContain(message);
    });
  });
});
