import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { rmSync, writeFileSync } from 'node:fs';
import request from 'supertest';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { type RecordedRequest } from '../support/scripted-model-server.js';
import { useSkillTree, writeSkill } from '../support/files/skill-tree.js';
import { storedState } from './http-client.js';

/**
 * What a hostile client, a careless operator or a broken model does to the conversation features:
 * the tool route `POST /v1/chats/:id/tools/:tool` and its GraphQL twins, tool calls from the
 * model, commands (`/name args`) and several explicit skills in one message. Every answer is
 * asserted by its body (code and message, or the tool card), a 500 or a hang is a bug, and
 * refusals store nothing.
 */
const tree = useSkillTree((t) => {
  writeSkill(t, 'skills', 'pdf', { description: 'Works with PDF files.', body: '# PDF\n\nPDF-BODY-MARKER steps.\n' });
  t.write('skills/pdf/references/forms.md', 'FORMS-MARKER');
  writeSkill(t, 'skills', 'git-commit', { description: 'Writes commit messages.', body: 'GIT-BODY-MARKER' });
  for (const letter of ['a', 'b', 'c', 'd', 'e', 'f'])
    writeSkill(t, 'skills', letter, { description: `Skill ${letter}.`, body: `${letter.toUpperCase()}-BODY` });
  // 26,000 × `$ARGUMENTS` (260,000 bytes, under the 256 KiB file cap): a one-line message would expand to gigabytes.
  t.write('commands/bomb.md', `---\ndescription: Repeats its arguments.\n---\n${'$ARGUMENTS'.repeat(26_000)}\n`);
  t.write('commands/nine.md', `---\ndescription: Repeats every word.\n---\n${'$1$2$3$4$5$6$7$8$9'.repeat(14_000)}\n`);
  // A command named like a skill.
  t.write('commands/pdf.md', '---\ndescription: The pdf command.\n---\nPDF-COMMAND: $ARGUMENTS\n');
  // Changed or removed between the scan and a turn (the last describe).
  writeSkill(t, 'volatile-skills', 'gone', { description: 'Removed after the scan.', body: 'GONE-BODY' });
  t.write(
    'volatile-commands/vanish.md',
    '---\ndescription: Removed after the scan.\nrequires-skills: [gone]\n---\nVANISH: $ARGUMENTS\n',
  );
  t.write('volatile-commands/change.md', '---\ndescription: Changed after the scan.\n---\nBEFORE: $1\n');
});

const NUL = 'a\u0000b';
const LONE = 'a\ud800b';
const SKILLHOST_TOOLS = ['skills.activate', 'skills.readResource', 'skills.listResources'];
const ALL_SKILLS = 'a, b, c, d, e, f, git-commit, pdf';
const NOT_AN_OBJECT = 'Arguments must be a JSON object like {"name": "<skill>"}.';
const COMMAND_TOO_LONG = (name: string) =>
  `content: the command /${name} with these arguments expands to more than 500000 characters (its template ` +
  `repeats $ARGUMENTS or $1…$9); send shorter arguments`;

/** The tool results the model was sent in a request (OpenAI shape: `tool` messages). */
const toolResults = (sent: RecordedRequest | undefined) =>
  (sent?.body.messages ?? []).filter((m) => m.role === 'tool').map((m) => m.content);
const lastUserText = (sent: RecordedRequest | undefined) =>
  (sent?.body.messages ?? []).filter((m) => m.role === 'user').at(-1)?.content;
const cardsOf = (turn: { assistantMessage: { toolCards: { tool: string; args: unknown; status: string }[] } }) =>
  turn.assistantMessage.toolCards.map((c) => [c.tool, c.args, c.status]);

function toolNotFound(name: string, style = 'skillhost', available = SKILLHOST_TOOLS) {
  return {
    code: 'TOOL_NOT_FOUND',
    message:
      `Tool '${name}' is not offered in the '${style}' tool style (app.tools.style). Available: ` +
      `${available.join(', ')}.`,
    details: { name, available },
  };
}

function invalidArguments(tool: string, problems: string[], example = '{"name": "<skill>"}') {
  return {
    code: 'VALIDATION_FAILED',
    message: `Invalid arguments for ${tool}: ${problems.join('; ')}. Expected ${example}.`,
    details: { problems },
  };
}

describe('the conversation features, attacked (skillhost style, "/" only, with commands)', () => {
  let ctx: ChatTestContext;
  let chat: string;
  const http = () => request(ctx.app.getHttpServer());
  const newChat = async () => (await http().post('/v1/chats').send({}).expect(201)).body.id as string;
  const runTool = (tool: string, body?: unknown) => {
    const call = http().post(`/v1/chats/${chat}/tools/${tool}`);
    return body === undefined
      ? call
      : call.set('content-type', 'application/json').send(typeof body === 'string' ? body : JSON.stringify(body));
  };
  const graphql = async (query: string, variables: Record<string, unknown> = {}) =>
    (await http().post('/graphql').send({ query, variables })).body;
  const CARD_FIELDS = '{ toolCard { tool status args output summary } activatedSkills { name how } }';

  beforeAll(async () => {
    ctx = await startChatApp([tree().path('skills')], { 'app.commands.directories': [tree().path('commands')] });
    chat = await newChat();
  });
  afterAll(async () => ctx?.close());

  describe('POST /v1/chats/:id/tools/:tool refusals store nothing and call no model', () => {
    let before: Record<string, number>;
    beforeEach(async () => {
      ctx.model.play();
      before = await storedState(ctx.db.url);
    });
    const expectNothingStored = async () => {
      expect(await storedState(ctx.db.url)).toEqual(before);
      expect(ctx.model.requests).toHaveLength(0);
    };

    it.each([
      ['__proto__', '__proto__'],
      ['constructor', 'constructor'],
      ['toString', 'toString'],
      ['hasOwnProperty', 'hasOwnProperty'],
      ['%00', '\u0000'],
      ['skills.activate%00', 'skills.activate\u0000'],
      ['skills.activate%2Fextra', 'skills.activate/extra'],
      ['SKILLS.ACTIVATE', 'SKILLS.ACTIVATE'],
      ['skills_activate', 'skills_activate'],
      ['%E2%80%8Bskills.activate', '\u200bskills.activate'],
      ['activate_skill', 'activate_skill'],
      ['load_skill', 'load_skill'],
      ['use_skill', 'use_skill'],
      ['%F0%9F%98%80', '😀'],
      ['x'.repeat(100), 'x'.repeat(100)],
    ])('tool %j → 404 TOOL_NOT_FOUND naming the style and its tools', async (segment, name) => {
      const answer = await runTool(segment, { name: 'pdf' }).expect(404);
      expect(answer.body).toEqual(toolNotFound(name));
      await expectNothingStored();
    });

    it('a percent-encoded dot (skills%2Eactivate) is the same tool and runs', async () => {
      const answer = await runTool('skills%2Eactivate', { name: 'pdf' }).expect(200);
      expect(answer.body.toolCard).toMatchObject({
        tool: 'skills.activate',
        status: 'ok',
        output: expect.stringContaining('PDF-BODY-MARKER'),
      });
      // It ran, so something was stored: leave the counts as they are now for the hook.
      before = await storedState(ctx.db.url);
    });

    it('skills.activate/extra (a deeper path) → 404 ROUTE_NOT_FOUND', async () => {
      const answer = await http()
        .post(`/v1/chats/${chat}/tools/skills.activate/extra`)
        .send({ name: 'pdf' })
        .expect(404);
      expect(answer.body).toEqual({
        code: 'ROUTE_NOT_FOUND',
        message: `Cannot POST /v1/chats/${chat}/tools/skills.activate/extra`,
      });
      await expectNothingStored();
    });

    const UNROUTABLE = [
      [
        'a 101-character name',
        'x'.repeat(101),
        /^Invalid request: '\/v1\/chats\/[0-9a-f-]{36}\/tools\/x{101}' is exceeding the max param length$/,
      ],
      ['a 5,000-character name', 'x'.repeat(5000), /is exceeding the max param length$/],
      [
        'a lone surrogate, percent-encoded',
        '%ED%A0%80',
        /^Invalid request: '.*\/tools\/%ED%A0%80' is not a valid url component$/,
      ],
      ['bytes that are not UTF-8', '%FF', /is not a valid url component$/],
    ] as const;
    it.each(UNROUTABLE)('%s as the tool → 400 VALIDATION_FAILED saying why', async (_label, segment, message) => {
      const answer = await runTool(segment, { name: 'pdf' }).expect(400);
      expect(answer.body).toMatchObject({ code: 'VALIDATION_FAILED', message: expect.stringMatching(message) });
      await expectNothingStored();
    });

    it.each(UNROUTABLE)('%s as the tool → details.problems lists the problem', async (_label, segment, _message) => {
      const answer = await runTool(segment, { name: 'pdf' });
      expect(answer.body.details).toEqual({ problems: [expect.any(String)] });
    });

    it.each([
      ['an empty array', '[]'],
      ['an array holding the right object', '[{"name":"pdf"}]'],
      ['null', 'null'],
      ['a string', '"pdf"'],
      ['a number', '42'],
      ['true', 'true'],
    ])('arguments that are %s → 400 asking for a JSON object', async (_label, body) => {
      const answer = await runTool('skills.activate', body).expect(400);
      expect(answer.body).toEqual({
        code: 'VALIDATION_FAILED',
        message: NOT_AN_OBJECT,
        details: { problems: [NOT_AN_OBJECT] },
      });
      await expectNothingStored();
    });

    it('no body at all → 400 asking for a JSON object', async () => {
      const answer = await runTool('skills.activate').expect(400);
      expect(answer.body).toEqual({
        code: 'VALIDATION_FAILED',
        message: NOT_AN_OBJECT,
        details: { problems: [NOT_AN_OBJECT] },
      });
      await expectNothingStored();
    });

    it.each([
      ['{}', {}, ["'name' must be a non-empty string"]],
      ['a name of spaces', { name: '   ' }, ["'name' must be a non-empty string"]],
      ['a number for the name', { name: 5 }, ["'name' must be a non-empty string"]],
      [
        'a name nested 60 deep',
        JSON.parse(`{"name":${'{"a":'.repeat(59)}1${'}'.repeat(59)}}`),
        ["'name' must be a non-empty string"],
      ],
      ['an extra key', { name: 'pdf', x: 1 }, ['unknown argument(s): x']],
      ['a plain constructor key', { name: 'pdf', constructor: 1 }, ['unknown argument(s): constructor']],
      [
        'a 1,000,000-character name (under 1 MiB)',
        { name: 'x'.repeat(1_000_000) },
        ["'name' must be at most 200 characters"],
      ],
    ])('skills.activate with %s → 400 with the sentence the model would read', async (_label, body, problems) => {
      const answer = await runTool('skills.activate', body).expect(400);
      expect(answer.body).toEqual(invalidArguments('skills.activate', problems));
      await expectNothingStored();
    });

    it.each([
      ['a __proto__ key', '{"name":"pdf","__proto__":{"name":"git-commit"}}'],
      ['a constructor.prototype key', '{"name":"pdf","constructor":{"prototype":{"name":"git-commit"}}}'],
    ])('%s → 400 forbidden key, before any tool runs', async (_label, body) => {
      const answer = await runTool('skills.activate', body).expect(400);
      const message = 'The body uses a forbidden key (`__proto__`, or `constructor` with a `prototype`).';
      expect(answer.body).toEqual({ code: 'VALIDATION_FAILED', message, details: { problems: [message] } });
      await expectNothingStored();
    });

    it('a 1 MiB string → 413 PAYLOAD_TOO_LARGE', async () => {
      const answer = await runTool('skills.readResource', { name: 'pdf', path: 'p'.repeat(1024 * 1024) }).expect(413);
      expect(answer.body).toEqual({ code: 'PAYLOAD_TOO_LARGE', message: 'Request body is too large' });
      await expectNothingStored();
    });

    const FIELDS: [string, Record<string, unknown>, string][] = [
      ['skills.activate', { name: 'pdf' }, 'name'],
      ['skills.readResource', { name: 'pdf', path: 'references/forms.md' }, 'name'],
      ['skills.readResource', { name: 'pdf', path: 'references/forms.md' }, 'path'],
      ['skills.listResources', { name: 'pdf', type: 'references' }, 'name'],
      ['skills.listResources', { name: 'pdf', type: 'references' }, 'type'],
    ];
    const SPOILED = FIELDS.flatMap(([tool, valid, field]) =>
      [
        [tool, field, 'NUL', NUL, 'contains a NUL character (U+0000), which cannot be stored; remove it'] as const,
        [
          tool,
          field,
          'an unpaired surrogate',
          LONE,
          'contains an unpaired UTF-16 surrogate (not valid Unicode text); send well-formed text',
        ] as const,
      ].map((row) => [...row, valid] as const),
    )
      // NUL in a resource path is the path check's to refuse: see the next test.
      .filter(([tool, field, kind]) => !(tool === 'skills.readResource' && field === 'path' && kind === 'NUL'));
    it.each(SPOILED)(
      '%s with %s holding %s → 400 naming the field',
      async (tool, field, _kind, value, problem, valid) => {
        const answer = await runTool(tool, { ...valid, [field]: value }).expect(400);
        expect(answer.body).toEqual({
          code: 'VALIDATION_FAILED',
          message: `Invalid request: ${field}: ${problem}`,
          details: { problems: [`${field}: ${problem}`] },
        });
        await expectNothingStored();
      },
    );

    it.each([
      ['an array', 'path[0]', ['a\u0000']],
      ['an object', 'path.a', { a: 'x\u0000' }],
    ])('NUL inside %s given as the path is not the path exception → 400 naming %s', async (_label, where, path) => {
      const answer = await runTool('skills.readResource', { name: 'pdf', path }).expect(400);
      expect(answer.body.details.problems).toEqual([
        `${where}: contains a NUL character (U+0000), which cannot be stored; remove it`,
      ]);
      await expectNothingStored();
    });
  });

  describe('tool calls that run and fail are error cards, stored', () => {
    it.each(['__proto__', 'constructor', 'toString'])(
      'skills.activate {name: %j} → SKILL_NOT_FOUND naming the skills; nothing activated',
      async (name) => {
        const id = await newChat();
        const { body } = await http().post(`/v1/chats/${id}/tools/skills.activate`).send({ name }).expect(200);
        expect(body).toEqual({
          toolCard: {
            id: expect.any(String),
            tool: 'skills.activate',
            args: { name },
            status: 'error',
            summary: { skill: name, truncated: false },
            output: `Error (SKILL_NOT_FOUND): Skill '${name}' not found. Available: ${ALL_SKILLS}`,
            durationMs: expect.any(Number),
          },
          activatedSkills: [],
        });
      },
    );

    it.each(['references/forms.md\u0000', '\u0000', '\u0000../../../etc/passwd'])(
      'skills.readResource with NUL in the path (%j) → an error card RESOURCE_OUTSIDE_SKILL, stored with U+FFFD',
      async (path) => {
        const id = await newChat();
        const { body } = await http()
          .post(`/v1/chats/${id}/tools/skills.readResource`)
          .send({ name: 'pdf', path })
          .expect(200);
        expect(body.toolCard).toMatchObject({
          tool: 'skills.readResource',
          status: 'error',
          output: 'Error (RESOURCE_OUTSIDE_SKILL): Resource path must not contain NUL bytes.',
        });
        const stored = (await http().get(`/v1/chats/${id}/messages`).expect(200)).body.items;
        expect(stored).toEqual([
          expect.objectContaining({
            role: 'tool',
            toolCards: [
              expect.objectContaining({
                id: body.toolCard.id,
                args: { name: 'pdf', path: path.replaceAll('\u0000', '\uFFFD') },
              }),
            ],
          }),
        ]);
      },
    );

    it('skills.readResource with NUL in the path answers the card exactly as stored', async () => {
      const id = await newChat();
      const { body } = await http()
        .post(`/v1/chats/${id}/tools/skills.readResource`)
        .send({ name: 'pdf', path: 'x\u0000' })
        .expect(200);
      const stored = (await http().get(`/v1/chats/${id}/messages`).expect(200)).body.items[0].toolCards[0];
      expect(body.toolCard).toEqual(stored);
    });
  });

  describe('GraphQL: activateSkill, readSkillResource, listSkillResources, runSkillTool', () => {
    it('runSkillTool with a tool named __proto__ → TOOL_NOT_FOUND, as REST', async () => {
      const { data, errors } = await graphql(
        `mutation($id: ID!) { runSkillTool(chatId: $id, tool: "__proto__", arguments: {}) ${CARD_FIELDS} }`,
        { id: chat },
      );
      expect(data).toBeNull();
      expect(errors).toEqual([
        expect.objectContaining({
          message: toolNotFound('__proto__').message,
          extensions: { code: 'TOOL_NOT_FOUND', status: 404, details: toolNotFound('__proto__').details },
        }),
      ]);
    });

    it.each([
      ['a list', '[1, 2]', NOT_AN_OBJECT, [NOT_AN_OBJECT]],
      ['a string', '"pdf"', NOT_AN_OBJECT, [NOT_AN_OBJECT]],
      [
        'an object nested 60 deep',
        `${'{a: '.repeat(60)}1${'}'.repeat(60)}`,
        invalidArguments('skills.activate', ["'name' must be a non-empty string", 'unknown argument(s): a']).message,
        ["'name' must be a non-empty string", 'unknown argument(s): a'],
      ],
      ['an enum value for the name', '{name: PDF}', undefined, undefined],
    ])(
      'runSkillTool with arguments that are %s → VALIDATION_FAILED as REST, or an error card',
      async (_label, literal, message, problems) => {
        const { data, errors } = await graphql(
          `mutation($id: ID!) { runSkillTool(chatId: $id, tool: "skills.activate", arguments: ${literal}) ` +
            `${CARD_FIELDS} }`,
          { id: chat },
        );
        if (message === undefined) {
          // A GraphQL enum literal is its name as a string: a skill that does not exist.
          expect(data.runSkillTool.toolCard).toMatchObject({
            status: 'error',
            args: { name: 'PDF' },
            output: `Error (SKILL_NOT_FOUND): Skill 'PDF' not found. Available: ${ALL_SKILLS}`,
          });
          return;
        }
        expect(errors).toEqual([
          expect.objectContaining({
            message,
            extensions: { code: 'VALIDATION_FAILED', status: 400, details: { problems } },
          }),
        ]);
      },
    );

    it(
      "runSkillTool with a lone surrogate in a variable → VALIDATION_FAILED naming the tool's " + 'argument, as REST',
      async () => {
        const { errors } = await graphql(
          `mutation($id: ID!, $a: JSON!) { runSkillTool(chatId: $id, tool: "skills.activate", arguments: $a) ` +
            `${CARD_FIELDS} }`,
          { id: chat, a: { name: LONE } },
        );
        expect(errors[0].extensions).toEqual({
          code: 'VALIDATION_FAILED',
          status: 400,
          details: {
            problems: ['name: contains an unpaired UTF-16 surrogate (not valid Unicode text); send well-formed text'],
          },
        });
      },
    );

    it('readSkillResource with NUL in the path → an error card RESOURCE_OUTSIDE_SKILL, as REST', async () => {
      const { data } = await graphql(
        `mutation($id: ID!, $p: String!) { readSkillResource(chatId: $id, name: "pdf", path: $p) ${CARD_FIELDS} }`,
        { id: chat, p: NUL },
      );
      expect(data.readSkillResource.toolCard).toMatchObject({
        tool: 'skills.readResource',
        status: 'error',
        output: 'Error (RESOURCE_OUTSIDE_SKILL): Resource path must not contain NUL bytes.',
      });
    });

    it('activateSkill with name __proto__ → an error card, no activation', async () => {
      const { data } = await graphql(
        `mutation($id: ID!) { activateSkill(chatId: $id, name: "__proto__") ${CARD_FIELDS} }`,
        { id: await newChat() },
      );
      expect(data.activateSkill).toEqual({
        toolCard: {
          tool: 'skills.activate',
          status: 'error',
          args: { name: '__proto__' },
          output: `Error (SKILL_NOT_FOUND): Skill '__proto__' not found. Available: ${ALL_SKILLS}`,
          summary: { skill: '__proto__', truncated: false },
        },
        activatedSkills: [],
      });
    });

    it('listSkillResources with type __proto__ → VALIDATION_FAILED listing the types', async () => {
      const { errors } = await graphql(
        `mutation($id: ID!) { listSkillResources(chatId: $id, name: "pdf", type: "__proto__") ${CARD_FIELDS} }`,
        { id: chat },
      );
      expect(errors[0]).toMatchObject({
        message: invalidArguments(
          'skills.listResources',
          ["'type' must be one of scripts, references, assets, other"],
          '{"name": "<skill>", "type": "references"}',
        ).message,
        extensions: { code: 'VALIDATION_FAILED', status: 400 },
      });
    });

    it('runSkillTool skills.readResource with NUL in arguments.path → an error card, as REST', async () => {
      const { data, errors } = await graphql(
        `mutation($id: ID!, $a: JSON!) { runSkillTool(chatId: $id, tool: "skills.readResource", arguments: $a) ` +
          `${CARD_FIELDS} }`,
        { id: chat, a: { name: 'pdf', path: NUL } },
      );
      expect(errors).toBeUndefined();
      expect(data.runSkillTool.toolCard).toMatchObject({
        status: 'error',
        output: 'Error (RESOURCE_OUTSIDE_SKILL): Resource path must not contain NUL bytes.',
      });
    });

    it('runSkillTool with a __proto__ field in a literal → VALIDATION_FAILED, as REST', async () => {
      const { data, errors } = await graphql(
        `mutation($id: ID!) { runSkillTool(chatId: $id, tool: "skills.activate", arguments: {name: "pdf", ` +
          `__proto__: {name: "git-commit"}}) ${CARD_FIELDS} }`,
        { id: await newChat() },
      );
      expect(data).toBeNull();
      expect(errors[0].extensions).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
    });
  });

  describe('a model that calls tools with garbage', () => {
    const turnAfter = async (call: { name: string; arguments: string | Record<string, unknown> }) => {
      ctx.model.play({ toolCalls: [call] }, { text: 'after' });
      const { body } = await http()
        .post(`/v1/chats/${await newChat()}/messages`)
        .send({ content: 'go' })
        .expect(201);
      return body;
    };

    it.each([
      [
        'text that is not JSON',
        '{not json',
        new RegExp(
          '^Error: Invalid input for tool skills_activate: JSON parsing failed: Text: \\{not ' +
            'json\\.\\nError message: [^\\n]+$',
        ),
      ],
      ['a JSON array', '[1,2]', NOT_AN_OBJECT],
      ['JSON null', 'null', NOT_AN_OBJECT],
      ['a JSON string', '"pdf"', NOT_AN_OBJECT],
      ['a JSON number', '42', NOT_AN_OBJECT],
      [
        'nothing',
        '',
        'Invalid arguments for skills.activate: \'name\' must be a non-empty string. Expected {"name": "<skill>"}.',
      ],
      [
        'an extra key',
        '{"name":"pdf","extra":1}',
        'Invalid arguments for skills.activate: unknown argument(s): extra. Expected {"name": "<skill>"}.',
      ],
      [
        'a name nested 64 deep',
        `{"name":${'['.repeat(63)}${']'.repeat(63)}}`,
        'Invalid arguments for skills.activate: \'name\' must be a non-empty string. Expected {"name": "<skill>"}.',
      ],
      // Deeper input is replaced before the SDK reads it (bounded-tool-input.ts).
      ['a name nested 1000 deep', `{"name":${'['.repeat(1000)}${']'.repeat(1000)}}`, NOT_AN_OBJECT],
    ])(
      'skills_activate with %s → an error card the model reads, and the turn goes on',
      async (_label, args, output) => {
        const turn = await turnAfter({ name: 'skills_activate', arguments: args });
        expect(turn.assistantMessage.content).toBe('after');
        expect(turn.assistantMessage.toolCards).toEqual([
          expect.objectContaining({
            tool: 'skills.activate',
            status: 'error',
            output: typeof output === 'string' ? output : expect.stringMatching(output),
          }),
        ]);
        expect(toolResults(ctx.model.requests[1])).toHaveLength(1);
        expect(turn.activatedSkills).toEqual([]);
      },
    );

    it(
      "NUL and lone surrogates in a model's arguments are stored as U+FFFD; NUL in a path is " +
        'RESOURCE_OUTSIDE_SKILL',
      async () => {
        ctx.model.play(
          {
            toolCalls: [
              { name: 'skills_activate', arguments: { name: 'p\u0000df' } },
              { name: 'skills_activate', arguments: { name: 'p\ud800df' } },
              { name: 'skills_readResource', arguments: { name: 'pdf', path: 'references/forms.md\u0000' } },
            ],
          },
          { text: 'after' },
        );
        const turn = (
          await http()
            .post(`/v1/chats/${await newChat()}/messages`)
            .send({ content: 'go' })
            .expect(201)
        ).body;
        // Calls of one step run at once; their cards come in the order they finish (see the card-order test).
        const cards = turn.assistantMessage.toolCards.map((c: { args: unknown; status: string; output: string }) => [
          c.args,
          c.status,
          c.output,
        ]);
        expect(cards).toHaveLength(3);
        expect(cards).toEqual(
          expect.arrayContaining([
            [
              { name: 'p\uFFFDdf' },
              'error',
              `Error (SKILL_NOT_FOUND): Skill 'p\uFFFDdf' not found. Available: ${ALL_SKILLS}`,
            ],
            [
              { name: 'pdf', path: 'references/forms.md\uFFFD' },
              'error',
              'Error (RESOURCE_OUTSIDE_SKILL): Resource path must not contain NUL bytes.',
            ],
          ]),
        );
        expect(cards.filter(([args]: [{ name: string }]) => args.name === 'p\uFFFDdf')).toHaveLength(2);
      },
    );

    it.each(['use_skill', 'activate_skill', 'load_skill', 'skills.activate', 'no_such_tool'])(
      'a tool this style lacks (%s) → an error card naming the tools, and the turn goes on',
      async (name) => {
        const turn = await turnAfter({ name, arguments: { name: 'pdf' } });
        expect(turn.assistantMessage.content).toBe('after');
        expect(turn.assistantMessage.toolCards).toEqual([
          expect.objectContaining({
            tool: name,
            status: 'error',
            output: expect.stringMatching(
              new RegExp(
                `^Error: Model tried to call unavailable tool '${name.replace('.', '\\.')}'\\. Available tools: ` +
                  `skills_activate, skills_readResource, skills_listResources\\.`,
              ),
            ),
          }),
        ]);
        expect(toolResults(ctx.model.requests[1])).toEqual([
          `Model tried to call unavailable tool '${name}'. Available tools: skills_activate, ` +
            `skills_readResource, skills_listResources.`,
        ]);
      },
    );

    it('cards are stored in the order the model made the calls, refused ones included', async () => {
      ctx.model.play(
        { toolCalls: [{ name: 'no_such_tool', arguments: {} }] },
        { toolCalls: [{ name: 'skills_activate', arguments: { name: 'pdf' } }] },
        { text: 'after' },
      );
      const turn = (
        await http()
          .post(`/v1/chats/${await newChat()}/messages`)
          .send({ content: 'go' })
          .expect(201)
      ).body;
      expect(turn.assistantMessage.toolCards.map((c: { tool: string }) => c.tool)).toEqual([
        'no_such_tool',
        'skills.activate',
      ]);
    });

    it('the card of an unavailable tool names the tools once', async () => {
      const turn = await turnAfter({ name: 'use_skill', arguments: { skill_name: 'pdf' } });
      expect(turn.assistantMessage.toolCards[0].output).toBe(
        "Error: Model tried to call unavailable tool 'use_skill'. Available tools: skills_activate, " +
          'skills_readResource, skills_listResources.',
      );
    });

    it.each(['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'])(
      'a tool named %s → an error card, and the model gets to answer',
      async (name) => {
        const turn = await turnAfter({ name, arguments: {} });
        expect(turn.assistantMessage.toolCards).toEqual([
          expect.objectContaining({
            tool: name,
            status: 'error',
            output: expect.stringContaining(`unavailable tool '${name}'`),
          }),
        ]);
        expect(turn.assistantMessage.content).toBe('after');
      },
    );

    it('streamed: a tool named constructor gets a tool-result event for its call', async () => {
      ctx.model.play({ toolCalls: [{ name: 'constructor', arguments: {}, id: 'call_ctor' }] }, { text: 'after' });
      const answer = await http()
        .post(`/v1/chats/${await newChat()}/messages`)
        .set('accept', 'text/event-stream')
        .send({ content: 'go' })
        .expect(200);
      expect(answer.text).toContain('event: tool-call\ndata: {"id":"call_ctor","tool":"constructor","args":{}}');
      expect(answer.text).toMatch(/event: tool-result\ndata: \{"id":"call_ctor"/);
    });

    it('skills_activate with a name nested 5,000 deep → an error card, not a failed turn', async () => {
      ctx.model.play(
        { toolCalls: [{ name: 'skills_activate', arguments: `{"name":${'['.repeat(5000)}${']'.repeat(5000)}}` }] },
        { text: 'after' },
      );
      const answer = await http()
        .post(`/v1/chats/${await newChat()}/messages`)
        .send({ content: 'go' });
      expect(answer.body.code).toBeUndefined();
      expect(answer.status).toBe(201);
      expect(answer.body.assistantMessage.toolCards[0]).toMatchObject({
        status: 'error',
        args: '[arguments nested more than 64 levels deep; not read]',
        output: 'Arguments must be a JSON object like {"name": "<skill>"}.',
      });
    });
  });

  describe('commands', () => {
    it(
      '/bomb with a 99,000-character argument (26,000 × $ARGUMENTS) → 400 at once; nothing stored, ' +
        'no model called',
      async () => {
        const chatId = await newChat();
        ctx.model.play({ text: 'never' });
        const answer = await http()
          .post(`/v1/chats/${chatId}/messages`)
          .send({ content: `/bomb ${'y'.repeat(99_000)}` })
          .expect(400);
        expect(answer.body).toEqual({
          code: 'VALIDATION_FAILED',
          message: `Invalid request: ${COMMAND_TOO_LONG('bomb')}`,
          details: { problems: [COMMAND_TOO_LONG('bomb')] },
        });
        expect(ctx.model.requests).toHaveLength(0);
        expect((await http().get(`/v1/chats/${chatId}/messages`).expect(200)).body.total).toBe(0);
      },
    );

    it(
      '/bomb just under the bound (19 characters × 26,000 = 494,000) runs with the whole prompt; one more ' +
        'character is refused',
      async () => {
        const chatId = await newChat();
        ctx.model.play({ text: 'ok' });
        const turn = (
          await http()
            .post(`/v1/chats/${chatId}/messages`)
            .send({ content: `/bomb ${'y'.repeat(19)}` })
            .expect(201)
        ).body;
        expect(turn.command).toEqual({ name: 'bomb', arguments: 'y'.repeat(19), prompt: 'y'.repeat(494_000) });
        expect(lastUserText(ctx.model.requests[0])).toBe('y'.repeat(494_000));
        const refused = await http()
          .post(`/v1/chats/${chatId}/messages`)
          .send({ content: `/bomb ${'y'.repeat(20)}` })
          .expect(400);
        expect(refused.body.message).toBe(`Invalid request: ${COMMAND_TOO_LONG('bomb')}`);
      },
    );

    it('/nine (126,000 × $1…$9) with nine long words → 400, not a huge prompt', async () => {
      ctx.model.play({ text: 'never' });
      const answer = await http()
        .post(`/v1/chats/${await newChat()}/messages`)
        .send({ content: `/nine ${'abcdefgh '.repeat(11_000)}` })
        .expect(400);
      expect(answer.body).toEqual({
        code: 'VALIDATION_FAILED',
        message: `Invalid request: ${COMMAND_TOO_LONG('nine')}`,
        details: { problems: [COMMAND_TOO_LONG('nine')] },
      });
      expect(ctx.model.requests).toHaveLength(0);
    });

    it('/bomb streamed → 400 JSON, as unstreamed', async () => {
      const answer = await http()
        .post(`/v1/chats/${await newChat()}/messages`)
        .set('accept', 'text/event-stream')
        .send({ content: `/bomb ${'y'.repeat(1000)}` });
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe('VALIDATION_FAILED');
    });

    it(
      'a command named like a skill: /pdf runs the command (its arguments as typed, /git-commit included); $pdf ' +
        'is plain text without "$" configured',
      async () => {
        const chatId = await newChat();
        ctx.model.play({ text: 'command' }, { text: 'text' });
        const byCommand = (
          await http().post(`/v1/chats/${chatId}/messages`).send({ content: '/pdf /git-commit merge' }).expect(201)
        ).body;
        expect(byCommand).toMatchObject({
          command: { name: 'pdf', arguments: '/git-commit merge', prompt: 'PDF-COMMAND: /git-commit merge' },
          invokedSkills: [],
        });
        expect(byCommand.assistantMessage.toolCards).toEqual([]);
        const dollar = (await http().post(`/v1/chats/${chatId}/messages`).send({ content: '$pdf merge' }).expect(201))
          .body;
        expect(dollar).toMatchObject({ command: null, invokedSkills: [], invokedSkill: null });
        expect(lastUserText(ctx.model.requests[1])).toBe('$pdf merge');
      },
    );

    it("/git-commit /pdf: the second /pdf (a command's name) still invokes the skill pdf", async () => {
      ctx.model.play({ text: 'ok' });
      const turn = (
        await http()
          .post(`/v1/chats/${await newChat()}/messages`)
          .send({ content: '/git-commit /pdf go' })
          .expect(201)
      ).body;
      expect(turn).toMatchObject({ command: null, invokedSkills: ['git-commit', 'pdf'] });
      expect(lastUserText(ctx.model.requests[0])).toBe('go');
    });
  });
});

describe('several skills in one message, prefixes only, and use_skill (use_skill style, "/" and "$")', () => {
  let ctx: ChatTestContext;
  const http = () => request(ctx.app.getHttpServer());
  const newChat = async () => (await http().post('/v1/chats').send({}).expect(201)).body.id as string;
  const turn = async (
    content: string,
    step: { text: string } | { toolCalls: { name: string; arguments: Record<string, unknown> }[] } = { text: 'ok' },
  ) => {
    ctx.model.play(step, { text: 'after' });
    return (
      await http()
        .post(`/v1/chats/${await newChat()}/messages`)
        .send({ content })
        .expect(201)
    ).body;
  };
  // 50,000 emoji: 100,000 UTF-16 units, no letters, no NUL.
  const EMOJI = Array.from({ length: 50_000 }, (_, i) => String.fromCodePoint(0x1f600 + (i % 80))).join('');

  beforeAll(async () => {
    ctx = await startChatApp([tree().path('skills')], {
      'app.tools.style': 'use_skill',
      'app.skills.explicit_prefixes': ['/', '$'],
    });
  });
  afterAll(async () => ctx?.close());

  it.each(['/', '$', '$ $', '/ /pdf', '/ $pdf', '//pdf', '$$pdf', '/pdf/', '/PDF', '\u200b/pdf', '/ '.repeat(30_000)])(
    '%j is plain text: nothing invoked, the model gets it as typed',
    async (content) => {
      const body = await turn(content);
      expect(body).toMatchObject({ invokedSkills: [], invokedSkill: null, command: null, activatedSkills: [] });
      expect(body.assistantMessage.toolCards).toEqual([]);
      expect(lastUserText(ctx.model.requests[0])).toBe(content);
    },
  );

  it(
    'six different skills: the first five are invoked in order (use_skill calls of the server), the sixth stays ' +
      'text',
    async () => {
      const body = await turn('$a /b $c /d $e /f go');
      expect(body.invokedSkills).toEqual(['a', 'b', 'c', 'd', 'e']);
      expect(cardsOf(body)).toEqual(['a', 'b', 'c', 'd', 'e'].map((name) => ['use_skill', { skill_name: name }, 'ok']));
      expect(lastUserText(ctx.model.requests[0])).toBe('/f go');
    },
  );

  it('/a repeated 10 times: a is invoked once', async () => {
    const body = await turn('/a '.repeat(10).trim());
    expect(body.invokedSkills).toEqual(['a']);
    expect(cardsOf(body)).toEqual([['use_skill', { skill_name: 'a' }, 'ok']]);
  });

  it('/a repeated 10 times: the words after the fifth stay text', async () => {
    await turn('/a '.repeat(10).trim());
    expect(lastUserText(ctx.model.requests[0])).toBe('/a /a /a /a /a');
  });

  it('a message of 33,333 × "/a ": five names are read, the rest is the text', async () => {
    const body = await turn('/a '.repeat(33_333));
    expect(body.invokedSkills).toEqual(['a']);
    expect(lastUserText(ctx.model.requests[0])).toBe('/a '.repeat(33_328).trim());
  });

  it(
    'use_skill with 100 KB of emoji as input → no match, the request quoted by code point (no lone surrogate), ' +
      'quickly',
    async () => {
      const chatId = await newChat();
      const { body } = await http().post(`/v1/chats/${chatId}/tools/use_skill`).send({ input: EMOJI }).expect(200);
      const quoted = Array.from(EMOJI).slice(0, 200).join('');
      expect(body.toolCard).toMatchObject({
        tool: 'use_skill',
        status: 'ok',
        summary: { skill: null, candidates: [], truncated: false },
        output:
          `No skill matches "${quoted}…". Go on without a skill, or call use_skill with a skill_name from the ` +
          `catalogue.`,
      });
      expect(body.activatedSkills).toEqual([]);
      expect(body.toolCard.output.isWellFormed()).toBe(true);
    },
  );

  it('use_skill without arguments matches a 100 KB emoji user message the same way', async () => {
    const body = await turn(EMOJI, { toolCalls: [{ name: 'use_skill', arguments: {} }] });
    expect(body.assistantMessage.toolCards).toEqual([
      expect.objectContaining({
        tool: 'use_skill',
        status: 'ok',
        summary: { skill: null, candidates: [], truncated: false },
        output: expect.stringMatching(/^No skill matches "😀😁/),
      }),
    ]);
    expect(body.assistantMessage.content).toBe('after');
  });

  it.each([
    [
      { input: 'constructor prototype toString valueOf hasOwnProperty __defineGetter__ __proto__' },
      'No skill matches "constructor prototype toString valueOf hasOwnProperty __defineGetter__ __proto__". Go ' +
        'on without a skill, or call use_skill with a skill_name from the catalogue.',
    ],
    [
      { skill_name: '__proto__' },
      "Error (SKILL_NOT_FOUND): Skill '__proto__' not found. Available: a, b, c, d, e, f, git-commit, pdf",
    ],
    [
      { skill_name: 'constructor' },
      "Error (SKILL_NOT_FOUND): Skill 'constructor' not found. Available: a, b, c, d, e, f, git-commit, pdf",
    ],
    [{ input: '   ' }, 'Give skill_name, or describe the task in input, to choose a skill.'],
  ])('use_skill %j → a card that says so', async (args, output) => {
    const { body } = await http()
      .post(`/v1/chats/${await newChat()}/tools/use_skill`)
      .send(args)
      .expect(200);
    expect(body.toolCard.output).toBe(output);
    expect(body.activatedSkills).toEqual([]);
  });

  it.each([
    [{ skill_name: '' }, ["'skill_name' must be a non-empty string"]],
    [{ skill_name: null }, ["'skill_name' must be a non-empty string"]],
    [{ input: 5 }, ["'input' must be a string"]],
    [{ input: null }, ["'input' must be a string"]],
    [{ input: 'x', extra: true }, ['unknown argument(s): extra']],
  ])("use_skill %j → 400 with the schema's sentence", async (args, problems) => {
    const { body } = await http()
      .post(`/v1/chats/${await newChat()}/tools/use_skill`)
      .send(args)
      .expect(400);
    expect(body).toEqual(
      invalidArguments('use_skill', problems, '{"skill_name": "<skill>"} or {"input": "<the task>"}'),
    );
  });

  it.each([
    ['input', NUL, 'contains a NUL character (U+0000), which cannot be stored; remove it'],
    ['input', LONE, 'contains an unpaired UTF-16 surrogate (not valid Unicode text); send well-formed text'],
    ['skill_name', NUL, 'contains a NUL character (U+0000), which cannot be stored; remove it'],
    ['skill_name', LONE, 'contains an unpaired UTF-16 surrogate (not valid Unicode text); send well-formed text'],
  ])('use_skill with %s holding %j → 400 naming the field', async (field, value, problem) => {
    const { body } = await http()
      .post(`/v1/chats/${await newChat()}/tools/use_skill`)
      .send({ [field]: value })
      .expect(400);
    expect(body).toEqual({
      code: 'VALIDATION_FAILED',
      message: `Invalid request: ${field}: ${problem}`,
      details: { problems: [`${field}: ${problem}`] },
    });
  });

  it.each(['skills.activate', 'skills.listResources', 'activate_skill', 'load_skill'])(
    'the route refuses %s in this style with TOOL_NOT_FOUND',
    async (tool) => {
      const { body } = await http()
        .post(`/v1/chats/${await newChat()}/tools/${tool}`)
        .send({ name: 'pdf' })
        .expect(404);
      expect(body).toEqual(toolNotFound(tool, 'use_skill', ['use_skill', 'skills.readResource']));
    },
  );

  it("the model calling the other styles' tools gets error cards naming this style's", async () => {
    const body = await turn('go', {
      toolCalls: [
        { name: 'skills_activate', arguments: { name: 'pdf' } },
        { name: 'activate_skill', arguments: { name: 'pdf' } },
        { name: 'use_skill', arguments: { skill_name: 5 } },
      ],
    });
    const cards = body.assistantMessage.toolCards.map((c: { tool: string; status: string; output: string }) => [
      c.tool,
      c.status,
      c.output.split('. ')[0],
    ]);
    expect(cards).toHaveLength(3);
    expect(cards).toEqual(
      expect.arrayContaining([
        ['skills_activate', 'error', "Error: Model tried to call unavailable tool 'skills_activate'"],
        ['activate_skill', 'error', "Error: Model tried to call unavailable tool 'activate_skill'"],
        ['use_skill', 'error', "Invalid arguments for use_skill: 'skill_name' must be a non-empty string"],
      ]),
    );
    expect(
      body.assistantMessage.toolCards.find((c: { tool: string }) => c.tool === 'skills_activate').output,
    ).toContain('Available tools: use_skill, skills_readResource.');
    expect(body.activatedSkills).toEqual([]);
    expect(body.assistantMessage.content).toBe('after');
  });
});

describe('command and skill files that change or vanish between the scan and a turn', () => {
  let ctx: ChatTestContext;
  const http = () => request(ctx.app.getHttpServer());
  const newChat = async () => (await http().post('/v1/chats').send({}).expect(201)).body.id as string;
  const send = async (content: string) => {
    ctx.model.play({ text: 'ok' });
    return (
      await http()
        .post(`/v1/chats/${await newChat()}/messages`)
        .send({ content })
        .expect(201)
    ).body;
  };

  beforeAll(async () => {
    ctx = await startChatApp([tree().path('skills'), tree().path('volatile-skills')], {
      'app.commands.directories': [tree().path('volatile-commands')],
    });
    rmSync(tree().path('volatile-commands/vanish.md'));
    rmSync(tree().path('volatile-skills/gone'), { recursive: true });
    writeFileSync(
      tree().path('volatile-commands/change.md'),
      '---\ndescription: Changed after the scan.\n---\nAFTER: $1\n',
    );
  });
  afterAll(async () => ctx?.close());

  it(
    'until a reload, a removed command runs as scanned; its removed skill is an error card and the ' + 'turn goes on',
    async () => {
      const body = await send('/vanish now');
      expect(body.command).toEqual({ name: 'vanish', arguments: 'now', prompt: 'VANISH: now' });
      expect(body.assistantMessage.toolCards).toEqual([
        expect.objectContaining({
          tool: 'skills.activate',
          args: { name: 'gone' },
          status: 'error',
          output: expect.stringMatching(/^Error \(\w+\): /),
        }),
      ]);
      expect(body.activatedSkills).toEqual([]);
      expect(body.assistantMessage.content).toBe('ok');
    },
  );

  it('activating a skill removed from disk says it is no longer on disk, as its other tools do', async () => {
    const body = await send('/gone');
    expect(body.assistantMessage.toolCards[0].output).toBe(
      "Error (SKILL_NOT_FOUND): Skill 'gone' is no longer on disk; reload the skills.",
    );
  });

  it("the removed skill's other tools say it is no longer on disk", async () => {
    const { body } = await http()
      .post(`/v1/chats/${await newChat()}/tools/skills.listResources`)
      .send({ name: 'gone' })
      .expect(200);
    expect(body.toolCard).toMatchObject({
      status: 'error',
      output: "Error (SKILL_NOT_FOUND): Skill 'gone' is no longer on disk; reload the skills.",
    });
  });

  it(
    'until a reload, a changed command runs its scanned template; after it, the new one, and the removed command ' +
      'is plain text',
    async () => {
      expect((await send('/change one')).command).toEqual({ name: 'change', arguments: 'one', prompt: 'BEFORE: one' });
      await http().post('/v1/admin/skills/reload').expect(200);
      expect((await send('/change one')).command).toEqual({ name: 'change', arguments: 'one', prompt: 'AFTER: one' });
      const vanished = await send('/vanish now');
      expect(vanished).toMatchObject({ command: null, invokedSkills: [] });
      expect(lastUserText(ctx.model.requests[0])).toBe('/vanish now');
    },
  );

  it('a command file made invalid and reloaded is listed with its reason and no longer runs', async () => {
    writeFileSync(tree().path('volatile-commands/change.md'), '---\nargument-hint: [x]\n---\n');
    const report = (await http().post('/v1/admin/skills/reload').expect(200)).body;
    expect(report.commands.invalid).toEqual([
      expect.objectContaining({
        name: 'change',
        errors: [
          "Missing required field 'description': add `description: <what the command does>` to the frontmatter",
          "Field 'argument-hint' must be text, but YAML reads [ ] as a list: quote it, e.g. `argument-hint: " +
            '"[pr-number] [focus]"`',
          'The file has no prompt template after its frontmatter; write the prompt below the closing ---',
        ],
      }),
    ]);
    expect(await send('/change one')).toMatchObject({ command: null });
  });
});

describe('the tool route with tools switched off', () => {
  let ctx: ChatTestContext;
  beforeAll(async () => {
    ctx = await startChatApp([tree().path('skills')], { 'app.tools.enabled': false });
  });
  afterAll(async () => ctx?.close());

  it.each(['skills.activate', '__proto__', '%00'])(
    '%s → 404 TOOLS_DISABLED before the tool name or arguments are looked at',
    async (tool) => {
      const http = request(ctx.app.getHttpServer());
      const chatId = (await http.post('/v1/chats').send({}).expect(201)).body.id;
      const { body } = await http
        .post(`/v1/chats/${chatId}/tools/${tool}`)
        .set('content-type', 'application/json')
        .send('[]')
        .expect(404);
      expect(body).toEqual({
        code: 'TOOLS_DISABLED',
        message: 'Skill tools are disabled on this server (app.tools.enabled = false).',
      });
    },
  );
});
