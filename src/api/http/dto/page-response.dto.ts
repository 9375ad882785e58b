import { Int, ObjectType } from '@nestjs/graphql';
import { ApiField } from './api-field.decorator.js';

/** The paging fields of every `{items, total, limit, offset}` answer; subclasses declare `items`. */
@ObjectType({ isAbstract: true })
export abstract class PageDto {
  @ApiField(() => Int, {
    openapi: { minimum: 0, description: 'All items, not just this page.' },
    graphql: { description: 'How many items there are in all.' },
  })
  total: number;

  @ApiField(() => Int, { openapi: { minimum: 1, maximum: 200 } })
  limit: number;

  @ApiField(() => Int, { openapi: { minimum: 0 } })
  offset: number;
}
