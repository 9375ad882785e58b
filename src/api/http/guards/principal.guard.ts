import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AppError, ErrorCode } from '@skillhost/core';
import { AdminOnly, isPublicRoute } from '../decorators/auth.decorators.js';
import { AuthService } from '../../../domain/users/auth.service.js';
import { principalCarrier } from '../decorators/request-context.js';

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

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const [handler, owner] = [context.getHandler(), context.getClass()];
    if (isPublicRoute(this.reflector, handler, owner)) return true;
    const carrier = principalCarrier(context);
    // A GraphQL operation authenticates once; its nested resolvers find the principal already there.
    carrier.principal ??= await this.auth.authenticate(carrier.headers);
    if (this.reflector.getAllAndOverride(AdminOnly, [handler, owner]) && carrier.principal.role !== 'admin') {
      throw new AppError(
        ErrorCode.FORBIDDEN,
        `This needs an admin; '${carrier.principal.name}' is a ${carrier.principal.role}.`,
      );
    }
    return true;
  }
}
