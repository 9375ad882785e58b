import { errorCodeOf } from '../../domain/shared/error-code-of.js';
import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { GqlArgumentsHost } from '@nestjs/graphql';
import { GraphQLError } from 'graphql';
import { type CredentialHeaders, presentedKey } from '../../domain/users/api-key.js';
import type { Principal } from '../../domain/users/principal.js';
import { AppError, ErrorCode, httpStatusOf } from '@skillhost/core';
import { presentOpenAIError } from './openai-error.js';

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

/** Who an error answer is for: an admin also gets the error's `adminDetails`. */
export interface ErrorReader {
  admin: boolean;
}

/** Anyone: no admin details. */
export const ANY_READER: ErrorReader = Object.freeze({ admin: false });

/** The reader a request acts as (the guard has put its principal there; none yet reads as anyone). */
export function errorReaderOf(principal: Pick<Principal, 'role'> | undefined): ErrorReader {
  return principal?.role === 'admin' ? { admin: true } : ANY_READER;
}

/** Turns anything thrown into `{code, message, details?}` for `reader`; unexpected errors become a bare INTERNAL. */
export function toErrorBody(error: unknown, reader: ErrorReader = ANY_READER): { status: number; body: ErrorBody } {
  if (AppError.isInstance(error)) {
    const body: ErrorBody = { code: error.code, message: error.message };
    const details =
      reader.admin && error.adminDetails !== undefined ? { ...error.details, ...error.adminDetails } : error.details;
    if (details !== undefined) body.details = details;
    return { status: httpStatusOf(error.code), body };
  }
  if (error instanceof HttpException) {
    const code = errorCodeOf(error);
    if (code !== ErrorCode.INTERNAL) return { status: error.getStatus(), body: { code, message: error.message } };
  }
  return {
    status: 500,
    body: { code: ErrorCode.INTERNAL, message: 'An unexpected error occurred; it has been logged.' },
  };
}

/**
 * The same error for GraphQL: the REST code and status in `extensions`, validation problems in `extensions.details`.
 */
export function toGraphQLError(error: unknown, reader: ErrorReader = ANY_READER): GraphQLError {
  const { status, body } = toErrorBody(error, reader);
  return new GraphQLError(body.message, {
    extensions: { code: body.code, status, ...(body.details !== undefined ? { details: body.details } : {}) },
  });
}

/**
 * Who the failed call acted as, once the principal guard has said (REST: the request; GraphQL: the operation's
 * context).
 */
function principalOf(host: ArgumentsHost): Principal | undefined {
  if (host.getType<string>() === 'graphql')
    return GqlArgumentsHost.create(host).getContext<{ principal?: Principal }>().principal;
  if (host.getType<string>() === 'http') return host.switchToHttp().getRequest<{ principal?: Principal }>().principal;
  return undefined;
}

interface ReplyLike {
  status(code: number): ReplyLike;
  header(name: string, value: string): ReplyLike;
  hasHeader?(name: string): boolean;
  send(payload: unknown): unknown;
}

/**
 * The client closed the connection while its body was being read (Node's "aborted" with
 * ECONNRESET): not the server's fault, and nobody is left to read an answer.
 */
function isClientAbort(error: unknown, request: RequestLike | undefined): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  const abortError = e?.code === 'ECONNRESET' || (error instanceof Error && error.message === 'aborted');
  const raw = request?.raw;
  return abortError && raw !== undefined && (raw.destroyed || !raw.socket || raw.socket.destroyed);
}

const CLIENT_ABORTED = {
  status: 400,
  body: {
    code: ErrorCode.VALIDATION_FAILED,
    message: 'The request was not received whole: the client closed the connection.',
  },
};

interface RequestLike {
  raw?: { destroyed: boolean; socket?: { destroyed: boolean } | null };
}

interface McpRequestLike {
  url?: string;
  body?: unknown;
  headers?: CredentialHeaders;
}

function isMcpRequest(request: McpRequestLike): boolean {
  return request.url !== undefined && /^\/mcp(?:[?#]|$)/.test(request.url);
}

/** The OpenAI-compatible gateway: its clients read OpenAI's error shape. */
function isGatewayRequest(request: McpRequestLike): boolean {
  return request.url !== undefined && /^\/openai(?:[/?#]|$)/.test(request.url);
}

/**
 * For `/mcp`, the error body is also a JSON-RPC error response (MCP clients read `error`), with the
 * same `code` inside `error.data`: -32001 for a session that is not open (as the MCP SDK answers
 * it), -32000 (a server error) for the rest.
 */
function asJsonRpcError(body: ErrorBody, requestBody: unknown): ErrorBody & Record<string, unknown> {
  const id =
    typeof requestBody === 'object' && requestBody !== null && !Array.isArray(requestBody)
      ? (requestBody as { id?: unknown }).id
      : undefined;
  const rpcId = typeof id === 'string' || typeof id === 'number' ? id : null;
  const data = { code: body.code, ...(body.details !== undefined ? { details: body.details } : {}) };
  return {
    jsonrpc: '2.0',
    id: rpcId,
    error: { code: body.code === ErrorCode.MCP_SESSION_NOT_FOUND ? -32001 : -32000, message: body.message, data },
    ...body,
  };
}

/**
 * The 401's challenge (RFC 6750 §3): `invalid_token` when a key was sent, and the API's own message
 * either way, so an agent that shows only the header (many MCP clients) tells its user what to do.
 * (The RFC would leave a request without credentials with the realm alone; the message saying how
 * to send a key is worth more to the person reading it.) The description keeps to the characters
 * the RFC allows: printable ASCII but `"` and `\`.
 */
export function bearerChallenge(message: string, keySent: boolean): string {
  const description = message
    .replace(/"/g, "'")
    .replace(/\\/g, '/')
    .replace(/…/g, '...')
    .replace(/[^\x20-\x7e]/g, '?');
  return `Bearer realm="skillhost"${keySent ? ', error="invalid_token"' : ''}, error_description="${description}"`;
}

/**
 * An OAuth probe's answer is also an OAuth error response (RFC 6749 §5.2, RFC 7591 §3.2.2), which
 * the MCP SDKs' OAuth code parses: without `error` it reports a schema complaint, with it the message.
 */
function asOAuthError(body: ErrorBody): Record<string, unknown> {
  return { ...body, error: 'invalid_request', error_description: body.message };
}

/** Every error of every front door, REST, GraphQL and MCP, in one shape with one status per code. */
@Catch()
export class AppExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(error: unknown, host: ArgumentsHost): GraphQLError | undefined {
    const aborted =
      host.getType<string>() === 'http' && isClientAbort(error, host.switchToHttp().getRequest<RequestLike>());
    const reader = errorReaderOf(principalOf(host));
    const { status, body } = aborted ? CLIENT_ABORTED : toErrorBody(error, reader);
    // Expected failures (a model down, the database gone) are one line; anything else gets its stack.
    if (aborted) this.logger.debug(`The client went away before its request was read (${(error as Error).message})`);
    else if (AppError.isInstance(error) && status >= 500) this.logger.warn(`${error.code}: ${error.message}`);
    else if (status >= 500) this.logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    // GraphQL: Nest rethrows what the filter returns, and the GraphQL server puts it in `errors`.
    if (host.getType<string>() === 'graphql') return toGraphQLError(error, reader);
    const reply = host.switchToHttp().getResponse<ReplyLike>();
    const request = host.getType<string>() === 'http' ? host.switchToHttp().getRequest<McpRequestLike>() : undefined;
    // The key check before bodies may have set it already, with more to say (OAuth's resource_metadata on /mcp).
    if (body.code === ErrorCode.UNAUTHENTICATED && reply.hasHeader?.('www-authenticate') !== true)
      reply.header(
        'www-authenticate',
        bearerChallenge(body.message, request !== undefined && presentedKey(request.headers ?? {}) !== undefined),
      );
    // RFC 6750 §3.1: the scope a narrow OAuth token lacks, which MCP clients ask for again (step-up authorization).
    const missing = (body as ErrorBody).details?.scope;
    if (body.code === ErrorCode.INSUFFICIENT_SCOPE && typeof missing === 'string')
      reply.header('www-authenticate', `Bearer realm="skillhost", error="insufficient_scope", scope="${missing}"`);
    const sent =
      request !== undefined && isMcpRequest(request)
        ? asJsonRpcError(body, request.body)
        : request !== undefined && isGatewayRequest(request)
          ? presentOpenAIError(status, body)
          : body.code === ErrorCode.OAUTH_NOT_SUPPORTED
            ? asOAuthError(body)
            : body;
    reply.status(status).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(sent));
    return undefined;
  }
}
