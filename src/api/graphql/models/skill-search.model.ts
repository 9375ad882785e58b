import { Field, Float, ObjectType } from '@nestjs/graphql';

@ObjectType('SkillSearchResult', { description: 'A skill ranked for a query (skills.search, GET /v1/skills/search).' })
export class SkillSearchResultModel {
  @Field()
  name: string;

  @Field()
  description: string;

  @Field(() => Float, { description: 'How well the skill fits the query, 0 to 1: its relevance (BM25 over name, description and triggers), normalised so that 0.5 is a middling match; results come in this order.' })
  score: number;
}
