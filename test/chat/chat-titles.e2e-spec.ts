import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { CHAT_TITLE_MAX_CHARACTERS } from '../../src/domain/chats/chat-title.js';
import { gql } from '../graphql/documents.js';
import { failure, type GraphqlTestContext, startGraphqlApp } from '../graphql/graphql-test-app.js';
import { useChatSkillsTree } from '../support/files/skill-tree.js';
import type { WireJson } from '../support/wire-json.js';

const chatSkills = useChatSkillsTree();
const graphemes = (text: string) =>
  [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text)].length;

/**
 * A chat without a title is titled, by the server, from its first user message (src/domain/chats/chat-title.ts),
 * in the statement that stores the turn: every client sees the same title, through REST and GraphQL.
 */
describe('chat titles from the first message', () => {
  let ctx: GraphqlTestContext;
  const http = () => request(ctx.app.getHttpServer());
  const graphql = <T = WireJson>(document: string, variables?: Record<string, unknown>) =>
    ctx.client().request<T>(gql(document), variables);
  const newChat = async (body: Record<string, unknown> = {}) =>
    (await http().post('/v1/chats').send(body).expect(201)).body.id as string;
  const titleOf = async (id: string) => (await http().get(`/v1/chats/${id}`).expect(200)).body.title as string | null;
  const say = (id: string, content: string) => http().post(`/v1/chats/${id}/messages`).send({ content });

  beforeAll(async () => {
    ctx = await startGraphqlApp([chatSkills().path('skills')]);
  });
  afterAll(async () => ctx?.close());

  it('REST: an untitled chat takes its first message, on one line, as its title; later messages leave it', async () => {
    ctx.model.play({ text: 'one' }, { text: 'two' });
    const id = await newChat();
    expect(await titleOf(id)).toBeNull();
    await say(id, 'Summarise the Q3 report\n\nfor the   board').expect(201);
    expect(await titleOf(id)).toBe('Summarise the Q3 report for the board');
    await say(id, 'and now something else entirely').expect(201);
    expect(await titleOf(id)).toBe('Summarise the Q3 report for the board');
    const listed = (await http().get('/v1/chats?limit=200').expect(200)).body.items.find(
      (chat: { id: string }) => chat.id === id,
    );
    expect(listed.title).toBe('Summarise the Q3 report for the board');
  });

  it('REST, streamed: the title is there once the turn is done', async () => {
    ctx.model.play({ text: 'streamed answer' });
    const id = await newChat();
    const answer = await say(id, '/pdf fill the form').set('accept', 'text/event-stream').expect(200);
    expect(answer.text).toContain('event: done');
    expect(await titleOf(id)).toBe('/pdf fill the form');
  });

  it('a chat created with a title keeps it', async () => {
    ctx.model.play({ text: 'answer' });
    const id = await newChat({ title: 'Board prep' });
    await say(id, 'Summarise the Q3 report').expect(201);
    expect(await titleOf(id)).toBe('Board prep');
  });

  it('a title of white space only is no title: the first message gives one', async () => {
    ctx.model.play({ text: 'answer' });
    const id = await newChat({ title: ' \t ' });
    expect(await titleOf(id)).toBeNull();
    await say(id, 'hello there').expect(201);
    expect(await titleOf(id)).toBe('hello there');
  });

  it('a very long message: cut at a word boundary with an ellipsis, within the limit', async () => {
    ctx.model.play({ text: 'answer' });
    const id = await newChat();
    const longest = `${'lorem ipsum '.repeat(8333)}end.`;
    expect(longest.length).toBe(100_000);
    await say(id, longest).expect(201);
    const title = await titleOf(id);
    expect(title).toBe(`${'lorem ipsum '.repeat(5).trim()}…`);
    expect(graphemes(title!)).toBeLessThanOrEqual(CHAT_TITLE_MAX_CHARACTERS);
  });

  it(
    'emoji, accents and right-to-left text survive whole; direction overrides and control characters ' + 'do not',
    async () => {
      ctx.model.play({ text: 'a' }, { text: 'b' });
      const family = '👨‍👩‍👧';
      const emoji = await newChat();
      await say(emoji, `${family} 👋🏽 مرحبا e\u0301 ${family.repeat(80)}`).expect(201);
      const title = (await titleOf(emoji))!;
      expect(title.startsWith(`${family} 👋🏽 مرحبا e\u0301 ${family}`)).toBe(true);
      expect(title.endsWith(`${family}…`)).toBe(true);
      expect(graphemes(title)).toBeLessThanOrEqual(CHAT_TITLE_MAX_CHARACTERS);
      const spoof = await newChat();
      await say(spoof, 'invoice \u202Eexe.pdf\u202C\u0007 please').expect(201);
      expect(await titleOf(spoof)).toBe('invoice exe.pdf please');
    },
  );

  it(
    'a message the server refuses (NUL) or a turn that fails stores no title; the next message that is stored ' +
      'gives it',
    async () => {
      const id = await newChat();
      const refused = await say(id, 'with \u0000 NUL').expect(400);
      expect(refused.body.code).toBe('VALIDATION_FAILED');
      ctx.model.play({ status: 500 });
      await say(id, 'the model is down').expect(502);
      expect(await titleOf(id)).toBeNull();
      ctx.model.play({ text: 'fine' });
      await say(id, 'third time lucky').expect(201);
      expect(await titleOf(id)).toBe('third time lucky');
    },
  );

  it('a first message of white space only leaves the chat untitled until a message with words', async () => {
    ctx.model.play({ text: 'a' }, { text: 'b' });
    const id = await newChat();
    await say(id, ' \n\t ').expect(201);
    expect(await titleOf(id)).toBeNull();
    await say(id, 'now with words').expect(201);
    expect(await titleOf(id)).toBe('now with words');
  });

  it('two first messages at once: one title, that of the message stored first', async () => {
    ctx.model.answerWith(() => ({ text: 'answered', delayMs: 150 }));
    for (let round = 0; round < 3; round++) {
      const id = await newChat();
      await Promise.all([say(id, `first A ${round}`).expect(201), say(id, `first B ${round}`).expect(201)]);
      const messages = (await http().get(`/v1/chats/${id}/messages`).expect(200)).body.items as {
        role: string;
        content: string;
      }[];
      const firstUser = messages.find((message) => message.role === 'user')!.content;
      expect(messages.filter((message) => message.role === 'user')).toHaveLength(2);
      expect(await titleOf(id)).toBe(firstUser);
    }
  });

  it('GraphQL: sendMessage titles an untitled chat; chats and chat answer it; an explicit title is kept', async () => {
    ctx.model.play({ text: 'a' }, { text: 'b' });
    const untitled = (await graphql('mutation { createChat { id title } }')).createChat;
    expect(untitled.title).toBeNull();
    await graphql(
      'mutation($id: ID!) { sendMessage(chatId: $id, content: "Plan the offsite\\nin May") { assistantMessage { ' +
        'content } } }',
      { id: untitled.id },
    );
    expect((await graphql('query($id: ID!) { chat(id: $id) { title } }', { id: untitled.id })).chat.title).toBe(
      'Plan the offsite in May',
    );
    const listed = (await graphql('{ chats(limit: 200) { items { id title } } }')).chats.items.find(
      (chat: { id: string }) => chat.id === untitled.id,
    );
    expect(listed.title).toBe('Plan the offsite in May');
    expect(await titleOf(untitled.id)).toBe('Plan the offsite in May');

    const titled = (await graphql('mutation { createChat(title: "Offsite") { id } }')).createChat.id;
    await graphql(
      'mutation($id: ID!) { sendMessage(chatId: $id, content: "something else") { assistantMessage { content } } }',
      { id: titled },
    );
    expect((await graphql('query($id: ID!) { chat(id: $id) { title } }', { id: titled })).chat.title).toBe('Offsite');
  });

  it('GraphQL: a refused message titles nothing', async () => {
    const id = (await graphql('mutation { createChat { id } }')).createChat.id;
    const answer = await failure(
      graphql('mutation($id: ID!) { sendMessage(chatId: $id, content: "") { assistantMessage { content } } }', { id }),
    );
    expect(answer.errors[0].extensions?.code).toBe('VALIDATION_FAILED');
    expect((await graphql('query($id: ID!) { chat(id: $id) { title } }', { id })).chat.title).toBeNull();
  });
});
