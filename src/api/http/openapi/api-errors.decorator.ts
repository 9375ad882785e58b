import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath, type ResponseObject } from '@nestjs/swagger';
import { ErrorCode, httpStatusOf } from '@skillhost/core';
import { ErrorBodyDto } from '../dto/error-body.dto.js';
import { ERROR_CODE_DESCRIPTIONS } from './error-code-descriptions.js';

const DECLARED_ERROR_CODES = 'skillhost:openapi:error-codes';

/**
 * Documents the error codes a route answers besides the ones every route of its kind answers
 * (those are added by rule when the document is built, see `route-rules.ts`): one response per
 * HTTP status, the status taken from `httpStatusOf`, each with the error body schema.
 */
export function ApiErrors(...codes: ErrorCode[]): MethodDecorator {
  return (target, key, descriptor) => {
    const handler = descriptor.value as object;
    const declared = [...new Set([...declaredErrorCodes(handler), ...codes])];
    Reflect.defineMetadata(DECLARED_ERROR_CODES, declared, handler);
    const responses = Object.entries(errorResponses(codes)).map(([status, response]) =>
      ApiResponse({ status: Number(status), ...response }),
    );
    applyDecorators(ApiExtraModels(ErrorBodyDto), ...responses)(target, key, descriptor);
  };
}

/** The codes `@ApiErrors` declared on a route handler. */
export function declaredErrorCodes(handler: object): ErrorCode[] {
  return (Reflect.getMetadata(DECLARED_ERROR_CODES, handler) as ErrorCode[] | undefined) ?? [];
}

/** Error responses by HTTP status: each lists its codes and narrows the body's `code` to them. */
export function errorResponses(codes: Iterable<ErrorCode>): Record<number, ResponseObject> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(codes)) {
    const status = httpStatusOf(code);
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const statuses = [...byStatus.keys()].sort((a, b) => a - b);
  return Object.fromEntries(statuses.map((status) => [status, errorResponse(status, byStatus.get(status)!.sort())]));
}

function errorResponse(status: number, codes: ErrorCode[]): ResponseObject {
  const response: ResponseObject = {
    description: codes.map((code) => `\`${code}\`: ${ERROR_CODE_DESCRIPTIONS[code]}`).join('\n\n'),
    content: {
      'application/json': {
        schema: {
          allOf: [
            { $ref: getSchemaPath(ErrorBodyDto) },
            { type: 'object', properties: { code: { type: 'string', enum: codes } } },
          ],
        },
      },
    },
  };
  if (status === 401)
    response.headers = {
      'www-authenticate': {
        description:
          'RFC 6750: `Bearer realm="skillhost", error="invalid_token", error_description="<the message>"` ' +
          '(without `error` when no key was sent).',
        schema: { type: 'string' },
      },
    };
  // A limit (429) and every import slot taken (503 IMPORT_BUSY) say when to try again; other 503s do not.
  if (status === 429 || codes.includes(ErrorCode.IMPORT_BUSY))
    response.headers = {
      'retry-after': {
        description:
          status === 429 ? 'Seconds until the call would be let through.' : 'With `IMPORT_BUSY`: seconds to wait.',
        schema: { type: 'integer', minimum: 1 },
      },
    };
  return response;
}
