import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ErrorCode } from '@skillhost/core';
import { SkillUsageService } from '../../domain/skills/usage/skill-usage.service.js';
import { AdminOnly } from './decorators/auth.decorators.js';
import { SkillUsageQueryDto, SkillUsageReportDto } from './dto/skill-usage.dto.js';
import { RequireFeature } from './guards/feature.guard.js';
import { ApiErrors } from './openapi/api-errors.decorator.js';

/** The skills usage funnel, for admins. */
@Controller('v1/admin/skills/usage')
@AdminOnly()
@RequireFeature('skills')
@ApiTags('admin')
export class AdminSkillUsageController {
  constructor(private readonly usage: SkillUsageService) {}

  @Get()
  @ApiOperation({
    summary: 'The skills usage funnel',
    description:
      'Per skill (and per day, version or model, as `groupBy` asks), over a range of UTC days: how often it was ' +
      'offered in a catalogue, activated (by tool call, `/name`, command, MCP or the gateway), had files read or ' +
      'scripts run, failed, and took part in a turn; with the totals and the skills nothing activated. Counts are ' +
      'written in batches (`[app.skills.usage] flush_interval_ms`), so the last seconds may not show yet.',
  })
  @ApiOkResponse({ type: SkillUsageReportDto })
  @ApiErrors(ErrorCode.VALIDATION_FAILED)
  report(@Query() query: SkillUsageQueryDto) {
    return this.usage.report(query);
  }
}
