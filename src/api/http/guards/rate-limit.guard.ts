import { type CanActivate, type ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { GqlExecutionContext } from '@nestjs/graphql';
import type { Principal } from '../../../domain/users/principal.js';
import { principalCarrier } from '../decorators/request-context.js';
import { AppError, ErrorCode } from '@skillhost/core';
import { APP_CONFIG, type AppConfig } from '../../../config/app-config.js';
import { type HttpExchange, httpExchangeOf, notePrincipalId } from '../../../infra/observability/http-context.js';
import { MetricsService } from '../../../infra/observability/metrics.service.js';
import { CountsAsTurn, NotRateLimited, REQUESTS_LIMIT, TURNS_LIMIT } from '../decorators/rate-limit.decorators.js';
import { SlidingWindowLimiter } from '../../../domain/limits/rate-limiter.js';

const MINUTE_MS = 60_000;

const OPERATION_CHECKED = Symbol('skillhost.requestLimitChecked');

/**
 * Per-principal rate limits (per client address for requests without a key while auth is off),
 * registered after the principal guard so it knows who is calling: every REST call and GraphQL operation counts
 * against `requests_per_minute`, every turn against `turns_per_minute` too. Past a limit the
 * answer is 429 RATE_LIMITED with `Retry-After` (seconds). Counts live in this instance's memory.
 * It also notes the principal on the request, for the request's log line.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  private readonly requests: SlidingWindowLimiter;
  private readonly turns: SlidingWindowLimiter;

  constructor(
    private readonly reflector: Reflector,
    private readonly metrics: MetricsService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.requests = new SlidingWindowLimiter(config.app.limits.requestsPerMinute, MINUTE_MS);
    this.turns = new SlidingWindowLimiter(config.app.limits.turnsPerMinute, MINUTE_MS);
  }

  canActivate(context: ExecutionContext): boolean {
    // Subscriptions have no request of their own (their connection's upgrade was one).
    const exchange = httpExchangeOf(context);
    if (exchange === undefined) return true;
    const principal = principalCarrier(context).principal;
    if (principal !== undefined) notePrincipalId(exchange.request, principal.userId);
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride(NotRateLimited, targets)) return true;
    const caller = this.callerOf(exchange, principal);
    // A GraphQL operation runs the guards once per root field; it is one request, counted once.
    if (context.getType<string>() === 'graphql')
      this.oncePerOperation(context, () => this.check(this.requests, REQUESTS_LIMIT, caller, exchange));
    else this.check(this.requests, REQUESTS_LIMIT, caller, exchange);
    if (this.reflector.getAllAndOverride(CountsAsTurn, targets)) this.check(this.turns, TURNS_LIMIT, caller, exchange);
    return true;
  }

  /** The key's user; without a key (auth off: everyone is the one local admin), the client address. */
  private callerOf(exchange: HttpExchange, principal: Principal | undefined): string {
    if (principal !== undefined && principal.keyId !== null) return `user:${principal.userId}`;
    return `ip:${exchange.request.ip}`;
  }

  private check(limiter: SlidingWindowLimiter, limit: string, caller: string, exchange: HttpExchange): void {
    const verdict = limiter.hit(caller, Date.now());
    if (verdict.allowed) return;
    const retryAfterSeconds = Math.max(1, Math.ceil(verdict.retryAfterMs / 1000));
    exchange.reply.header('retry-after', String(retryAfterSeconds));
    this.metrics.observeRateLimited(limit);
    throw this.rateLimited(limit, limiter.limit, retryAfterSeconds, caller);
  }

  /** Every root field of an operation shares the verdict of its first: all pass, or all are refused. */
  private oncePerOperation(context: ExecutionContext, check: () => void): void {
    const operation = GqlExecutionContext.create(context).getContext<{ [OPERATION_CHECKED]?: AppError | null }>();
    if (operation[OPERATION_CHECKED] === undefined) {
      try {
        check();
        operation[OPERATION_CHECKED] = null;
      } catch (error) {
        operation[OPERATION_CHECKED] = error as AppError;
      }
    }
    if (operation[OPERATION_CHECKED] !== null) throw operation[OPERATION_CHECKED];
  }

  /** `caller` as `callerOf` made it: a key's user, or a client address. */
  private rateLimited(limit: string, max: number, retryAfterSeconds: number, caller: string): AppError {
    const who = caller.startsWith('user:') ? 'user' : 'client address';
    const what = limit === TURNS_LIMIT ? 'turns' : 'requests';
    return new AppError(
      ErrorCode.RATE_LIMITED,
      `Too many ${what}: at most ${max} a minute per ${who} on this server ([app.limits] ${limit}). Try again ` +
        `in ${retryAfterSeconds} s.`,
      { limit, max, retryAfterSeconds },
    );
  }
}
