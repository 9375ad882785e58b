import { type CanActivate, type ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { GqlExecutionContext } from '@nestjs/graphql';
import type { Principal } from '../../../domain/users/principal.js';
import { principalCarrier } from '../decorators/request-context.js';
import { AppError, ErrorCode } from '@skillhost/core';
import { type HttpExchange, httpExchangeOf, notePrincipalId } from '../../../infra/observability/http-context.js';
import { MetricsService } from '../../../infra/observability/metrics.service.js';
import { CountsAsTurn, NotRateLimited } from '../decorators/rate-limit.decorators.js';
import { routeMetadata } from '../decorators/route-metadata.js';
import type { LimitVerdict } from '../../../domain/limits/leased-limiter.js';
import { type RateLimitName, REQUESTS_LIMIT, TURNS_LIMIT } from '../../../domain/limits/rate-limit-store.js';
import { RateLimitsService } from '../../../domain/limits/rate-limits.service.js';

const OPERATION_CHECKED = Symbol('skillhost.requestLimitChecked');

/** A check's outcome: passed (nothing), refused (throws), or decided once the store answers. */
type Checked = undefined | Promise<void>;

/**
 * Per-principal rate limits (per client address for requests without a key while auth is off),
 * registered after the principal guard so it knows who is calling: every REST call and GraphQL operation counts
 * against `requests_per_minute`, every turn against `turns_per_minute` too. Past a limit the
 * answer is 429 RATE_LIMITED with `Retry-After` (seconds). Counts are shared by every instance on the database
 * (RateLimitsService); a call its lease covers is decided without waiting.
 * It also notes the principal on the request, for the request's log line.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly metrics: MetricsService,
    private readonly limits: RateLimitsService,
  ) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    // Subscriptions have no request of their own (their connection's upgrade was one).
    const exchange = httpExchangeOf(context);
    if (exchange === undefined) return true;
    const principal = principalCarrier(context).principal;
    if (principal !== undefined) notePrincipalId(exchange.request, principal.userId);
    const [handler, owner] = [context.getHandler(), context.getClass()];
    if (routeMetadata(this.reflector, NotRateLimited, handler, owner)) return true;
    const caller = this.callerOf(exchange, principal);
    // A GraphQL operation runs the guards once per root field; it is one request, counted once.
    const request =
      context.getType<string>() === 'graphql'
        ? this.oncePerOperation(context, () => this.check(REQUESTS_LIMIT, caller, exchange))
        : this.check(REQUESTS_LIMIT, caller, exchange);
    if (!routeMetadata(this.reflector, CountsAsTurn, handler, owner)) return request === undefined || passed(request);
    if (request !== undefined) return passed(request.then(() => this.check(TURNS_LIMIT, caller, exchange)));
    const turn = this.check(TURNS_LIMIT, caller, exchange);
    return turn === undefined || passed(turn);
  }

  /** The key's user; without a key (auth off: everyone is the one local admin), the client address. */
  private callerOf(exchange: HttpExchange, principal: Principal | undefined): string {
    if (principal !== undefined && (principal.keyId !== null || principal.sessionId !== undefined))
      return `user:${principal.userId}`;
    return `ip:${exchange.request.ip}`;
  }

  private check(limit: RateLimitName, caller: string, exchange: HttpExchange): Checked {
    const verdict = this.limits.hit(limit, caller);
    if (verdict instanceof Promise) return verdict.then((answer) => this.enforce(answer, limit, caller, exchange));
    this.enforce(verdict, limit, caller, exchange);
    return undefined;
  }

  private enforce(verdict: LimitVerdict, limit: RateLimitName, caller: string, exchange: HttpExchange): void {
    if (verdict.allowed) return;
    const retryAfterSeconds = Math.max(1, Math.ceil(verdict.retryAfterMs / 1000));
    exchange.reply.header('retry-after', String(retryAfterSeconds));
    this.metrics.observeRateLimited(limit);
    throw this.rateLimited(limit, this.limits.max(limit), retryAfterSeconds, caller);
  }

  /** Every root field of an operation shares the verdict of its first: all pass, or all are refused. */
  private oncePerOperation(context: ExecutionContext, check: () => Checked): Checked {
    type Verdict = Checked | null | AppError;
    const operation = GqlExecutionContext.create(context).getContext<{ [OPERATION_CHECKED]?: Verdict }>();
    if (!(OPERATION_CHECKED in operation)) {
      try {
        operation[OPERATION_CHECKED] = check() ?? null;
      } catch (error) {
        operation[OPERATION_CHECKED] = error as AppError;
      }
    }
    const verdict = operation[OPERATION_CHECKED];
    if (AppError.isInstance(verdict)) throw verdict;
    return verdict ?? undefined;
  }

  /** `caller` as `callerOf` made it: a key's user, or a client address. */
  private rateLimited(limit: RateLimitName, max: number, retryAfterSeconds: number, caller: string): AppError {
    const who = caller.startsWith('user:') ? 'user' : 'client address';
    const what = limit === TURNS_LIMIT ? 'turns' : 'requests';
    return new AppError(
      ErrorCode.RATE_LIMITED,
      `Too many ${what}: at most ${max} a minute per ${who}, counted together by every instance of this server ` +
        `([app.limits] ${limit}). Try again in ${retryAfterSeconds} s.`,
      { limit, max, retryAfterSeconds },
    );
  }
}

function passed(checked: Promise<void>): Promise<boolean> {
  return checked.then(() => true);
}
