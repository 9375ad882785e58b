import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { AppError, ErrorCode } from './app-error.js';

/** Flattens class-validator errors into one readable line per problem, e.g. "format: must be one of …". */
export function describeValidationErrors(errors: ValidationError[], prefix = ''): string[] {
  return errors.flatMap((error) => {
    const path = prefix ? `${prefix}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => `${path}: ${message}`);
    return [...own, ...describeValidationErrors(error.children ?? [], path)];
  });
}

/** DTO validation for every route: unknown fields are rejected, failures become VALIDATION_FAILED. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    transform: true,
    whitelist: true,
    forbidNonWhitelisted: true,
    exceptionFactory: (errors) => {
      const problems = describeValidationErrors(errors);
      return new AppError(ErrorCode.VALIDATION_FAILED, `Invalid request: ${problems.join('; ')}`, { problems });
    },
  });
}
