import type { ExecutionContext } from '@nestjs/common';
import { GqlExecutionContext } from '@nestjs/graphql';
import type { CredentialHeaders } from '../../../domain/users/api-key.js';
import type { Principal } from '../../../domain/users/principal.js';

/** What the guard reads credentials from and writes the principal to, whichever front door the call came through. */
export interface PrincipalCarrier {
  headers: CredentialHeaders;
  principal?: Principal;
}

/**
 * HTTP: the request itself. GraphQL: the operation's context, which holds the HTTP request's
 * headers and principal, or for a subscription the `authorization` sent in graphql-ws's
 * `connection_init`.
 */
export function principalCarrier(context: ExecutionContext): PrincipalCarrier {
  if (context.getType<string>() === 'graphql') {
    const gql = GqlExecutionContext.create(context).getContext<{
      principal?: Principal;
      headers?: CredentialHeaders;
      reply?: { request: PrincipalCarrier };
    }>();
    gql.headers ??= gql.reply?.request.headers ?? {};
    // Over HTTP the key was checked before the body was read (keys-before-bodies.ts).
    gql.principal ??= gql.reply?.request.principal;
    return gql as PrincipalCarrier;
  }
  return context.switchToHttp().getRequest<PrincipalCarrier>();
}
