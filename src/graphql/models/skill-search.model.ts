import { Field, Float, ObjectType } from '@nestjs/graphql';

@ObjectType('SkillSearchResult', { description: 'A skill ranked for a query (skills.search, GET /v1/skills/search).' })
export class SkillSearchResultModel {
  @Field()
  name: string;

  @Field()
  description: string;

  @Field(() => Float, { description: 'How well the skill fits the query, 0 to 1: the share of its words matched (a translated or corrected word fully, a related one partly), times how strongly.' })
  score: number;
}
