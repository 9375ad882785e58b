import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { query } from '../support/database.js';
import { type RecordedRequest, ScriptedModelServer } from '../support/scripted-model-server.js';
import { useChatSkillsTree } from '../support/files/skill-tree.js';

/**
 * Each tool style with the scripted model: what the model is sent (tools, descriptions, the
 * result text byte for byte), the cards, and what is stored. The skills are the chat suites'
 * `pdf` (body `# PDF\n\nPDF-BODY-MARKER steps.`, with references/forms.md) and `git-commit`.
 */
const chatSkills = useChatSkillsTree();
const PDF_BODY = '# PDF\n\nPDF-BODY-MARKER steps.';

/** The text of the tool result the model was sent in a request (OpenAI shape: a `tool` message). */
function toolResults(sent: RecordedRequest): unknown[] {
  return sent.body.messages.filter((m) => m.role === 'tool').map((m) => m.content);
}

/** Tools as the model got them: wire name, description, JSON Schema. */
function sentTools(sent: RecordedRequest) {
  return (sent.body.tools ?? []).map((t) => ({
    wireName: t.function.name,
    description: t.function.description,
    inputSchema: t.function.parameters,
  }));
}

function styleSuite(style: string, body: (ctx: () => ChatTestContext, chat: () => Promise<string>) => void): void {
  describe(`tool style ${style}`, () => {
    let ctx: ChatTestContext;
    beforeAll(async () => {
      ctx = await startChatApp([chatSkills().path('skills')], { 'app.tools.style': style });
    });
    afterAll(async () => ctx?.close());
    body(
      () => ctx,
      async () => (await request(ctx.app.getHttpServer()).post('/v1/chats').send({}).expect(201)).body.id,
    );
  });
}

/** The context's tools must be exactly what a turn sends, and its prompt the turn's system prompt. */
async function expectContextIsWhatWasSent(
  ctx: ChatTestContext,
  chat: string,
  sent: RecordedRequest,
  context: { systemPrompt: string; tools: { wireName: string; description: string; inputSchema: unknown }[] },
) {
  expect(ScriptedModelServer.systemPrompt(sent)).toBe(context.systemPrompt);
  expect(sentTools(sent)).toEqual(
    context.tools.map(({ wireName, description, inputSchema }) => ({ wireName, description, inputSchema })),
  );
  expect(
    (await query(ctx.db.url, 'SELECT count(*)::int AS n FROM chat_messages WHERE chat_id = $1', [chat]))[0],
  ).toEqual({ n: 2 });
}

styleSuite('activate_skill', (ctx, newChat) => {
  const http = () => request(ctx().app.getHttpServer());

  it('offers one activate_skill tool whose name is an enum of the skills, and skills_readResource', async () => {
    const chat = await newChat();
    const context = (await http().get(`/v1/chats/${chat}/context`).expect(200)).body;
    expect(context.tools.map((t: { name: string }) => t.name)).toEqual(['activate_skill', 'skills.readResource']);
    expect(context.tools[0]).toMatchObject({
      wireName: 'activate_skill',
      inputSchema: {
        type: 'object',
        properties: { name: { type: 'string', enum: ['git-commit', 'pdf'] } },
        required: ['name'],
        additionalProperties: false,
      },
    });
    expect(context.systemPrompt).toContain('call activate_skill with its name');
    expect(context.systemPrompt).toContain('"name":"pdf"');

    ctx().model.play({ toolCalls: [{ name: 'activate_skill', arguments: { name: 'pdf' } }] }, { text: 'Done.' });
    const turn = (
      await http().post(`/v1/chats/${chat}/messages`).send({ content: 'Fill in this PDF form.' }).expect(201)
    ).body;
    await expectContextIsWhatWasSent(ctx(), chat, ctx().model.requests[0], context);
    const expected =
      `<skill_content ` +
      `name="pdf">\n${PDF_BODY}\n</skill_content>\n<skill_resources>\n<file>references/forms.md</file>\n</` +
      `skill_resources>`;
    expect(toolResults(ctx().model.requests[1])).toEqual([expected]);
    expect(turn.assistantMessage.toolCards).toEqual([
      {
        id: expect.any(String),
        tool: 'activate_skill',
        args: { name: 'pdf' },
        status: 'ok',
        summary: { skill: 'pdf', truncated: false, version: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) },
        output: expected,
        durationMs: expect.any(Number),
      },
    ]);
    expect(turn.activatedSkills).toEqual([expect.objectContaining({ name: 'pdf', how: 'tool', count: 1 })]);
  });

  it('answers a name outside the enum with an error card listing the skills', async () => {
    const chat = await newChat();
    ctx().model.play({ toolCalls: [{ name: 'activate_skill', arguments: { name: 'nope' } }] }, { text: 'Sorry.' });
    const turn = (await http().post(`/v1/chats/${chat}/messages`).send({ content: 'go' }).expect(201)).body;
    expect(turn.assistantMessage.toolCards[0]).toMatchObject({
      tool: 'activate_skill',
      status: 'error',
      output:
        `Invalid arguments for activate_skill: 'name' must be one of the available skills: git-commit, pdf. ` +
        `Expected {"name": "git-commit"}.`,
    });
    expect(turn.activatedSkills).toEqual([]);
  });

  it('makes /pdf an activate_skill call of the server', async () => {
    const chat = await newChat();
    ctx().model.play({ text: 'Using it.' });
    const turn = (await http().post(`/v1/chats/${chat}/messages`).send({ content: '/pdf go' }).expect(201)).body;
    const calls = ctx()
      .model.requests[0].body.messages.filter((m) => m.role === 'assistant')
      .flatMap((m) => m.tool_calls ?? []);
    expect(calls).toEqual([
      expect.objectContaining({ function: { name: 'activate_skill', arguments: '{"name":"pdf"}' } }),
    ]);
    expect(turn.activatedSkills).toEqual([expect.objectContaining({ name: 'pdf', how: 'explicit' })]);
  });

  it('runs through the API by its canonical name; tools of other styles are TOOL_NOT_FOUND', async () => {
    const chat = await newChat();
    const run = (await http().post(`/v1/chats/${chat}/tools/activate_skill`).send({ name: 'git-commit' }).expect(200))
      .body;
    expect(run.toolCard).toMatchObject({
      tool: 'activate_skill',
      status: 'ok',
      output: expect.stringMatching(/^<skill_content name="git-commit">/),
    });
    const refused = (await http().post(`/v1/chats/${chat}/tools/skills.activate`).send({ name: 'pdf' }).expect(404))
      .body;
    expect(refused).toEqual({
      code: 'TOOL_NOT_FOUND',
      message:
        "Tool 'skills.activate' is not offered in the 'activate_skill' tool style (app.tools.style). Available: " +
        'activate_skill, skills.readResource.',
      details: { name: 'skills.activate', available: ['activate_skill', 'skills.readResource'] },
    });
    expect(
      (await http().post(`/v1/chats/${chat}/tools/activate_skill`).send({ name: 'nope' }).expect(400)).body.code,
    ).toBe('VALIDATION_FAILED');
  });
});

styleSuite('load_skill', (ctx, newChat) => {
  const http = () => request(ctx().app.getHttpServer());

  it(
    "lists the skills in load_skill's description instead of the system prompt, and answers with the base " +
      'directory',
    async () => {
      const chat = await newChat();
      const context = (await http().get(`/v1/chats/${chat}/context`).expect(200)).body;
      expect(context.tools.map((t: { name: string }) => t.name)).toEqual(['load_skill', 'skills.readResource']);
      expect(context.tools[0].description).toMatch(
        /\n\nAvailable skills:\n- git-commit: Writes commit messages\.\n- pdf: Works with PDF files\.$/,
      );
      expect(context.systemPrompt).not.toContain('Works with PDF files');
      expect(context.systemPrompt).toContain("The skills are listed in the load_skill tool's description.");

      ctx().model.play(
        { toolCalls: [{ name: 'load_skill', arguments: { name: 'pdf' } }] },
        { toolCalls: [{ name: 'skills_readResource', arguments: { name: 'pdf', path: 'references/forms.md' } }] },
        { text: 'Done.' },
      );
      const turn = (
        await http().post(`/v1/chats/${chat}/messages`).send({ content: 'Fill in this PDF form.' }).expect(201)
      ).body;
      await expectContextIsWhatWasSent(ctx(), chat, ctx().model.requests[0], context);
      expect(toolResults(ctx().model.requests[2])).toEqual([
        `## Skill: pdf\n\n**Base directory**: skills/pdf\n\n${PDF_BODY}`,
        'FORMS-MARKER',
      ]);
      expect(turn.assistantMessage.toolCards.map((c: { tool: string; status: string }) => [c.tool, c.status])).toEqual([
        ['load_skill', 'ok'],
        ['skills.readResource', 'ok'],
      ]);
      expect(turn.activatedSkills).toEqual([expect.objectContaining({ name: 'pdf', how: 'tool' })]);
    },
  );

  it('puts the catalogue back in the prompt when tools are off for a message', async () => {
    const chat = await newChat();
    const context = (await http().get(`/v1/chats/${chat}/context?tools=false`).expect(200)).body;
    expect(context.tools).toEqual([]);
    expect(context.systemPrompt).toContain('Works with PDF files');
  });
});

styleSuite('use_skill', (ctx, newChat) => {
  const http = () => request(ctx().app.getHttpServer());

  it('uses a named skill, returning its instructions', async () => {
    const chat = await newChat();
    const context = (await http().get(`/v1/chats/${chat}/context`).expect(200)).body;
    expect(context.tools.map((t: { name: string }) => t.name)).toEqual(['use_skill', 'skills.readResource']);
    expect(context.tools[0].inputSchema).toMatchObject({
      properties: { skill_name: { type: 'string' }, input: { type: 'string' } },
      additionalProperties: false,
    });
    expect(context.tools[0].inputSchema.required).toBeUndefined();
    ctx().model.play({ toolCalls: [{ name: 'use_skill', arguments: { skill_name: 'pdf' } }] }, { text: 'Done.' });
    const turn = (await http().post(`/v1/chats/${chat}/messages`).send({ content: 'go' }).expect(201)).body;
    await expectContextIsWhatWasSent(ctx(), chat, ctx().model.requests[0], context);
    expect(toolResults(ctx().model.requests[1])).toEqual([`# Skill: pdf\n\n${PDF_BODY}`]);
    expect(turn.assistantMessage.toolCards[0]).toMatchObject({
      tool: 'use_skill',
      status: 'ok',
      summary: { skill: 'pdf', truncated: false },
    });
    expect(turn.activatedSkills).toEqual([expect.objectContaining({ name: 'pdf', how: 'tool' })]);
  });

  it("without a name, uses the best match for the user's message when it matches enough of its words", async () => {
    const chat = await newChat();
    ctx().model.play({ toolCalls: [{ name: 'use_skill', arguments: {} }] }, { text: 'Done.' });
    const turn = (await http().post(`/v1/chats/${chat}/messages`).send({ content: 'Read the PDF files' }).expect(201))
      .body;
    const [result] = toolResults(ctx().model.requests[1]) as string[];
    expect(result).toMatch(
      /^Best match for "Read the PDF files": pdf \(\d+% of the request's words\)\.\n\n# Skill: pdf\n\n/,
    );
    expect(turn.activatedSkills).toEqual([expect.objectContaining({ name: 'pdf', how: 'tool' })]);
  });

  it('below the threshold, names the closest candidates and activates nothing', async () => {
    const chat = await newChat();
    ctx().model.play(
      { toolCalls: [{ name: 'use_skill', arguments: { input: 'bake sourdough bread with the commit' } }] },
      { text: 'No skill.' },
    );
    const turn = (await http().post(`/v1/chats/${chat}/messages`).send({ content: 'help' }).expect(201)).body;
    const [result] = toolResults(ctx().model.requests[1]) as string[];
    expect(result).toMatch(
      new RegExp(
        '^No skill matches "bake sourdough bread with the commit" closely enough \\(a match needs 50% ' +
          "of the request's words\\)\\. The closest:\\n- git-commit \\(\\d+%\\): Writes commit " +
          'messages\\.\\nCall use_skill',
      ),
    );
    expect(turn.assistantMessage.toolCards[0]).toMatchObject({
      tool: 'use_skill',
      status: 'ok',
      summary: { skill: null, candidates: ['git-commit'] },
    });
    expect(turn.activatedSkills).toEqual([]);
  });

  it('asks for a skill name or input when an API caller gives neither', async () => {
    const chat = await newChat();
    const run = (await http().post(`/v1/chats/${chat}/tools/use_skill`).send({}).expect(200)).body;
    expect(run.toolCard).toMatchObject({
      status: 'ok',
      output: 'Give skill_name, or describe the task in input, to choose a skill.',
      summary: { skill: null },
    });
  });
});

styleSuite('skillhost', (ctx, newChat) => {
  const http = () => request(ctx().app.getHttpServer());

  it("lists a skill's files through skills.listResources, for the model and the API alike", async () => {
    const chat = await newChat();
    ctx().model.play(
      { toolCalls: [{ name: 'skills_listResources', arguments: { name: 'pdf', type: 'references' } }] },
      { text: 'Listed.' },
    );
    const turn = (await http().post(`/v1/chats/${chat}/messages`).send({ content: 'what files?' }).expect(201)).body;
    const expected =
      "Files of type references in the skill 'pdf' (1), relative to its folder:\n- references/forms.md (12 bytes)";
    expect(toolResults(ctx().model.requests[1])).toEqual([expected]);
    expect(turn.assistantMessage.toolCards[0]).toMatchObject({
      tool: 'skills.listResources',
      status: 'ok',
      summary: { skill: 'pdf', type: 'references', count: 1, truncated: false },
      output: expected,
    });
    const run = (
      await http()
        .post(`/v1/chats/${chat}/tools/skills.listResources`)
        .send({ name: 'pdf', type: 'scripts' })
        .expect(200)
    ).body;
    expect(run.toolCard.output).toBe("The skill 'pdf' has no files of type scripts besides SKILL.md.");
    const bad = (
      await http()
        .post(`/v1/chats/${chat}/tools/skills.listResources`)
        .send({ name: 'pdf', type: 'videos' })
        .expect(400)
    ).body;
    expect(bad).toEqual({
      code: 'VALIDATION_FAILED',
      message:
        `Invalid arguments for skills.listResources: 'type' must be one of scripts, references, assets, other. ` +
        `Expected {"name": "<skill>", "type": "references"}.`,
      details: { problems: ["'type' must be one of scripts, references, assets, other"] },
    });
  });
});
