import type { Type } from '@nestjs/common';
import { Field, Int, ObjectType } from '@nestjs/graphql';

export interface PageShape<T> {
  items: T[];
  total: number;
  limit: number;
  offset: number;
}

/** The page every paginated REST route answers, `{items, total, limit, offset}`, for any item type. */
export function PageOf<T>(itemType: Type<T>): Type<PageShape<T>> {
  @ObjectType({ isAbstract: true })
  abstract class PageModel implements PageShape<T> {
    @Field(() => [itemType])
    items: T[];

    @Field(() => Int, { description: 'How many items there are in all.' })
    total: number;

    @Field(() => Int)
    limit: number;

    @Field(() => Int)
    offset: number;
  }
  return PageModel as Type<PageShape<T>>;
}
