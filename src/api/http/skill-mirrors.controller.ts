import { Body, Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ErrorCode } from '@skillhost/core';
import type { Principal } from '../../domain/users/principal.js';
import { SkillMirrorService } from '../../domain/skills/store/skill-mirror.service.js';
import { AdminOnly, CurrentPrincipal } from './decorators/auth.decorators.js';
import { AddMirrorDto, MirrorDto } from './dto/mirror.dto.js';
import { RequireFeature } from './guards/feature.guard.js';
import { ApiErrors } from './openapi/api-errors.decorator.js';

/**
 * Mirrors over HTTP (admins): list them with their last run, add and remove the API's own, run one now. Mirrors from
 * the configuration are listed too, read-only.
 */
@Controller('v1/admin/skills/mirrors')
@RequireFeature('skills')
@AdminOnly()
@ApiTags('store')
export class SkillMirrorsController {
  constructor(private readonly mirrors: SkillMirrorService) {}

  @Get()
  @ApiOperation({ summary: 'Every mirror, with its last success, last error and next run' })
  @ApiOkResponse({ type: [MirrorDto] })
  list() {
    return this.mirrors.list();
  }

  @Post()
  @ApiOperation({ summary: 'Add a mirror: its source is imported every interval, first within moments' })
  @ApiCreatedResponse({ type: MirrorDto })
  @ApiErrors(ErrorCode.SKILL_MIRROR_NAME_TAKEN, ErrorCode.VALIDATION_FAILED)
  add(@Body() body: AddMirrorDto, @CurrentPrincipal() principal: Principal) {
    return this.mirrors.add(body, principal.userId);
  }

  @Post(':name/run')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Run a mirror now and answer once it is done',
    description: 'When a run of it is under way already (on any instance), the answer is the mirror as it is.',
  })
  @ApiOkResponse({ type: MirrorDto })
  @ApiErrors(ErrorCode.SKILL_MIRROR_NOT_FOUND)
  run(@Param('name') name: string) {
    return this.mirrors.runNow(name);
  }

  @Delete(':name')
  @HttpCode(204)
  @ApiOperation({ summary: 'Remove a mirror the API added; the skills it installed stay' })
  @ApiNoContentResponse({ description: 'Removed.' })
  @ApiErrors(ErrorCode.SKILL_MIRROR_NOT_FOUND, ErrorCode.SKILL_MIRROR_CONFIGURED)
  async remove(@Param('name') name: string): Promise<void> {
    await this.mirrors.remove(name);
  }
}
