import { applyDecorators, Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { ErrorCode } from '@skillhost/core';
import type { Principal } from '../../domain/users/principal.js';
import { TriggerEvalService } from '../../domain/skills/evals/trigger-eval.service.js';
import { CurrentPrincipal } from './decorators/auth.decorators.js';
import { EvalHistoryDto, EvalRunDto, ModelEvalRunDto, RunEvalsDto } from './dto/skill-evals.dto.js';
import { RequireFeature } from './guards/feature.guard.js';
import { ApiErrors } from './openapi/api-errors.decorator.js';

/** What a run of a skill's trigger evals answers, at either of its paths. */
function RunEvalsResponses() {
  return applyDecorators(
    ApiOkResponse({
      schema: { oneOf: [{ $ref: getSchemaPath(EvalRunDto) }, { $ref: getSchemaPath(ModelEvalRunDto) }] },
      description: 'The catalogue level (`level` absent or `catalogue`), or the model level (`level: "model"`).',
    }),
    ApiExtraModels(EvalRunDto, ModelEvalRunDto),
    ApiErrors(ErrorCode.SKILL_NOT_FOUND, ErrorCode.VALIDATION_FAILED, ErrorCode.FORBIDDEN),
  );
}

/** A skill's trigger evals, run on demand (docs/trigger-evals.md). */
@Controller('v1/admin/skills')
@RequireFeature('skills')
@ApiTags('store')
export class SkillEvalsController {
  constructor(private readonly evals: TriggerEvalService) {}

  @Post(':name/evals/run')
  @HttpCode(200)
  @ApiOperation({
    summary: "Run a skill's trigger evals: is it listed for each request under the catalogue budget",
    description:
      'The cases of its `evals/triggers.json` and those kept for it (`…/evals/cases`; each result says which), ' +
      "against the team's catalogue as a turn ranks it. Admins, and " +
      'editors for the shared skills they or one of their groups own (else 403 FORBIDDEN). `level: "model"`: ' +
      'whether the configured model activates it, one call per case as the first step of a new chat, at most ' +
      "`[app.skills.evals] model_max_calls`. For a skill named `mirrors` this path is a mirror's run " +
      "(`POST /v1/admin/skills/mirrors/{name}/run`): `POST /v1/admin/skills/{name}/evals` runs any skill's.",
  })
  @RunEvalsResponses()
  run(@Param('name') name: string, @Body() body: RunEvalsDto, @CurrentPrincipal() principal: Principal) {
    return this.evals.runFor(name, principal, body);
  }

  /** The same run, at a path every skill name reaches (docs/http-api.md, "Skill names in paths"). */
  @Post(':name/evals')
  @HttpCode(200)
  @ApiOperation({
    summary: "Run a skill's trigger evals (the same as …/evals/run, at a path no other route shadows)",
    description:
      'Runs the evals and keeps the run, which `GET` on the same path then lists. The same callers, body and ' +
      'answer as `POST /v1/admin/skills/{name}/evals/run`, which a skill named `mirrors` cannot reach.',
  })
  @RunEvalsResponses()
  runAtEvals(@Param('name') name: string, @Body() body: RunEvalsDto, @CurrentPrincipal() principal: Principal) {
    return this.evals.runFor(name, principal, body);
  }

  @Get(':name/evals')
  @ApiOperation({
    summary: "A skill's kept trigger eval runs: precision and recall per version, level and model",
    description: 'The same callers as running them.',
  })
  @ApiOkResponse({ type: EvalHistoryDto })
  @ApiErrors(ErrorCode.VALIDATION_FAILED, ErrorCode.FORBIDDEN)
  history(@Param('name') name: string, @CurrentPrincipal() principal: Principal) {
    return this.evals.history(name, principal);
  }
}
