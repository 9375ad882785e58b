import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { query } from '../support/database.js';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { collectText, parseSse } from '../support/sse.js';

/** What the scripted server recorded of an Anthropic Messages API request. */
interface AnthropicBody {
  model: string;
  stream?: boolean;
  max_tokens: number;
  system?: { type: string; text: string }[];
  messages: {
    role: string;
    content: { type: string; text?: string; name?: string; input?: unknown; tool_use_id?: string; content?: unknown }[];
  }[];
  tools?: { name: string; description: string; input_schema: { properties: Record<string, unknown> } }[];
}

/** The `anthropic` provider, end to end: a turn with tools, streamed and not, against a scripted Messages API. */
describe('chats with an anthropic model', () => {
  let tree: TempTree;
  let ctx: ChatTestContext;
  let chatId: string;
  const http = () => request(ctx.app.getHttpServer());
  const body = (index: number) => ctx.model.requests[index].body as unknown as AnthropicBody;

  beforeAll(async () => {
    tree = tempTree();
    writeSkill(tree, 'skills', 'pdf', {
      description: 'Works with PDF files.',
      body: '# PDF\n\nRead references/forms.md first.\n',
    });
    tree.write('skills/pdf/references/forms.md', 'FORMS-MARKER-31\n');
    ctx = await startChatApp(
      [tree.path('skills')],
      { 'app.default_model': 'claude' },
      (url) => ({
        claude: {
          provider: 'anthropic',
          base_url: url,
          model: 'claude-sonnet-4-5',
          api_key_env: 'TEST_ANTHROPIC_KEY',
          timeout_ms: 5000,
          max_retries: 0,
        },
      }),
      { TEST_ANTHROPIC_KEY: 'sk-ant-test' },
    );
  });
  afterAll(async () => {
    await ctx?.close();
    tree.cleanup();
  });
  beforeEach(async () => {
    chatId = (await http().post('/v1/chats').send({}).expect(201)).body.id;
  });

  it('runs the tool loop through the Messages API: key, system prompt, wire tools, tool results', async () => {
    ctx.model.play(
      { toolCalls: [{ name: 'skills_readResource', arguments: { name: 'pdf', path: 'references/forms.md' } }] },
      { text: 'Filled in.' },
    );
    const res = await http().post(`/v1/chats/${chatId}/messages`).send({ content: '/pdf fill the form' }).expect(201);

    expect(res.body.assistantMessage.content).toBe('Filled in.');
    const cards = res.body.assistantMessage.toolCards as { tool: string; status: string; output: string }[];
    expect(cards.map((c) => [c.tool, c.status])).toEqual([
      ['skills.activate', 'ok'],
      ['skills.readResource', 'ok'],
    ]);
    expect(cards[1].output).toBe('FORMS-MARKER-31\n');
    expect(res.body.activatedSkills).toEqual([expect.objectContaining({ name: 'pdf', how: 'explicit', count: 1 })]);

    const first = ctx.model.requests[0];
    expect(first.api).toBe('anthropic');
    expect(first.headers['x-api-key']).toBe('sk-ant-test');
    expect(first.headers['anthropic-version']).toBe('2023-06-01');
    expect(body(0).model).toBe('claude-sonnet-4-5');
    expect(
      body(0)
        .system?.map((part) => part.text)
        .join(''),
    ).toContain('"name":"pdf"');
    expect(body(0).tools?.map((t) => [t.name, Object.keys(t.input_schema.properties)])).toEqual([
      ['skills_activate', ['name']],
      ['skills_readResource', ['name', 'path']],
      ['skills_listResources', ['name', 'type']],
    ]);
    // The user's words without the prefix, then the server's activation as a tool_use / tool_result pair.
    expect(body(0).messages.map((m) => [m.role, m.content.map((c) => c.type)])).toEqual([
      ['user', ['text']],
      ['assistant', ['tool_use']],
      ['user', ['tool_result']],
    ]);
    expect(body(0).messages[0].content[0]).toMatchObject({ type: 'text', text: 'fill the form' });
    expect(JSON.stringify(body(0).messages)).toContain('"type":"tool_use"');
    expect(JSON.stringify(body(0).messages)).toContain('# PDF');
    // The model's own call came back to it as a tool_result holding the file.
    expect(JSON.stringify(body(1).messages)).toContain('FORMS-MARKER-31');

    const rows = await query(ctx.db.url, 'SELECT role, content FROM chat_messages WHERE chat_id = $1 ORDER BY seq', [
      chatId,
    ]);
    expect(rows).toEqual([
      { role: 'user', content: '/pdf fill the form' },
      { role: 'assistant', content: 'Filled in.' },
    ]);
  });

  it('streams the same turn as server-sent events from the Messages API stream', async () => {
    ctx.model.play(
      { toolCalls: [{ name: 'skills_activate', arguments: { name: 'pdf' } }] },
      { text: 'The PDF skill is ready for your form.' },
    );
    const res = await http()
      .post(`/v1/chats/${chatId}/messages`)
      .set('accept', 'text/event-stream')
      .send({ content: 'help with a pdf' })
      .buffer(true)
      .parse(collectText)
      .expect(200);
    const events = parseSse(res.body as string);
    expect(body(0).stream).toBe(true);
    const kinds = events.map((e) => e.event).filter((kind, i, all) => kind !== all[i - 1]);
    expect(kinds).toEqual(['tool-call', 'tool-result', 'text-delta', 'done']);
    const text = events
      .filter((e) => e.event === 'text-delta')
      .map((e) => (e.data as { text: string }).text)
      .join('');
    expect(text).toBe('The PDF skill is ready for your form.');
    const done = events[events.length - 1].data as {
      assistantMessage: { content: string };
      activatedSkills: { name: string; how: string }[];
    };
    expect(done.assistantMessage.content).toBe(text);
    expect(done.activatedSkills.map((a) => [a.name, a.how])).toEqual([['pdf', 'tool']]);
  });

  it(
    "a provider error comes back as 502 MODEL_ERROR, Anthropic's message as the reason admins read (auth is off: " +
      'everyone is); nothing is stored',
    async () => {
      ctx.model.play({
        status: 529,
        body: JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
      });
      const res = await http().post(`/v1/chats/${chatId}/messages`).send({ content: 'hello' }).expect(502);
      expect(res.body.code).toBe('MODEL_ERROR');
      expect(res.body.message).toBe(
        `Model 'claude' could not answer (request id ${
          res.headers['x-request-id']
        }); an admin can find the reason in the server's log.`,
      );
      expect(res.body.details).toMatchObject({ reason: 'Overloaded', providerStatus: 529 });
      expect((await http().get(`/v1/chats/${chatId}/messages`).expect(200)).body.total).toBe(0);
    },
  );
});
