import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { DATA_SOURCE } from '../../src/infra/database/persistence.tokens.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { query } from '../support/database.js';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';

describe('faults: the model and the database misbehave', () => {
  let tree: TempTree;
  let ctx: ChatTestContext;
  let chatId: string;
  const http = () => request(ctx.app.getHttpServer());
  const rowCounts = async () =>
    (
      await query<{ messages: number; activations: number }>(
        ctx.db.url,
        'SELECT (SELECT count(*)::int FROM chat_messages) AS messages, (SELECT count(*)::int FROM ' +
          'chat_activated_skills) AS activations',
      )
    )[0];

  beforeAll(async () => {
    tree = tempTree();
    writeSkill(tree, 'skills', 'pdf', { description: 'Works with PDF files.' });
    ctx = await startChatApp([tree.path('skills')], {}, (url) => ({
      scripted: { provider: 'openai-compatible', base_url: url, model: 'scripted-1', timeout_ms: 1500, max_retries: 0 },
    }));
  });
  afterAll(async () => {
    await ctx?.close();
    tree.cleanup();
  });
  beforeEach(async () => {
    chatId = (await http().post('/v1/chats').send({}).expect(201)).body.id;
  });

  it.each([
    [
      'answers 500',
      { status: 500, body: JSON.stringify({ error: { message: 'upstream exploded', type: 'server_error' } }) },
      /upstream exploded/,
      500,
    ],
    [
      'answers 401',
      {
        status: 401,
        body: JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } }),
      },
      /Incorrect API key provided/,
      401,
    ],
    ['sends garbage', { garbage: 'this is not JSON {{{' }, /./, 200],
  ])(
    'the model %s → 502 MODEL_ERROR naming the request id, the reason for admins (auth is off: everyone is); ' +
      'nothing is stored',
    async (_, step, reason, providerStatus) => {
      ctx.model.play(step as never);
      const before = await rowCounts();
      const res = await http().post(`/v1/chats/${chatId}/messages`).send({ content: '/pdf go' }).expect(502);
      const requestId = res.headers['x-request-id'];
      expect(res.body).toEqual({
        code: 'MODEL_ERROR',
        message:
          `Model 'scripted' could not answer (request id ${requestId}); an admin can find the reason in the ` +
          `server's log.`,
        details: { model: 'scripted', requestId, reason: expect.stringMatching(reason), providerStatus },
      });
      expect(await rowCounts()).toEqual(before);
      expect((await http().get(`/v1/chats/${chatId}/messages`).expect(200)).body.total).toBe(0);
    },
  );

  it('the model hangs past timeout_ms → 502 MODEL_ERROR naming the timeout; nothing is stored', async () => {
    ctx.model.play({ hang: true });
    const before = await rowCounts();
    const res = await http().post(`/v1/chats/${chatId}/messages`).send({ content: 'hello?' }).expect(502);
    const requestId = res.headers['x-request-id'];
    expect(res.body).toEqual({
      code: 'MODEL_ERROR',
      message: `Model 'scripted' did not answer within 1500 ms (request id ${requestId}).`,
      details: { model: 'scripted', reason: 'timeout', requestId },
    });
    expect(await rowCounts()).toEqual(before);
  });

  it(
    'the model fails after a tool call in the same turn → nothing of the turn is stored, not even ' + 'the activation',
    async () => {
      ctx.model.play({ toolCalls: [{ name: 'skills_activate', arguments: { name: 'pdf' } }] }, { status: 503 });
      const before = await rowCounts();
      await http().post(`/v1/chats/${chatId}/messages`).send({ content: 'use pdf' }).expect(502);
      expect(await rowCounts()).toEqual(before);
      expect((await http().get(`/v1/chats/${chatId}`).expect(200)).body.activatedSkills).toEqual([]);
    },
  );

  it('invalid tool arguments and unknown tools become error cards the model reads, and the turn goes on', async () => {
    ctx.model.play(
      {
        toolCalls: [
          { name: 'skills_activate', arguments: '{"name": ' },
          { name: 'skills_activate', arguments: { skill: 'pdf' } },
          { name: 'shell_exec', arguments: { cmd: 'rm -rf /' } },
        ],
      },
      { text: 'Recovered.' },
    );
    const res = await http().post(`/v1/chats/${chatId}/messages`).send({ content: 'go' }).expect(201);
    expect(res.body.assistantMessage.content).toBe('Recovered.');
    const cards = res.body.assistantMessage.toolCards as { tool: string; status: string; output: string }[];
    expect(cards.map((c) => [c.tool, c.status])).toEqual(
      expect.arrayContaining([
        ['skills.activate', 'error'],
        ['skills.activate', 'error'],
        ['shell_exec', 'error'],
      ]),
    );
    expect(cards).toHaveLength(3);
    expect(cards.find((c) => c.tool === 'shell_exec')?.output).toMatch(
      /Available tools: skills_activate, skills_readResource/,
    );
    expect(
      cards.some((c) =>
        c.output.includes(
          "Invalid arguments for skills.activate: 'name' must be a non-empty string; unknown argument(s): skill.",
        ),
      ),
    ).toBe(true);
    const followUp = JSON.stringify(ctx.model.requests[1].body.messages);
    expect(followUp).toContain('Invalid arguments for skills.activate');
    expect(followUp).toContain('shell_exec');
    expect(res.body.activatedSkills).toEqual([]);
  });

  it('the model server refuses connections → 502 MODEL_ERROR', async () => {
    const other = await startChatApp([tree.path('skills')], {}, () => ({
      gone: {
        provider: 'openai-compatible',
        base_url: 'http://127.0.0.1:9/v1',
        model: 'x',
        timeout_ms: 3000,
        max_retries: 0,
      },
    }));
    try {
      const id = (await request(other.app.getHttpServer()).post('/v1/chats').send({}).expect(201)).body.id;
      const res = await request(other.app.getHttpServer())
        .post(`/v1/chats/${id}/messages`)
        .send({ content: 'hi' })
        .expect(502);
      expect(res.body.code).toBe('MODEL_ERROR');
      expect(res.body.message).toMatch(
        /^Model 'gone' could not answer \(request id [^)]+\); an admin can find the reason in the server's log\.$/,
      );
      expect(res.body.details.reason).toMatch(/ECONNREFUSED 127\.0\.0\.1:9/);
    } finally {
      await other.close();
    }
  });

  it('the database goes away → 503 DATABASE_UNAVAILABLE, not a crash', async () => {
    const other = await startChatApp([tree.path('skills')]);
    try {
      await request(other.app.getHttpServer()).post('/v1/chats').send({}).expect(201);
      await other.db.drop();
      const res = await request(other.app.getHttpServer()).get('/v1/chats').expect(503);
      expect(res.body).toEqual({
        code: 'DATABASE_UNAVAILABLE',
        message: 'The database is unavailable; nothing was changed. Try again shortly.',
      });
      // The skills API does not need the database and keeps working. Regression, fixed since CI found it. Was: every
      // view asked the database for the user's groups, so GET /v1/skills answered 503 while no skill was group-only.
      await request(other.app.getHttpServer()).get('/v1/skills').expect(200);
    } finally {
      await other.close();
    }
  });

  it('the connection pool is closed under a turn → 503 DATABASE_UNAVAILABLE, not a crash', async () => {
    const other = await startChatApp([tree.path('skills')]);
    try {
      const id = (await request(other.app.getHttpServer()).post('/v1/chats').send({}).expect(201)).body.id;
      await other.app.get<DataSource>(DATA_SOURCE).destroy();
      for (const res of [
        await request(other.app.getHttpServer()).post(`/v1/chats/${id}/messages`).send({ content: 'hi' }),
        await request(other.app.getHttpServer()).get(`/v1/chats/${id}/context`),
        await request(other.app.getHttpServer()).post(`/v1/chats/${id}/tools/skills.activate`).send({ name: 'pdf' }),
      ]) {
        expect([res.status, res.body.code]).toEqual([503, 'DATABASE_UNAVAILABLE']);
      }
    } finally {
      await other.close();
    }
  });
});

describe('concurrency', () => {
  let tree: TempTree;
  let ctx: ChatTestContext;
  const http = () => request(ctx.app.getHttpServer());

  beforeAll(async () => {
    tree = tempTree();
    writeSkill(tree, 'skills', 'pdf', { description: 'Works with PDF files.' });
    ctx = await startChatApp([tree.path('skills')]);
  });
  afterAll(async () => {
    await ctx?.close();
    tree.cleanup();
  });

  it(
    '50 concurrent activations of one skill in one chat leave one row with count 50 and 50 ordered ' + 'cards',
    async () => {
      const id = (await http().post('/v1/chats').send({}).expect(201)).body.id;
      const results = await Promise.all(
        Array.from({ length: 50 }, () => http().post(`/v1/chats/${id}/tools/skills.activate`).send({ name: 'pdf' })),
      );
      expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
      expect(
        await query(
          ctx.db.url,
          'SELECT skill_name, how, activation_count FROM chat_activated_skills WHERE chat_id = $1',
          [id],
        ),
      ).toEqual([{ skill_name: 'pdf', how: 'tool', activation_count: 50 }]);
      const seqs = await query<{ seq: number }>(
        ctx.db.url,
        'SELECT seq FROM chat_messages WHERE chat_id = $1 ORDER BY seq',
        [id],
      );
      expect(seqs.map((r) => r.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    },
  );

  it('20 concurrent turns in 20 chats each store their own two messages and activation', async () => {
    ctx.model.answerWith((req) => {
      const last = req.body.messages[req.body.messages.length - 1];
      return last.role === 'tool'
        ? { text: 'done' }
        : { toolCalls: [{ name: 'skills_activate', arguments: { name: 'pdf' } }] };
    });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++)
      ids.push(
        (
          await http()
            .post('/v1/chats')
            .send({ title: `c${i}` })
            .expect(201)
        ).body.id,
      );
    const results = await Promise.all(
      ids.map((id, i) =>
        http()
          .post(`/v1/chats/${id}/messages`)
          .send({ content: `turn ${i}` }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    for (const [i, id] of ids.entries()) {
      const rows = await query<{ seq: number; role: string; content: string }>(
        ctx.db.url,
        'SELECT seq, role, content FROM chat_messages WHERE chat_id = $1 ORDER BY seq',
        [id],
      );
      expect(rows).toEqual([
        { seq: 1, role: 'user', content: `turn ${i}` },
        { seq: 2, role: 'assistant', content: 'done' },
      ]);
    }
    const activations = await query<{ n: number }>(
      ctx.db.url,
      "SELECT count(*)::int AS n FROM chat_activated_skills WHERE skill_name = 'pdf' AND how = 'tool' AND " +
        'activation_count = 1 AND chat_id = ANY($1::uuid[])',
      [ids],
    );
    expect(activations).toEqual([{ n: 20 }]);
  });
});
