import { ArgsType, Field } from '@nestjs/graphql';
import { USAGE_GROUPS, type UsageGroup } from '../../../domain/skills/usage/skill-usage.js';
import { SkillUsageQueryDto } from '../../http/dto/skill-usage.dto.js';

/** REST's filters and rules; `groupBy` is a list here rather than a comma-separated string. */
@ArgsType()
export class SkillUsageArgs extends SkillUsageQueryDto {
  @Field(() => String, { nullable: true, description: 'Only this skill.' })
  declare skill?: string;

  @Field(() => String, { nullable: true, description: "Only this model; `''` for MCP clients." })
  declare model?: string;

  @Field(() => String, {
    nullable: true,
    description: 'First UTC day (YYYY-MM-DD), inclusive; default 29 days before `to`.',
  })
  declare from?: string;

  @Field(() => String, { nullable: true, description: 'Last UTC day (YYYY-MM-DD), inclusive; default today.' })
  declare to?: string;

  @Field(() => [String], { nullable: true, description: `Any of ${USAGE_GROUPS.join(', ')}.` })
  declare groupBy?: UsageGroup[];
}
