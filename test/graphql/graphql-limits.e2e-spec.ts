import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { GraphQLSchemaHost } from '@nestjs/graphql';
import { parse, validate } from 'graphql';
import request from 'supertest';
import { UsersService } from '../../src/domain/users/users.service.js';
import { query } from '../support/database.js';
import { failure, type GraphqlTestContext, startGraphqlApp } from './graphql-test-app.js';

/**
 * `me` beside an introspection query as deep as `path` plus a leaf: introspection is the one valid
 * way to nest this deep (graphql-js allows two nested `fields`, and `args` and `type` in between).
 */
function deepQuery(path: string[]): string {
  return `{ me { id } ${path.join(' { ')} { name${' }'.repeat(path.length)} }`;
}
const TEN_DEEP = deepQuery(['__schema', 'types', 'fields', 'args', 'type', 'fields', 'args', 'type', 'enumValues']);
const ELEVEN_DEEP = deepQuery([
  '__schema',
  'directives',
  'args',
  'type',
  'fields',
  'args',
  'type',
  'fields',
  'args',
  'type',
]);

const aliases = (count: number, selection: string) =>
  Array.from({ length: count }, (_, i) => `a${i}: ${selection}`).join(' ');

describe(
  'GraphQL query limits: depth ≤ 10 and cost ≤ 1000 fields, refused with QUERY_TOO_COMPLEX before ' + 'anything runs',
  () => {
    let ctx: GraphqlTestContext;
    const chatCount = async () => (await query<{ n: number }>(ctx.db.url, 'SELECT count(*)::int AS n FROM chats'))[0].n;

    beforeAll(async () => {
      ctx = await startGraphqlApp([]);
    });
    afterAll(async () => ctx?.close());

    it('a valid query 10 levels deep runs; 11 levels deep is refused (HTTP 400) and no resolver runs', async () => {
      const getUser = jest.spyOn(ctx.app.get(UsersService), 'getUser');
      try {
        const ok = await ctx.client().request<{ me: { id: string }; __schema: unknown }>(TEN_DEEP);
        expect(ok.me.id).toEqual(expect.any(String));
        expect(getUser).toHaveBeenCalledTimes(1);
        getUser.mockClear();
        // Valid GraphQL: refused for its depth alone.
        expect(validate(ctx.app.get(GraphQLSchemaHost).schema, parse(ELEVEN_DEEP))).toEqual([]);
        const answer = await failure(ctx.client().request(ELEVEN_DEEP));
        expect(answer).toEqual({
          status: 400,
          data: null,
          errors: [
            {
              message:
                'The query is too complex: it is 11 levels deep (at most 10). Ask for less in one request, or ' +
                'split it.',
              extensions: {
                code: 'QUERY_TOO_COMPLEX',
                status: 400,
                details: { depth: 11, cost: expect.any(Number), maxDepth: 10, maxCost: 1000 },
              },
            },
          ],
        });
        expect(getUser).not.toHaveBeenCalled();
      } finally {
        getUser.mockRestore();
      }
    });

    it('hundreds of aliased mutations are refused as a whole: not one of them runs', async () => {
      const before = await chatCount();
      const allowed = await ctx
        .client()
        .request<Record<string, unknown>>(`mutation { ${aliases(500, 'createChat { id }')} }`);
      expect(Object.keys(allowed)).toHaveLength(500);
      expect(await chatCount()).toBe(before + 500);
      const answer = await failure(ctx.client().request(`mutation { ${aliases(600, 'createChat { id }')} }`));
      expect(answer.status).toBe(400);
      expect(answer.errors).toEqual([
        {
          message:
            'The query is too complex: it selects 1200 fields, counting aliases and fragment spreads (at most ' +
            '1000). Ask for less in one request, or split it.',
          extensions: {
            code: 'QUERY_TOO_COMPLEX',
            status: 400,
            details: { depth: 2, cost: 1200, maxDepth: 10, maxCost: 1000 },
          },
        },
      ]);
      expect(await chatCount()).toBe(before + 500);
    });

    it(
      'fragments count at every spread: 40 levels of doubling spreads are measured without expanding them, and ' +
        'refused',
      async () => {
        const fragments = Array.from(
          { length: 40 },
          (_, i) => `fragment F${i} on Query { ${i === 39 ? 'me { id }' : `...F${i + 1} ...F${i + 1}`} }`,
        );
        // No clock is read: expanding them would be 2^39 visits, which does not end, so the request would never be
        // answered.
        const answer = await failure(ctx.client().request(`{ ...F0 } ${fragments.join(' ')}`));
        expect(answer.errors[0].extensions).toMatchObject({
          code: 'QUERY_TOO_COMPLEX',
          details: { depth: 2, cost: 2 * 2 ** 39 },
        });
      },
    );

    it('fragments count at every spread: a small fragment spread many times is refused', async () => {
      const spreads = Array.from({ length: 50 }, (_, i) => `x${i}: chats { ...Page }`).join(' ');
      const answer = await failure(
        ctx
          .client()
          .request(
            `{ ${spreads} } fragment Page on ChatPage { total limit offset items { id title createdAt updatedAt ` +
              `activatedSkills { name how count } messages { total items { id seq role content createdAt } } } }`,
          ),
      );
      expect(answer.errors[0].extensions).toMatchObject({
        code: 'QUERY_TOO_COMPLEX',
        status: 400,
        details: { cost: 50 * 21 },
      });
      const doubled = await failure(
        ctx
          .client()
          .request(
            `{ ${aliases(
              60,
              'chats { ...P ...P }',
            )} } fragment P on ChatPage { items { ...Q ...Q } } fragment Q on Chat { id title createdAt updatedAt }`,
          ),
      );
      expect(doubled.errors[0].extensions).toMatchObject({
        code: 'QUERY_TOO_COMPLEX',
        details: { cost: 60 * (1 + 2 * (1 + 2 * 4)) },
      });
    });

    it('a fragment cycle is refused by validation, not looped over', async () => {
      const answer = await failure(
        ctx.client().request('{ ...A } fragment A on Query { me { id } ...B } fragment B on Query { ...A }'),
      );
      expect(answer.status).toBe(400);
      expect(answer.errors).toEqual([
        expect.objectContaining({
          message: 'Cannot spread fragment "A" within itself via "B".',
          extensions: expect.objectContaining({ code: 'VALIDATION_FAILED' }),
        }),
      ]);
    });

    it('a document over 10,000 tokens is refused while parsing', async () => {
      const answer = await failure(ctx.client().request(`{ me { ${'id '.repeat(10_001)} } }`));
      expect(answer).toEqual({
        status: 400,
        data: null,
        errors: [
          {
            message: 'Syntax Error: Document contains more that 10000 tokens. Parsing aborted.',
            locations: expect.any(Array),
            extensions: { code: 'QUERY_TOO_COMPLEX', status: 400 },
          },
        ],
      });
    });

    it('the limits hold for subscriptions too: refused before anything subscribes', async () => {
      const { createChat } = await ctx
        .client()
        .request<{ createChat: { id: string } }>('mutation { createChat { id } }');
      const iterator = ctx.wsClient().iterate({
        query: `subscription($chatId: ID!) { chatEvents(chatId: $chatId) { ${aliases(1001, 'event')} } }`,
        variables: { chatId: createChat.id },
      });
      await expect(iterator.next()).rejects.toEqual([
        {
          message:
            'The query is too complex: it selects 1002 fields, counting aliases and fragment spreads (at most ' +
            '1000). Ask for less in one request, or split it.',
          extensions: {
            code: 'QUERY_TOO_COMPLEX',
            status: 400,
            details: { depth: 2, cost: 1002, maxDepth: 10, maxCost: 1000 },
          },
        },
      ]);
      expect(ctx.subscriptions.mock.calls.filter(([chatId]) => chatId === createChat.id)).toEqual([]);
    });

    it(
      'brackets nested thousands deep are refused as QUERY_TOO_COMPLEX before parsing, not a stack ' + 'overflow',
      async () => {
        const post = (body: unknown) =>
          request(ctx.app.getHttpServer())
            .post('/graphql')
            .send(body as object);
        for (const deep of [
          `{${' me {'.repeat(3300)} name ${'}'.repeat(3301)}`,
          `{ catalogue(format: ${'['.repeat(3000)}json${']'.repeat(3000)}) }`,
          `{ chats(limit: ${'{a: '.repeat(3000)}1${'}'.repeat(3000)}) { total } }`,
        ]) {
          const res = await post({ query: deep }).expect(400);
          expect(res.body.errors).toEqual([
            {
              message: expect.stringContaining('its brackets nest more than 64 deep'),
              extensions: { code: 'QUERY_TOO_COMPLEX', status: 400, details: { maxNesting: 64 } },
            },
          ]);
          expect(JSON.stringify(res.body)).not.toContain('call stack');
        }
        // Brackets inside strings and comments do not count.
        const quoted = await post({ query: `{ me { name } } # ${'{'.repeat(100)}` }).expect(200);
        expect(quoted.body.data.me.name).toBe('local');
      },
    );

    it.each([
      ['a literal as the whole document', '5'],
      ['a JSON value that is not a query', 5],
      [
        'a JSON-encoded AST',
        {
          kind: 'Document',
          definitions: [
            {
              kind: 'OperationDefinition',
              operation: 'query',
              selectionSet: {
                kind: 'SelectionSet',
                selections: [{ kind: 'Field', name: { kind: 'Name', value: 'me' } }],
              },
            },
          ],
        },
      ],
      ['a JSON-encoded AST in a string', JSON.stringify({ kind: 'Document', definitions: [] })],
    ])('%s is refused with 400 VALIDATION_FAILED, never a 500', async (_, queryValue) => {
      const res = await request(ctx.app.getHttpServer()).post('/graphql').send({ query: queryValue });
      expect({ status: res.status, code: res.body.errors?.[0]?.extensions?.code }).toEqual({
        status: 400,
        code: 'VALIDATION_FAILED',
      });
    });
  },
);
