import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { query } from '../support/database.js';
import { type RecordedRequest, ScriptedModelServer } from '../support/scripted-model-server.js';
import { useSkillTree, writeSkill } from '../support/files/skill-tree.js';

/** Commands (aloop), and several explicit skills in one message, through real turns. */
const tree = useSkillTree((t) => {
  writeSkill(t, 'skills', 'pdf', { description: 'Works with PDF files.', body: '# PDF\n\nPDF-BODY-MARKER steps.\n' });
  writeSkill(t, 'skills', 'git-commit', { description: 'Writes commit messages.', body: 'GIT-BODY-MARKER' });
  t.write(
    'commands/review.md',
    '---\ndescription: Review a change.\nrequires-skills:\n  - git-commit\nargument-hint: <ref> ' +
      '[focus]\n---\nReview $1 with a focus on $2.\nAll of it: $ARGUMENTS\nBudget: $$5\n',
  );
  t.write(
    'commands/standup.md',
    "---\ndescription: Write standup notes.\n---\nWrite my standup notes from yesterday's commits.\n",
  );
  t.write(
    'commands/forms.md',
    '---\ndescription: Fill forms.\nrequires-skills: [pdf, missing-skill]\n---\nFill the forms in $ARGUMENTS.\n',
  );
  // A command named like a skill: `/pdf` runs the command, `$pdf` still reaches the skill.
  t.write('commands/pdf.md', '---\ndescription: The pdf command.\n---\nPDF-COMMAND: $ARGUMENTS\n');
});

const userWords = (sent: RecordedRequest) => sent.body.messages.filter((m) => m.role === 'user').map((m) => m.content);
const toolCalls = (sent: RecordedRequest) =>
  sent.body.messages
    .flatMap((m) => (m.tool_calls ?? []) as { function: { name: string; arguments: string } }[])
    .map((c) => [c.function.name, JSON.parse(c.function.arguments)]);

describe('commands and several explicit skills in a turn', () => {
  let ctx: ChatTestContext;
  const http = () => request(ctx.app.getHttpServer());
  const newChat = async () => (await http().post('/v1/chats').send({}).expect(201)).body.id as string;
  beforeAll(async () => {
    ctx = await startChatApp([tree().path('skills')], {
      'app.commands.directories': [tree().path('commands')],
      'app.skills.explicit_prefixes': ['/', '$'],
    });
  });
  afterAll(async () => ctx?.close());

  it(
    '/review with arguments: its skill is activated by the server (how = command), the model gets the expanded ' +
      'prompt, the typed words are stored',
    async () => {
      const chat = await newChat();
      ctx.model.play({ text: 'Reviewed.' });
      const turn = (
        await http().post(`/v1/chats/${chat}/messages`).send({ content: '/review HEAD~1  security' }).expect(201)
      ).body;
      const prompt = 'Review HEAD~1 with a focus on security.\nAll of it: HEAD~1  security\nBudget: $5';
      expect(turn.command).toEqual({ name: 'review', arguments: 'HEAD~1  security', prompt });
      expect(turn.userMessage).toMatchObject({
        content: '/review HEAD~1  security',
        command: turn.command,
        invokedSkills: [],
        invokedSkill: null,
      });
      expect(turn.activatedSkills).toEqual([expect.objectContaining({ name: 'git-commit', how: 'command', count: 1 })]);
      expect(turn.assistantMessage.toolCards).toEqual([
        expect.objectContaining({
          tool: 'skills.activate',
          args: { name: 'git-commit' },
          status: 'ok',
          output: expect.stringContaining('GIT-BODY-MARKER'),
        }),
      ]);

      const [sent] = ctx.model.requests;
      expect(userWords(sent)).toEqual([prompt]);
      expect(toolCalls(sent)).toEqual([['skills_activate', { name: 'git-commit' }]]);
      const system = ScriptedModelServer.systemPrompt(sent);
      expect(system).toContain('The user ran the command /review: their message below is its prompt');
      expect(system).toContain(
        "Commands users can run (a message starting with /name runs that command's prompt):\n- /forms: Fill " +
          'forms.\n- /pdf: The pdf command.\n- /review <ref> [focus]: Review a change.\n- /standup: Write standup ' +
          'notes.',
      );

      // Stored as typed, with the command beside it; the next turn's history carries the prompt the model got.
      const [row] = await query<{ content: string; command: unknown }>(
        ctx.db.url,
        "SELECT content, command FROM chat_messages WHERE chat_id = $1 AND role = 'user'",
        [chat],
      );
      expect(row).toEqual({ content: '/review HEAD~1  security', command: turn.command });
      ctx.model.play({ text: 'Again.' });
      await http().post(`/v1/chats/${chat}/messages`).send({ content: 'thanks' }).expect(201);
      expect(userWords(ctx.model.requests[0])).toEqual([prompt, 'thanks']);
    },
  );

  it('a command without arguments and without required skills', async () => {
    const chat = await newChat();
    ctx.model.play({ text: 'Notes.' });
    const turn = (await http().post(`/v1/chats/${chat}/messages`).send({ content: '/standup' }).expect(201)).body;
    expect(turn.command).toEqual({
      name: 'standup',
      arguments: '',
      prompt: "Write my standup notes from yesterday's commits.",
    });
    expect(turn.assistantMessage.toolCards).toEqual([]);
    expect(turn.activatedSkills).toEqual([]);
    expect(userWords(ctx.model.requests[0])).toEqual(["Write my standup notes from yesterday's commits."]);
  });

  it('a required skill that is not loaded is an error card naming it; the other skill and the turn go on', async () => {
    const chat = await newChat();
    ctx.model.play({ text: 'Did what I could.' });
    const turn = (await http().post(`/v1/chats/${chat}/messages`).send({ content: '/forms taxes.pdf' }).expect(201))
      .body;
    expect(turn.assistantMessage.toolCards.map((c: { args: unknown; status: string }) => [c.args, c.status])).toEqual([
      [{ name: 'pdf' }, 'ok'],
      [{ name: 'missing-skill' }, 'error'],
    ]);
    expect(turn.assistantMessage.toolCards[1].output).toMatch(
      /^Error \(SKILL_NOT_FOUND\): Skill 'missing-skill' not found\. Available: git-commit, pdf/,
    );
    expect(turn.activatedSkills).toEqual([expect.objectContaining({ name: 'pdf', how: 'command' })]);
    expect(turn.assistantMessage.content).toBe('Did what I could.');
    // The model saw both results, the failure included.
    const results = ctx.model.requests[0].body.messages
      .filter((m) => m.role === 'tool')
      .map((m) => m.content as string);
    expect(results).toEqual([
      expect.stringContaining('PDF-BODY-MARKER'),
      expect.stringContaining("Skill 'missing-skill' not found"),
    ]);
  });

  it(
    'a command and a skill of the same name: /pdf runs the command, $pdf invokes the skill, and the collision is ' +
      'reported',
    async () => {
      const chat = await newChat();
      ctx.model.play({ text: 'Command.' }, { text: 'Skill.' });
      const byCommand = (
        await http().post(`/v1/chats/${chat}/messages`).send({ content: '/pdf merge them' }).expect(201)
      ).body;
      expect(byCommand).toMatchObject({
        command: { name: 'pdf', prompt: 'PDF-COMMAND: merge them' },
        invokedSkills: [],
      });
      const bySkill = (await http().post(`/v1/chats/${chat}/messages`).send({ content: '$pdf merge them' }).expect(201))
        .body;
      expect(bySkill).toMatchObject({ command: null, invokedSkills: ['pdf'], invokedSkill: 'pdf' });
      const report = (await http().get('/v1/admin/skills').expect(200)).body;
      expect(report.commands.collisions).toEqual([
        {
          name: 'pdf',
          kind: 'skill',
          winner: { path: tree().path('commands/pdf.md'), source: tree().path('commands') },
          loser: { path: tree().path('skills/pdf'), source: tree().path('skills') },
        },
      ]);
    },
  );

  it('lists the commands in the context, as the prompt does', async () => {
    const chat = await newChat();
    const context = (await http().get(`/v1/chats/${chat}/context`).expect(200)).body;
    expect(context.commands.map((c: { name: string }) => c.name)).toEqual(['forms', 'pdf', 'review', 'standup']);
    expect(context.commands[2]).toEqual({
      name: 'review',
      description: 'Review a change.',
      argumentHint: '<ref> [focus]',
      requiredSkills: ['git-commit'],
    });
    expect(context.systemPrompt).toContain('- /review <ref> [focus]: Review a change.');
  });

  it(
    '$a $b with tools: each skill is activated in order (how = explicit), the rest of the message is ' + 'the text',
    async () => {
      const chat = await newChat();
      ctx.model.play({ text: 'Both.' });
      const turn = (
        await http().post(`/v1/chats/${chat}/messages`).send({ content: '$git-commit $pdf $nope write it' }).expect(201)
      ).body;
      expect(turn).toMatchObject({ invokedSkills: ['git-commit', 'pdf'], invokedSkill: 'git-commit', command: null });
      expect(turn.userMessage).toMatchObject({
        content: '$git-commit $pdf $nope write it',
        invokedSkills: ['git-commit', 'pdf'],
      });
      expect(turn.activatedSkills.map((a: { name: string; how: string }) => [a.name, a.how])).toEqual([
        ['git-commit', 'explicit'],
        ['pdf', 'explicit'],
      ]);
      const [sent] = ctx.model.requests;
      expect(userWords(sent)).toEqual(['$nope write it']);
      expect(toolCalls(sent)).toEqual([
        ['skills_activate', { name: 'git-commit' }],
        ['skills_activate', { name: 'pdf' }],
      ]);
      expect(ScriptedModelServer.systemPrompt(sent)).toContain(
        "The user invoked the skills 'git-commit', 'pdf' for this message, in this order: use them.",
      );
    },
  );

  it(
    '$a $b without tools: every invoked skill goes into the fallback (how = fallback), no tool is ' + 'offered',
    async () => {
      const chat = await newChat();
      ctx.model.play({ text: 'Both, no tools.' });
      const turn = (
        await http().post(`/v1/chats/${chat}/messages`).send({ content: '$pdf /git-commit', tools: false }).expect(201)
      ).body;
      expect(turn.activatedSkills.map((a: { name: string; how: string }) => [a.name, a.how])).toEqual([
        ['pdf', 'fallback'],
        ['git-commit', 'fallback'],
      ]);
      expect(turn.assistantMessage.toolCards).toEqual([]);
      const [sent] = ctx.model.requests;
      expect(sent.body.tools).toBeUndefined();
      expect(userWords(sent)).toEqual(['Use the pdf and git-commit skills.']);
      expect(
        ScriptedModelServer.systemPrompt(sent).endsWith(
          "Instructions of the skills 'pdf', 'git-commit' (their SKILL.md), for this message:\n<skill " +
            'name="pdf">\n# PDF\n\nPDF-BODY-MARKER steps.\n</skill>\n<skill ' +
            'name="git-commit">\nGIT-BODY-MARKER\n</skill>',
        ),
      ).toBe(true);
    },
  );

  it('a command without tools: its skills go into the fallback, still stored as how = command', async () => {
    const chat = await newChat();
    ctx.model.play({ text: 'Reviewed without tools.' });
    const turn = (
      await http().post(`/v1/chats/${chat}/messages`).send({ content: '/review main', tools: false }).expect(201)
    ).body;
    expect(turn.activatedSkills).toEqual([expect.objectContaining({ name: 'git-commit', how: 'command' })]);
    expect(ScriptedModelServer.systemPrompt(ctx.model.requests[0])).toContain(
      '<skill name="git-commit">\nGIT-BODY-MARKER\n</skill>',
    );
  });

  it('a command without tools whose skill is missing: an error card, the turn goes on', async () => {
    const chat = await newChat();
    ctx.model.play({ text: 'ok' });
    const turn = (
      await http().post(`/v1/chats/${chat}/messages`).send({ content: '/forms a.pdf', tools: false }).expect(201)
    ).body;
    expect(turn.assistantMessage.toolCards).toEqual([
      expect.objectContaining({
        tool: 'skills.activate',
        args: { name: 'missing-skill' },
        status: 'error',
        output: expect.stringMatching(/^Error \(SKILL_NOT_FOUND\)/),
      }),
    ]);
    expect(turn.activatedSkills).toEqual([expect.objectContaining({ name: 'pdf', how: 'command' })]);
  });
});

describe('a command whose expansion would be huge', () => {
  const echoTree = useSkillTree((t) => {
    writeSkill(t, 'skills', 'pdf', { description: 'Works with PDF files.' });
    t.write('commands/echo.md', `---\ndescription: Repeats the request.\n---\n${'$ARGUMENTS\n'.repeat(20)}`);
  });
  let ctx: ChatTestContext;
  beforeAll(async () => {
    ctx = await startChatApp([echoTree().path('skills')], {
      'app.commands.directories': [echoTree().path('commands')],
    });
  });
  afterAll(async () => ctx?.close());

  it('is refused before the model is asked, and nothing is stored; a shorter one runs', async () => {
    const http = () => request(ctx.app.getHttpServer());
    const chat = (await http().post('/v1/chats').send({}).expect(201)).body.id;
    ctx.model.play({ text: 'ok' });
    const refused = (
      await http()
        .post(`/v1/chats/${chat}/messages`)
        .send({ content: `/echo ${'x'.repeat(30_000)}` })
        .expect(400)
    ).body;
    const problem =
      'content: the command /echo with these arguments expands to more than 500000 characters (its template ' +
      'repeats $ARGUMENTS or $1…$9); send shorter arguments';
    expect(refused).toEqual({
      code: 'VALIDATION_FAILED',
      message: `Invalid request: ${problem}`,
      details: { problems: [problem] },
    });
    expect(ctx.model.requests).toEqual([]);
    expect(await query(ctx.db.url, 'SELECT count(*)::int AS n FROM chat_messages WHERE chat_id = $1', [chat])).toEqual([
      { n: 0 },
    ]);
    const turn = (await http().post(`/v1/chats/${chat}/messages`).send({ content: '/echo hi' }).expect(201)).body;
    expect(turn.command.prompt).toBe('hi\n'.repeat(20).trim());
  });
});
