import { Body, Controller, Delete, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { ErrorCode } from '@skillhost/core';
import { z } from 'zod';
import { EvalCaseService } from '../../domain/skills/evals/eval-case.service.js';
import { addedCasesSchema } from '../../domain/skills/evals/trigger-evals.js';
import type { Principal } from '../../domain/users/principal.js';
import { CurrentPrincipal } from './decorators/auth.decorators.js';
import { EvalCaseAdditionDto, EvalCaseListDto } from './dto/skill-evals.dto.js';
import { RequireFeature } from './guards/feature.guard.js';
import { ApiErrors } from './openapi/api-errors.decorator.js';

const WHO =
  'Admins, and editors for the shared skills they or one of their groups own (else 403 FORBIDDEN), as for running ' +
  'the evals.';

/** The JSON Schema of the forms a body may take, derived from the schemas that read them. */
const { $schema: _dialect, ...ADDED_CASES_SCHEMA } = z.toJSONSchema(addedCasesSchema) as Record<string, unknown>;

interface StatusReply {
  status(code: number): unknown;
}

/** The trigger eval cases the service keeps for a skill beside its file's (docs/trigger-evals.md). */
@Controller('v1/admin/skills')
@RequireFeature('skills')
@ApiTags('store')
export class SkillEvalCasesController {
  constructor(private readonly cases: EvalCaseService) {}

  @Get(':name/evals/cases')
  @ApiOperation({
    summary: "A skill's trigger eval cases: its file's (read-only) and those kept by the service",
    description: WHO,
  })
  @ApiOkResponse({ type: EvalCaseListDto })
  @ApiErrors(ErrorCode.VALIDATION_FAILED, ErrorCode.FORBIDDEN)
  list(@Param('name') name: string, @CurrentPrincipal() principal: Principal) {
    return this.cases.list(name, principal);
  }

  @Post(':name/evals/cases')
  @ApiOperation({
    summary: 'Add trigger eval cases to a skill: one, or several in the forms of `evals/triggers.json`',
    description:
      `${WHO} Each case is read with the file's rules and messages; a request the file or a kept case lists the ` +
      'other way, or more than 500 kept cases, is refused (400, nothing kept). A case already there is merged: ' +
      'answered in `duplicates`, not kept twice. 201 when a case was kept, 200 when all were already there.',
  })
  @ApiBody({
    schema: ADDED_CASES_SCHEMA,
    examples: {
      one: { value: { query: 'draft an RFC for the billing service', should_trigger: true } },
      several: {
        value: [
          { query: 'write a proposal for moving to Kafka', should_trigger: true },
          { query: 'build an MCP server for GitHub', should_trigger: false, expect_skill: 'mcp-builder' },
        ],
      },
      grouped: { value: { should_trigger: ['draft a design doc'], should_not_trigger: ['make a GIF'] } },
    },
  })
  @ApiCreatedResponse({ type: EvalCaseAdditionDto, description: 'At least one case was kept.' })
  @ApiOkResponse({ type: EvalCaseAdditionDto, description: 'Every case was there already (`duplicates`).' })
  @ApiErrors(ErrorCode.SKILL_NOT_FOUND, ErrorCode.VALIDATION_FAILED, ErrorCode.FORBIDDEN)
  async add(
    @Param('name') name: string,
    @Body() body: unknown,
    @CurrentPrincipal() principal: Principal,
    @Res({ passthrough: true }) reply: StatusReply,
  ) {
    const addition = await this.cases.add(name, principal, body);
    reply.status(addition.added.length > 0 ? 201 : 200);
    return addition;
  }

  @Delete(':name/evals/cases/:id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Remove a kept trigger eval case', description: WHO })
  @ApiNoContentResponse({ description: 'Removed.' })
  @ApiErrors(ErrorCode.EVAL_CASE_NOT_FOUND, ErrorCode.VALIDATION_FAILED, ErrorCode.FORBIDDEN)
  async remove(@Param('name') name: string, @Param('id') id: string, @CurrentPrincipal() principal: Principal) {
    await this.cases.remove(name, id, principal);
  }
}
