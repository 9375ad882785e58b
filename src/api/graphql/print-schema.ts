import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { buildSchemaSdl } from './schema.js';

/**
 * `npm run schema:graphql`: writes the GraphQL schema to schema.graphql in the current directory
 * (the repository root), where a test compares it with what the server serves.
 */
async function main(): Promise<void> {
  writeFileSync('schema.graphql', await buildSchemaSdl());
  console.log('schema.graphql written');
}

void main();
