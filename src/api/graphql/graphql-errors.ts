import { Logger } from '@nestjs/common';
import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { AppError, cutProblem, ErrorCode, MAX_LISTED_PROBLEMS } from '@skillhost/core';
import { toGraphQLError } from '../errors/app-exception.filter.js';
import { validationFailed } from '../../domain/shared/validation-errors.js';

export interface FormattedErrors {
  statusCode: number;
  response: { data: unknown; errors: GraphQLFormattedError[] };
}

/**
 * What mercurius hands its error formatter: an execution result, or `{errors}` for a request refused before executing.
 */
export interface ErroredExecution {
  data?: unknown;
  errors: readonly (GraphQLError | Error)[];
}

const KNOWN_CODES = new Set<string>(Object.values(ErrorCode));
/** graphql-js's words when a document is over `maxTokens` ("more that" is its spelling). */
const TOO_MANY_TOKENS = /^Syntax Error: Document contains more th(?:at|an) \d+ tokens/;
const logger = new Logger('GraphQL');

/**
 * mercurius's `errorFormatter`: every error leaves with `extensions.code` (the REST code) and
 * `extensions.status` (the REST status of that code); VALIDATION_FAILED always carries
 * `extensions.details.problems`. mercurius's default formatter keeps extensions, but the errors it
 * raises itself (syntax, validation, variables) have no code, and it takes the HTTP status from the
 * first error only when there is exactly one.
 *
 * The HTTP status: an operation that ran answers 200 whatever failed inside it (each error's REST
 * status is in its `extensions.status`), as GraphQL over HTTP asks of `application/json`; a
 * request refused before anything ran (unparsable, invalid, too complex, body too large) answers
 * the status of its first error, 400 or 413.
 */
export function formatGraphQLErrors(execution: ErroredExecution): FormattedErrors {
  const executed = execution.data !== undefined;
  const leaves = execution.errors.flatMap((error) => leafErrors(error));
  // A refused request's problems are listed as REST lists them: the first ten, then how many more
  // (graphql-js stops at 100). An operation that ran keeps every error: each belongs to a field.
  const listed = executed ? leaves : leaves.slice(0, MAX_LISTED_PROBLEMS);
  const errors = listed.map(({ error, refusalStatus }) => formatError(error, executed ? undefined : refusalStatus));
  if (leaves.length > listed.length) errors.push(formatError(moreProblems(leaves.length - listed.length), undefined));
  const statusCode = executed ? 200 : ((errors[0]?.extensions?.status as number | undefined) ?? 500);
  return { statusCode, response: { data: execution.data ?? null, errors } };
}

/** The error that stands for the refused request's problems left unlisted. */
function moreProblems(count: number): AppError {
  return new AppError(
    ErrorCode.VALIDATION_FAILED,
    `… and ${count} more problems, not listed: fix the ones above first.`,
    { problems: [], moreProblems: count },
  );
}

/**
 * mercurius wraps the errors of a refused request (syntax, validation, variables) in one error that
 * carries their HTTP status. A bare GraphQLError refusing a request comes from graphql-js itself
 * (an unknown operation name): the request's fault too.
 */
function leafErrors(error: GraphQLError | Error): { error: GraphQLError | Error; refusalStatus: number }[] {
  const wrapper = error instanceof GraphQLError && error.originalError ? error.originalError : error;
  const status = (wrapper as { statusCode?: unknown }).statusCode;
  const refusalStatus = typeof status === 'number' ? status : wrapper instanceof GraphQLError ? 400 : 500;
  const inner = (wrapper as { errors?: unknown }).errors;
  if (Array.isArray(inner) && inner.length > 0)
    return inner.map((e: GraphQLError | Error) => ({ error: e, refusalStatus }));
  return [{ error, refusalStatus }];
}

/** `refusalStatus` is set when the request was refused before executing. */
function formatError(error: GraphQLError | Error, refusalStatus: number | undefined): GraphQLFormattedError {
  const graphQLError = error instanceof GraphQLError ? error : undefined;
  const appError = AppError.isInstance(error)
    ? error
    : AppError.isInstance(graphQLError?.originalError)
      ? graphQLError.originalError
      : undefined;
  let shaped: GraphQLError;
  if (appError !== undefined) {
    shaped = toGraphQLError(appError);
  } else if (graphQLError !== undefined && KNOWN_CODES.has(graphQLError.extensions.code as string)) {
    shaped = graphQLError;
  } else if (refusalStatus !== undefined && refusalStatus < 500) {
    shaped = toGraphQLError(refusalError(error.message, refusalStatus));
  } else {
    // A bug (a resolver that threw past the exception filter, a null in a non-null field): logged, and its details kept
    // here.
    logger.error(error.stack ?? error.message);
    const message =
      graphQLError !== undefined && graphQLError.originalError === undefined
        ? graphQLError.message
        : 'An unexpected error occurred; it has been logged.';
    shaped = toGraphQLError(new AppError(ErrorCode.INTERNAL, message));
  }
  return {
    message: shaped.message,
    ...(graphQLError?.locations !== undefined ? { locations: graphQLError.locations } : {}),
    ...(graphQLError?.path !== undefined ? { path: graphQLError.path } : {}),
    extensions: shaped.extensions,
  };
}

/** graphql-js's words, cut as a listed problem is: they quote the value refused, which may be a megabyte long. */
function refusalError(message: string, status: number): AppError {
  const shown = cutProblem(message);
  if (status === 413) return new AppError(ErrorCode.PAYLOAD_TOO_LARGE, shown);
  if (TOO_MANY_TOKENS.test(message)) return new AppError(ErrorCode.QUERY_TOO_COMPLEX, shown);
  return validationFailed([message], shown);
}
