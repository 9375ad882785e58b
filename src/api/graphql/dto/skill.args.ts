import { ArgsType, Field, Int } from '@nestjs/graphql';
import { IsNotEmpty, IsOptional, IsString, MaxLength } from 'class-validator';
import { IntegerInRange } from '../../http/dto/page-query.dto.js';
import { MAX_SEARCH_QUERY, MAX_SEARCH_RESULTS } from '@skillhost/core';
import { NulAllowed } from '../../http/pipes/validation.pipe.js';
import { CATALOGUE_FORMATS } from '../../../config/app-config.js';
import { CatalogueQueryDto } from '../../http/dto/catalogue-query.dto.js';

@ArgsType()
export class SkillNameArgs {
  @Field()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  name: string;
}

@ArgsType()
export class SkillResourceArgs extends SkillNameArgs {
  @Field({ description: 'Relative to the skill folder, such as `references/REFERENCE.md`.' })
  @IsString()
  @MaxLength(4096)
  @NulAllowed()
  path: string;
}

/** The format is checked by REST's rule (VALIDATION_FAILED naming the formats), not a GraphQL enum. */
@ArgsType()
export class CatalogueArgs extends CatalogueQueryDto {
  @Field(() => String, {
    nullable: true,
    description: `One of ${CATALOGUE_FORMATS.join(', ')}; default: app.skills.catalogue_format.`,
  })
  declare format?: CatalogueQueryDto['format'];

  @Field(() => String, {
    nullable: true,
    description:
      'A message as a user would send it in a new chat: the catalogue a turn with it would list. Without it: ' +
      'every skill.',
  })
  declare query?: string;
}

/** `GET /v1/skills/search`'s arguments, with the same limits. */
@ArgsType()
export class SkillSearchArgs {
  @Field({ description: 'What the skill should do, in a few words (any language; typos are tolerated).' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_SEARCH_QUERY)
  query: string;

  @Field(() => Int, { nullable: true, description: `At most this many (default 10, at most ${MAX_SEARCH_RESULTS}).` })
  @IsOptional()
  @IntegerInRange(1, MAX_SEARCH_RESULTS)
  limit?: number;
}
