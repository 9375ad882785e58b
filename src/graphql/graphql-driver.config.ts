import type { MercuriusDriverConfig } from '@nestjs/mercurius';
import { type DocumentNode, type GraphQLSchema, specifiedRules, validate } from 'graphql';
import { AppError, ErrorCode } from '../common/app-error.js';
import { toGraphQLError } from '../common/app-exception.filter.js';
import { formatGraphQLErrors } from './graphql-errors.js';
import { assertSourceNesting, assertWithinLimits, isParsedDocument } from './query-limits.js';
import { connectionCredentials } from './subscription-auth.js';

/**
 * Documents longer than this are refused while parsing: ten times what the cost cap lets through
 * (a field is one to three tokens; the standard introspection query is 182).
 */
export const MAX_DOCUMENT_TOKENS = 10_000;

/** graphql-transport-ws pings this often, so that proxies keep an idle subscription open. */
const KEEP_ALIVE_MS = 30_000;

/**
 * The mercurius driver: `/graphql` for queries and mutations (POST, or GET for queries) and for
 * graphql-ws subscriptions (`graphql-transport-ws`). The schema is built in memory at start-up;
 * `npm run schema:graphql` writes it to schema.graphql. GraphiQL is off; introspection is on.
 */
export function graphqlDriverConfig(): Omit<MercuriusDriverConfig, 'driver'> {
  return {
    path: '/graphql',
    autoSchemaFile: true,
    sortSchema: true,
    graphiql: false,
    // Errors of nested fields go through the same exception filter as root fields (the guards need not: the root ran them).
    fieldResolverEnhancers: ['filters'],
    errorFormatter: (execution) => formatGraphQLErrors(execution) as ReturnType<NonNullable<MercuriusDriverConfig['errorFormatter']>>,
    graphql: { parseOptions: { maxTokens: MAX_DOCUMENT_TOKENS } },
    hooks: {
      // Before parsing: graphql-js parses recursively, so thousands of nested brackets would overflow its stack.
      preParsing: async (_schema, source) => refuse(() => assertSourceNesting(source)),
      // Before validation, so an oversized document costs no validation work either.
      preValidation: async (_schema, document) => refuseTooComplex(document),
      // mercurius neither limits nor validates subscription documents: both happen here.
      preSubscriptionExecution: async (schema, document) => {
        refuseTooComplex(document);
        refuseInvalid(schema, document);
      },
    },
    subscription: {
      // Credentials in `connection_init` become the headers every subscription of the connection is
      // authenticated with (by the principal guard, as a request's headers are).
      onConnect: ({ payload }) => {
        const headers = connectionCredentials(payload);
        return headers === undefined ? true : { headers };
      },
      keepAlive: KEEP_ALIVE_MS,
    },
  };
}

function refuseTooComplex(document: DocumentNode): void {
  refuse(() => {
    if (!isParsedDocument(document)) {
      const problem = 'query: must be GraphQL text (a JSON-encoded document or any other JSON value is not accepted)';
      throw new AppError(ErrorCode.VALIDATION_FAILED, `Invalid request: ${problem}`, { problems: [problem] });
    }
    assertWithinLimits(document);
  });
}

/** A refusal as a GraphQLError, which keeps its extensions on every path, the subscription error message included. */
function refuse(check: () => void): void {
  try {
    check();
  } catch (error) {
    throw toGraphQLError(error);
  }
}

function refuseInvalid(schema: GraphQLSchema, document: DocumentNode): void {
  const problems = validate(schema, document, specifiedRules).map((error) => error.message);
  if (problems.length > 0) throw toGraphQLError(new AppError(ErrorCode.VALIDATION_FAILED, `Invalid request: ${problems.join('; ')}`, { problems }));
}
