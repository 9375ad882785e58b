import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { ExpressAdapter, type NestExpressApplication } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { ScriptedModelServer } from '../../../test/support/scripted-model-server.js';
import { AppModule } from '../src/app.module.js';

/**
 * The example app as its users meet it: real HTTP (supertest), its own model loop against a
 * scripted OpenAI-compatible model on 127.0.0.1, Skillhost from the packed tarballs, and the
 * activations in PostgreSQL when DATABASE_URL is given (the repository's test runs it with one).
 */
const SKILLS = fileURLToPath(new URL('../../../skills', import.meta.url));
const SKILL = 'skills-system-validation';

describe('nest-chat: a NestJS app of its own with @skillhost/nest and @skillhost/ai-sdk', () => {
  const model = new ScriptedModelServer();
  let app: NestExpressApplication;
  const chat = (body: unknown) =>
    request(app.getHttpServer())
      .post('/chat')
      .send(body as object);

  beforeAll(async () => {
    await model.start();
    const moduleRef = await Test.createTestingModule({
      imports: [
        AppModule.register({
          skillDirectories: [SKILLS],
          model: { baseUrl: model.url, name: 'scripted' },
          databaseUrl: process.env.DATABASE_URL,
        }),
      ],
    }).compile();
    app = moduleRef.createNestApplication<NestExpressApplication>(new ExpressAdapter());
    await app.init();
  });
  afterAll(async () => {
    await app?.close();
    await model.stop();
  });
  beforeEach(() => {
    model.play();
  });

  it(
    `/${SKILL} activates the skill before the model runs: its card comes back and the model reads ` +
      `its instructions`,
    async () => {
      model.play({ text: 'STEP 1: PASS — instructions received' });
      const res = await chat({ message: `/${SKILL} run the conformance check`, chatId: 'invoked' }).expect(200);
      expect(res.body.invoked).toEqual([SKILL]);
      expect(res.body.answer).toBe('STEP 1: PASS — instructions received');
      expect(res.body.cards).toHaveLength(1);
      expect(res.body.cards[0]).toMatchObject({
        tool: 'skills.activate',
        args: { name: SKILL },
        status: 'ok',
        summary: { skill: SKILL, truncated: false },
      });
      expect(res.body.cards[0].output).toContain('# Skills system validation');

      const [sent] = model.requests;
      const system = ScriptedModelServer.systemPrompt(sent);
      expect(system).toContain(`<name>${SKILL}</name>`);
      expect(system).toContain('skills_activate');
      expect(sent.body.tools?.map((t) => t.function.name).sort()).toEqual([
        'skills_activate',
        'skills_listResources',
        'skills_readResource',
      ]);
      // The user's words without `/name`, then the activation as a tool call and its result.
      const [user, call, result] = sent.body.messages.filter((m) => m.role !== 'system');
      expect(user).toMatchObject({ role: 'user', content: 'run the conformance check' });
      expect(call.tool_calls).toEqual([
        expect.objectContaining({ function: expect.objectContaining({ name: 'skills_activate' }) }),
      ]);
      expect(String(result.content)).toContain('# Skills system validation');
    },
  );

  it(
    "the model reads the skill's files through the tools; a path out of the skill folder is refused as an error " +
      'card it can read',
    async () => {
      model.play(
        { toolCalls: [{ name: 'skills_readResource', arguments: { name: SKILL, path: 'references/REFERENCE.md' } }] },
        { toolCalls: [{ name: 'skills_readResource', arguments: { name: SKILL, path: '../../package.json' } }] },
        { toolCalls: [{ name: 'skills_readResource', arguments: { name: SKILL, path: '/etc/passwd' } }] },
        { text: 'STEP 2: PASS; STEP 4: PASS' },
      );
      const res = await chat({
        message: 'Check the skills: read the reference, then try ../../package.json.',
        chatId: 'reads',
      }).expect(200);
      expect(res.body.invoked).toEqual([]);
      expect(res.body.cards.map((c: { tool: string; status: string }) => [c.tool, c.status])).toEqual([
        ['skills.readResource', 'ok'],
        ['skills.readResource', 'error'],
        ['skills.readResource', 'error'],
      ]);
      expect(res.body.cards[0].output).toContain('MARKER:');
      for (const refused of res.body.cards.slice(1)) {
        expect(refused.output).toMatch(/^Error \(RESOURCE_OUTSIDE_SKILL\)/);
        expect(refused.output).not.toContain('"name"');
      }
      // What the model read for the refused call is the same error text.
      const toolResults = model.requests[2].body.messages.filter((m) => m.role === 'tool');
      expect(String(toolResults.at(-1)?.content)).toContain('RESOURCE_OUTSIDE_SKILL');
    },
  );

  it('a skill that does not exist is an error card naming the skills that do, and the turn goes on', async () => {
    model.play(
      { toolCalls: [{ name: 'skills_activate', arguments: { name: 'skills-system-validatio' } }] },
      { text: 'done' },
    );
    const res = await chat({ message: 'use the validation skill', chatId: 'unknown-skill' }).expect(200);
    expect(res.body.answer).toBe('done');
    expect(res.body.cards).toEqual([
      expect.objectContaining({
        tool: 'skills.activate',
        status: 'error',
        output: expect.stringMatching(/^Error \(SKILL_NOT_FOUND\).*skills-system-validation/s),
      }),
    ]);
  });

  it('text that only looks like an invocation (/etc/hosts, an unknown /name) goes to the model as typed', async () => {
    model.play({ text: 'a file' }, { text: 'no such skill' });
    const hosts = await chat({ message: '/etc/hosts is what file?' }).expect(200);
    expect(hosts.body).toMatchObject({ invoked: [], cards: [], answer: 'a file' });
    expect(model.requests[0].body.messages.at(-1)).toMatchObject({ role: 'user', content: '/etc/hosts is what file?' });
    const unknown = await chat({ message: '/no-such-skill hello' }).expect(200);
    expect(unknown.body.invoked).toEqual([]);
  });

  it('the app validates its own input', async () => {
    await chat({}).expect(400);
    await chat({ message: '   ' }).expect(400);
    await chat({ message: 'hi', chatId: '../x' }).expect(400);
    expect(model.requests).toHaveLength(0);
  });

  (process.env.DATABASE_URL === undefined ? it.skip : it)(
    'activations are remembered in PostgreSQL: the next turn of the chat is told the skill is active',
    async () => {
      model.play({ text: 'activated' }, { text: 'still active' });
      const chatId = `remembered-${randomUUID()}`;
      await chat({ message: `/${SKILL}`, chatId }).expect(200);
      await chat({ message: 'and now?', chatId }).expect(200);
      expect(ScriptedModelServer.systemPrompt(model.requests[1])).toContain(
        `Skills already activated in this chat: ${SKILL}.`,
      );
      expect(ScriptedModelServer.systemPrompt(model.requests[0])).not.toContain(
        'Skills already activated in this chat',
      );
    },
  );
});
