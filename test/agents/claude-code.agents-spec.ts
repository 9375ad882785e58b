import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { corpusPath } from '../support/corpus.js';
import { listServers, run } from './clients/claude-code.js';
import { type AgentSkillhost, startAgentSkillhost } from './harness.js';
import { AnthropicProvider, lastToolResult, type MessagesRequest, type Script, shownToModel } from './providers/anthropic.js';
import { mentions, stringsIn } from './providers/recording-server.js';

const TIMEOUT_MS = 120_000;
/** Headless Claude Code asks before every MCP tool call, and refuses it with no one to ask: the README tells users to allow the server's tools. */
const ALLOW_SKILLHOST = ['--allowedTools', 'mcp__skillhost'];
const REQUEST = 'write a 3P update for the data team about the Q3 launch';

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
      const result = await run({ mcpUrl: skillhost.mcpUrl, key: options.key ?? skillhost.key, modelUrl: provider.url, prompt, timeoutMs: TIMEOUT_MS, args: options.args });
      expect(result).toMatchObject({ timedOut: false });
      expect(provider.failures).toEqual([]);
      return { result, requests: provider.modelRequests };
    } finally {
      await provider.stop();
    }
  }

  /** Calls one tool on the first turn, then ends; the request after the call, and what the tool answered. */
  async function callOnce(name: string, args: Record<string, unknown>, options: { args?: string[] } = { args: ALLOW_SKILLHOST }) {
    const { requests } = await session((_request, turn) => (turn === 0 ? { toolCall: { name, arguments: args } } : { text: 'Done.' }), 'Help me with an internal update.', options);
    const after = requests[requests.length - 1];
    return { after, answer: lastToolResult(after) };
  }

  it('shows the model every skill with its description in its first request', async () => {
    const { requests } = await session(() => ({ text: 'Hello.' }), 'Hello');
    // Claude Code defers MCP tools (the model sees their names until it loads one with ToolSearch),
    // so only what it shows up front counts: the system prompt, the messages (server instructions
    // among them) and the loaded tools.
    const shown = shownToModel(requests[0]);
    for (const skill of skillhost.skills) expect({ skill: skill.name, shown: mentions(shown, skill.description) }).toEqual({ skill: skill.name, shown: true });
  });

  it('answers a scripted activate_skill with the body of internal-comms/SKILL.md', async () => {
    const { after, answer } = await callOnce('activate_skill', { name: 'internal-comms' });
    expect(answer).toContain(lineOf('anthropics-skills', 'internal-comms', 'SKILL.md'));
    expect(mentions(shownToModel(after), lineOf('anthropics-skills', 'internal-comms', 'SKILL.md'))).toBe(true);
  });

  it('refuses the activate_skill call headless without a permission rule for mcp__skillhost', async () => {
    const { answer } = await callOnce('activate_skill', { name: 'internal-comms' }, { args: [] });
    expect(answer).toContain("Claude requested permissions to use mcp__skillhost__activate_skill, but you haven't granted it yet.");
  });

  it('reads a file of a skill other than SKILL.md with read_skill_file', async () => {
    const { answer } = await callOnce('read_skill_file', { name: 'internal-comms', path: 'examples/3p-updates.md' });
    expect(answer).toContain(lineOf('anthropics-skills', 'internal-comms', 'examples', '3p-updates.md'));
  });

  it('reads skill://internal-comms/examples/3p-updates.md with its own ReadMcpResourceTool, which needs no permission', async () => {
    const { answer } = await callOnce('ReadMcpResourceTool', { server: 'skillhost', uri: 'skill://internal-comms/examples/3p-updates.md' }, { args: [] });
    expect(answer).toContain(lineOf('anthropics-skills', 'internal-comms', 'examples', '3p-updates.md'));
  });

  describe('/mcp__skillhost__internal-comms <request>', () => {
    let first: MessagesRequest;
    beforeAll(async () => {
      ({
        requests: [first],
      } = await session(() => ({ text: 'Here is the update.' }), `/mcp__skillhost__internal-comms ${REQUEST}`));
    }, TIMEOUT_MS + 30_000);

    it('sends the model the skill and the whole typed text (Claude Code echoes it in <command-args>)', () => {
      expect(mentions(first.messages, lineOf('anthropics-skills', 'internal-comms', 'SKILL.md'))).toBe(true);
      expect(mentions(first.messages, `<command-args>${REQUEST}</command-args>`)).toBe(true);
    });

    it('does not hand the model the typed text cut to its first words in the prompt the server wrote', () => {
      // Claude Code splits the text on whitespace, one word per declared argument, and drops the rest.
      const words = REQUEST.split(' ');
      const cut = words.slice(1).map((_, end) => words.slice(0, end + 1).join(' '));
      const [, promptText = ''] = stringsIn(first.messages).join('\n').split('</command-args>');
      expect(promptText).toContain(lineOf('anthropics-skills', 'internal-comms', 'SKILL.md'));
      const lines = promptText.split('\n');
      expect(lines.filter((line) => cut.some((prefix) => line.trimEnd().endsWith(` ${prefix}`)))).toEqual([]);
    });
  });

  describe.each([
    ['a wrong key', 'wrongKey'],
    ['a revoked key', 'revokedKey'],
  ] as const)('with %s', (_label, which) => {
    it("shows the server's 401 message in `claude mcp list`", async () => {
      const refused = await fetch(skillhost.mcpUrl, { method: 'POST', headers: { authorization: `Bearer ${skillhost[which]}`, 'content-type': 'application/json' }, body: '{}' });
      expect(refused.status).toBe(401);
      const { message } = (await refused.json()) as { message: string };
      const result = await listServers({ mcpUrl: skillhost.mcpUrl, key: skillhost[which], modelUrl: 'http://127.0.0.1:9', timeoutMs: TIMEOUT_MS });
      expect(result).toMatchObject({ code: 0, timedOut: false });
      expect(result.stdout).toContain('Failed to connect');
      expect(result.stdout).toContain(message);
    });
  });
});
