import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { getIntrospectionQuery } from 'graphql';
import { LOCAL_PRINCIPAL } from '../../src/domain/users/principal.js';
import { ChatRepository } from '../../src/infra/database/chat.repository.js';
import { useChatSkillsTree, writeSkill } from '../support/files/skill-tree.js';
import { gql } from './documents.js';
import { failure, startGraphqlApp, type GraphqlTestContext } from './graphql-test-app.js';
import type { WireJson } from '../support/wire-json.js';

interface RestAnswer {
  status: number;
  body: WireJson;
  text: string;
}

const chatSkills = useChatSkillsTree();
/** A chat's activation records the version it activated. */
const PDF_VERSION = expect.stringMatching(/^sha256:[0-9a-f]{64}$/);

/** The REST twin's answer, JSON-decoded when it is JSON. */
async function rest(ctx: GraphqlTestContext, method: string, path: string, body?: unknown): Promise<RestAnswer> {
  const response = await fetch(`${ctx.baseUrl}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text,
    text,
  };
}

/** Raw POST /graphql, for what a GraphQL client would not send. */
async function postRaw(ctx: GraphqlTestContext, body: string, contentType = 'application/json'): Promise<RestAnswer> {
  const response = await fetch(`${ctx.baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body,
  });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text), text };
}

/** The field names and value types of a JSON value, recursively: two answers of the same shape map to the same. */
function shapeOf(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shapeOf);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .map(([key, inner]) => [key, shapeOf(inner)])
        .sort(),
    );
  return value === null ? 'null' : typeof value;
}

describe('GraphQL API (auth off: every call is the admin local)', () => {
  let ctx: GraphqlTestContext;
  const request = <T = WireJson>(document: string, variables?: Record<string, unknown>) =>
    ctx.client().request<T>(gql(document), variables);
  const newChat = async (title = 't') =>
    (
      await request<{ createChat: { id: string } }>('mutation($title: String) { createChat(title: $title) { id } }', {
        title,
      })
    ).createChat.id;

  beforeAll(async () => {
    ctx = await startGraphqlApp([chatSkills().path('skills')]);
  });
  afterAll(async () => ctx?.close());

  it('me: the caller, as GET /v1/me answers', async () => {
    const { me } = await request('{ me { id name role disabled createdAt authMode keyId } }');
    expect(me).toEqual((await rest(ctx, 'GET', '/v1/me')).body);
    expect(me).toMatchObject({ name: 'local', role: 'admin', authMode: 'none', keyId: null });
  });

  it('skills, skill (with its files), skillResource and catalogue answer what their REST twins answer', async () => {
    const data = await request(`{
      skills { count scannedAt explicitPrefixes skills { name description frontmatter } }
      skill(name: "pdf") { name description frontmatter source warnings resources { files { path size } truncated } }
      skillResource(name: "pdf", path: "references/forms.md") { name path content truncated }
      markdown: catalogue(format: "markdown")
      configured: catalogue
    }`);
    expect(data.skills).toEqual((await rest(ctx, 'GET', '/v1/skills')).body);
    expect(data.skills.skills.map((s: { name: string }) => s.name)).toEqual(['git-commit', 'pdf']);
    expect(data.skill).toEqual((await rest(ctx, 'GET', '/v1/skills/pdf')).body);
    expect(data.skill.resources).toEqual({ files: [{ path: 'references/forms.md', size: 12 }], truncated: false });
    expect(data.skillResource).toEqual({
      name: 'pdf',
      path: 'references/forms.md',
      content: 'FORMS-MARKER',
      truncated: false,
    });
    expect(data.markdown).toBe((await rest(ctx, 'GET', '/v1/skills-catalogue?format=markdown')).text);
    expect(data.markdown).toContain('- pdf: Works with PDF files.');
    expect(data.configured).toBe((await rest(ctx, 'GET', '/v1/skills-catalogue')).text);
    expect(JSON.parse(data.configured)).toEqual({
      available_skills: [
        { name: 'git-commit', description: 'Writes commit messages.' },
        { name: 'pdf', description: 'Works with PDF files.' },
      ],
    });
  });

  it.each([
    ['an unknown skill', '{ skill(name: "nope") { name } }', '/v1/skills/nope', 'skill', 'SKILL_NOT_FOUND', 404],
    [
      'a path that leaves the skill',
      '{ skillResource(name: "pdf", path: "../pdf/SKILL.md") { content } }',
      '/v1/skills/pdf/resources/..%2Fpdf%2FSKILL.md',
      'skillResource',
      'RESOURCE_OUTSIDE_SKILL',
      400,
    ],
  ])(
    '%s: the REST code, status, message and details in extensions; HTTP 200, data null',
    async (_, document, restPath, field, code, status) => {
      const answer = await failure(request(document));
      const twin = (await rest(ctx, 'GET', restPath)).body;
      expect(twin.code).toBe(code);
      expect(answer).toEqual({
        status: 200,
        data: null,
        errors: [
          {
            message: twin.message,
            locations: expect.any(Array),
            path: [field],
            extensions: { code, status, ...(twin.details ? { details: twin.details } : {}) },
          },
        ],
      });
    },
  );

  it('chats: create, list (paginated), read and delete, as REST does', async () => {
    const created = (await request('mutation { createChat(title: "first") { id title createdAt updatedAt } }'))
      .createChat;
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      title: 'first',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await request('mutation { createChat { title } }')).createChat).toEqual({ title: null });

    const { chats } = await request(
      '{ chats(limit: 2, offset: 1) { items { id title createdAt updatedAt } total limit offset } }',
    );
    expect(chats).toEqual((await rest(ctx, 'GET', '/v1/chats?limit=2&offset=1')).body);
    expect(chats).toMatchObject({ limit: 2, offset: 1, items: [expect.objectContaining({ id: created.id })] });

    const { chat } = await request(
      'query($id: ID!) { chat(id: $id) { id title createdAt updatedAt activatedSkills { ...ActivationFields } } }',
      { id: created.id },
    );
    expect(chat).toEqual((await rest(ctx, 'GET', `/v1/chats/${created.id}`)).body);

    expect(await request('mutation($id: ID!) { deleteChat(id: $id) }', { id: created.id })).toEqual({
      deleteChat: true,
    });
    expect((await rest(ctx, 'GET', `/v1/chats/${created.id}`)).status).toBe(404);
    const gone = await failure(request('query($id: ID!) { chat(id: $id) { id } }', { id: created.id }));
    expect(gone.errors).toEqual([
      expect.objectContaining({
        message: `Chat '${created.id}' not found.`,
        extensions: { code: 'CHAT_NOT_FOUND', status: 404, details: { id: created.id } },
      }),
    ]);
    const again = await failure(request('mutation($id: ID!) { deleteChat(id: $id) }', { id: created.id }));
    expect(again.errors[0].extensions).toMatchObject({ code: 'CHAT_NOT_FOUND', status: 404 });
    expect((await failure(request('{ chat(id: "not-a-uuid") { id } }'))).errors[0].extensions).toMatchObject({
      code: 'CHAT_NOT_FOUND',
    });
  });

  it(
    'sendMessage runs the turn REST runs and answers its shape; the chat then shows it through activatedSkills ' +
      'and messages',
    async () => {
      const id = await newChat();
      ctx.model.play(
        { toolCalls: [{ name: 'skills_activate', arguments: { name: 'pdf' } }] },
        { text: 'Done with PDF.' },
      );
      const { sendMessage: turn } = await request(
        'mutation($id: ID!) { sendMessage(chatId: $id, content: "fill the form") { ...TurnFields } }',
        { id },
      );
      expect(turn).toEqual({
        userMessage: expect.objectContaining({
          seq: 1,
          role: 'user',
          content: 'fill the form',
          toolCards: [],
          invokedSkill: null,
          model: 'scripted',
        }),
        assistantMessage: expect.objectContaining({
          seq: 2,
          role: 'assistant',
          content: 'Done with PDF.',
          toolCards: [
            expect.objectContaining({
              tool: 'skills.activate',
              args: { name: 'pdf' },
              status: 'ok',
              summary: { skill: 'pdf', truncated: false, version: PDF_VERSION },
              output: expect.stringContaining('PDF-BODY-MARKER'),
            }),
          ],
        }),
        activatedSkills: [expect.objectContaining({ name: 'pdf', how: 'tool', count: 1 })],
        invokedSkill: null,
        invokedSkills: [],
        command: null,
      });
      // The model was offered the tools and saw the result, as in a REST turn.
      expect(ctx.model.requests).toHaveLength(2);
      expect(ctx.model.requests[0].body.tools?.map((t) => t.function.name)).toEqual([
        'skills_activate',
        'skills_readResource',
        'skills_listResources',
      ]);

      const messages = (await rest(ctx, 'GET', `/v1/chats/${id}/messages`)).body;
      expect(messages.items).toEqual([turn.userMessage, turn.assistantMessage]);
      const { chat } = await request(
        'query($id: ID!) { chat(id: $id) { activatedSkills { ...ActivationFields } messages { items { ' +
          '...MessageFields } total limit offset } } }',
        { id },
      );
      expect(chat.activatedSkills).toEqual((await rest(ctx, 'GET', `/v1/chats/${id}`)).body.activatedSkills);
      expect(chat.messages).toEqual(messages);

      // The same turn through REST answers the same fields with the same types.
      ctx.model.play(
        { toolCalls: [{ name: 'skills_activate', arguments: { name: 'pdf' } }] },
        { text: 'Done with PDF.' },
      );
      const restTurn = await rest(ctx, 'POST', `/v1/chats/${id}/messages`, { content: 'fill the form' });
      expect(restTurn.status).toBe(201);
      expect(shapeOf(turn)).toEqual(shapeOf(restTurn.body));
    },
  );

  it('chatContext answers GET /v1/chats/{id}/context, with the tools and without', async () => {
    const id = await newChat();
    await request('mutation($id: ID!) { activateSkill(chatId: $id, name: "git-commit") { toolCard { status } } }', {
      id,
    });
    const document =
      'query($id: ID!, $tools: Boolean) { chatContext(id: $id, tools: $tools) { model systemPrompt catalogue { ' +
      'complete listed unlisted tokens budgetTokens maxSkills } tools { name wireName description inputSchema } ' +
      'activatedSkills activatedVersions { name version currentVersion status } skills { offered filteredOut ' +
      'userFilter { include exclude } chatFilter { include exclude } } commands { name description argumentHint ' +
      'requiredSkills } } }';
    const withTools = (await request(document, { id })).chatContext;
    expect(withTools).toEqual((await rest(ctx, 'GET', `/v1/chats/${id}/context`)).body);
    expect(withTools).toMatchObject({
      model: 'scripted',
      activatedSkills: ['git-commit'],
      tools: [
        expect.objectContaining({ name: 'skills.activate', wireName: 'skills_activate' }),
        expect.objectContaining({ name: 'skills.readResource' }),
        expect.objectContaining({ name: 'skills.listResources' }),
      ],
    });
    const withoutTools = (await request(document, { id, tools: false })).chatContext;
    expect(withoutTools).toEqual((await rest(ctx, 'GET', `/v1/chats/${id}/context?tools=false`)).body);
    expect(withoutTools.tools).toEqual([]);
  });

  it('activateSkill and readSkillResource run the tools as REST does and store their cards', async () => {
    const id = await newChat();
    const { activateSkill } = await request(
      'mutation($id: ID!) { activateSkill(chatId: $id, name: "pdf") { ...ToolRunFields } }',
      { id },
    );
    expect(activateSkill).toEqual({
      toolCard: {
        id: expect.any(String),
        tool: 'skills.activate',
        args: { name: 'pdf' },
        status: 'ok',
        summary: { skill: 'pdf', truncated: false, version: PDF_VERSION },
        output: expect.stringContaining('PDF-BODY-MARKER'),
        durationMs: expect.any(Number),
      },
      activatedSkills: [expect.objectContaining({ name: 'pdf', how: 'tool', count: 1 })],
    });
    const { readSkillResource } = await request(
      'mutation($id: ID!) { readSkillResource(chatId: $id, name: "pdf", path: "references/forms.md") { ' +
        '...ToolRunFields } }',
      { id },
    );
    expect(readSkillResource.toolCard).toMatchObject({
      tool: 'skills.readResource',
      status: 'ok',
      summary: { skill: 'pdf', path: 'references/forms.md', truncated: false },
      output: 'FORMS-MARKER',
    });
    // A tool that fails answers an error card, not an error: the same as REST.
    const { activateSkill: refused } = await request(
      'mutation($id: ID!) { activateSkill(chatId: $id, name: "nope") { ...ToolRunFields } }',
      { id },
    );
    expect(refused.toolCard).toMatchObject({ status: 'error', output: expect.stringContaining('SKILL_NOT_FOUND') });
    const restRun = (await rest(ctx, 'POST', `/v1/chats/${id}/tools/skills.activate`, { name: 'pdf' })).body;
    expect(shapeOf(activateSkill)).toEqual(shapeOf(restRun));

    const stored = (await rest(ctx, 'GET', `/v1/chats/${id}/messages`)).body.items;
    expect(stored.map((m: { role: string; toolCards: unknown[] }) => [m.role, m.toolCards])).toEqual([
      ['tool', [activateSkill.toolCard]],
      ['tool', [readSkillResource.toolCard]],
      ['tool', [refused.toolCard]],
      ['tool', [restRun.toolCard]],
    ]);
  });

  it(
    'listSkillResources and runSkillTool run the same tool definitions as REST, with the same ' + 'argument check',
    async () => {
      const id = await newChat();
      const { listSkillResources } = await request(
        'mutation($id: ID!) { listSkillResources(chatId: $id, name: "pdf", type: "references") { ...ToolRunFields } }',
        { id },
      );
      expect(listSkillResources.toolCard).toMatchObject({
        tool: 'skills.listResources',
        status: 'ok',
        summary: { skill: 'pdf', type: 'references', count: 1 },
        output: expect.stringContaining('- references/forms.md ('),
      });
      const { runSkillTool } = await request(
        'mutation($id: ID!, $args: JSON!) { runSkillTool(chatId: $id, tool: "skills.readResource", arguments: ' +
          '$args) { ...ToolRunFields } }',
        {
          id,
          args: { name: 'pdf', path: 'references/forms.md' },
        },
      );
      expect(runSkillTool.toolCard).toMatchObject({
        tool: 'skills.readResource',
        status: 'ok',
        output: 'FORMS-MARKER',
      });
      const restRun = (
        await rest(ctx, 'POST', `/v1/chats/${id}/tools/skills.listResources`, { name: 'pdf', type: 'references' })
      ).body;
      expect(shapeOf(listSkillResources)).toEqual(shapeOf(restRun));

      const badType = await failure(
        request(
          'mutation($id: ID!) { listSkillResources(chatId: $id, name: "pdf", type: "videos") { toolCard { id } } }',
          { id },
        ),
      );
      const restBad = (
        await rest(ctx, 'POST', `/v1/chats/${id}/tools/skills.listResources`, { name: 'pdf', type: 'videos' })
      ).body;
      expect(badType.errors[0]).toMatchObject({
        message: restBad.message,
        extensions: { code: 'VALIDATION_FAILED', status: 400, details: restBad.details },
      });
      const unknown = await failure(
        request(
          'mutation($id: ID!) { runSkillTool(chatId: $id, tool: "load_skill", arguments: {name: "pdf"}) { ' +
            'toolCard { id } } }',
          { id },
        ),
      );
      expect(unknown.errors[0].extensions).toMatchObject({ code: 'TOOL_NOT_FOUND', status: 404 });
    },
  );

  describe('validation: the REST rules, VALIDATION_FAILED with every problem in extensions.details.problems', () => {
    it.each([
      [
        'a title over 200 characters',
        `mutation { createChat(title: "${'x'.repeat(201)}") { id } }`,
        ['createChat'],
        ['title: title must be shorter than or equal to 200 characters'],
      ],
      [
        'a page out of range',
        '{ chats(limit: 500, offset: -1) { total } }',
        ['chats'],
        ['limit: limit must not be greater than 200', 'offset: offset must not be less than 0'],
      ],
      [
        'a nested page out of range',
        '{ chats(limit: 1) { items { messages(limit: 0) { total } } } }',
        ['chats', 'items', '0', 'messages'],
        ['limit: limit must not be less than 1'],
      ],
      [
        'an unknown catalogue format',
        '{ catalogue(format: "yaml") }',
        ['catalogue'],
        ['format: format must be one of json, xml, markdown'],
      ],
      ['an empty skill name', '{ skill(name: "") { name } }', ['skill'], ['name: name should not be empty']],
    ])('%s', async (_, document, path, problems) => {
      await newChat();
      const answer = await failure(request(document));
      expect(answer.status).toBe(200);
      expect(answer.errors).toEqual([
        {
          message: `Invalid request: ${problems.join('; ')}`,
          locations: expect.any(Array),
          path,
          extensions: { code: 'VALIDATION_FAILED', status: 400, details: { problems } },
        },
      ]);
    });

    it('an empty message stores nothing and never reaches the model', async () => {
      const id = await newChat();
      ctx.model.play({ text: 'never' });
      const answer = await failure(
        request('mutation($id: ID!) { sendMessage(chatId: $id, content: "") { invokedSkill } }', { id }),
      );
      expect(answer.errors[0].extensions).toEqual({
        code: 'VALIDATION_FAILED',
        status: 400,
        details: { problems: ['content: content must be longer than or equal to 1 characters'] },
      });
      expect(ctx.model.requests).toHaveLength(0);
      expect((await rest(ctx, 'GET', `/v1/chats/${id}/messages`)).body.total).toBe(0);
    });

    it(
      'a document GraphQL itself refuses answers HTTP 400, each error VALIDATION_FAILED with its ' + 'problem',
      async () => {
        const answer = await failure(request('{ nope chat { id } }'));
        const problems = [
          'Cannot query field "nope" on type "Query".',
          'Field "chat" argument "id" of type "ID!" is required, but it was not provided.',
        ];
        expect(answer).toEqual({
          status: 400,
          data: null,
          errors: problems.map((message) => ({
            message,
            locations: expect.any(Array),
            extensions: { code: 'VALIDATION_FAILED', status: 400, details: { problems: [message] } },
          })),
        });
      },
    );

    it('variables of the wrong type answer 400 VALIDATION_FAILED', async () => {
      const answer = await failure(request('query($limit: Int) { chats(limit: $limit) { total } }', { limit: 'ten' }));
      const message = 'Variable "$limit" got invalid value "ten"; Int cannot represent non-integer value: "ten"';
      expect(answer).toEqual({
        status: 400,
        data: null,
        errors: [
          {
            message,
            locations: expect.any(Array),
            extensions: { code: 'VALIDATION_FAILED', status: 400, details: { problems: [message] } },
          },
        ],
      });
    });

    it('malformed JSON, a body over 1 MiB and a mutation over GET are refused with a code too', async () => {
      const malformed = await postRaw(ctx, '{"query":');
      expect(malformed.status).toBe(400);
      expect(malformed.body.errors).toEqual([
        expect.objectContaining({ extensions: expect.objectContaining({ code: 'VALIDATION_FAILED', status: 400 }) }),
      ]);
      const big = await postRaw(
        ctx,
        JSON.stringify({ query: `mutation { createChat(title: "${'x'.repeat(1_100_000)}") { id } }` }),
      );
      expect(big).toMatchObject({
        status: 413,
        body: {
          data: null,
          errors: [{ message: expect.any(String), extensions: { code: 'PAYLOAD_TOO_LARGE', status: 413 } }],
        },
      });
      const unknownOperation = await postRaw(
        ctx,
        JSON.stringify({ query: 'query A { me { id } }', operationName: 'B' }),
      );
      expect(unknownOperation.status).toBe(400);
      expect(unknownOperation.body.errors).toEqual([
        expect.objectContaining({
          message: 'Unknown operation named "B".',
          extensions: expect.objectContaining({ code: 'VALIDATION_FAILED' }),
        }),
      ]);
      const viaGet = await fetch(
        `${ctx.baseUrl}/graphql?query=${encodeURIComponent('mutation { createChat { id } }')}`,
      );
      expect(viaGet.status).toBe(400);
      expect(((await viaGet.json()) as { errors: unknown }).errors).toEqual([
        {
          message: 'Operation cannot be performed via a GET request',
          extensions: {
            code: 'VALIDATION_FAILED',
            status: 400,
            details: { problems: ['Operation cannot be performed via a GET request'] },
          },
        },
      ]);
    });
  });

  it('queries also work over GET', async () => {
    const response = await fetch(`${ctx.baseUrl}/graphql?query=${encodeURIComponent('{ me { name } }')}`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { me: { name: 'local' } } });
  });

  it('introspection is on (the standard query passes the complexity limits); GraphiQL is off', async () => {
    const introspection = await ctx
      .client()
      .request<{ __schema: { types: { name: string }[] } }>(getIntrospectionQuery());
    expect(introspection.__schema.types.map((t) => t.name)).toEqual(
      expect.arrayContaining(['Chat', 'ChatEvent', 'JSON', 'DateTime']),
    );
    for (const path of ['/graphiql', '/graphiql.html']) expect((await fetch(`${ctx.baseUrl}${path}`)).status).toBe(404);
  });

  it(
    'nested activatedSkills and messages of many chats cost one query per field and page window, not one per chat ' +
      '(DataLoader)',
    async () => {
      const ids = [await newChat('a'), await newChat('b'), await newChat('c')];
      for (const id of ids) await rest(ctx, 'POST', `/v1/chats/${id}/tools/skills.activate`, { name: 'pdf' });
      await rest(ctx, 'POST', `/v1/chats/${ids[1]}/tools/skills.activate`, { name: 'git-commit' });
      const repository = ctx.app.get(ChatRepository);
      const activated = jest.spyOn(repository, 'activatedSkills');
      const pages = jest.spyOn(repository, 'messagePages');
      try {
        const { chats } = await request(
          `{ chats(limit: 3) {
        items { id activatedSkills { name } first: messages(limit: 1) { total items { seq role toolCards { tool ` +
            `summary } } } all: messages { total } }
      } }`,
        );
        expect(activated).toHaveBeenCalledTimes(1);
        expect([...activated.mock.calls[0][0]].sort()).toEqual([...ids].sort());
        expect(pages).toHaveBeenCalledTimes(2);
        expect(
          pages.mock.calls.map(([chatIds, owner, limit, offset]) => [[...chatIds].sort(), owner, limit, offset]),
        ).toEqual(
          expect.arrayContaining([
            [[...ids].sort(), LOCAL_PRINCIPAL.userId, 1, 0],
            [[...ids].sort(), LOCAL_PRINCIPAL.userId, 50, 0],
          ]),
        );
        // Each chat got its own rows back.
        const byId = new Map(chats.items.map((chat: { id: string }) => [chat.id, chat]));
        expect(ids.map((id) => byId.get(id))).toEqual([
          {
            id: ids[0],
            activatedSkills: [{ name: 'pdf' }],
            first: {
              total: 1,
              items: [
                {
                  seq: 1,
                  role: 'tool',
                  toolCards: [
                    { tool: 'skills.activate', summary: { skill: 'pdf', truncated: false, version: PDF_VERSION } },
                  ],
                },
              ],
            },
            all: { total: 1 },
          },
          {
            id: ids[1],
            activatedSkills: [{ name: 'pdf' }, { name: 'git-commit' }],
            first: {
              total: 2,
              items: [
                {
                  seq: 1,
                  role: 'tool',
                  toolCards: [
                    { tool: 'skills.activate', summary: { skill: 'pdf', truncated: false, version: PDF_VERSION } },
                  ],
                },
              ],
            },
            all: { total: 2 },
          },
          {
            id: ids[2],
            activatedSkills: [{ name: 'pdf' }],
            first: {
              total: 1,
              items: [
                {
                  seq: 1,
                  role: 'tool',
                  toolCards: [
                    { tool: 'skills.activate', summary: { skill: 'pdf', truncated: false, version: PDF_VERSION } },
                  ],
                },
              ],
            },
            all: { total: 1 },
          },
        ]);
      } finally {
        activated.mockRestore();
        pages.mockRestore();
      }
    },
  );

  it('a page past the end still knows the total', async () => {
    const id = await newChat();
    await rest(ctx, 'POST', `/v1/chats/${id}/tools/skills.activate`, { name: 'pdf' });
    const { chat } = await request(
      'query($id: ID!) { chat(id: $id) { messages(limit: 5, offset: 3) { items { id } total limit offset } } }',
      { id },
    );
    expect(chat.messages).toEqual({ items: [], total: 1, limit: 5, offset: 3 });
    expect(chat.messages).toEqual((await rest(ctx, 'GET', `/v1/chats/${id}/messages?limit=5&offset=3`)).body);
  });

  it('reloadSkills rescans and answers the report GET /v1/admin/skills then shows', async () => {
    writeSkill(chatSkills(), 'skills', 'zeta', { description: 'Arrives late.' });
    try {
      const { reloadSkills } = await request(
        `mutation { reloadSkills {
        scannedAt durationMs mode directories { configured path exists skills invalid } valid { name path source ` +
          `warnings kind origin scope digest store { scope owner version } }
        invalid { path source name errors warnings } collisions { name winner { path source } loser { path source } ` +
          `} excluded { name path }
        unavailable { name path source missingTools reason } disabled { name path source } personal { name path ` +
          `source warnings kind origin scope digest store { scope owner version } } warnings
        commands { directories { configured path exists commands invalid } valid { name path source warnings } ` +
          `invalid { path source name errors }
          collisions { name kind winner { path source } loser { path source } } warnings }
      } }`,
      );
      expect(reloadSkills).toEqual((await rest(ctx, 'GET', '/v1/admin/skills')).body);
      expect(reloadSkills.valid.map((s: { name: string }) => s.name)).toEqual(['git-commit', 'pdf', 'zeta']);
      expect((await request('{ skills { count } }')).skills.count).toBe(3);
    } finally {
      rmSync(chatSkills().path('skills', 'zeta'), { recursive: true, force: true });
      await rest(ctx, 'POST', '/v1/admin/skills/reload');
    }
  });
});

describe.each([
  [
    'skills',
    { 'app.skills.enabled': false },
    'SKILLS_DISABLED',
    'Skills are disabled on this server (app.skills.enabled = false).',
  ],
  [
    'tools',
    { 'app.tools.enabled': false },
    'TOOLS_DISABLED',
    'Skill tools are disabled on this server (app.tools.enabled = false).',
  ],
])('GraphQL with %s switched off', (feature, overrides, code, message) => {
  let ctx: GraphqlTestContext;
  beforeAll(async () => {
    ctx = await startGraphqlApp([chatSkills().path('skills')], overrides);
  });
  afterAll(async () => ctx?.close());

  it(`the operations that need them answer ${code} (404), as REST does; chats still work`, async () => {
    const { createChat } = await ctx.client().request<{ createChat: { id: string } }>('mutation { createChat { id } }');
    const refused = await failure(
      ctx.client().request('mutation($id: ID!) { activateSkill(chatId: $id, name: "pdf") { toolCard { status } } }', {
        id: createChat.id,
      }),
    );
    expect(refused.errors).toEqual([
      { message, locations: expect.any(Array), path: ['activateSkill'], extensions: { code, status: 404 } },
    ]);
    expect((await rest(ctx, 'POST', `/v1/chats/${createChat.id}/tools/skills.activate`, { name: 'pdf' })).body).toEqual(
      { code, message },
    );
    const skills = ctx.client().request('{ skills { count } }');
    if (feature === 'skills')
      expect((await failure(skills)).errors[0]).toMatchObject({ message, extensions: { code, status: 404 } });
    else expect(await skills).toEqual({ skills: { count: 2 } });
  });
});
