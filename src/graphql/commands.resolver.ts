import { Query, Resolver } from '@nestjs/graphql';
import { CurrentPrincipal } from '../auth/auth.decorators.js';
import type { Principal } from '../auth/principal.js';
import { RequireFeature } from '../common/feature.guard.js';
import { presentCommandList } from '../skills/command.presenter.js';
import { CommandDto } from '../skills/dto/command-responses.dto.js';
import { SkillRegistryService } from '../skills/skill-registry.service.js';

/** The twin of CommandsController: SKILLS_DISABLED while skills are off. */
@Resolver()
@RequireFeature('skills')
export class CommandsResolver {
  constructor(private readonly registry: SkillRegistryService) {}

  @Query(() => [CommandDto], { description: 'The loaded commands, run as `/name args`, in name order (GET /v1/commands).' })
  commands(@CurrentPrincipal() principal: Principal) {
    return presentCommandList(this.registry.viewFor(principal.userId)).commands;
  }
}
