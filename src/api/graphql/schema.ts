import { NestFactory } from '@nestjs/core';
import { GraphQLSchemaBuilderModule, GraphQLSchemaFactory } from '@nestjs/graphql';
import { type GraphQLSchema, lexicographicSortSchema, printSchema } from 'graphql';
import { ChatTurnsResolver } from './chat-turns.resolver.js';
import { ChatsResolver } from './chats.resolver.js';
import { CommandsResolver } from './commands.resolver.js';
import { MeResolver } from './me.resolver.js';
import { SkillStoreResolver } from './skill-store.resolver.js';
import { SkillsResolver } from './skills.resolver.js';
import { SkillUsageResolver } from './skill-usage.resolver.js';

/** Every resolver of the API: the module serves them, the schema printer reads them. */
export const GRAPHQL_RESOLVERS = [
  MeResolver,
  SkillsResolver,
  SkillStoreResolver,
  CommandsResolver,
  ChatsResolver,
  ChatTurnsResolver,
  SkillUsageResolver,
];

/** SDL sorted by name, so the file changes only when the schema does. */
export function printSortedSchema(schema: GraphQLSchema): string {
  return `${printSchema(lexicographicSortSchema(schema))}\n`;
}

/** The schema the server serves, built from the resolvers alone (no database, no configuration). */
export async function buildSchemaSdl(): Promise<string> {
  const context = await NestFactory.createApplicationContext(GraphQLSchemaBuilderModule, { logger: false });
  try {
    return printSortedSchema(await context.get(GraphQLSchemaFactory).create(GRAPHQL_RESOLVERS));
  } finally {
    await context.close();
  }
}
