import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AppError, ErrorCode } from '@skillhost/core';
import { AdminOnly, isPublicRoute, RequireScope } from '../decorators/auth.decorators.js';
import { AuthService } from '../../../domain/users/auth.service.js';
import { principalCarrier } from '../decorators/request-context.js';
import { routeMetadata, type RouteTarget } from '../decorators/route-metadata.js';
import type { Principal } from '../../../domain/users/principal.js';
import { holdsEveryScope, holdsScope, scopesOfRole } from '../../../domain/users/scopes.js';

/**
 * The one place that decides who may call what, for REST routes and GraphQL resolvers alike:
 * `@Public()` needs nothing, everything else a valid key (401 UNAUTHENTICATED), and `@AdminOnly()`
 * an admin (403 FORBIDDEN). Ownership of chats is the chat service's: another user's chat is
 * simply not found.
 */
@Injectable()
export class PrincipalGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly auth: AuthService,
  ) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const [handler, owner] = [context.getHandler(), context.getClass()];
    if (isPublicRoute(this.reflector, handler, owner)) return true;
    const carrier = principalCarrier(context);
    // A GraphQL operation authenticates once; its nested resolvers find the principal already there. A REST
    // route's key was checked before its body (keys-before-bodies.ts).
    if (carrier.principal !== undefined) return this.checkRole(carrier.principal, handler, owner);
    const found = this.auth.authenticateNow(carrier.headers);
    if (!(found instanceof Promise)) return this.checkRole((carrier.principal = found), handler, owner);
    return found.then((principal) => this.checkRole((carrier.principal ??= principal), handler, owner));
  }

  private checkRole(principal: Principal, handler: RouteTarget, owner: RouteTarget): true {
    const adminOnly = routeMetadata(this.reflector, AdminOnly, handler, owner) === true;
    if (adminOnly && principal.role !== 'admin') {
      throw new AppError(ErrorCode.FORBIDDEN, `This needs an admin; '${principal.name}' is a ${principal.role}.`);
    }
    // Keys (no `scopes`) hold every scope their role allows: only OAuth tokens are checked further.
    if (principal.scopes !== undefined) this.checkScope(principal, adminOnly, handler, owner);
    return true;
  }

  private checkScope(principal: Principal, adminOnly: boolean, handler: RouteTarget, owner: RouteTarget): void {
    const needed = adminOnly ? 'admin' : routeMetadata(this.reflector, RequireScope, handler, owner);
    if (needed === 'none') return;
    if (needed === undefined ? holdsEveryScope(principal) : holdsScope(principal, needed)) return;
    const granted = [...(principal.scopes ?? [])].join(' ') || 'none';
    throw new AppError(
      ErrorCode.INSUFFICIENT_SCOPE,
      needed === undefined
        ? `This needs a token with every scope your role allows (or an API key); this token has: ${granted}.`
        : `This needs the scope '${needed}'; this token has: ${granted}. Ask for it when you authorize the client.`,
      { scope: needed === undefined ? scopesOfRole(principal.role).join(' ') : needed },
    );
  }
}
