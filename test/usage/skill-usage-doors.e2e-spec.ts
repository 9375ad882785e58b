import { chmodSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { checkSandbox } from '@skillhost/sandbox';
import request from 'supertest';
import { SKILL_USAGE_RECORDER, type UsageRecorder } from '../../src/domain/skills/usage/skill-usage.js';
import { UsersService } from '../../src/domain/users/users.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { useSkillTree, writeSkill } from '../support/files/skill-tree.js';

/**
 * Every door through which a skill is activated, read or run outside the turns the funnel's first suite scripts, each
 * counted exactly once with its way: a chat's tool routes (REST and GraphQL), the skill routes (REST
 * `/v1/skills/:name/body` and `/resources/*`, GraphQL `skillResource`), a code skill's own tool calls (through a tool
 * route, in a chat turn, in a gateway turn), and MCP's `prompts/get` (the activation it asks for counts once). Each
 * step flushes the recorder and checks what the step added, by skill and model (`skill@model`; '' outside a turn).
 * Previews and copies handed out for sync count nothing.
 */
const sandboxProblem = await checkSandbox().then(
  () => undefined,
  (error: Error) => error.message,
);
const itWithSandbox = sandboxProblem === undefined ? it : it.skip;
if (sandboxProblem !== undefined) console.warn(`SKIPPED the usage funnel's script runs: ${sandboxProblem}`);

const tree = useSkillTree((t) => {
  writeSkill(t, 'skills', 'pdf', {
    description: 'Works with PDF files.',
    extra: 'allowed-tools: Bash(sh:*)',
    body: 'PDF-BODY-MARKER steps.',
  });
  t.write('skills/pdf/references/forms.md', 'FORMS-MARKER');
  t.write('skills/pdf/scripts/fill.sh', 'echo FILLED\n');
  writeSkill(t, 'skills', 'git-commit', { description: 'Writes commit messages.' });
  writeSkill(t, 'code', 'reader-code', { description: 'Reads the PDF skill for you.' });
  t.write(
    'code/reader-code/skill.mjs',
    [
      'export async function execute(ctx) {',
      "  const activated = await ctx.tools.call('skills.activate', { name: 'pdf' });",
      "  const read = await ctx.tools.call('skills.readResource', { name: 'pdf', path: 'references/forms.md' });",
      '  return { success: true, output: `activate=${activated.status} read=${read.status}` };',
      '}',
    ].join('\n'),
  );
  // The sandbox runs as uid 65534 when the server is root: it must be able to read the folders.
  chmodSync(t.root, 0o755);
});

let ctx: ChatTestContext;
let base: string;
let key: string;
const http = () => request(ctx.app.getHttpServer());
const auth = () => ({ authorization: `Bearer ${key}` });

type Counts = Record<string, number>;
/** What the funnel held after the last step, by `skill@model`. */
const seen = new Map<string, Counts>();

/** Writes what was counted and answers what the step added since the last call: by `skill@model`, nonzero only. */
async function counted(): Promise<Record<string, Counts>> {
  await ctx.app.get<UsageRecorder>(SKILL_USAGE_RECORDER).flush();
  const report = await http().get('/v1/admin/skills/usage?groupBy=model').set(auth()).expect(200);
  const added: Record<string, Counts> = {};
  for (const row of report.body.rows as (Counts & { skill: string; model: string })[]) {
    const rowKey = `${row.skill}@${row.model}`;
    const before = seen.get(rowKey) ?? {};
    const changed: Counts = {};
    for (const [counter, value] of Object.entries(row))
      if (typeof value === 'number' && value !== (before[counter] ?? 0))
        changed[counter] = value - (before[counter] ?? 0);
    if (Object.keys(changed).length > 0) added[rowKey] = changed;
    seen.set(rowKey, row);
  }
  return added;
}

async function newChat(): Promise<string> {
  return (await http().post('/v1/chats').set(auth()).send({}).expect(201)).body.id;
}

async function graphql(query: string, variables: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await http().post('/graphql').set(auth()).send({ query, variables }).expect(200);
  expect(res.body.errors).toBeUndefined();
  return res.body.data;
}

beforeAll(async () => {
  ctx = await startChatApp([tree().path('skills')], {
    'app.auth.mode': 'api_key',
    'app.tools.style': 'use_skill',
    'app.skills.code_directories': [tree().path('code')],
    'app.skills.code_timeout_ms': 10_000,
    'app.scripts.enabled': sandboxProblem === undefined,
    'app.scripts.timeout_ms': 10_000,
    // Longer than the test: each step's flush is the test's own.
    'app.skills.usage.flush_interval_ms': 600_000,
  });
  const users = ctx.app.get(UsersService);
  key = (await users.createKey((await users.createUser('root', 'admin')).id)).key;
  await ctx.app.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;
});
afterAll(async () => ctx?.close());

describe('the skills usage funnel at every door', () => {
  it("counts a chat's REST tool routes as api: activations, reads (a failed one an error)", async () => {
    const chat = await newChat();
    const tool = (name: string, args: object) => http().post(`/v1/chats/${chat}/tools/${name}`).set(auth()).send(args);
    expect((await tool('use_skill', { skill_name: 'pdf' }).expect(200)).body.toolCard.status).toBe('ok');
    expect(await counted()).toEqual({ 'pdf@': { activatedApi: 1 } });

    await tool('skills.readResource', { name: 'pdf', path: 'references/forms.md' }).expect(200);
    expect(await counted()).toEqual({ 'pdf@': { resourcesRead: 1 } });
    expect((await tool('skills.readResource', { name: 'pdf', path: 'nope.md' }).expect(200)).body.toolCard.status).toBe(
      'error',
    );
    expect(await counted()).toEqual({ 'pdf@': { resourcesRead: 1, errors: 1 } });
    // A name the chat's catalogue does not have is an error card, but no row.
    await tool('use_skill', { skill_name: 'made-up' }).expect(200);
    expect(await counted()).toEqual({});
  });

  itWithSandbox("counts a script run through a chat's REST tool route", async () => {
    const chat = await newChat();
    const run = await http()
      .post(`/v1/chats/${chat}/tools/skills.runScript`)
      .set(auth())
      .send({ name: 'pdf', path: 'scripts/fill.sh' })
      .expect(200);
    expect(run.body.toolCard).toMatchObject({ status: 'ok', output: expect.stringContaining('FILLED') });
    expect(await counted()).toEqual({ 'pdf@': { scriptsRun: 1 } });
  });

  it("counts GraphQL's activateSkill, readSkillResource and runSkillTool as the API's", async () => {
    const chatId = await newChat();
    await graphql(
      'mutation($chatId: ID!) { activateSkill(chatId: $chatId, name: "git-commit") { toolCard { status } } }',
      {
        chatId,
      },
    );
    expect(await counted()).toEqual({ 'git-commit@': { activatedApi: 1 } });
    await graphql(
      'mutation($chatId: ID!) { readSkillResource(chatId: $chatId, name: "pdf", path: "references/forms.md") ' +
        '{ toolCard { status } } }',
      { chatId },
    );
    expect(await counted()).toEqual({ 'pdf@': { resourcesRead: 1 } });
    await graphql(
      'mutation($chatId: ID!, $args: JSON!) { runSkillTool(chatId: $chatId, tool: "use_skill", arguments: $args) ' +
        '{ toolCard { status } } }',
      { chatId, args: { skill_name: 'pdf' } },
    );
    expect(await counted()).toEqual({ 'pdf@': { activatedApi: 1 } });
  });

  it('counts the skill routes: instructions as an activation, a file as a read, a failure as an error', async () => {
    const body = await http().get('/v1/skills/pdf/body').set(auth()).expect(200);
    expect(body.body.name).toBe('pdf');
    expect(await counted()).toEqual({ 'pdf@': { activatedApi: 1 } });
    const file = await http().get('/v1/skills/pdf/resources/references/forms.md').set(auth()).expect(200);
    expect(file.text).toBe('FORMS-MARKER');
    expect(await counted()).toEqual({ 'pdf@': { resourcesRead: 1 } });
    await http().get('/v1/skills/pdf/resources/nope.md').set(auth()).expect(404);
    expect(await counted()).toEqual({ 'pdf@': { resourcesRead: 1, errors: 1 } });
    await http().get('/v1/skills/made-up/body').set(auth()).expect(404);
    expect(await counted()).toEqual({});
    const data = await graphql('{ skillResource(name: "pdf", path: "references/forms.md") { content } }', {});
    expect(data.skillResource).toEqual({ content: 'FORMS-MARKER' });
    expect(await counted()).toEqual({ 'pdf@': { resourcesRead: 1 } });
  });

  it("counts a code skill's own tool calls: under a tool route as the API's, in a turn as tool calls", async () => {
    const chat = await newChat();
    const ran = await http()
      .post(`/v1/chats/${chat}/tools/use_skill`)
      .set(auth())
      .send({ skill_name: 'reader-code' })
      .expect(200);
    expect(ran.body.toolCard.output).toContain('activate=ok read=ok');
    expect(await counted()).toEqual({
      'reader-code@': { activatedApi: 1 },
      'pdf@': { activatedApi: 1, resourcesRead: 1 },
    });

    ctx.model.play(
      { toolCalls: [{ name: 'use_skill', arguments: { skill_name: 'reader-code' } }] },
      { text: 'Read it.' },
    );
    const turn = await http()
      .post(`/v1/chats/${chat}/messages`)
      .set(auth())
      .send({ content: 'read the pdf' })
      .expect(201);
    expect(turn.body.assistantMessage.toolCards.map((card: { tool: string }) => card.tool)).toEqual([
      'use_skill',
      'skills.activate',
      'skills.readResource',
    ]);
    expect(await counted()).toEqual({
      'git-commit@scripted': { offered: 1 },
      'pdf@scripted': { offered: 1, activatedTool: 1, resourcesRead: 1, turns: 1 },
      'reader-code@scripted': { offered: 1, activatedTool: 1, turns: 1 },
    });
  });

  it("counts a code skill's own activation in a gateway turn once, as the gateway's", async () => {
    ctx.model.play(
      { toolCalls: [{ name: 'use_skill', arguments: { skill_name: 'reader-code' } }] },
      { text: 'Gateway read it.' },
    );
    const res = await http()
      .post('/openai/v1/chat/completions')
      .set(auth())
      .send({ model: 'scripted', messages: [{ role: 'user', content: 'read the pdf' }] })
      .expect(200);
    expect(res.body.choices[0].message.content).toBe('Gateway read it.');
    expect(await counted()).toEqual({
      'git-commit@scripted': { offered: 1 },
      'pdf@scripted': { offered: 1, activatedGateway: 1, resourcesRead: 1, turns: 1 },
      'reader-code@scripted': { offered: 1, activatedGateway: 1, turns: 1 },
    });
  });

  it("counts an MCP client's `/pdf` (prompts/get, then the tool it asks for) as one activation", async () => {
    const client = new Client({ name: 'usage-doors', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: auth() } }),
    );
    try {
      const prompt = await client.getPrompt({ name: 'pdf', arguments: { request: 'fill the form' } });
      expect(JSON.stringify(prompt.messages)).toContain('activate_team_skill');
      expect(await counted()).toEqual({});
      const activated = await client.callTool({ name: 'activate_team_skill', arguments: { name: 'pdf' } });
      expect(activated.isError).toBeUndefined();
      expect(await counted()).toEqual({ 'pdf@': { activatedMcp: 1 } });
    } finally {
      await client.close();
    }
  });

  it("counts no preview (a chat's context) and no copy handed out for sync", async () => {
    const chat = await newChat();
    const context = await http()
      .get(`/v1/chats/${chat}/context`)
      .query({ message: '/pdf fill it', tools: 'false' })
      .set(auth())
      .expect(200);
    // Without tools the preview holds the instructions a turn would put in its prompt.
    expect(context.body.systemPrompt).toContain('PDF-BODY-MARKER');
    const copy = await http().get('/.well-known/agent-skills/pdf/SKILL.md').set(auth()).expect(200);
    expect(copy.text).toContain('PDF-BODY-MARKER');
    // The web page's skill view asks for a preview: a person looking is not a use.
    const look = await http().get('/v1/skills/pdf/body').query({ preview: 'true' }).set(auth()).expect(200);
    expect(look.body.body).toContain('PDF-BODY-MARKER');
    await http().get('/v1/skills/pdf/body').query({ preview: 'yes' }).set(auth()).expect(400);
    expect(await counted()).toEqual({});
  });
});
