import { ArgsType, Field, Int } from '@nestjs/graphql';
import { PageQueryDto } from '../../http/dto/page-query.dto.js';

/** `limit` (1–200, default 50) and `offset` (≥ 0): the validation rules are REST's, inherited. */
@ArgsType()
export class PageArgs extends PageQueryDto {
  @Field(() => Int, { nullable: true, description: '1–200; default 50.' })
  declare limit?: number;

  @Field(() => Int, { nullable: true, description: '≥ 0; default 0.' })
  declare offset?: number;
}
