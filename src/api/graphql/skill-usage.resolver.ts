import { Args, Query, Resolver } from '@nestjs/graphql';
import { SkillUsageService } from '../../domain/skills/usage/skill-usage.service.js';
import { AdminOnly } from '../http/decorators/auth.decorators.js';
import { SkillUsageReportDto } from '../http/dto/skill-usage.dto.js';
import { RequireFeature } from '../http/guards/feature.guard.js';
import { SkillUsageArgs } from './dto/skill-usage.args.js';

/** The twin of AdminSkillUsageController: admins only, SKILLS_DISABLED while skills are off. */
@Resolver()
@AdminOnly()
@RequireFeature('skills')
export class SkillUsageResolver {
  constructor(private readonly usage: SkillUsageService) {}

  @Query(() => SkillUsageReportDto, {
    description: 'The skills usage funnel per skill, and per day, version or model (GET /v1/admin/skills/usage).',
  })
  skillUsage(@Args() args: SkillUsageArgs) {
    return this.usage.report(args);
  }
}
