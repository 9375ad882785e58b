import { ErrorCode } from '@skillhost/core';

/** An error answer's body as every door has it (`toErrorBody`). */
interface ErrorBodyLike {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

/** OpenAI's error `type` for each status class; `code` is Skillhost's own, in lower case. */
function errorType(status: number, code: ErrorCode): string {
  if (code === ErrorCode.UNAUTHENTICATED) return 'authentication_error';
  if (code === ErrorCode.FORBIDDEN || code === ErrorCode.SKILL_DISABLED) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return code === ErrorCode.MODEL_ERROR ? 'api_error' : 'server_error';
  return 'invalid_request_error';
}

/**
 * An error as OpenAI's clients read it (`{error: {message, type, code, param}}`), keeping Skillhost's own code and
 * details beside for clients that know them. `param` is the field a validation problem names first.
 */
export function presentOpenAIError(status: number, body: ErrorBodyLike) {
  const problems = body.details?.problems;
  const first = Array.isArray(problems) && typeof problems[0] === 'string' ? (problems[0] as string) : undefined;
  const field = first?.includes(':') ? first.slice(0, first.indexOf(':')) : undefined;
  // Only a field's path: other problems are sentences that may hold a colon ("The body is not valid JSON: …").
  const param = field !== undefined && /^[\w.-]+$/.test(field) ? field : null;
  return {
    error: {
      message: body.message,
      type: errorType(status, body.code),
      code: body.code.toLowerCase(),
      param,
      ...(body.details === undefined ? {} : { details: body.details }),
    },
  };
}
