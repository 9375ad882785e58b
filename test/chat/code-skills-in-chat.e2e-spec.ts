import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { type RecordedRequest, ScriptedModelServer } from '../support/scripted-model-server.js';
import { useSkillTree, writeSkill } from '../support/files/skill-tree.js';

/**
 * Code skills (the Rumi design) in real turns: invoked through use_skill and /name, their
 * ctx.llm.complete answered by the scripted model, ctx.tools.call running the chat's tools, the
 * promptInjection in the next steps' system prompt, and failures as error cards.
 */
const tree = useSkillTree((t) => {
  writeSkill(t, 'skills', 'pdf', { description: 'Works with PDF files.' });
  t.write('skills/pdf/references/forms.md', 'FORMS');
  writeSkill(t, 'code', 'echo-code', { description: 'Echoes what it is given, summarised.' });
  t.write(
    'code/echo-code/skill.mjs',
    [
      'export async function execute(ctx) {',
      "  const summary = await ctx.llm.complete(`Summarise: ${ctx.input}`, { system: 'Be brief.' });",
      "  const listed = await ctx.tools.call('skills.listResources', { name: 'pdf' });",
      '  return { success: true, output: `input=${ctx.input}; llm=${summary}; tool=${listed.status}; ' +
        "unit=${ctx.config.unit}; chat=${ctx.chatId}`, promptInjection: 'INJECTED-MARKER: answer in French.' };",
      '}',
      "export function canHandle(query) { return query.includes('parrot') ? 0.9 : 0; }",
    ].join('\n'),
  );
  writeSkill(t, 'code', 'thrower', { description: 'Always fails.' });
  t.write('code/thrower/skill.mjs', "export async function execute() { throw new Error('THROWN-MARKER'); }\n");
  writeSkill(t, 'code', 'recurser', { description: 'Calls itself.' });
  t.write(
    'code/recurser/skill.mjs',
    "export async function execute(ctx) { const inner = await ctx.tools.call('use_skill', { skill_name: " +
      "'recurser' }); return { success: true, output: `inner: ${inner.output}` }; }\n",
  );
  writeSkill(t, 'code', 'looper', { description: 'Never finishes.' });
  t.write('code/looper/skill.mjs', 'export async function execute() { for (;;) {} }\n');
});

const toolResults = (sent: RecordedRequest) =>
  sent.body.messages.filter((m) => m.role === 'tool').map((m) => m.content as string);

describe('code skills in a chat (use_skill style)', () => {
  let ctx: ChatTestContext;
  const http = () => request(ctx.app.getHttpServer());
  const newChat = async () => (await http().post('/v1/chats').send({}).expect(201)).body.id as string;
  beforeAll(async () => {
    ctx = await startChatApp([tree().path('skills')], {
      'app.tools.style': 'use_skill',
      'app.skills.code_directories': [tree().path('code')],
      'app.skills.code_timeout_ms': 3000,
      'app.skills.settings': { 'echo-code': { unit: 'km' } },
    });
  });
  afterAll(async () => ctx?.close());

  it(
    'use_skill runs a code skill: its llm call goes to the chat model, its tool call runs and is carded, its ' +
      'promptInjection reaches the next step',
    async () => {
      const chat = await newChat();
      ctx.model.play(
        { toolCalls: [{ name: 'use_skill', arguments: { skill_name: 'echo-code', input: 'hello' } }] },
        { text: 'SUMMARY' },
        { text: 'Fini.' },
      );
      const turn = (await http().post(`/v1/chats/${chat}/messages`).send({ content: 'go' }).expect(201)).body;
      expect(turn.assistantMessage.content).toBe('Fini.');
      const [used, listed] = turn.assistantMessage.toolCards;
      expect(used).toMatchObject({ tool: 'use_skill', status: 'ok', summary: { skill: 'echo-code' } });
      expect(used.output).toBe(`# Skill: echo-code (ran)\n\ninput=hello; llm=SUMMARY; tool=ok; unit=km; chat=${chat}`);
      expect(listed).toMatchObject({ tool: 'skills.listResources', status: 'ok', args: { name: 'pdf' } });
      expect(turn.activatedSkills).toEqual([expect.objectContaining({ name: 'echo-code', how: 'tool' })]);

      // The code's llm.complete: the chat's model, its own system prompt, no tools.
      const completion = ctx.model.requests[1];
      expect(completion.body.tools).toBeUndefined();
      expect(completion.body.messages).toEqual([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Summarise: hello' },
      ]);
      const next = ctx.model.requests[2];
      expect(ScriptedModelServer.systemPrompt(next)).toContain('INJECTED-MARKER: answer in French.');
      expect(ScriptedModelServer.systemPrompt(ctx.model.requests[0])).not.toContain('INJECTED-MARKER');
      expect(toolResults(next)).toEqual([used.output]);
    },
  );

  it("without a name, a code skill's canHandle can make it the best match", async () => {
    const chat = await newChat();
    ctx.model.play(
      { toolCalls: [{ name: 'use_skill', arguments: { input: 'be a parrot' } }] },
      { text: 'S' },
      { text: 'ok' },
    );
    const turn = (await http().post(`/v1/chats/${chat}/messages`).send({ content: 'go' }).expect(201)).body;
    expect(turn.assistantMessage.toolCards[0].output).toMatch(
      new RegExp(
        '^Best match for "be a parrot": echo-code \\(90% by its own canHandle\\)\\.\\n\\n# Skill: ' +
          'echo-code \\(ran\\)\\n\\ninput=be a parrot;',
      ),
    );
  });

  it('/name runs a code skill before the model, with its card, and its answer in the system prompt', async () => {
    const chat = await newChat();
    ctx.model.play({ text: 'S2' }, { text: 'Done.' });
    const turn = (await http().post(`/v1/chats/${chat}/messages`).send({ content: '/echo-code hi there' }).expect(201))
      .body;
    expect(turn.invokedSkills).toEqual(['echo-code']);
    expect(turn.assistantMessage.toolCards.map((c: { tool: string; status: string }) => [c.tool, c.status])).toEqual([
      ['use_skill', 'ok'],
      ['skills.listResources', 'ok'],
    ]);
    expect(turn.activatedSkills).toEqual([expect.objectContaining({ name: 'echo-code', how: 'explicit' })]);
    const system = ScriptedModelServer.systemPrompt(ctx.model.requests[1]);
    expect(system).toContain(
      `The code skill 'echo-code' the user invoked ran for this message and answered:\n<skill_result ` +
        `name="echo-code">\n# Skill: echo-code (ran)\n\ninput=hi there; llm=S2;`,
    );
    expect(system).toContain('INJECTED-MARKER');
  });

  it('a code skill that throws is an error card; the turn goes on', async () => {
    const chat = await newChat();
    ctx.model.play(
      { toolCalls: [{ name: 'use_skill', arguments: { skill_name: 'thrower' } }] },
      { text: 'It failed.' },
    );
    const turn = (await http().post(`/v1/chats/${chat}/messages`).send({ content: 'go' }).expect(201)).body;
    expect(turn.assistantMessage.toolCards[0]).toMatchObject({
      tool: 'use_skill',
      status: 'error',
      output: expect.stringMatching(/^Error \(CODE_SKILL_FAILED\): Skill 'thrower' failed: .*THROWN-MARKER/),
    });
    expect(turn.activatedSkills).toEqual([]);
    expect(turn.assistantMessage.content).toBe('It failed.');
  });

  it('a code skill that never ends is stopped by the time-out, and the next run works', async () => {
    const chat = await newChat();
    ctx.model.play({ toolCalls: [{ name: 'use_skill', arguments: { skill_name: 'looper' } }] }, { text: 'Stopped.' });
    const turn = (await http().post(`/v1/chats/${chat}/messages`).send({ content: 'go' }).expect(201)).body;
    expect(turn.assistantMessage.toolCards[0]).toMatchObject({
      status: 'error',
      output: expect.stringMatching(/^Error \(CODE_SKILL_FAILED\): Skill 'looper' failed: .*3000 ms/),
    });
    ctx.model.play(
      { toolCalls: [{ name: 'use_skill', arguments: { skill_name: 'echo-code', input: 'again' } }] },
      { text: 'S3' },
      { text: 'ok' },
    );
    const again = (await http().post(`/v1/chats/${chat}/messages`).send({ content: 'go' }).expect(201)).body;
    expect(again.assistantMessage.toolCards[0]).toMatchObject({ status: 'ok' });
  });

  it('a code skill calling itself through use_skill stops two levels down, with a card saying why', async () => {
    const chat = await newChat();
    ctx.model.play({ toolCalls: [{ name: 'use_skill', arguments: { skill_name: 'recurser' } }] }, { text: 'ok' });
    const turn = (await http().post(`/v1/chats/${chat}/messages`).send({ content: 'go' }).expect(201)).body;
    const cards = turn.assistantMessage.toolCards as { tool: string; status: string; output: string }[];
    expect(cards.map((c) => [c.tool, c.status])).toEqual([
      ['use_skill', 'ok'],
      ['use_skill', 'error'],
      ['use_skill', 'ok'],
    ]);
    expect(cards[1].output).toBe(
      "Error (CODE_SKILL_FAILED): Skill 'recurser' was not run: code skills may call code skills only 2 deep.",
    );
    expect(cards[0].output).toContain('inner: # Skill: recurser (ran)\n\ninner: Error (CODE_SKILL_FAILED)');
  });

  it(
    'through the tool API a code skill runs too; its llm.complete fails with a reason there (no turn, no model ' +
      'call)',
    async () => {
      const chat = await newChat();
      const run = (
        await http().post(`/v1/chats/${chat}/tools/use_skill`).send({ skill_name: 'echo-code', input: 'x' }).expect(200)
      ).body;
      expect(run.toolCard).toMatchObject({
        status: 'error',
        output: expect.stringContaining('llm.complete is available only inside a chat turn'),
      });
    },
  );
});
