import { ArgsType, Field } from '@nestjs/graphql';
import { IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { NulAllowed } from '../../common/validation.pipe.js';
import { CATALOGUE_FORMATS } from '../../config/app-config.js';
import { CatalogueQueryDto } from '../../skills/dto/catalogue-query.dto.js';

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
  @Field(() => String, { nullable: true, description: `One of ${CATALOGUE_FORMATS.join(', ')}; default: app.skills.catalogue_format.` })
  declare format?: CatalogueQueryDto['format'];
}
