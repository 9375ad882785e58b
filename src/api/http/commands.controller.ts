import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequireScope } from './decorators/auth.decorators.js';
import type { Principal } from '../../domain/users/principal.js';
import { RequireFeature } from './guards/feature.guard.js';
import { presentCommandList } from '../presenters/command.presenter.js';
import { CommandListDto } from './dto/command-responses.dto.js';
import { SkillRegistryService } from '@skillhost/nest';

/** Commands are read with the skills, so they are off (SKILLS_DISABLED) whenever skills are. */
@Controller('v1')
@RequireScope('chats')
@RequireFeature('skills')
@ApiTags('skills')
export class CommandsController {
  constructor(private readonly registry: SkillRegistryService) {}

  @Get('commands')
  @ApiOperation({
    summary: 'List the loaded commands',
    description:
      'Command files (`<name>.md` in `[app.commands] directories`) that a message runs as `/name args`, in name ' +
      'order. `missingSkills` names required skills that are not loaded now.',
  })
  @ApiOkResponse({ type: CommandListDto })
  async list(@CurrentPrincipal() principal: Principal) {
    // The caller's view: a command needing one of the caller's personal skills is not missing it.
    return presentCommandList(await this.registry.userView(principal.userId));
  }
}
