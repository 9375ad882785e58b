import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AppError, ErrorCode } from '../common/app-error.js';
import type { Principal } from './principal.js';
import { principalCarrier } from './request-context.js';

/** A route or resolver anyone may call, without a key (health checks). */
export const Public = Reflector.createDecorator<true>({ transform: () => true });

/** A route or resolver only admins may call; members get 403 FORBIDDEN. */
export const AdminOnly = Reflector.createDecorator<true>({ transform: () => true });

/** The principal the guard authenticated, in REST handlers and GraphQL resolvers alike. */
export const CurrentPrincipal = createParamDecorator((_: unknown, context: ExecutionContext): Principal => {
  const principal = principalCarrier(context).principal;
  // The guard runs before every handler; a handler without a principal is a wiring mistake.
  if (principal === undefined) throw new AppError(ErrorCode.INTERNAL, 'No principal on this request.');
  return principal;
});
