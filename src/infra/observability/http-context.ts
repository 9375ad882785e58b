import type { ExecutionContext } from '@nestjs/common';
import { GqlExecutionContext } from '@nestjs/graphql';
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface HttpExchange {
  request: FastifyRequest;
  reply: FastifyReply;
}

/**
 * The HTTP request and reply behind a REST call or a GraphQL operation sent over HTTP (mercurius
 * puts the reply in the operation's context); undefined for a subscription over a WebSocket.
 */
export function httpExchangeOf(context: ExecutionContext): HttpExchange | undefined {
  if (context.getType<string>() === 'graphql') {
    const reply = GqlExecutionContext.create(context).getContext<{ reply?: FastifyReply }>().reply;
    return reply?.request === undefined ? undefined : { request: reply.request, reply };
  }
  if (context.getType() !== 'http') return undefined;
  const http = context.switchToHttp();
  return { request: http.getRequest<FastifyRequest>(), reply: http.getResponse<FastifyReply>() };
}

const PRINCIPAL_ID = Symbol('skillhost.principalId');
type WithPrincipalId = FastifyRequest & { [PRINCIPAL_ID]?: string };

/**
 * Remembers who a request acted as, for its log line (GraphQL keeps the principal in its own context, not on the
 * request).
 */
export function notePrincipalId(request: FastifyRequest, userId: string): void {
  (request as WithPrincipalId)[PRINCIPAL_ID] = userId;
}

export function principalIdOf(request: FastifyRequest): string | null {
  return (request as WithPrincipalId)[PRINCIPAL_ID] ?? null;
}
