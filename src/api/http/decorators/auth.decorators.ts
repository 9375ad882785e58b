import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AppError, ErrorCode } from '@skillhost/core';
import type { Principal } from '../../../domain/users/principal.js';
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

/** The principal the guard authenticated, in REST handlers and GraphQL resolvers alike. */
export const CurrentPrincipal = createParamDecorator((_: unknown, context: ExecutionContext): Principal => {
  const principal = principalCarrier(context).principal;
  // The guard runs before every handler; a handler without a principal is a wiring mistake.
  if (principal === undefined) throw new AppError(ErrorCode.INTERNAL, 'No principal on this request.');
  return principal;
});
