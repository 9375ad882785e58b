import { describe, expect, it } from '@jest/globals';
import { GraphQLError } from 'graphql';
import { AppError, ErrorCode } from '@skillhost/core';
import { toGraphQLError } from '../errors/app-exception.filter.js';
import { formatGraphQLErrors } from './graphql-errors.js';

/**
 * What mercurius makes of an error it raised before executing: one error wrapping the real ones, with an HTTP status.
 */
function refusal(statusCode: number, ...errors: Error[]): GraphQLError {
  const wrapper = Object.assign(new Error('Graphql validation error'), { statusCode, errors });
  return new GraphQLError(wrapper.message, { originalError: wrapper });
}

describe(formatGraphQLErrors.name, () => {
  it(
    'keeps the extensions of errors that went through the exception filter, and answers 200 for an operation that ' +
      'ran',
    () => {
      const filtered = toGraphQLError(new AppError(ErrorCode.CHAT_NOT_FOUND, "Chat 'x' not found.", { id: 'x' }));
      const located = new GraphQLError(filtered.message, { path: ['chat'], originalError: filtered });
      expect(formatGraphQLErrors({ data: null, errors: [located] })).toEqual({
        statusCode: 200,
        response: {
          data: null,
          errors: [
            {
              message: "Chat 'x' not found.",
              path: ['chat'],
              extensions: { code: 'CHAT_NOT_FOUND', status: 404, details: { id: 'x' } },
            },
          ],
        },
      });
    },
  );

  it('shapes an AppError that did not go through the filter', () => {
    const error = new GraphQLError('boom', {
      path: ['chat', 'messages'],
      originalError: new AppError(ErrorCode.DATABASE_UNAVAILABLE, 'The database is unavailable.'),
    });
    expect(formatGraphQLErrors({ data: { chat: null }, errors: [error] }).response.errors).toEqual([
      {
        message: 'The database is unavailable.',
        path: ['chat', 'messages'],
        extensions: { code: 'DATABASE_UNAVAILABLE', status: 503 },
      },
    ]);
  });

  it(
    'unwraps a refused request into VALIDATION_FAILED errors with their problem, and answers 400 whatever their ' +
      'number',
    () => {
      const unknown = new GraphQLError('Cannot query field "nope" on type "Query".', {});
      const missing = new GraphQLError(
        'Field "chat" argument "id" of type "ID!" is required, but it was not provided.',
        {},
      );
      expect(formatGraphQLErrors({ errors: [refusal(400, unknown, missing)] })).toEqual({
        statusCode: 400,
        response: {
          data: null,
          errors: [
            {
              message: unknown.message,
              extensions: { code: 'VALIDATION_FAILED', status: 400, details: { problems: [unknown.message] } },
            },
            {
              message: missing.message,
              extensions: { code: 'VALIDATION_FAILED', status: 400, details: { problems: [missing.message] } },
            },
          ],
        },
      });
    },
  );

  it('answers a request graphql-js refuses before executing (an unknown operation) with 400 VALIDATION_FAILED', () => {
    const message = 'Unknown operation named "Nope".';
    expect(formatGraphQLErrors({ errors: [new GraphQLError(message)] })).toEqual({
      statusCode: 400,
      response: {
        data: null,
        errors: [{ message, extensions: { code: 'VALIDATION_FAILED', status: 400, details: { problems: [message] } } }],
      },
    });
  });

  it(
    'answers a body over the limit with 413 PAYLOAD_TOO_LARGE and an oversized document with ' + 'QUERY_TOO_COMPLEX',
    () => {
      const tooLarge = Object.assign(new Error('Request body is too large'), { statusCode: 413 });
      expect(
        formatGraphQLErrors({ errors: [new GraphQLError(tooLarge.message, { originalError: tooLarge })] }),
      ).toMatchObject({
        statusCode: 413,
        response: {
          errors: [{ message: 'Request body is too large', extensions: { code: 'PAYLOAD_TOO_LARGE', status: 413 } }],
        },
      });
      const tokens = new GraphQLError('Syntax Error: Document contains more that 10000 tokens. Parsing aborted.', {});
      expect(formatGraphQLErrors({ errors: [refusal(400, tokens)] })).toMatchObject({
        statusCode: 400,
        response: { errors: [{ extensions: { code: 'QUERY_TOO_COMPLEX', status: 400 } }] },
      });
    },
  );

  it('keeps the status of a domain error thrown before executing (the complexity check)', () => {
    const error = new GraphQLError('too complex', {
      originalError: new AppError(ErrorCode.QUERY_TOO_COMPLEX, 'The query is too complex.', { depth: 12 }),
    });
    expect(formatGraphQLErrors({ errors: [error] })).toEqual({
      statusCode: 400,
      response: {
        data: null,
        errors: [
          {
            message: 'The query is too complex.',
            extensions: { code: 'QUERY_TOO_COMPLEX', status: 400, details: { depth: 12 } },
          },
        ],
      },
    });
  });

  it('turns anything else into INTERNAL: a bare error loses its message, a GraphQL execution error keeps it', () => {
    const thrown = new GraphQLError('secret detail', { path: ['me'], originalError: new Error('secret detail') });
    const nonNull = new GraphQLError('Cannot return null for non-nullable field Chat.title.', {
      path: ['chat', 'title'],
    });
    expect(formatGraphQLErrors({ data: null, errors: [thrown, nonNull] }).response.errors).toEqual([
      {
        message: 'An unexpected error occurred; it has been logged.',
        path: ['me'],
        extensions: { code: 'INTERNAL', status: 500 },
      },
      {
        message: 'Cannot return null for non-nullable field Chat.title.',
        path: ['chat', 'title'],
        extensions: { code: 'INTERNAL', status: 500 },
      },
    ]);
  });
});
