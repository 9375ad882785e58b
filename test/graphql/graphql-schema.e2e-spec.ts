import { readFileSync, statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { GraphQLSchemaHost } from '@nestjs/graphql';
import { buildSchemaSdl, printSortedSchema } from '../../src/api/graphql/schema.js';
import { type GraphqlTestContext, startGraphqlApp } from './graphql-test-app.js';

const SCHEMA_FILE = 'schema.graphql';

describe('schema.graphql', () => {
  let ctx: GraphqlTestContext;
  let modifiedBeforeStart: number;

  beforeAll(async () => {
    modifiedBeforeStart = statSync(SCHEMA_FILE).mtimeMs;
    ctx = await startGraphqlApp([]);
  });
  afterAll(async () => ctx?.close());

  it(
    'is what the resolvers define, sorted and stable (if not: run `npm run schema:graphql` and commit ' +
      'schema.graphql)',
    async () => {
      const built = await buildSchemaSdl();
      expect(readFileSync(SCHEMA_FILE, 'utf8')).toBe(built);
      expect(await buildSchemaSdl()).toBe(built);
    },
  );

  it('is exactly the schema the server serves', () => {
    const served = printSortedSchema(ctx.app.get(GraphQLSchemaHost).schema);
    expect(served).toBe(readFileSync(SCHEMA_FILE, 'utf8'));
  });

  it('is not written by the server at start-up (the schema is built in memory)', () => {
    expect(statSync(SCHEMA_FILE).mtimeMs).toBe(modifiedBeforeStart);
  });
});
