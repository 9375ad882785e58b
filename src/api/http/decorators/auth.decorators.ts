import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AppError, ErrorCode } from '@skillhost/core';
import type { Principal } from '../../../domain/users/principal.js';
import type { Scope } from '../../../domain/users/scopes.js';
import { principalCarrier } from './request-context.js';
import { routeMetadata, type RouteTarget } from './route-metadata.js';

/** A route or resolver anyone may call, without a key (health checks). */
export const Public = Reflector.createDecorator<true>({ transform: () => true });

/**
 * Whether a route or resolver answers without a key: `@Public()` on it or on its class. The one
 * rule the guard, the key check before bodies (keys-before-bodies.ts) and the OpenAPI document ask.
 */
export function isPublicRoute(reflector: Reflector, handler: RouteTarget, owner: RouteTarget): boolean {
  return routeMetadata(reflector, Public, handler, owner) === true;
}

/** A route or resolver only admins may call; members get 403 FORBIDDEN. */
export const AdminOnly = Reflector.createDecorator<true>({ transform: () => true });

/**
 * The OAuth scope a route or resolver needs of an access token (scopes.ts), on it or its class; `none` for one any
 * token may call (who am I, my grants). A route without one needs every scope the token's role allows, so a route
 * added without thinking of scopes is closed to narrow tokens rather than open. API keys hold every scope their role
 * allows; `@AdminOnly()` needs `admin`.
 */
export const RequireScope = Reflector.createDecorator<Scope | 'none'>();

/** The principal the guard authenticated, in REST handlers and GraphQL resolvers alike. */
export const CurrentPrincipal = createParamDecorator((_: unknown, context: ExecutionContext): Principal => {
  const principal = principalCarrier(context).principal;
  // The guard runs before every handler; a handler without a principal is a wiring mistake.
  if (principal === undefined) throw new AppError(ErrorCode.INTERNAL, 'No principal on this request.');
  return principal;
});
