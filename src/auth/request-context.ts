import type { ExecutionContext } from '@nestjs/common';
import { GqlExecutionContext } from '@nestjs/graphql';
import type { CredentialHeaders } from './api-key.js';
import type { Principal } from './principal.js';

/** What the guard reads credentials from and writes the principal to, whichever front door the call came through. */
export interface PrincipalCarrier {
  headers: CredentialHeaders;
  principal?: Principal;
}

/**
 * HTTP: the request itself. GraphQL: the operation's context, which holds the HTTP request's
 * headers, or for a subscription the `authorization` sent in graphql-ws's `connection_init`.
 */
export function principalCarrier(context: ExecutionContext): PrincipalCarrier {
  if (context.getType<string>() === 'graphql') {
    const gql = GqlExecutionContext.create(context).getContext<{ principal?: Principal; headers?: CredentialHeaders; reply?: { request: { headers: CredentialHeaders } } }>();
    gql.headers ??= gql.reply?.request.headers ?? {};
    return gql as PrincipalCarrier;
  }
  return context.switchToHttp().getRequest<PrincipalCarrier>();
}
