import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ErrorCode } from '@skillhost/core';
import { AuditService } from '../../domain/users/audit.service.js';
import { AdminOnly } from './decorators/auth.decorators.js';
import { AuditPageDto, AuditQueryDto } from './dto/audit.dto.js';
import { ApiErrors } from './openapi/api-errors.decorator.js';

/** The audit log, for admins. */
@Controller('v1/admin/audit')
@AdminOnly()
@ApiTags('admin')
export class AdminAuditController {
  constructor(private readonly audit: AuditService) {}

  @Get()
  @ApiOperation({
    summary: 'The audit log, newest first',
    description:
      'Installs, rollbacks, switches, changes of who sees a shared skill or owns it, role changes and group ' +
      'memberships (by admins or from sign-in), each with who made it and when. Written in the same transaction as ' +
      'the change.',
  })
  @ApiOkResponse({ type: AuditPageDto })
  @ApiErrors(ErrorCode.VALIDATION_FAILED)
  list(@Query() query: AuditQueryDto) {
    return this.audit.list(query);
  }
}
