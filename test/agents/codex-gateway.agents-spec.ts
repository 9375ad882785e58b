import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { corpusPath } from '../support/files/corpus.js';
import { type RecordedRequest, ScriptedModelServer } from '../support/scripted-model-server.js';
import { runCodex } from './clients/codex.js';
import { type CodexGatewayRun, gatewayConfig, runThroughGateway } from './clients/codex-gateway.js';
import { type AgentSkillhost, scriptedModel, startAgentSkillhost } from './harness.js';
import { inOrder, OpenAiResponsesProvider } from './providers/openai-responses.js';

/**
 * Codex CLI (`codex exec`, headless) with Skillhost's OpenAI-compatible gateway as its model provider
 * (`wire_api = "responses"`, `base_url = "<skillhost>/openai/v1"`, the key in SKILLHOST_API_KEY), and no MCP server.
 * Skillhost's own model is a scripted chat-completions server: Skillhost adds the catalogue and its skill tools to
 * what Codex sends, runs the skill calls itself, and gives Codex only the answer or Codex's own tool calls.
 */
const SKILL_BODY_LINE = 'To write internal communications, use this skill for:';
const USER_REQUEST = 'write a 3P update for the data team about the Q3 launch';
const FINAL_ANSWER = 'GATEWAY-FINAL-ANSWER: the 3P update, following internal-comms.';

const system = (sent: RecordedRequest) => ScriptedModelServer.systemPrompt(sent);
const toolNames = (sent: RecordedRequest) => (sent.body.tools ?? []).map((tool) => tool.function.name);

describe('Codex CLI through the gateway', () => {
  let skillhost: AgentSkillhost;
  const model = new ScriptedModelServer();
  beforeAll(async () => {
    await model.start();
    skillhost = await startAgentSkillhost(scriptedModel(model.url, ['scripted', 'gpt-5.5']));
  }, 300_000);
  afterAll(async () => {
    await skillhost?.stop();
    await model.stop();
  });

  const session = async (options: Partial<CodexGatewayRun> = {}) => {
    const result = await runThroughGateway({
      gatewayUrl: `${skillhost.baseUrl}/openai/v1`,
      key: skillhost.key,
      model: 'scripted',
      prompt: USER_REQUEST,
      timeoutMs: 90_000,
      multiAgent: false,
      ...options,
    });
    expect(result.timedOut).toBe(false);
    return result;
  };

  it(
    'sends these tool types (seen at a recording Responses server with the same config): a `namespace` with ' +
      'multi_agent on, `web_search` unless disabled, apply_patch as `custom` for a model it knows (gpt-5.5)',
    async () => {
      const sent = async (options: Partial<CodexGatewayRun>) => {
        const provider = await OpenAiResponsesProvider.start(inOrder());
        try {
          await runCodex({
            config: gatewayConfig(provider.baseUrl, options.model ?? 'scripted', options),
            env: { SKILLHOST_API_KEY: skillhost.key },
            prompt: 'hello',
            timeoutMs: 90_000,
          });
          return (provider.modelRequests[0]?.body.tools ?? [])
            .filter((tool) => tool.type !== 'function')
            .map((tool) => `${tool.type}${tool.name === undefined ? '' : ` ${tool.name}`}`);
        } finally {
          await provider.stop();
        }
      };
      expect(await sent({ multiAgent: true })).toEqual(['namespace multi_agent_v1']);
      expect(await sent({ multiAgent: false })).toEqual([]);
      expect(await sent({ multiAgent: false, webSearch: true, model: 'gpt-5.5' })).toEqual([
        'custom apply_patch',
        'web_search',
      ]);
    },
  );

  it('reads a line that is in the corpus', () => {
    expect(readFileSync(corpusPath('anthropics-skills', 'internal-comms', 'SKILL.md'), 'utf8')).toContain(
      SKILL_BODY_LINE,
    );
  });

  it(
    "with Codex's multi_agent feature on (its default): its sub-agent tools, sent as one `namespace` tool " +
      '(multi_agent_v1), reach the model as multi_agent_v1__<name> functions, and the run works',
    async () => {
      model.play(
        { toolCalls: [{ name: 'skills_activate', arguments: { name: 'internal-comms' } }] },
        { text: FINAL_ANSWER },
      );
      const result = await session({ multiAgent: true });
      expect(result.code).toBe(0);
      expect(model.requests).toHaveLength(2);
      expect(toolNames(model.requests[0])).toEqual(
        expect.arrayContaining(['skills_activate', 'exec_command', 'multi_agent_v1__spawn_agent']),
      );
      expect(result.stdout).toBe(`${FINAL_ANSWER}\n`);
    },
  );

  it(
    'with multi_agent off: the model gets the catalogue and skills_activate beside the function tools Codex sent; ' +
      "Skillhost runs the activation (the next model request holds the skill's body) and Codex prints only the answer",
    async () => {
      model.play(
        { toolCalls: [{ name: 'skills_activate', arguments: { name: 'internal-comms' } }] },
        { text: FINAL_ANSWER },
      );
      const result = await session();
      expect(result.code).toBe(0);
      expect(model.requests).toHaveLength(2);
      const [first, second] = model.requests;
      for (const skill of skillhost.skills)
        expect({ skill: skill.name, shown: system(first).includes(skill.description) }).toEqual({
          skill: skill.name,
          shown: true,
        });
      expect(system(first)).toContain('"name":"internal-comms"');
      expect(toolNames(first)).toEqual(expect.arrayContaining(['skills_activate', 'exec_command']));
      expect(JSON.stringify(first.body.messages)).toContain(USER_REQUEST);
      expect(JSON.stringify(second.body.messages)).toContain(SKILL_BODY_LINE);
      expect(result.stdout).toBe(`${FINAL_ANSWER}\n`);
      // Codex never sees Skillhost's own tool call or its result.
      expect(result.stderr).not.toContain('skills_activate');
      expect(result.stderr).not.toContain(SKILL_BODY_LINE);
    },
  );

  it(
    "hands Codex's own exec_command call back to Codex, which runs it and resends the output; the model gets it " +
      'as a tool result and the activation made earlier in the same run is still in the prompt',
    async () => {
      model.play(
        { toolCalls: [{ name: 'skills_activate', arguments: { name: 'internal-comms' } }] },
        { toolCalls: [{ name: 'exec_command', arguments: { cmd: 'echo CODEX-RAN-THIS' } }] },
        { text: FINAL_ANSWER },
      );
      // Codex's sandbox needs its helper binaries, which it refuses to create under a CODEX_HOME in /tmp
      // ("bwrap: execvp codex-linux-sandbox: No such file or directory"); the command is an echo.
      const result = await session({ args: ['--sandbox', 'danger-full-access'] });
      expect(result.code).toBe(0);
      expect(model.requests).toHaveLength(3);
      const last = model.requests[2];
      const toolResult = last.body.messages.find((message) => message.role === 'tool');
      expect(JSON.stringify(toolResult?.content)).toContain('CODEX-RAN-THIS');
      expect(JSON.stringify(last.body.messages)).toContain(SKILL_BODY_LINE);
      expect(result.stdout).toBe(`${FINAL_ANSWER}\n`);
    },
  );

  it(
    "with Codex's default web search and a model Codex knows (gpt-5.5), Codex also sends a `web_search` tool and " +
      'apply_patch as a `custom` tool: the gateway leaves both out of what the model is offered and the run works',
    async () => {
      model.play(
        { toolCalls: [{ name: 'skills_activate', arguments: { name: 'internal-comms' } }] },
        { text: FINAL_ANSWER },
      );
      const result = await session({ model: 'gpt-5.5', webSearch: true });
      expect(result.code).toBe(0);
      expect(model.requests).toHaveLength(2);
      const offered = toolNames(model.requests[0]);
      expect(offered).toEqual(expect.arrayContaining(['skills_activate', 'exec_command']));
      expect(offered).not.toContain('apply_patch');
      expect(model.requests[0].body.tools?.every((tool) => tool.type === 'function')).toBe(true);
      expect(JSON.stringify(model.requests[1].body.messages)).toContain(SKILL_BODY_LINE);
      expect(result.stdout).toBe(`${FINAL_ANSWER}\n`);
    },
  );
});
