import { type ExecutionContext, Injectable } from '@nestjs/common';
import { FeatureGuard } from './feature.guard.js';
import { PrincipalGuard } from './principal.guard.js';
import { RateLimitGuard } from './rate-limit.guard.js';

/** A guard that answers at once when it can, and with a promise only when it must wait (a database look-up). */
export interface PromptGuard {
  canActivate(context: ExecutionContext): boolean | Promise<boolean>;
}

/**
 * Every route and resolver passes these checks, in this order: who is calling (401/403), how much they may (429),
 * whether the feature is on. They are one guard for Nest, which awaits each guard it is given: a request whose
 * checks all answer at once (a cached key, a limit with room) then waits for no promise at all.
 */
@Injectable()
export class RequestGuards implements PromptGuard {
  private readonly inOrder: readonly PromptGuard[];

  constructor(principal: PrincipalGuard, limits: RateLimitGuard, feature: FeatureGuard) {
    this.inOrder = [principal, limits, feature];
  }

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    return runInOrder(this.inOrder, context, 0);
  }
}

/** `guards[from…]` one after the other; false (or the first error) stops the rest. */
export function runInOrder(
  guards: readonly PromptGuard[],
  context: ExecutionContext,
  from: number,
): boolean | Promise<boolean> {
  for (let index = from; index < guards.length; index++) {
    const verdict = guards[index].canActivate(context);
    if (verdict instanceof Promise) return verdict.then((allowed) => allowed && runInOrder(guards, context, index + 1));
    if (!verdict) return false;
  }
  return true;
}
