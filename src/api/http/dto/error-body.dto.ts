import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ErrorCode } from '@skillhost/core';
import type { ErrorBody } from '../../errors/app-exception.filter.js';

/** The OpenAPI schema of every error answer (`toErrorBody` in app-exception.filter.ts builds it). */
export class ErrorBodyDto implements ErrorBody {
  @ApiProperty({
    enum: ErrorCode,
    enumName: 'ErrorCode',
    description: 'Stable and machine-readable; each code has one HTTP status.',
  })
  code: ErrorCode;

  @ApiProperty({
    description: 'What was wrong, for a person.',
    example: "Chat '1b4e28ba-2fa1-11d2-883f-0016d3cca427' not found.",
  })
  message: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      'Structured context, e.g. `problems` (one line per problem, the first ten) and `moreProblems` (how many ' +
      'more) for VALIDATION_FAILED.',
  })
  details?: Record<string, unknown>;
}
