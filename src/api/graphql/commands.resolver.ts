import { Query, Resolver } from '@nestjs/graphql';
import { CurrentPrincipal, RequireScope } from '../http/decorators/auth.decorators.js';
import type { Principal } from '../../domain/users/principal.js';
import { RequireFeature } from '../http/guards/feature.guard.js';
import { presentCommandList } from '../presenters/command.presenter.js';
import { SkillRegistryService } from '@skillhost/nest';
import { CommandDto } from '../http/dto/command-responses.dto.js';

/** The twin of CommandsController: SKILLS_DISABLED while skills are off. */
@Resolver()
@RequireScope('chats')
@RequireFeature('skills')
export class CommandsResolver {
  constructor(private readonly registry: SkillRegistryService) {}

  @Query(() => [CommandDto], {
    description: 'The loaded commands, run as `/name args`, in name order (GET /v1/commands).',
  })
  async commands(@CurrentPrincipal() principal: Principal) {
    return presentCommandList(await this.registry.userView(principal.userId)).commands;
  }
}
