import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, MaxLength } from 'class-validator';
import { CATALOGUE_FORMATS } from '@skillhost/core';

export class RunEvalsDto {
  @ApiPropertyOptional({
    enum: ['catalogue', 'model'],
    default: 'catalogue',
    description:
      '`catalogue`: is the skill listed for each request under the configured budget (no model); `model`: does ' +
      'the model activate it.',
  })
  @IsOptional()
  @IsIn(['catalogue', 'model'], { message: "level must be 'catalogue' or 'model'" })
  level?: 'catalogue' | 'model';

  @ApiPropertyOptional({ description: 'The model level: a configured model (default: the default model).' })
  @IsOptional()
  @IsString({ message: 'model must be a string' })
  @MaxLength(200, { message: 'model must be at most 200 characters' })
  model?: string;
}

/** A trigger eval case: the request, and whether it should lead to the skill (or to another one). */
class TriggerCaseDto {
  @ApiProperty()
  query: string;

  @ApiProperty()
  shouldTrigger: boolean;

  @ApiPropertyOptional({ description: 'On a negative case: the skill the request should lead to instead.' })
  expectSkill?: string;
}

export class EvalCaseResultDto extends TriggerCaseDto {
  @ApiProperty({ description: 'The skill was listed for the request (catalogue level).' })
  triggered: boolean;

  @ApiPropertyOptional({ description: 'The skill of `expectSkill` was listed; absent without it.' })
  expectedTriggered?: boolean;

  @ApiPropertyOptional({ type: [String], description: 'The model level: the skills the model activated.' })
  activated?: string[];

  @ApiProperty()
  pass: boolean;

  @ApiPropertyOptional({
    enum: ['file', 'kept'],
    description: "Where the case comes from: the skill's `evals/triggers.json`, or kept by the service.",
  })
  source?: 'file' | 'kept';

  @ApiPropertyOptional({ description: 'A kept case: its id (`DELETE …/evals/cases/{id}` removes it).' })
  caseId?: string;
}

export class EvalScoreDto {
  @ApiProperty({ type: 'integer' })
  cases: number;

  @ApiProperty({ type: 'integer' })
  passed: number;

  @ApiProperty({ type: 'integer' })
  truePositives: number;

  @ApiProperty({ type: 'integer' })
  falsePositives: number;

  @ApiProperty({ type: 'integer' })
  falseNegatives: number;

  @ApiProperty({ type: 'integer' })
  trueNegatives: number;

  @ApiProperty({ type: Number, nullable: true, description: 'Listed when it should be, of all listed; null: none.' })
  precision: number | null;

  @ApiProperty({ type: Number, nullable: true, description: 'Listed, of the cases that should be; null: none.' })
  recall: number | null;
}

export class SkillEvalRunDto {
  @ApiProperty()
  skill: string;

  @ApiProperty({ type: String, nullable: true, description: 'The version evaluated (`sha256:…`).' })
  digest: string | null;

  @ApiProperty({
    description:
      'Every skill fits the budget today, so every turn lists them all; the eval ranks anyway (what the ' +
      'description earns once the catalogue is partial).',
  })
  complete: boolean;

  @ApiProperty({ type: () => EvalScoreDto })
  score: EvalScoreDto;

  @ApiProperty({ type: () => [EvalCaseResultDto] })
  cases: EvalCaseResultDto[];
}

export class EvalLimitsDto {
  @ApiProperty({ type: 'integer' })
  budgetTokens: number;

  @ApiProperty({ type: 'integer' })
  maxSkills: number;

  @ApiProperty({ enum: CATALOGUE_FORMATS })
  format: string;
}

export class InvalidEvalsDto {
  @ApiProperty()
  skill: string;

  @ApiProperty({ type: [String] })
  problems: string[];
}

export class TriggerCollisionDto {
  @ApiProperty()
  query: string;

  @ApiProperty()
  skill: string;

  @ApiProperty()
  competitor: string;

  @ApiProperty()
  skillScore: number;

  @ApiProperty()
  competitorScore: number;
}

export class EvalRunDto {
  @ApiProperty({ enum: ['catalogue'] })
  level: 'catalogue';

  @ApiProperty({ type: () => EvalLimitsDto })
  limits: EvalLimitsDto;

  @ApiProperty({ type: () => [SkillEvalRunDto] })
  skills: SkillEvalRunDto[];

  @ApiProperty({ type: [String], description: 'Skills with no trigger evals.' })
  withoutEvals: string[];

  @ApiProperty({ type: () => [InvalidEvalsDto], description: 'Skills whose `evals/triggers.json` is not valid.' })
  invalid: InvalidEvalsDto[];

  @ApiPropertyOptional({
    type: () => [TriggerCollisionDto],
    description: 'A run over every skill: requests for which two skills compete.',
  })
  collisions?: TriggerCollisionDto[];
}

export class ModelEvalRunDto {
  @ApiProperty()
  skill: string;

  @ApiProperty({ type: String, nullable: true, description: 'The version evaluated (`sha256:…`).' })
  digest: string | null;

  @ApiProperty({ description: 'The configured model that ran.' })
  model: string;

  @ApiProperty({ type: 'integer', description: 'Model calls made (one per case run).' })
  calls: number;

  @ApiProperty({ type: 'integer', description: 'Cases left out when `model_max_calls` ran out.' })
  notRun: number;

  @ApiProperty({ type: () => EvalScoreDto })
  score: EvalScoreDto;

  @ApiProperty({ type: () => [EvalCaseResultDto] })
  cases: EvalCaseResultDto[];
}

export class StoredEvalRunDto {
  @ApiProperty()
  skill: string;

  @ApiProperty({ description: 'The version run (`sha256:…`).' })
  digest: string;

  @ApiProperty({ enum: ['catalogue', 'model'] })
  level: 'catalogue' | 'model';

  @ApiProperty({ description: "The model's name; empty at the catalogue level." })
  model: string;

  @ApiProperty({ type: () => EvalScoreDto })
  score: EvalScoreDto;

  @ApiProperty({ type: () => [EvalCaseResultDto] })
  cases: EvalCaseResultDto[];

  @ApiProperty({ type: String, format: 'date-time' })
  runAt: Date;
}

export class EvalHistoryDto {
  @ApiProperty()
  skill: string;

  @ApiProperty({
    type: () => [StoredEvalRunDto],
    description: 'The last run per version, level and model, newest first.',
  })
  runs: StoredEvalRunDto[];
}

export class EvalCaseAuthorDto {
  @ApiProperty({ type: String, nullable: true, description: 'Null once the user is deleted.' })
  id: string | null;

  @ApiProperty({ type: String, nullable: true })
  name: string | null;
}

export class EvalCaseDto extends TriggerCaseDto {
  @ApiProperty({
    enum: ['file', 'kept'],
    description: "`file`: from the skill's `evals/triggers.json` (read-only here); `kept`: added through the API.",
  })
  source: 'file' | 'kept';

  @ApiPropertyOptional({ format: 'uuid', description: 'A kept case: its id.' })
  id?: string;

  @ApiPropertyOptional({
    type: () => EvalCaseAuthorDto,
    nullable: true,
    description: 'A kept case: who added it (null: the server itself).',
  })
  addedBy?: EvalCaseAuthorDto | null;

  @ApiPropertyOptional({ type: String, format: 'date-time', description: 'A kept case: when it was added.' })
  addedAt?: Date;

  @ApiPropertyOptional({
    description: "A kept case whose request the skill's file now lists too: runs use the file's case instead.",
  })
  inFile?: boolean;
}

export class EvalCaseLimitsDto {
  @ApiProperty({ type: 'integer', description: 'Kept cases a skill may have (its file may have as many more).' })
  maxKeptCases: number;

  @ApiProperty({ type: 'integer' })
  maxQueryChars: number;
}

export class EvalCaseListDto {
  @ApiProperty()
  skill: string;

  @ApiProperty({ type: () => [EvalCaseDto], description: "The file's cases, then the kept ones, oldest first." })
  cases: EvalCaseDto[];

  @ApiProperty({
    type: [String],
    description: "Why the skill's `evals/triggers.json` is not valid (runs report it); empty when it is.",
  })
  fileProblems: string[];

  @ApiProperty({ type: () => EvalCaseLimitsDto })
  limits: EvalCaseLimitsDto;
}

export class DuplicateEvalCaseDto {
  @ApiProperty()
  query: string;

  @ApiProperty()
  shouldTrigger: boolean;

  @ApiPropertyOptional()
  expectSkill?: string;

  @ApiProperty({
    enum: ['file', 'kept', 'body'],
    description: "Where the same case already is: the skill's file, its kept cases, or earlier in the request.",
  })
  of: 'file' | 'kept' | 'body';
}

export class EvalCaseAdditionDto {
  @ApiProperty()
  skill: string;

  @ApiProperty({ type: () => [EvalCaseDto], description: 'The cases kept, in the order sent.' })
  added: EvalCaseDto[];

  @ApiProperty({ type: () => [DuplicateEvalCaseDto], description: 'Cases already there: merged, not kept twice.' })
  duplicates: DuplicateEvalCaseDto[];
}
