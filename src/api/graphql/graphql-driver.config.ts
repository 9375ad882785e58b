import type { MercuriusDriverConfig } from '@nestjs/mercurius';
import { type DocumentNode, type GraphQLSchema, specifiedRules, validate } from 'graphql';
import type { MercuriusContext } from 'mercurius';
import type { AuthService } from '../../domain/users/auth.service.js';
import { toGraphQLError } from '../errors/app-exception.filter.js';
import { unstorableStringProblems, validationFailed } from '../../domain/shared/validation-errors.js';
import { formatGraphQLErrors } from './graphql-errors.js';
import { assertSourceNesting, assertWithinLimits, isParsedDocument } from './query-limits.js';
import { authenticateConnection, type SubscriptionConnectionLike } from './subscription-auth.js';

/**
 * Documents longer than this are refused while parsing: ten times what the cost cap lets through
 * (a field is one to three tokens; the standard introspection query is 182).
 */
export const MAX_DOCUMENT_TOKENS = 10_000;

/** Where GraphQL is served, over HTTP and WebSocket. */
export const GRAPHQL_PATH = '/graphql';

/** graphql-transport-ws pings this often, so that proxies keep an idle subscription open. */
const KEEP_ALIVE_MS = 30_000;

/**
 * The mercurius driver: `/graphql` for queries and mutations (POST, or GET for queries) and for
 * graphql-ws subscriptions (`graphql-transport-ws`). The schema is built in memory at start-up;
 * `npm run schema:graphql` writes it to schema.graphql. GraphiQL is off; introspection is on.
 */
export function graphqlDriverConfig(auth: AuthService): Omit<MercuriusDriverConfig, 'driver'> {
  return {
    path: GRAPHQL_PATH,
    autoSchemaFile: true,
    sortSchema: true,
    // Nest would check the built schema by running the whole introspection query on it at every start (about a
    // twelfth of a start's CPU in a profile of bench:server-start); the schema is the code's, which the GraphQL
    // suites and schema.graphql check.
    buildSchemaOptions: { skipCheck: true },
    graphiql: false,
    // Errors of nested fields go through the same exception filter as root fields (the guards need not: the root ran
    // them).
    fieldResolverEnhancers: ['filters'],
    errorFormatter: (execution) =>
      formatGraphQLErrors(execution) as ReturnType<NonNullable<MercuriusDriverConfig['errorFormatter']>>,
    graphql: { parseOptions: { maxTokens: MAX_DOCUMENT_TOKENS } },
    hooks: {
      // Before parsing: graphql-js parses recursively, so thousands of nested brackets would overflow its stack.
      preParsing: async (_schema, source, context) =>
        refuse(() => {
          assertStorableFields(context);
          assertSourceNesting(source);
        }),
      // Before validation, so an oversized document costs no validation work either.
      preValidation: async (_schema, document) => refuseTooComplex(document),
      // mercurius neither limits nor validates subscription documents: both happen here.
      preSubscriptionExecution: async (schema, document) => {
        refuseTooComplex(document);
        refuseInvalid(schema, document);
      },
    },
    subscription: {
      // A connection is authenticated at `connection_init` (refused ones are closed with 4401), and
      // its credentials become the headers every subscription of it is authenticated with again (by
      // the principal guard, as a request's headers are). mercurius calls this as a method of the
      // connection, which is how it reaches the socket to close.
      onConnect(this: SubscriptionConnectionLike, { payload }) {
        return authenticateConnection(auth, this, payload);
      },
      keepAlive: KEEP_ALIVE_MS,
    },
  };
}

/**
 * Every field of a GraphQL request over HTTP (`query`, `operationName`, `extensions`, any other)
 * holds storable text, as every REST body field must. `variables` are left to the arguments they
 * become, which the validation pipe checks with each field's own rules (a resource path keeps NUL
 * for RESOURCE_OUTSIDE_SKILL).
 */
function assertStorableFields(context: MercuriusContext): void {
  const request = context.reply?.request;
  if (request === undefined) return;
  const problems = unstorableStringProblems(
    request.method === 'GET' ? decodedExtensions(request.query) : request.body,
    undefined,
    (key) => key === 'variables',
  );
  if (problems.length > 0) throw validationFailed(problems);
}

/**
 * A GET's query parameters with `extensions`, JSON text in the URL, as the value it stands for (mercurius answers JSON
 * that does not parse).
 */
function decodedExtensions(query: unknown): unknown {
  const { extensions } = (query ?? {}) as { extensions?: unknown };
  if (typeof extensions !== 'string') return query;
  try {
    return { ...(query as object), extensions: JSON.parse(extensions) as unknown };
  } catch {
    return query;
  }
}

function refuseTooComplex(document: DocumentNode): void {
  refuse(() => {
    if (!isParsedDocument(document)) {
      throw validationFailed([
        'query: must be GraphQL text (a JSON-encoded document or any other JSON value is not accepted)',
      ]);
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
  if (problems.length > 0) throw toGraphQLError(validationFailed(problems));
}
