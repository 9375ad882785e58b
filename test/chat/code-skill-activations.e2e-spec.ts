import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { query } from '../support/database.js';
import { ScriptedModelServer } from '../support/scripted-model-server.js';
import { useSkillTree, writeSkill } from '../support/files/skill-tree.js';

/**
 * What a code skill activates through `ctx.tools.call` is the chat's, as a model's own activation is: stored in
 * chat_activated_skills with `how` and the version in the turn's one statement (or the tool route's), pinned for the
 * next turns (listed as activated in the system prompt, its files read at that version after an edit), and nothing
 * stored when the turn fails. Under a tool route (REST and GraphQL) the calls it made are stored as cards too.
 */
const DIGEST = /^sha256:[0-9a-f]{64}$/;

const tree = useSkillTree((t) => {
  writeSkill(t, 'skills', 'notes', { description: 'Keeps meeting notes.', body: 'NOTES-BODY-MARKER steps.' });
  t.write('skills/notes/references/guide.md', 'guide, first edition');
  writeSkill(t, 'code', 'notes-reader', { description: 'Reads the notes skill for you.' });
  t.write(
    'code/notes-reader/skill.mjs',
    [
      'export async function execute(ctx) {',
      "  const activated = await ctx.tools.call('skills.activate', { name: 'notes' });",
      "  const read = await ctx.tools.call('skills.readResource', { name: 'notes', path: 'references/guide.md' });",
      '  return { success: true, output: `activate=${activated.status}; read=${read.output}` };',
      '}',
    ].join('\n'),
  );
});

/** The names the system prompt lists as the chat's activated skills. */
const activatedIn = (system: string) =>
  (/Skills already activated in this chat: ([^.]*)\./.exec(system)?.[1] ?? '').split(', ').sort();

type Row = { skill_name: string; how: string; activation_count: number; version_digest: string | null };
type Card = { tool: string; status: string; output: string };

describe("a code skill's own activations are the chat's", () => {
  let ctx: ChatTestContext;
  const http = () => request(ctx.app.getHttpServer());
  const newChat = async () => (await http().post('/v1/chats').send({}).expect(201)).body.id as string;
  const rows = (chat: string) =>
    query<Row>(
      ctx.db.url,
      'SELECT skill_name, how, activation_count, version_digest FROM chat_activated_skills WHERE chat_id = $1 ' +
        'ORDER BY skill_name',
      [chat],
    );
  /** Edits the notes skill's guide and reloads, so what a pinned chat reads differs from what the skill is now. */
  const editGuide = async (text: string) => {
    tree().write('skills/notes/references/guide.md', text);
    await http().post('/v1/admin/skills/reload').expect(200);
  };
  /** A turn where the model reads the notes guide, and what it was sent and read. */
  const readGuideInTurn = async (chat: string) => {
    ctx.model.play(
      { toolCalls: [{ name: 'skills_readResource', arguments: { name: 'notes', path: 'references/guide.md' } }] },
      { text: 'Read.' },
    );
    const turn = (await http().post(`/v1/chats/${chat}/messages`).send({ content: 'the guide?' }).expect(201)).body;
    return {
      system: ScriptedModelServer.systemPrompt(ctx.model.requests[0]),
      card: turn.assistantMessage.toolCards[0],
    };
  };

  beforeAll(async () => {
    ctx = await startChatApp([tree().path('skills')], {
      'app.tools.style': 'use_skill',
      'app.skills.code_directories': [tree().path('code')],
      'app.skills.code_timeout_ms': 10_000,
      'app.skills.store_directory': tree().path('store'),
    });
  });
  afterAll(async () => ctx?.close());

  // Regression, fixed since a usage-funnel review found it. Was: the skill a code skill activated was pinned during the
  // turn but not stored in chat_activated_skills, so the next turn had lost it (and read its files as they are now).
  it('in a turn: stored with how and version, once, and pinned for the next turn', async () => {
    await editGuide('guide, first edition');
    const chat = await newChat();
    ctx.model.play(
      { toolCalls: [{ name: 'use_skill', arguments: { skill_name: 'notes-reader' } }] },
      { text: 'Done.' },
    );
    const turn = (await http().post(`/v1/chats/${chat}/messages`).send({ content: 'read notes' }).expect(201)).body;
    const cards = turn.assistantMessage.toolCards as Card[];
    expect(cards.map((card) => [card.tool, card.status])).toEqual([
      ['use_skill', 'ok'],
      ['skills.activate', 'ok'],
      ['skills.readResource', 'ok'],
    ]);
    expect(cards[0].output).toBe('# Skill: notes-reader (ran)\n\nactivate=ok; read=guide, first edition');
    const pinned = (cards[1] as Card & { summary: { version: string } }).summary.version;
    expect(pinned).toMatch(DIGEST);
    expect(turn.activatedSkills).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'notes', how: 'tool', count: 1, version: pinned }),
        expect.objectContaining({ name: 'notes-reader', how: 'tool', count: 1, version: null }),
      ]),
    );
    expect(turn.activatedSkills).toHaveLength(2);
    expect(await rows(chat)).toEqual([
      { skill_name: 'notes', how: 'tool', activation_count: 1, version_digest: pinned },
      { skill_name: 'notes-reader', how: 'tool', activation_count: 1, version_digest: null },
    ]);
    const detail = (await http().get(`/v1/chats/${chat}`).expect(200)).body;
    expect(detail.activatedSkills.map((a: { name: string }) => a.name).sort()).toEqual(['notes', 'notes-reader']);

    await editGuide('guide, second edition');
    const next = await readGuideInTurn(chat);
    expect(activatedIn(next.system)).toEqual(['notes', 'notes-reader']);
    expect(next.card).toMatchObject({ tool: 'skills.readResource', status: 'ok', output: 'guide, first edition' });
    // A chat that never activated it reads the skill as it is now.
    expect((await readGuideInTurn(await newChat())).card.output).toBe('guide, second edition');

    // The code skill and the model activate it in one turn: one row each, counted twice, pinned at the new version.
    ctx.model.play(
      {
        toolCalls: [
          { name: 'use_skill', arguments: { skill_name: 'notes-reader' } },
          { name: 'use_skill', arguments: { skill_name: 'notes' } },
        ],
      },
      { text: 'Again.' },
    );
    const again = (await http().post(`/v1/chats/${chat}/messages`).send({ content: 'again' }).expect(201)).body;
    const repinned = again.assistantMessage.toolCards[1].summary.version;
    expect(repinned).toMatch(DIGEST);
    expect(repinned).not.toBe(pinned);
    expect(await rows(chat)).toEqual([
      { skill_name: 'notes', how: 'tool', activation_count: 3, version_digest: repinned },
      { skill_name: 'notes-reader', how: 'tool', activation_count: 2, version_digest: null },
    ]);
    expect((await readGuideInTurn(chat)).card.output).toBe('guide, second edition');
  });

  // Regression, fixed since a usage-funnel review found it. Was: under a tool route only the code skill's own card and
  // activation were stored: the skill it activated was not the chat's, and the cards of its calls were dropped.
  it('under the REST tool route: its calls stored as cards, what it activated stored and pinned', async () => {
    await editGuide('guide, third edition');
    const chat = await newChat();
    const run = (
      await http().post(`/v1/chats/${chat}/tools/use_skill`).send({ skill_name: 'notes-reader' }).expect(200)
    ).body;
    expect(run.toolCard).toMatchObject({ tool: 'use_skill', status: 'ok' });
    expect(run.toolCard.output).toContain('read=guide, third edition');
    expect(run.activatedSkills).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'notes', how: 'tool', count: 1, version: expect.stringMatching(DIGEST) }),
        expect.objectContaining({ name: 'notes-reader', how: 'tool', count: 1 }),
      ]),
    );
    expect((await rows(chat)).map((row) => [row.skill_name, row.activation_count])).toEqual([
      ['notes', 1],
      ['notes-reader', 1],
    ]);
    const messages = (await http().get(`/v1/chats/${chat}/messages`).expect(200)).body.items;
    expect(messages).toHaveLength(1);
    expect(messages[0].role).toBe('tool');
    expect((messages[0].toolCards as Card[]).map((card) => [card.tool, card.status])).toEqual([
      ['use_skill', 'ok'],
      ['skills.activate', 'ok'],
      ['skills.readResource', 'ok'],
    ]);
    expect(messages[0].toolCards[0]).toEqual(run.toolCard);

    await editGuide('guide, fourth edition');
    const next = await readGuideInTurn(chat);
    expect(activatedIn(next.system)).toEqual(['notes', 'notes-reader']);
    expect(next.card.output).toBe('guide, third edition');
  });

  it("under GraphQL's runSkillTool: the same", async () => {
    const chatId = await newChat();
    const res = await http()
      .post('/graphql')
      .send({
        query:
          'mutation($chatId: ID!, $args: JSON!) { runSkillTool(chatId: $chatId, tool: "use_skill", arguments: $args) ' +
          '{ toolCard { tool status } activatedSkills { name how count version } } }',
        variables: { chatId, args: { skill_name: 'notes-reader' } },
      })
      .expect(200);
    expect(res.body.errors).toBeUndefined();
    const run = res.body.data.runSkillTool;
    expect(run.toolCard).toEqual({ tool: 'use_skill', status: 'ok' });
    expect(run.activatedSkills).toEqual(
      expect.arrayContaining([
        { name: 'notes', how: 'tool', count: 1, version: expect.stringMatching(DIGEST) },
        { name: 'notes-reader', how: 'tool', count: 1, version: null },
      ]),
    );
    expect(await rows(chatId)).toHaveLength(2);
  });

  it('through /name: the code skill is explicit, what its calls activated is tool', async () => {
    const chat = await newChat();
    ctx.model.play({ text: 'Done.' });
    const turn = (await http().post(`/v1/chats/${chat}/messages`).send({ content: '/notes-reader' }).expect(201)).body;
    expect(turn.assistantMessage.toolCards.map((card: Card) => card.tool)).toEqual([
      'use_skill',
      'skills.activate',
      'skills.readResource',
    ]);
    expect((await rows(chat)).map((row) => [row.skill_name, row.how, row.activation_count])).toEqual([
      ['notes', 'tool', 1],
      ['notes-reader', 'explicit', 1],
    ]);
  });

  it('a turn that fails after the code skill ran stores nothing: no messages, no activations', async () => {
    const chat = await newChat();
    ctx.model.play(
      { toolCalls: [{ name: 'use_skill', arguments: { skill_name: 'notes-reader' } }] },
      { status: 500, body: '{"error":{"message":"down"}}' },
    );
    const failed = await http().post(`/v1/chats/${chat}/messages`).send({ content: 'read notes' });
    expect(failed.status).toBe(502);
    expect(failed.body.code).toBe('MODEL_ERROR');
    expect(await rows(chat)).toEqual([]);
    expect((await http().get(`/v1/chats/${chat}/messages`).expect(200)).body.items).toEqual([]);
  });
});
