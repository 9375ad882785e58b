import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { corpusPath } from '../support/files/corpus.js';
import { README_SNIPPET, run, type CodexResult, type CodexRun } from './clients/codex.js';
import { type AgentSkillhost, startAgentSkillhost } from './harness.js';
import { inOrder, OpenAiResponsesProvider, type ResponsesRequest, type Script } from './providers/openai-responses.js';
import { mentions } from './providers/recording-server.js';

/**
 * Codex CLI (`codex exec`, headless) with the README's `[mcp_servers.skillhost]` entry
 * (README_SNIPPET) alone, against a fresh Skillhost and a scripted model. Unless a test says otherwise the model slug
 * is one Codex has no metadata for, so every tool is sent inline in the first request; `gpt-5.5` is a model
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
  async function session(
    script: Script,
    prompt: string,
    options: Partial<CodexRun> = {},
  ): Promise<{ requests: ResponsesRequest[]; result: CodexResult; failures: string[] }> {
    const provider = await OpenAiResponsesProvider.start(script);
    try {
      const result = await run({
        mcpUrl: skillhost.mcpUrl,
        key: skillhost.key,
        modelUrl: provider.baseUrl,
        prompt,
        timeoutMs: 90_000,
        ...options,
      });
      expect(result.timedOut).toBe(false);
      return { requests: provider.modelRequests, result, failures: provider.failures };
    } finally {
      await provider.stop();
    }
  }

  const activate = { toolCall: { name: 'activate_team_skill', arguments: { name: 'internal-comms' } } };

  it('reads lines that are in the corpus', () => {
    expect(readFileSync(corpusPath('anthropics-skills', 'internal-comms', 'SKILL.md'), 'utf8')).toContain(
      SKILL_BODY_LINE,
    );
    expect(
      readFileSync(corpusPath('anthropics-skills', 'internal-comms', 'examples', '3p-updates.md'), 'utf8'),
    ).toContain(EXAMPLE_FILE_LINE);
  });

  it("drives the README's snippet", () => {
    expect(readFileSync(new URL('../../README.md', import.meta.url), 'utf8')).toContain(
      `\`\`\`toml\n${README_SNIPPET}\`\`\``,
    );
  });

  it(
    "shows every served skill's description in the first request, in activate_team_skill's description and in the " +
      "namespace's (the server's instructions)",
    async () => {
      const { requests } = await session(inOrder(), 'hello');
      const activateTool = requests[0].tools.find((tool) => tool.fullName === 'mcp__skillhost__activate_team_skill');
      const namespace = requests[0].body.tools?.find(
        (tool) => tool.type === 'namespace' && tool.name === 'mcp__skillhost',
      );
      for (const skill of skillhost.skills) {
        expect({
          skill: skill.name,
          inTool: activateTool?.description?.includes(`- ${skill.name}: ${skill.description}`),
          inNamespace: namespace?.description?.includes(`- ${skill.name}: ${skill.description}`),
        }).toEqual({
          skill: skill.name,
          inTool: true,
          inNamespace: true,
        });
      }
    },
  );

  it(
    "with a tool-searching model (gpt-5.5), the first request shows only the instructions' first line; a search " +
      "for the user's task loads activate_team_skill with every skill",
    async () => {
      const search = {
        toolCall: { name: 'tool_search', arguments: { query: 'write a 3P update internal communications', limit: 8 } },
      };
      const { requests, failures } = await session(inOrder(search), USER_REQUEST, { model: 'gpt-5.5' });
      expect(failures).toEqual([]);
      expect(requests[0].tools.map((tool) => tool.fullName)).not.toContain('mcp__skillhost__activate_team_skill');
      const loaded = requests[1].tools.find((tool) => tool.fullName === 'mcp__skillhost__activate_team_skill');
      const instructions = (requests[1].body.input ?? [])
        .flatMap((item) =>
          (item as { type?: string }).type === 'tool_search_output'
            ? (item as { tools: { name?: string; description?: string }[] }).tools
            : [],
        )
        .find((tool) => tool.name === 'mcp__skillhost')?.description;
      const firstLine = instructions?.split('\n')[0] ?? '';
      expect(firstLine).toMatch(/activate_team_skill/);
      expect(mentions(requests[0].body.input, `- mcp__skillhost: ${firstLine}\n`)).toBe(true);
      for (const skill of skillhost.skills) {
        expect({
          skill: skill.name,
          firstRequest: mentions(requests[0].body, skill.description),
          loaded: loaded?.description?.includes(`- ${skill.name}: ${skill.description}`),
        }).toEqual({ skill: skill.name, firstRequest: false, loaded: true });
      }
    },
  );

  it(
    'activates a skill with activate_team_skill and no approval setting: the next request holds the ' + "skill's body",
    async () => {
      const { requests, result, failures } = await session(inOrder(activate), USER_REQUEST);
      expect(failures).toEqual([]);
      expect(result.stderr).toContain('mcp: skillhost/activate_team_skill (completed)');
      expect(result.stderr).not.toContain('requires approval');
      expect(mentions(requests[1].body.input, SKILL_BODY_LINE)).toBe(true);
    },
  );

  it('reads a file of a skill with read_skill_file', async () => {
    const { requests, failures } = await session(
      inOrder({
        toolCall: { name: 'read_skill_file', arguments: { name: 'internal-comms', path: 'examples/3p-updates.md' } },
      }),
      USER_REQUEST,
    );
    expect(failures).toEqual([]);
    expect(mentions(requests[1].body.input, EXAMPLE_FILE_LINE)).toBe(true);
  });

  it("reads a file that Codex's list_mcp_resources lists with its read_mcp_resource", async () => {
    const uri = 'skill://internal-comms/examples/3p-updates.md';
    const list = { toolCall: { name: 'list_mcp_resources', arguments: { server: 'skillhost' } } };
    const read = { toolCall: { name: 'read_mcp_resource', arguments: { server: 'skillhost', uri } } };
    const { requests, failures } = await session(inOrder(list, read), USER_REQUEST);
    expect(failures).toEqual([]);
    const listed = (requests[1].body.input ?? []).find(
      (item) =>
        (item as { type?: string; call_id?: string }).type === 'function_call_output' &&
        (item as { call_id?: string }).call_id === 'call_0',
    );
    expect(JSON.parse((listed as { output: string }).output)).toMatchObject({
      resources: expect.arrayContaining([expect.objectContaining({ uri })]),
    });
    expect(mentions(requests[2].body.input, EXAMPLE_FILE_LINE)).toBe(true);
  });

  it(
    'has no MCP prompts: `/internal-comms <request>` reaches the model as typed, with no skill text ' + 'put in',
    async () => {
      const typed = `/internal-comms ${USER_REQUEST}`;
      const { requests } = await session(inOrder(), typed);
      const lastInput = requests[0].body.input?.at(-1);
      expect(lastInput).toMatchObject({ role: 'user', content: [{ type: 'input_text', text: typed }] });
      expect(mentions(requests[0].body, SKILL_BODY_LINE)).toBe(false);
    },
  );

  it.each([
    ['a wrong key', () => skillhost.wrongKey, 'The API key is not valid.'],
    ['a revoked key', () => skillhost.revokedKey, 'The API key has been revoked.'],
  ])(
    "shows the server's 401 message for %s on stderr, and runs on without the server's tools",
    async (_label, key, message) => {
      const { requests, result } = await session(inOrder(), 'hello', { key: key() });
      expect(requests[0].tools.some((tool) => tool.namespace === 'mcp__skillhost')).toBe(false);
      expect(result.code).toBe(0);
      expect(result.stderr).toContain(
        `AuthRequired(AuthRequiredError { www_authenticate_header: "Bearer realm=\\"skillhost\\", ` +
          `error=\\"invalid_token\\", error_description=\\"${message}\\"" })`,
      );
    },
  );

  it("with SKILLHOST_API_KEY unset, runs on without the server's tools and says nothing about it", async () => {
    const { requests, result } = await session(inOrder(), 'hello', { key: undefined });
    expect(requests[0].tools.some((tool) => tool.namespace === 'mcp__skillhost')).toBe(false);
    expect(result.code).toBe(0);
    expect(result.stderr).not.toMatch(/ERROR|AuthRequired|SKILLHOST_API_KEY|bearer/i);
  });
});
