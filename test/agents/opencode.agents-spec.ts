import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { corpusPath } from '../support/files/corpus.js';
import { mcpList, run, type RunResult } from './clients/opencode.js';
import { type AgentSkillhost, startAgentSkillhost } from './harness.js';
import { type ChatMessage, type ChatRequest, OpenAiChatProvider, type Script } from './providers/openai-chat.js';
import { mentions } from './providers/recording-server.js';

/*
 * OpenCode (opencode-ai, test/agents/clients.json) against a real Skillhost, configured with the
 * README's opencode.json (clients/opencode.ts, README_SNIPPET), its model a scripted
 * OpenAI-compatible provider. OpenCode names an MCP tool `<server>_<tool>`
 * (`skillhost_activate_team_skill`), puts the server's instructions in its system prompt, offers
 * an MCP prompt as the command `skillhost:<prompt>`, and offers the model its own
 * `list_mcp_resources` and `read_mcp_resource` tools.
 */

const RUN_TIMEOUT_MS = 120_000;
const REQUEST = 'write a 3P update for the data team about the Q3 launch';
const SKILL = 'internal-comms';

/** A skill file's text without its frontmatter. */
function bodyOf(path: string): string {
  return readFileSync(corpusPath('anthropics-skills', SKILL, path), 'utf8').replace(/^---\n[\s\S]*?\n---\n/, '');
}

/** The lines of a skill file's text that are its own: long enough not to turn up anywhere by chance. */
function linesOf(path: string): string[] {
  return bodyOf(path)
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length >= 20);
}

/** The first line of a skill file's text that is its own. */
function lineOf(path: string): string {
  const line = linesOf(path).find((candidate) => candidate.length >= 40);
  if (line === undefined) throw new Error(`No line of 40 characters in ${path}.`);
  return line;
}

function output(result: RunResult): string {
  return `${result.stdout}\n${result.stderr}`;
}

function tool(request: ChatRequest | undefined, name: string) {
  return (request?.tools ?? []).find((offered) => offered.function.name === name);
}

function messagesOf(request: ChatRequest | undefined, role: string): ChatMessage[] {
  return (request?.messages ?? []).filter((message) => message.role === role);
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
    const diagnosis =
      `exit ${result.code}${result.timedOut ? ' (timed out)' : ''}\n--- stdout\n${result.stdout}\n--- ` +
      `stderr\n${result.stderr}\n--- failures\n${provider.failures.join('\n')}\n--- ` +
      `log\n${result.log.slice(-4000)}`;
    return { provider, result, requests: provider.modelRequests, diagnosis };
  }

  const done: Script = () => ({ text: 'Done.' });

  it(
    "sends every served skill's description on the first request, in skillhost_activate_team_skill's description " +
      "and in the system prompt's server instructions",
    async () => {
      const { requests, diagnosis } = await runWith(done);
      expect({ requests: requests.length, diagnosis }).toEqual({ requests: 1, diagnosis });
      const description = tool(requests[0], 'skillhost_activate_team_skill')?.function.description ?? '';
      const system = messagesOf(requests[0], 'system');
      const found = skillhost.skills.map((skill) => ({
        skill: skill.name,
        inTool: description.includes(skill.description),
        inSystem: mentions(system, skill.description),
      }));
      expect({ found, diagnosis }).toEqual({
        found: skillhost.skills.map((skill) => ({ skill: skill.name, inTool: true, inSystem: true })),
        diagnosis,
      });
      expect({
        instructions: mentions(system, '<server name="skillhost">') && mentions(system, "This team's Agent Skills"),
        diagnosis,
      }).toEqual({ instructions: true, diagnosis });
    },
  );

  it('returns the skill body when the model calls skillhost_activate_team_skill', async () => {
    const { provider, requests, diagnosis } = await runWith((_request, turn) =>
      turn === 0
        ? { toolCall: { name: 'skillhost_activate_team_skill', arguments: { name: SKILL } } }
        : { text: 'Done.' },
    );
    expect({ failures: provider.failures, diagnosis }).toEqual({ failures: [], diagnosis });
    expect({ body: mentions(messagesOf(requests[1], 'tool'), lineOf('SKILL.md')), diagnosis }).toEqual({
      body: true,
      diagnosis,
    });
  });

  it('reads examples/3p-updates.md with skillhost_read_skill_file', async () => {
    const { provider, requests, diagnosis } = await runWith((_request, turn) =>
      turn === 0
        ? {
            toolCall: { name: 'skillhost_read_skill_file', arguments: { name: SKILL, path: 'examples/3p-updates.md' } },
          }
        : { text: 'Done.' },
    );
    expect({ failures: provider.failures, diagnosis }).toEqual({ failures: [], diagnosis });
    expect({ file: mentions(messagesOf(requests[1], 'tool'), lineOf('examples/3p-updates.md')), diagnosis }).toEqual({
      file: true,
      diagnosis,
    });
  });

  it(
    "lists examples/3p-updates.md with OpenCode's list_mcp_resources and reads its skill:// URI with " +
      'read_mcp_resource',
    async () => {
      const uri = `skill://${SKILL}/examples/3p-updates.md`;
      const { provider, requests, diagnosis } = await runWith((_request, turn) =>
        turn === 0
          ? { toolCall: { name: 'list_mcp_resources', arguments: {} } }
          : turn === 1
            ? { toolCall: { name: 'read_mcp_resource', arguments: { server: 'skillhost', uri } } }
            : { text: 'Done.' },
      );
      expect({ failures: provider.failures, diagnosis }).toEqual({ failures: [], diagnosis });
      expect({ listed: mentions(messagesOf(requests[1], 'tool'), uri), diagnosis }).toEqual({
        listed: true,
        diagnosis,
      });
      expect({
        file: mentions(messagesOf(requests[2], 'tool').slice(-1), lineOf('examples/3p-updates.md')),
        diagnosis,
      }).toEqual({ file: true, diagnosis });
    },
  );

  describe('the skill prompt as the command skillhost:internal-comms', () => {
    let requests: ChatRequest[];
    let diagnosis: string;
    beforeAll(async () => {
      ({ requests, diagnosis } = await runWith(done, { command: `skillhost:${SKILL}`, prompt: REQUEST }));
    }, RUN_TIMEOUT_MS + 30_000);

    it("sends the model the prompt's message with the whole typed text as the request", () => {
      const expected =
        `Use the skill "${SKILL}" for my request. First call the activate_team_skill tool with {"name": ` +
        `"${SKILL}"} and follow the instructions it returns.\n\nMy request: ${REQUEST}`;
      expect({ requests: requests.length, diagnosis }).toEqual({ requests: 1, diagnosis });
      expect({ message: mentions(messagesOf(requests[0], 'user'), expected), diagnosis }).toEqual({
        message: true,
        diagnosis,
      });
    });

    it(
      'sends no line of SKILL.md in the user message, so no !`…` of a skill reaches the shell OpenCode runs a ' +
        'prompt through',
      () => {
        const user = messagesOf(requests[0], 'user');
        const leaked = linesOf('SKILL.md').filter((line) => mentions(user, line));
        expect({ lines: linesOf('SKILL.md').length > 5, leaked, diagnosis }).toEqual({
          lines: true,
          leaked: [],
          diagnosis,
        });
      },
    );
  });

  it('sends a typed /skillhost:internal-comms line in a plain message as text, not as the command', async () => {
    const { requests, diagnosis } = await runWith(done, { prompt: `/skillhost:${SKILL} ${REQUEST}` });
    expect({
      typed: mentions(messagesOf(requests[0], 'user'), `/skillhost:${SKILL} ${REQUEST}`),
      prompt: mentions(requests[0], 'My request:'),
      diagnosis,
    }).toEqual({ typed: true, prompt: false, diagnosis });
  });

  describe.each([
    ['a wrong key', () => skillhost.wrongKey, 'The API key is not valid.'],
    ['a revoked key', () => skillhost.revokedKey, 'The API key has been revoked.'],
  ])('with %s at start', (_label, key, message) => {
    it(
      "runs the prompt without Skillhost and shows nothing; `opencode mcp list` shows only the SSE fallback's " +
        "'Non-200 status code (401)', not the server's message",
      async () => {
        const { result, requests, diagnosis } = await runWith(done, { key: key() });
        expect({
          code: result.code,
          offered: tool(requests[0], 'skillhost_activate_team_skill') !== undefined,
          diagnosis,
        }).toEqual({ code: 0, offered: false, diagnosis });
        expect({ shown: output(result).includes(message) || output(result).includes('401'), diagnosis }).toEqual({
          shown: false,
          diagnosis,
        });
        const list = await mcpList({
          mcpUrl: skillhost.mcpUrl,
          key: key(),
          modelUrl: 'http://127.0.0.1:9/v1',
          timeoutMs: RUN_TIMEOUT_MS,
        });
        // OpenCode tries Streamable HTTP (whose error carries the body), then SSE, and keeps the last error.
        expect({
          failed: output(list).includes('SSE error: Non-200 status code (401)'),
          message: output(list).includes(message),
          list: output(list),
        }).toEqual({ failed: true, message: false, list: output(list) });
      },
    );
  });

  // Last: it revokes the working key.
  it("shows the server's 401 message to the user and the model when the key is revoked mid-session", async () => {
    const { result, requests, diagnosis } = await runWith(async (_request, turn) => {
      if (turn !== 0) return { text: 'Done.' };
      await skillhost.revoke(skillhost.key);
      return { toolCall: { name: 'skillhost_activate_team_skill', arguments: { name: SKILL } } };
    });
    const revoked = 'The API key has been revoked.';
    expect({
      shown: output(result).includes(revoked),
      toModel: mentions(messagesOf(requests[1], 'tool'), revoked),
      diagnosis,
    }).toEqual({ shown: true, toModel: true, diagnosis });
  });
});
