import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { query } from '../support/database.js';
import { ScriptedModelServer } from '../support/scripted-model-server.js';
import { useChatSkillsTree } from '../support/files/skill-tree.js';
import { collectText, parseSse } from '../support/sse.js';

const chatSkills = useChatSkillsTree();

async function newChat(ctx: ChatTestContext, title = 't'): Promise<string> {
  return (await request(ctx.app.getHttpServer()).post('/v1/chats').send({ title }).expect(201)).body.id;
}

describe('Chat REST API', () => {
  let ctx: ChatTestContext;
  const http = () => request(ctx.app.getHttpServer());
  beforeAll(async () => {
    ctx = await startChatApp([chatSkills().path('skills')]);
  });
  afterAll(async () => ctx?.close());

  it('creates, lists (paginated), reads and deletes chats', async () => {
    const created = await http().post('/v1/chats').send({ title: 'first' }).expect(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      title: 'first',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const untitled = (await http().post('/v1/chats').send({}).expect(201)).body;
    expect(untitled.title).toBeNull();
    const page = (await http().get('/v1/chats?limit=1&offset=0').expect(200)).body;
    expect(page).toMatchObject({
      limit: 1,
      offset: 0,
      total: expect.any(Number),
      items: [expect.objectContaining({ id: expect.any(String) })],
    });
    expect(page.total).toBeGreaterThanOrEqual(2);
    expect((await http().get(`/v1/chats/${created.body.id}`).expect(200)).body).toEqual({
      ...created.body,
      activatedSkills: [],
    });
    await http().delete(`/v1/chats/${created.body.id}`).expect(204);
    expect((await http().get(`/v1/chats/${created.body.id}`).expect(404)).body).toEqual({
      code: 'CHAT_NOT_FOUND',
      message: `Chat '${created.body.id}' not found.`,
      details: { id: created.body.id },
    });
  });

  it('deleting a chat removes its messages and activations (ON DELETE CASCADE)', async () => {
    const id = await newChat(ctx);
    await http().post(`/v1/chats/${id}/tools/skills.activate`).send({ name: 'pdf' }).expect(200);
    await http().delete(`/v1/chats/${id}`).expect(204);
    expect(await query(ctx.db.url, 'SELECT count(*)::int AS n FROM chat_messages WHERE chat_id = $1', [id])).toEqual([
      { n: 0 },
    ]);
    expect(
      await query(ctx.db.url, 'SELECT count(*)::int AS n FROM chat_activated_skills WHERE chat_id = $1', [id]),
    ).toEqual([{ n: 0 }]);
  });

  it.each([
    ['GET', '/v1/chats/00000000-0000-4000-8000-000000000000'],
    ['GET', '/v1/chats/not-a-uuid'],
    ['GET', '/v1/chats/00000000-0000-4000-8000-000000000000/messages'],
    ['DELETE', '/v1/chats/00000000-0000-4000-8000-000000000000'],
    ['GET', '/v1/chats/00000000-0000-4000-8000-000000000000/context'],
  ])('%s %s → 404 CHAT_NOT_FOUND', async (method, url) => {
    const res = await (method === 'GET' ? http().get(url) : http().delete(url)).expect(404);
    expect(res.body.code).toBe('CHAT_NOT_FOUND');
  });

  it('POST messages to an unknown chat → 404 CHAT_NOT_FOUND, nothing stored', async () => {
    ctx.model.play({ text: 'never' });
    const res = await http()
      .post('/v1/chats/00000000-0000-4000-8000-000000000000/messages')
      .send({ content: 'hi' })
      .expect(404);
    expect(res.body.code).toBe('CHAT_NOT_FOUND');
    expect(ctx.model.requests).toHaveLength(0);
  });

  it.each([
    [
      'no content',
      {},
      ['content: content must be a string', 'content: content must be longer than or equal to 1 characters'],
    ],
    ['empty content', { content: '' }, ['content: content must be longer than or equal to 1 characters']],
    [
      '100,001 characters',
      { content: 'x'.repeat(100_001) },
      ['content: content must be shorter than or equal to 100000 characters'],
    ],
    ['tools not a boolean', { content: 'hi', tools: 'no' }, ['tools: tools must be a boolean value']],
    ['an unknown field', { content: 'hi', extra: 1 }, ['extra: property extra should not exist']],
  ])('POST messages with %s → 400 VALIDATION_FAILED listing each problem', async (_, body, problems) => {
    const id = await newChat(ctx);
    const res = await http().post(`/v1/chats/${id}/messages`).send(body).expect(400);
    expect(res.body.code).toBe('VALIDATION_FAILED');
    expect(res.body.details.problems).toEqual(expect.arrayContaining(problems));
    expect((await http().get(`/v1/chats/${id}/messages`).expect(200)).body.total).toBe(0);
  });

  it('refuses a body over 1 MiB with 413 PAYLOAD_TOO_LARGE, and bad pagination with 400', async () => {
    const id = await newChat(ctx);
    const big = await http()
      .post(`/v1/chats/${id}/messages`)
      .send({ content: 'x'.repeat(1_100_000) })
      .expect(413);
    expect(big.body.code).toBe('PAYLOAD_TOO_LARGE');
    const page = await http().get('/v1/chats?limit=500&offset=-1').expect(400);
    expect(page.body.code).toBe('VALIDATION_FAILED');
    expect(page.body.details.problems).toEqual([
      'limit: limit must not be greater than 200',
      'offset: offset must not be less than 0',
    ]);
  });

  it('rejects malformed JSON and unknown fields on chat creation', async () => {
    const bad = await http().post('/v1/chats').set('content-type', 'application/json').send('{"title":').expect(400);
    expect(bad.body.code).toBe('VALIDATION_FAILED');
    const extra = await http().post('/v1/chats').send({ title: 'x', owner: 'me' }).expect(400);
    expect(extra.body.details.problems).toEqual(['owner: property owner should not exist']);
  });

  it('a plain turn: the model answers, both messages are stored in order', async () => {
    const id = await newChat(ctx);
    ctx.model.play({ text: 'Hello there.' });
    const res = await http().post(`/v1/chats/${id}/messages`).send({ content: 'hi' }).expect(201);
    expect(res.headers['server-timing']).toMatch(
      /^total;dur=[\d.]+, model;dur=[\d.]+, overhead;dur=[\d.]+, db;dur=[\d.]+, skills;dur=[\d.]+$/,
    );
    expect(res.body).toEqual({
      userMessage: expect.objectContaining({ seq: 1, role: 'user', content: 'hi', invokedSkill: null, toolCards: [] }),
      assistantMessage: expect.objectContaining({
        seq: 2,
        role: 'assistant',
        content: 'Hello there.',
        toolCards: [],
        model: 'scripted',
      }),
      activatedSkills: [],
      invokedSkill: null,
      invokedSkills: [],
      command: null,
    });
    // Earlier messages go to the model on the next turn.
    ctx.model.play({ text: 'Again.' });
    await http().post(`/v1/chats/${id}/messages`).send({ content: 'and again' }).expect(201);
    expect(ctx.model.requests[0].body.messages.filter((m) => m.role !== 'system')).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Hello there.' },
      { role: 'user', content: 'and again' },
    ]);
  });

  it('an unknown /name leaves the text unchanged and is not an error', async () => {
    const id = await newChat(ctx);
    ctx.model.play({ text: 'ok' });
    const res = await http().post(`/v1/chats/${id}/messages`).send({ content: '/unknown-skill do it' }).expect(201);
    expect(res.body.invokedSkill).toBeNull();
    expect(res.body.assistantMessage.toolCards).toEqual([]);
    const sent = ctx.model.requests[0].body.messages;
    expect(sent[sent.length - 1]).toEqual({ role: 'user', content: '/unknown-skill do it' });
  });

  it(
    'the model activating a skill by itself is stored with how = tool; the model can call unknown skills and gets ' +
      'the alternatives',
    async () => {
      const id = await newChat(ctx);
      ctx.model.play(
        {
          toolCalls: [
            { name: 'skills_activate', arguments: { name: 'nope' } },
            { name: 'skills_activate', arguments: { name: 'pdf' } },
          ],
        },
        { text: 'Done.' },
      );
      const res = await http().post(`/v1/chats/${id}/messages`).send({ content: 'fill the form' }).expect(201);
      const cards = res.body.assistantMessage.toolCards;
      expect(cards.map((c: { status: string }) => c.status)).toEqual(['error', 'ok']);
      expect(cards[0].output).toBe("Error (SKILL_NOT_FOUND): Skill 'nope' not found. Available: git-commit, pdf");
      expect(res.body.activatedSkills).toEqual([expect.objectContaining({ name: 'pdf', how: 'tool', count: 1 })]);
      expect(JSON.stringify(ctx.model.requests[1].body.messages)).toContain(
        "Skill 'nope' not found. Available: git-commit, pdf",
      );
      // Server-Timing splits the turn: the database and skill-tool parts lie within the overhead.
      const timing = Object.fromEntries(
        String(res.headers['server-timing'])
          .split(', ')
          .map((part) => [part.split(';')[0], Number(part.split('dur=')[1])]),
      );
      const cardsMs = cards.reduce((sum: number, card: { durationMs: number }) => sum + card.durationMs, 0);
      expect(timing.skills).toBeCloseTo(cardsMs, 1);
      expect(timing.db).toBeGreaterThan(0);
      expect(timing.db + timing.skills).toBeLessThanOrEqual(timing.overhead + 0.01);
      expect(timing.overhead + timing.model).toBeCloseTo(timing.total, 1);
    },
  );

  it('a turn that reaches the step limit ends with a clear stored message', async () => {
    const id = await newChat(ctx);
    ctx.model.answerWith(() => ({
      toolCalls: [{ name: 'skills_readResource', arguments: { name: 'pdf', path: 'references/forms.md' } }],
    }));
    const res = await http().post(`/v1/chats/${id}/messages`).send({ content: 'loop forever' }).expect(201);
    expect(ctx.model.requests).toHaveLength(8);
    expect(res.body.assistantMessage.toolCards).toHaveLength(8);
    expect(res.body.assistantMessage.content).toBe(
      '[Stopped: this turn reached the limit of 8 model steps (app.tools.max_steps) before a final answer.]',
    );
    const stored = (await http().get(`/v1/chats/${id}/messages`).expect(200)).body.items;
    expect(stored[1].content).toBe(res.body.assistantMessage.content);
  });

  it('streams a turn as server-sent events in order, ending with done and the same payload', async () => {
    const id = await newChat(ctx);
    ctx.model.play(
      { toolCalls: [{ name: 'skills_readResource', arguments: { name: 'pdf', path: 'references/forms.md' } }] },
      { text: 'The form is filled in now.' },
    );
    const res = await http()
      .post(`/v1/chats/${id}/messages`)
      .set('accept', 'text/event-stream')
      .send({ content: '/pdf fill it' })
      .buffer(true)
      .parse(collectText)
      .expect(200);
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    const events = parseSse(res.body as string);
    const names = events.map((e) => e.event);
    expect(names.slice(0, 4)).toEqual(['tool-call', 'tool-result', 'tool-call', 'tool-result']);
    expect(names.slice(4, -1).every((n) => n === 'text-delta')).toBe(true);
    expect(names.length).toBeGreaterThan(6);
    expect(names[names.length - 1]).toBe('done');
    expect(events[0].data).toMatchObject({ tool: 'skills.activate', args: { name: 'pdf' } });
    expect(events[2].data).toMatchObject({
      tool: 'skills.readResource',
      args: { name: 'pdf', path: 'references/forms.md' },
    });
    expect(events[3].data).toMatchObject({ tool: 'skills.readResource', status: 'ok', output: 'FORMS-MARKER' });
    const text = events
      .filter((e) => e.event === 'text-delta')
      .map((e) => (e.data as { text: string }).text)
      .join('');
    expect(text).toBe('The form is filled in now.');
    const done = events[events.length - 1].data as {
      assistantMessage: { content: string; toolCards: unknown[] };
      invokedSkill: string;
    };
    expect(done.assistantMessage.content).toBe('The form is filled in now.');
    expect(done.invokedSkill).toBe('pdf');
    expect((await http().get(`/v1/chats/${id}/messages`).expect(200)).body.items[1]).toEqual(done.assistantMessage);
  });

  it('streams an error event when the model fails mid-turn, storing nothing', async () => {
    const id = await newChat(ctx);
    ctx.model.play({ status: 500 });
    const res = await http()
      .post(`/v1/chats/${id}/messages`)
      .set('accept', 'text/event-stream')
      .send({ content: 'hi' })
      .buffer(true)
      .parse(collectText)
      .expect(200);
    const events = parseSse(res.body as string);
    expect(events).toEqual([{ event: 'error', data: expect.objectContaining({ code: 'MODEL_ERROR' }) }]);
    expect((await http().get(`/v1/chats/${id}/messages`).expect(200)).body.total).toBe(0);
  });

  it('a streaming client that disconnects mid-turn breaks nothing: the turn completes and is stored', async () => {
    const id = await newChat(ctx);
    ctx.model.answerWith((req) =>
      req.body.messages[req.body.messages.length - 1].role === 'tool'
        ? { text: 'finished' }
        : { toolCalls: [{ name: 'skills_activate', arguments: { name: 'pdf' } }] },
    );
    await ctx.app.listen(0, '127.0.0.1');
    const { port } = ctx.app.getHttpServer().address() as { port: number };
    const controller = new AbortController();
    const response = await fetch(`http://127.0.0.1:${port}/v1/chats/${id}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ content: 'go' }),
      signal: controller.signal,
    });
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    for (let i = 0; i < 50 && (await http().get(`/v1/chats/${id}/messages`)).body.total < 2; i++)
      await new Promise((r) => setTimeout(r, 50));
    const messages = (await http().get(`/v1/chats/${id}/messages`).expect(200)).body.items;
    expect(messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', 'go'],
      ['assistant', 'finished'],
    ]);
    expect((await http().get('/health').expect(200)).body.status).toBe('ok');
  });

  it('GET context returns exactly what the model gets next', async () => {
    const id = await newChat(ctx);
    await http().post(`/v1/chats/${id}/tools/skills.activate`).send({ name: 'git-commit' }).expect(200);
    const context = (await http().get(`/v1/chats/${id}/context`).expect(200)).body;
    expect(context.model).toBe('scripted');
    expect(context.activatedSkills).toEqual(['git-commit']);
    expect(context.tools).toEqual([
      {
        name: 'skills.activate',
        wireName: 'skills_activate',
        description: expect.any(String),
        inputSchema: expect.objectContaining({ required: ['name'] }),
      },
      {
        name: 'skills.readResource',
        wireName: 'skills_readResource',
        description: expect.any(String),
        inputSchema: expect.objectContaining({ required: ['name', 'path'] }),
      },
      {
        name: 'skills.listResources',
        wireName: 'skills_listResources',
        description: expect.any(String),
        inputSchema: expect.objectContaining({ required: ['name'] }),
      },
    ]);
    ctx.model.play({ text: 'ok' });
    await http().post(`/v1/chats/${id}/messages`).send({ content: 'hi' }).expect(201);
    const sent = ctx.model.requests[0];
    expect(ScriptedModelServer.systemPrompt(sent)).toBe(context.systemPrompt);
    expect(sent.body.tools?.map((t) => [t.function.name, t.function.description, t.function.parameters])).toEqual(
      context.tools.map((t: { wireName: string; description: string; inputSchema: unknown }) => [
        t.wireName,
        t.description,
        t.inputSchema,
      ]),
    );
    expect((await http().get(`/v1/chats/${id}/context?tools=false`).expect(200)).body.tools).toEqual([]);
  });

  it('the external-loop tools run against a chat with the same persistence and cards', async () => {
    const id = await newChat(ctx);
    const activated = (await http().post(`/v1/chats/${id}/tools/skills.activate`).send({ name: 'pdf' }).expect(200))
      .body;
    expect(activated.toolCard).toMatchObject({
      tool: 'skills.activate',
      status: 'ok',
      args: { name: 'pdf' },
      summary: { skill: 'pdf', truncated: false },
    });
    expect(activated.toolCard.output).toContain('PDF-BODY-MARKER');
    expect(activated.toolCard.output).toContain('references/forms.md');
    expect(activated.activatedSkills).toEqual([expect.objectContaining({ name: 'pdf', how: 'tool', count: 1 })]);
    const read = (
      await http()
        .post(`/v1/chats/${id}/tools/skills.readResource`)
        .send({ name: 'pdf', path: 'references/forms.md' })
        .expect(200)
    ).body;
    expect(read.toolCard).toMatchObject({
      tool: 'skills.readResource',
      status: 'ok',
      output: 'FORMS-MARKER',
      summary: { skill: 'pdf', path: 'references/forms.md', truncated: false },
    });
    const refused = (
      await http()
        .post(`/v1/chats/${id}/tools/skills.readResource`)
        .send({ name: 'pdf', path: '../git-commit/SKILL.md' })
        .expect(200)
    ).body;
    expect(refused.toolCard).toMatchObject({
      status: 'error',
      output: expect.stringContaining('RESOURCE_OUTSIDE_SKILL'),
    });
    const messages = (await http().get(`/v1/chats/${id}/messages`).expect(200)).body.items;
    expect(messages.map((m: { role: string; toolCards: { tool: string }[] }) => [m.role, m.toolCards[0].tool])).toEqual(
      [
        ['tool', 'skills.activate'],
        ['tool', 'skills.readResource'],
        ['tool', 'skills.readResource'],
      ],
    );
    expect((await http().post(`/v1/chats/${id}/tools/skills.activate`).send({}).expect(400)).body.code).toBe(
      'VALIDATION_FAILED',
    );
  });
});

describe('history', () => {
  it('sends the model only the last history_messages user/assistant messages', async () => {
    const ctx = await startChatApp([chatSkills().path('skills')], { 'app.history_messages': 2 });
    try {
      const http = () => request(ctx.app.getHttpServer());
      const id = await newChat(ctx);
      ctx.model.play({ text: 'a1' }, { text: 'a2' }, { text: 'a3' });
      for (const content of ['q1', 'q2', 'q3'])
        await http().post(`/v1/chats/${id}/messages`).send({ content }).expect(201);
      expect(ctx.model.requests[2].body.messages.filter((m) => m.role !== 'system')).toEqual([
        { role: 'user', content: 'q2' },
        { role: 'assistant', content: 'a2' },
        { role: 'user', content: 'q3' },
      ]);
    } finally {
      await ctx.close();
    }
  });
});

describe('tool gating and the fallback', () => {
  const gated = async (overrides: Record<string, unknown>, modelTools = true) => {
    const ctx = await startChatApp([chatSkills().path('skills')], overrides, (url) => ({
      scripted: {
        provider: 'openai-compatible',
        base_url: url,
        model: 'scripted-1',
        tools: modelTools,
        timeout_ms: 5000,
        max_retries: 0,
      },
    }));
    return ctx;
  };

  async function expectFallback(ctx: ChatTestContext, body: Record<string, unknown>) {
    const http = () => request(ctx.app.getHttpServer());
    const id = await newChat(ctx);
    ctx.model.play({ text: 'Using the PDF instructions.' }, { text: 'Second answer.' });
    const res = await http()
      .post(`/v1/chats/${id}/messages`)
      .send({ content: '/pdf fill the form', ...body })
      .expect(201);
    const first = ctx.model.requests[0];
    expect(first.body.tools).toBeUndefined();
    expect(ScriptedModelServer.systemPrompt(first)).toContain('PDF-BODY-MARKER');
    expect(ScriptedModelServer.systemPrompt(first)).toContain('Tools are not available in this conversation');
    expect(res.body.assistantMessage.toolCards).toEqual([]);
    expect(res.body.activatedSkills).toEqual([expect.objectContaining({ name: 'pdf', how: 'fallback' })]);
    // The fallback body is for that request only.
    await http()
      .post(`/v1/chats/${id}/messages`)
      .send({ content: 'and now?', ...body })
      .expect(201);
    expect(ScriptedModelServer.systemPrompt(ctx.model.requests[1])).not.toContain('PDF-BODY-MARKER');
    expect(ScriptedModelServer.systemPrompt(ctx.model.requests[1])).toContain(
      'Skills already activated in this chat: pdf.',
    );
  }

  it(
    'tools off by configuration → no tools sent, the fallback body in that request only; tool routes answer ' +
      'TOOLS_DISABLED',
    async () => {
      const ctx = await gated({ 'app.tools.enabled': false });
      try {
        await expectFallback(ctx, {});
        const id = await newChat(ctx);
        expect(
          (
            await request(ctx.app.getHttpServer())
              .post(`/v1/chats/${id}/tools/skills.activate`)
              .send({ name: 'pdf' })
              .expect(404)
          ).body.code,
        ).toBe('TOOLS_DISABLED');
      } finally {
        await ctx.close();
      }
    },
  );

  it('tools off for the model → the fallback', async () => {
    const ctx = await gated({}, false);
    try {
      await expectFallback(ctx, {});
    } finally {
      await ctx.close();
    }
  });

  it('tools off by the request → the fallback', async () => {
    const ctx = await gated({});
    try {
      await expectFallback(ctx, { tools: false });
    } finally {
      await ctx.close();
    }
  });

  it('skills disabled → no skills in the prompt, no tools, /name is plain text, chats still work', async () => {
    const ctx = await gated({ 'app.skills.enabled': false });
    try {
      const id = await newChat(ctx);
      ctx.model.play({ text: 'plain' });
      const res = await request(ctx.app.getHttpServer())
        .post(`/v1/chats/${id}/messages`)
        .send({ content: '/pdf x' })
        .expect(201);
      expect(res.body.invokedSkill).toBeNull();
      expect(ctx.model.requests[0].body.tools).toBeUndefined();
      expect(ScriptedModelServer.systemPrompt(ctx.model.requests[0])).toBe('You are a helpful assistant.');
      expect(
        (
          await request(ctx.app.getHttpServer())
            .post(`/v1/chats/${id}/tools/skills.activate`)
            .send({ name: 'pdf' })
            .expect(404)
        ).body.code,
      ).toBe('SKILLS_DISABLED');
    } finally {
      await ctx.close();
    }
  });

  it('no model configured → 503 MODEL_NOT_CONFIGURED for messages; everything else works', async () => {
    const ctx = await startChatApp([chatSkills().path('skills')], {}, () => ({}));
    try {
      const http = () => request(ctx.app.getHttpServer());
      const id = await newChat(ctx);
      const res = await http().post(`/v1/chats/${id}/messages`).send({ content: 'hi' }).expect(503);
      expect(res.body).toEqual({
        code: 'MODEL_NOT_CONFIGURED',
        message: 'No model is configured: add an [app.models.NAME] section (or set SKILLHOST_MODEL) to chat.',
      });
      await http().post(`/v1/chats/${id}/tools/skills.activate`).send({ name: 'pdf' }).expect(200);
      expect((await http().get(`/v1/chats/${id}/context`).expect(200)).body.tools).toHaveLength(3);
      expect(
        (await http().post(`/v1/chats/${id}/messages`).send({ content: 'hi', model: 'gpt' }).expect(400)).body.code,
      ).toBe('VALIDATION_FAILED');
    } finally {
      await ctx.close();
    }
  });
});
