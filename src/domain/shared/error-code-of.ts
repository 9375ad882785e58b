import { HttpException } from '@nestjs/common';
import { AppError, ErrorCode } from '@skillhost/core';

/** Framework-raised HTTP errors (unknown route, oversized body, malformed JSON) get stable codes too. */
export function codeForHttpStatus(status: number): ErrorCode | undefined {
  if (status === 404) return ErrorCode.ROUTE_NOT_FOUND;
  if (status === 403) return ErrorCode.FORBIDDEN;
  if (status === 413) return ErrorCode.PAYLOAD_TOO_LARGE;
  if (status === 415) return ErrorCode.UNSUPPORTED_MEDIA_TYPE;
  if (status === 400) return ErrorCode.VALIDATION_FAILED;
  return undefined;
}

/** The stable code an error is answered with (what a client reads, and what metrics count it as). */
export function errorCodeOf(error: unknown): ErrorCode {
  if (AppError.isInstance(error)) return error.code;
  if (error instanceof HttpException) return codeForHttpStatus(error.getStatus()) ?? ErrorCode.INTERNAL;
  return ErrorCode.INTERNAL;
}
