import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import request from 'supertest';
import { UsersService } from '../../src/domain/users/users.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { useChatSkillsTree } from '../support/files/skill-tree.js';

/**
 * The skills usage funnel end to end: a scripted set of turns over REST, GraphQL, MCP and the OpenAI-compatible
 * gateway (and one failed turn, which counts nothing), then a clean shutdown before any interval flush (the
 * shutdown's flush must write everything) and a restart; the funnel read over REST and GraphQL is exact.
 * The skills are the chat suites' `pdf` (with references/forms.md) and `git-commit`.
 */
const chatSkills = useChatSkillsTree();
let ctx: ChatTestContext;
let base: string;
let key: string;
let memberKey: string;

const zero = {
  offered: 0,
  activatedTool: 0,
  activatedSlash: 0,
  activatedCommand: 0,
  activatedMcp: 0,
  activatedGateway: 0,
  activatedApi: 0,
  resourcesRead: 0,
  scriptsRun: 0,
  errors: 0,
  turns: 0,
};
const EXPECTED_BY_MODEL = [
  { skill: 'git-commit', model: '', ...zero, offered: 1 },
  {
    skill: 'git-commit',
    model: 'scripted',
    ...zero,
    offered: 4,
    activatedTool: 1,
    resourcesRead: 1,
    errors: 1,
    turns: 1,
  },
  { skill: 'pdf', model: '', ...zero, offered: 1, activatedMcp: 2, resourcesRead: 2 },
  {
    skill: 'pdf',
    model: 'scripted',
    ...zero,
    offered: 4,
    activatedTool: 1,
    activatedSlash: 1,
    activatedGateway: 1,
    resourcesRead: 1,
    turns: 3,
  },
];

const http = () => request(ctx.app.getHttpServer());
const auth = (k = key) => ({ authorization: `Bearer ${k}` });

async function startApp(): Promise<void> {
  await ctx.app.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;
}

beforeAll(async () => {
  ctx = await startChatApp([chatSkills().path('skills')], {
    'app.auth.mode': 'api_key',
    // Longer than the test: only the shutdown's flush writes the counts.
    'app.skills.usage.flush_interval_ms': 600_000,
  });
  const users = ctx.app.get(UsersService);
  key = (await users.createKey((await users.createUser('root', 'admin')).id)).key;
  memberKey = (await users.createKey((await users.createUser('ann', 'member')).id)).key;
  await startApp();
});
afterAll(async () => ctx?.close());

async function newChat(): Promise<string> {
  return (await http().post('/v1/chats').set(auth()).send({}).expect(201)).body.id;
}

async function restTurns(): Promise<void> {
  const chat = await newChat();
  ctx.model.play(
    { toolCalls: [{ name: 'skills_readResource', arguments: { name: 'pdf', path: 'references/forms.md' } }] },
    { text: 'Filled.' },
  );
  await http().post(`/v1/chats/${chat}/messages`).set(auth()).send({ content: '/pdf fill the form' }).expect(201);
  ctx.model.play(
    { toolCalls: [{ name: 'skills_activate', arguments: { name: 'git-commit' } }] },
    { toolCalls: [{ name: 'skills_readResource', arguments: { name: 'git-commit', path: 'nope.md' } }] },
    { text: 'Committed.' },
  );
  await http().post(`/v1/chats/${chat}/messages`).set(auth()).send({ content: 'commit please' }).expect(201);
  // A failed turn stores nothing and counts nothing, though its `/name` was activated before the model failed.
  ctx.model.play({ status: 500, body: 'down' });
  const failed = await http().post(`/v1/chats/${chat}/messages`).set(auth()).send({ content: '/git-commit x' });
  expect(failed.status).toBeGreaterThanOrEqual(500);
}

async function graphqlTurn(): Promise<void> {
  const chat = await newChat();
  // A name the model made up is an error card, but no row.
  ctx.model.play(
    { toolCalls: [{ name: 'skills_activate', arguments: { name: 'made-up' } }] },
    { toolCalls: [{ name: 'skills_activate', arguments: { name: 'pdf' } }] },
    { text: 'Ready.' },
  );
  const res = await http()
    .post('/graphql')
    .set(auth())
    .send({
      query: 'mutation($id: ID!) { sendMessage(chatId: $id, content: "pdf work") { activatedSkills { name } } }',
      variables: { id: chat },
    })
    .expect(200);
  expect(res.body.errors).toBeUndefined();
  expect(res.body.data.sendMessage.activatedSkills).toEqual([{ name: 'pdf' }]);
}

async function gatewayTurn(): Promise<void> {
  ctx.model.play({ toolCalls: [{ name: 'skills_activate', arguments: { name: 'pdf' } }] }, { text: 'Gateway done.' });
  const res = await http()
    .post('/openai/v1/chat/completions')
    .set(auth())
    .send({ model: 'scripted', messages: [{ role: 'user', content: 'help with a pdf' }] })
    .expect(200);
  expect(res.body.choices[0].message.content).toBe('Gateway done.');
}

async function mcpSession(): Promise<void> {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: auth() } });
  const client = new Client({ name: 'usage-e2e', version: '1.0.0' });
  await client.connect(transport);
  try {
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual([
      'activate_team_skill',
      'read_skill_file',
    ]);
    const activated = await client.callTool({ name: 'activate_team_skill', arguments: { name: 'pdf' } });
    expect(activated.isError).toBeUndefined();
    const read = await client.callTool({
      name: 'read_skill_file',
      arguments: { name: 'pdf', path: 'references/forms.md' },
    });
    expect(JSON.stringify(read.content)).toContain('FORMS-MARKER');
    const unknown = await client.callTool({ name: 'activate_team_skill', arguments: { name: 'nope' } });
    expect(unknown.isError).toBe(true);
    await client.readResource({ uri: 'skill://pdf/references/forms.md' });
    await client.readResource({ uri: 'skill://pdf/SKILL.md' });
  } finally {
    await client.close();
  }
}

describe('the skills usage funnel', () => {
  it(
    'counts exactly what a scripted set of turns over REST, GraphQL, MCP and the gateway did, written at a clean ' +
      'shutdown, read over REST and GraphQL',
    async () => {
      await restTurns();
      await graphqlTurn();
      await gatewayTurn();
      await mcpSession();
      // Nothing is written until a flush: the interval is longer than the test.
      const before = await http().get('/v1/admin/skills/usage?groupBy=model').set(auth()).expect(200);
      expect(before.body.rows).toEqual([]);

      await ctx.closeApp();
      await ctx.restartApp();
      await startApp();

      const today = new Date().toISOString().slice(0, 10);
      const byModel = await http().get('/v1/admin/skills/usage?groupBy=model').set(auth()).expect(200);
      expect(byModel.body).toMatchObject({ to: today, groupBy: ['model'], neverActivated: [] });
      expect(byModel.body.rows).toEqual(EXPECTED_BY_MODEL);
      expect(byModel.body.totals).toEqual({
        ...zero,
        offered: 10,
        activatedTool: 2,
        activatedSlash: 1,
        activatedMcp: 2,
        activatedGateway: 1,
        resourcesRead: 4,
        errors: 1,
        turns: 4,
      });

      // `model=` is what MCP clients did: there, git-commit was offered but never activated.
      const mcp = await http()
        .get('/v1/admin/skills/usage')
        .query({ model: '', groupBy: 'day,version' })
        .set(auth())
        .expect(200);
      expect(mcp.body.rows.map((row: { skill: string; day: string }) => [row.skill, row.day])).toEqual([
        ['git-commit', today],
        ['pdf', today],
      ]);
      for (const row of mcp.body.rows) expect(row.version).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(mcp.body.neverActivated).toEqual(['git-commit']);

      const gql = await http()
        .post('/graphql')
        .set(auth())
        .send({
          query:
            'query($groupBy: [String!]) { skillUsage(groupBy: $groupBy) { groupBy rows { skill model offered ' +
            'activatedTool activatedSlash activatedCommand activatedMcp activatedGateway activatedApi resourcesRead ' +
            'scriptsRun errors turns } neverActivated } }',
          variables: { groupBy: ['model'] },
        })
        .expect(200);
      expect(gql.body.errors).toBeUndefined();
      expect(gql.body.data.skillUsage).toEqual({ groupBy: ['model'], rows: EXPECTED_BY_MODEL, neverActivated: [] });
    },
  );

  it('is for admins only, and says what was wrong with a range', async () => {
    const member = await http().get('/v1/admin/skills/usage').set(auth(memberKey)).expect(403);
    expect(member.body.code).toBe('FORBIDDEN');
    const gql = await http()
      .post('/graphql')
      .set(auth(memberKey))
      .send({ query: '{ skillUsage { totals { offered } } }' })
      .expect(200);
    expect(gql.body.errors[0].extensions.code).toBe('FORBIDDEN');
    const badDay = await http().get('/v1/admin/skills/usage?from=2026-02-30').set(auth()).expect(400);
    expect(badDay.body).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(badDay.body.message).toContain("from must be a UTC day as YYYY-MM-DD (a real date), not '2026-02-30'");
    const reversed = await http().get('/v1/admin/skills/usage?from=2026-03-02&to=2026-03-01').set(auth()).expect(400);
    expect(reversed.body.message).toContain('from (2026-03-02) must not be after to (2026-03-01); swap them');
    const badGroup = await http().get('/v1/admin/skills/usage?groupBy=day,user').set(auth()).expect(400);
    expect(badGroup.body.message).toContain('groupBy must list only day, version, model');
  });
});
