import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { type Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { createApp } from '../../src/app/app.factory.js';
import { UsersService } from '../../src/domain/users/users.service.js';
import { ChatEventsService } from '../../src/domain/chats/chat-events.service.js';
import { configWith } from '../../src/config/config-loader.js';
import { packageRoot } from '../../src/config/package-version.js';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';
import { freePort } from '../support/ports.js';
import { ScriptedModelServer } from '../support/scripted-model-server.js';
import { zipOf } from '../support/skill-archives.js';
import { skillMd, tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { parseSse } from '../support/sse.js';
import { type Answer, listen, type RawRequest } from './http-client.js';

/**
 * What a member reads of the server's insides, through every door: a failing model's address and
 * words, and the folders skills come from. Members get a request id and a source kind; admins and
 * the log keep the details.
 */

/** What a provider might answer: markup, an internal address and something that looks like a key. */
const LEAKY_REASON = '<b>Upstream 10.20.30.40:8443</b> refused key sk-live-LEAKED0123456789abcdef';
const LEAKS = ['<b>', '10.20.30.40', 'sk-live-LEAKED0123456789abcdef', 'ECONNREFUSED', '127.0.0.1'];

/** Everything pino writes, as JSON records. */
class LogCapture extends Writable {
  readonly records: Record<string, unknown>[] = [];
  override _write(chunk: Buffer, _encoding: string, done: () => void): void {
    for (const line of chunk.toString('utf8').split('\n'))
      if (line !== '') this.records.push(JSON.parse(line) as Record<string, unknown>);
    done();
  }
}

let tree: TempTree;
let db: TestDatabase;
let model: ScriptedModelServer;
let app: NestFastifyApplication;
let send: (method: string, path: string, request?: RawRequest) => Promise<Answer>;
let port: number;
let closedPort: number;
const logs = new LogCapture();
const keys: Record<'root' | 'ann', string> = { root: '', ann: '' };
const wsClients: Client[] = [];

const as = (user: keyof typeof keys, request: RawRequest = {}): RawRequest => ({
  ...request,
  headers: { ...request.headers, authorization: `Bearer ${keys[user]}` },
});
const newChat = async (user: keyof typeof keys) =>
  (await send('POST', '/v1/chats', as(user, { json: {} }))).body.id as string;
const graphql = async (user: keyof typeof keys, document: string, variables: Record<string, unknown> = {}) =>
  send('POST', '/graphql', as(user, { json: { query: document, variables } }));

/** Asserts that nothing a member could read names the server's insides. */
function expectNoLeak(text: string): void {
  for (const leak of LEAKS) expect(text).not.toContain(leak);
  expect(text).not.toContain(tree.root);
}

beforeAll(async () => {
  tree = tempTree();
  writeSkill(tree, 'first', 'pdf', { description: 'Works with PDF files.' });
  writeSkill(tree, 'second', 'pdf', { description: 'Another PDF skill, shadowed by the first.' });
  writeSkill(tree, 'second', 'notes', { description: 'Takes notes.' });
  writeSkill(tree, 'code', 'asker', { description: 'Asks the chat model, and reports what it was told.' });
  tree.write(
    'code/asker/skill.mjs',
    [
      'export async function execute(ctx) {',
      "  try { return { success: true, output: await ctx.llm.complete('hello') }; }",
      '  catch (error) { return { success: false, output: "", error: `the model call failed: ${error.message}` }; }',
      '}',
    ].join('\n'),
  );
  model = await new ScriptedModelServer().start();
  closedPort = await freePort();
  db = await createTestDatabase();
  const config = configWith({
    'app.database.url': db.url,
    'app.auth.mode': 'api_key',
    'app.logging.format': 'json',
    'app.skills.enabled': true,
    // The first two are shared folders 1 and 2; Skillhost's own skills/ is `bundled`.
    'app.skills.directories': [tree.path('first'), tree.path('second'), join(packageRoot()!, 'skills')],
    'app.skills.code_directories': [tree.path('code')],
    'app.skills.store_directory': tree.path('store'),
    'app.skills.include_location': true,
    'app.skills.catalogue_format': 'xml',
    'app.models': {
      scripted: {
        provider: 'openai-compatible',
        base_url: model.url,
        model: 'scripted-1',
        timeout_ms: 5000,
        max_retries: 0,
      },
      gone: {
        provider: 'openai-compatible',
        base_url: `http://127.0.0.1:${closedPort}/v1`,
        model: 'gone-1',
        timeout_ms: 5000,
        max_retries: 0,
      },
    },
    'app.default_model': 'scripted',
  });
  app = await createApp(config, { logDestination: logs });
  const users = app.get(UsersService);
  keys.root = (await users.createKey((await users.createUser('root', 'admin')).id)).key;
  keys.ann = (await users.createKey((await users.createUser('ann', 'member')).id)).key;
  send = await listen(app);
  port = (app.getHttpServer().address() as AddressInfo).port;
});
afterAll(async () => {
  await Promise.all(wsClients.map((client) => client.dispose()));
  await app?.close();
  await model?.stop();
  await db?.drop();
  tree?.cleanup();
});

/** The warn line the model failure was logged with, by its request id. */
function modelLogLine(requestId: string): Record<string, unknown> | undefined {
  return logs.records.find(
    (record) => record.context === 'Model' && String(record.msg).includes(`request id ${requestId}`),
  );
}

describe('a model that fails, as a member and as an admin read it', () => {
  // Regression, fixed since this pass found it. Was: `Model 'scripted' failed: <b>Upstream 10.20.30.40:8443</b> refused
  // key sk-live-…` (and `connect ECONNREFUSED 127.0.0.1:<port>`) in every member's answer.
  const failures = [
    [
      'answers 500 with markup, an address and a key',
      'scripted',
      () =>
        model.play({ status: 500, body: JSON.stringify({ error: { message: LEAKY_REASON, type: 'server_error' } }) }),
      /sk-live-LEAKED0123456789abcdef/,
      500,
    ],
    ['is a closed port', 'gone', () => undefined, /ECONNREFUSED 127\.0\.0\.1:\d+/, undefined],
  ] as const;

  describe.each(failures)('the model %s', (_what, modelName, script, reason, providerStatus) => {
    it(
      'REST as JSON: a member gets MODEL_ERROR with the request id it was answered under, and nothing of the ' +
        'provider; the log line holds the reason under that id',
      async () => {
        const chat = await newChat('ann');
        script();
        const answer = await send(
          'POST',
          `/v1/chats/${chat}/messages`,
          as('ann', { json: { content: 'hello', model: modelName } }),
        );
        const requestId = answer.headers.get('x-request-id')!;
        expect(answer.status).toBe(502);
        expect(answer.body).toEqual({
          code: 'MODEL_ERROR',
          message:
            `Model '${modelName}' could not answer (request id ` +
            `${requestId}); an admin can find the reason in the server's log.`,
          details: { model: modelName, requestId },
        });
        expectNoLeak(answer.text);
        expect(modelLogLine(requestId)).toMatchObject({
          level: 'warn',
          reqId: requestId,
          msg: expect.stringMatching(reason),
        });
      },
    );

    it('REST as SSE: the `error` event is the same, without the provider', async () => {
      const chat = await newChat('ann');
      script();
      const answer = await send(
        'POST',
        `/v1/chats/${chat}/messages`,
        as('ann', { json: { content: 'hello', model: modelName }, headers: { accept: 'text/event-stream' } }),
      );
      const requestId = answer.headers.get('x-request-id')!;
      expect(answer.status).toBe(200);
      expect(parseSse(answer.text)).toEqual([
        {
          event: 'error',
          data: {
            code: 'MODEL_ERROR',
            message: expect.stringContaining(`(request id ${requestId})`),
            details: { model: modelName, requestId },
          },
        },
      ]);
      expectNoLeak(answer.text);
      expect(modelLogLine(requestId)).toMatchObject({ msg: expect.stringMatching(reason) });
    });

    it('GraphQL: the sendMessage error and the chatEvents `error` event carry no more than REST', async () => {
      const chat = await newChat('ann');
      const client = createClient({
        url: `ws://127.0.0.1:${port}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: { authorization: `Bearer ${keys.ann}` },
        retryAttempts: 0,
        lazy: true,
      });
      wsClients.push(client);
      const subscription = client.iterate({
        query: 'subscription($chatId: ID!) { chatEvents(chatId: $chatId) { event data } }',
        variables: { chatId: chat },
      });
      const heard = subscription.next();
      // The subscription has reached the server once the chat counts a subscriber.
      await waitFor(() => app.get(ChatEventsService).hasSubscribers(chat));
      script();
      const answer = await graphql(
        'ann',
        'mutation($chatId: ID!, $model: String) { sendMessage(chatId: $chatId, content: "hello", model: $model) ' +
          '{ assistantMessage { content } } }',
        { chatId: chat, model: modelName },
      );
      const requestId = answer.headers.get('x-request-id')!;
      expect(answer.body.errors).toEqual([
        expect.objectContaining({
          message: expect.stringContaining(`(request id ${requestId})`),
          extensions: { code: 'MODEL_ERROR', status: 502, details: { model: modelName, requestId } },
        }),
      ]);
      expectNoLeak(answer.text);
      const event = (await heard).value as { data: { chatEvents: { event: string; data: unknown } } };
      await subscription.return?.();
      expect(event.data.chatEvents).toEqual({
        event: 'error',
        data: {
          code: 'MODEL_ERROR',
          message: expect.stringContaining(`(request id ${requestId})`),
          details: { model: modelName, requestId },
        },
      });
      expectNoLeak(JSON.stringify(event));
    });

    it("an admin's answer adds the provider's reason (and status), as REST JSON, SSE and GraphQL", async () => {
      const chat = await newChat('root');
      script();
      const json = await send(
        'POST',
        `/v1/chats/${chat}/messages`,
        as('root', { json: { content: 'hello', model: modelName } }),
      );
      const expected = {
        model: modelName,
        requestId: json.headers.get('x-request-id'),
        reason: expect.stringMatching(reason),
        ...(providerStatus === undefined ? {} : { providerStatus }),
      };
      expect(json.body.details).toEqual(expected);
      script();
      const sse = await send(
        'POST',
        `/v1/chats/${chat}/messages`,
        as('root', { json: { content: 'hello', model: modelName }, headers: { accept: 'text/event-stream' } }),
      );
      expect(parseSse(sse.text)[0].data).toMatchObject({ details: { reason: expect.stringMatching(reason) } });
      script();
      const gql = await graphql(
        'root',
        'mutation($chatId: ID!, $model: String) { sendMessage(chatId: $chatId, content: "hello", model: $model) ' +
          '{ assistantMessage { content } } }',
        { chatId: chat, model: modelName },
      );
      expect(gql.body.errors[0].extensions.details).toMatchObject({ reason: expect.stringMatching(reason) });
    });
  });

  it(
    'a code skill whose ctx.llm.complete fails: the card the chat stores (and every later reader sees) names the ' +
      "request id, not the provider's words",
    async () => {
      // Regression, fixed since this pass found it. Was: the provider's words in the code's error, stored on the card.
      const chat = await newChat('ann');
      model.play(
        { status: 500, body: JSON.stringify({ error: { message: LEAKY_REASON } }) },
        { text: 'Done without it.' },
      );
      const answer = await send('POST', `/v1/chats/${chat}/messages`, as('ann', { json: { content: '/asker go' } }));
      expect(answer.status).toBe(201);
      const requestId = answer.headers.get('x-request-id')!;
      expect(answer.body.assistantMessage.toolCards).toEqual([
        expect.objectContaining({
          status: 'error',
          output: expect.stringContaining(
            `the model call failed: Model 'scripted' could not answer (request id ${requestId})`,
          ),
        }),
      ]);
      expectNoLeak(answer.text);
      const stored = await query<{ content: string; tool_cards: unknown }>(
        db.url,
        'SELECT content, tool_cards FROM chat_messages WHERE chat_id = $1',
        [chat],
      );
      expect(stored).toHaveLength(2);
      expectNoLeak(JSON.stringify(stored));
      expect((await send('GET', `/v1/chats/${chat}/messages`, as('ann'))).text).toContain(`request id ${requestId}`);
    },
  );

  it('a failed turn stores nothing a later reader could see', async () => {
    const chat = await newChat('ann');
    model.play({ status: 500, body: JSON.stringify({ error: { message: LEAKY_REASON } }) });
    expect((await send('POST', `/v1/chats/${chat}/messages`, as('ann', { json: { content: 'hello' } }))).status).toBe(
      502,
    );
    expect(await query(db.url, 'SELECT count(*)::int AS n FROM chat_messages WHERE chat_id = $1', [chat])).toEqual([
      { n: 0 },
    ]);
  });
});

describe('where skills come from, as a member and as an admin read it', () => {
  // Regression, fixed since this pass found it. Was: `source` was the configured folder (a host path), and an install's
  // collision warning named it.
  it.each([
    ['pdf', 'shared folder 1'],
    ['notes', 'shared folder 2'],
    ['asker', 'code folder 1'],
    ['code-review', 'bundled'],
  ])('%s: `source` is "%s" over REST and GraphQL, never a path', async (name, source) => {
    const rest = await send('GET', `/v1/skills/${name}`, as('ann'));
    expect(rest.body.source).toBe(source);
    expectNoLeak(rest.text);
    const gql = await graphql('ann', 'query($name: String!) { skill(name: $name) { source warnings } }', { name });
    expect(gql.body.data.skill.source).toBe(source);
  });

  it(
    "a personal skill that loses a clash: the warning names the winner's source kind; its own source " +
      'is `personal`',
    async () => {
      const archive = await zipOf({ 'pdf/SKILL.md': skillMd({ name: 'pdf', description: 'My own PDF skill.' }) });
      const installed = await send(
        'POST',
        '/v1/skills',
        as('ann', { body: archive.body, contentType: archive.contentType }),
      );
      expect(installed.status).toBe(201);
      expect(installed.body.warnings).toEqual([
        expect.stringMatching(/^A skill named 'pdf' from shared folder 1 wins over this one/),
      ]);
      expectNoLeak(installed.text);
      const diary = await zipOf({ 'diary/SKILL.md': skillMd({ name: 'diary', description: 'Mine.' }) });
      expect(
        (await send('POST', '/v1/skills', as('ann', { body: diary.body, contentType: diary.contentType }))).status,
      ).toBe(201);
      expect((await send('GET', '/v1/skills/diary', as('ann'))).body.source).toBe('personal');
    },
  );

  it('no catalogue a member or the model is shown carries a path, though include_location is on', async () => {
    const catalogue = await send('GET', '/v1/skills-catalogue?format=xml', as('ann'));
    expect(catalogue.text).toContain('<name>pdf</name>');
    expectNoLeak(catalogue.text);
    expectNoLeak((await send('GET', '/v1/skills-catalogue?format=json&query=pdf', as('ann'))).text);
    expectNoLeak(JSON.stringify((await graphql('ann', '{ catalogue }')).body));
    const chat = await newChat('ann');
    expectNoLeak((await send('GET', `/v1/chats/${chat}/context`, as('ann'))).text);
    model.play({ text: 'Hello.' });
    expect((await send('POST', `/v1/chats/${chat}/messages`, as('ann', { json: { content: 'hello' } }))).status).toBe(
      201,
    );
    const prompt = ScriptedModelServer.systemPrompt(model.requests[0]);
    expect(prompt).toContain('<name>pdf</name>');
    expect(prompt).not.toContain(tree.root);
  });

  it('the admin report keeps the paths and the collisions by folder', async () => {
    const report = await send('GET', '/v1/admin/skills', as('root'));
    expect(report.body.collisions).toContainEqual({
      name: 'pdf',
      winner: { path: tree.path('first/pdf'), source: tree.path('first') },
      loser: { path: tree.path('second/pdf'), source: tree.path('second') },
    });
    expect((await send('GET', '/v1/admin/skills', as('ann'))).status).toBe(403);
  });
});

/** Waits (up to 5 s) until `check` holds. */
async function waitFor(check: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('the condition did not hold within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
