import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  GraphQLSchemaBuilderModule,
  GraphQLSchemaFactory,
  ID,
  Int,
  ObjectType,
  Query,
  Resolver,
} from '@nestjs/graphql';
import { ApiOkResponse, SwaggerModule } from '@nestjs/swagger';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { printType } from 'graphql';
import { ApiField } from './api-field.decorator.js';

@ObjectType('Part')
class PartDto {
  @ApiField(() => ID, { openapi: { format: 'uuid' } })
  id: string;
}

@ObjectType('Thing', { description: 'A thing.' })
class ThingDto {
  @ApiField({ description: 'Both doors.' })
  name: string;

  @ApiField(() => Int, {
    openapi: { minimum: 1, description: 'REST words.' },
    graphql: { description: 'GraphQL words.' },
  })
  count: number;

  @ApiField(() => String, { nullable: true })
  note: string | null;

  @ApiField(() => [String], { optional: true })
  tags?: string[];

  @ApiField(() => [PartDto])
  parts: PartDto[];
}

@Controller('things')
class ThingsController {
  @Get()
  @ApiOkResponse({ type: ThingDto })
  get(): ThingDto {
    return { name: 'a', count: 1, note: null, parts: [] };
  }
}

@Module({ controllers: [ThingsController] })
class ThingsModule {}

@Resolver()
class ThingsResolver {
  @Query(() => ThingDto)
  thing(): ThingDto {
    return { name: 'a', count: 1, note: null, parts: [] };
  }
}

async function openApiSchemas(): Promise<Record<string, unknown>> {
  const app = await NestFactory.create(ThingsModule, new FastifyAdapter(), { logger: false });
  try {
    return (
      SwaggerModule.createDocument(app, { openapi: '3.1.0', info: { title: 't', version: '1' } }).components?.schemas ??
      {}
    );
  } finally {
    await app.close();
  }
}

async function graphqlType(name: string): Promise<string> {
  const context = await NestFactory.createApplicationContext(GraphQLSchemaBuilderModule, { logger: false });
  try {
    const type = (await context.get(GraphQLSchemaFactory).create([ThingsResolver])).getType(name);
    return type === undefined ? '' : printType(type);
  } finally {
    await context.close();
  }
}

describe(ApiField.name, () => {
  it('gives REST one schema with the shared words, each door its own, and types from the GraphQL type', async () => {
    const schemas = await openApiSchemas();

    expect(schemas.ThingDto).toEqual({
      type: 'object',
      properties: {
        name: { type: 'string', description: 'Both doors.' },
        count: { type: 'integer', minimum: 1, description: 'REST words.' },
        note: { type: ['string', 'null'] },
        tags: { type: 'array', items: { type: 'string' } },
        parts: { type: 'array', items: { $ref: '#/components/schemas/PartDto' } },
      },
      required: ['name', 'count', 'note', 'parts'],
    });
    expect(schemas.PartDto).toEqual({
      type: 'object',
      properties: { id: { type: 'string', format: 'uuid' } },
      required: ['id'],
    });
  });

  it('gives GraphQL the same fields, in the same order, with its own words and nullability', async () => {
    expect(await graphqlType('Thing')).toBe(
      [
        '"""A thing."""',
        'type Thing {',
        '  """Both doors."""',
        '  name: String!',
        '',
        '  """GraphQL words."""',
        '  count: Int!',
        '  note: String',
        '  tags: [String!]',
        '  parts: [Part!]!',
        '}',
      ].join('\n'),
    );
    expect(await graphqlType('Part')).toBe('type Part {\n  id: ID!\n}');
  });
});
