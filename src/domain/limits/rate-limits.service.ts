import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { throttled } from '../shared/log-throttle.js';
import { LeasedLimiter, type LimitVerdict, type StoreFailureReport, StoreOutage } from './leased-limiter.js';
import {
  RATE_LIMIT_METRICS,
  RATE_LIMIT_STORE,
  type RateLimitMetrics,
  type RateLimitName,
  type RateLimitStore,
  REQUESTS_LIMIT,
  TURNS_LIMIT,
} from './rate-limit-store.js';

const MINUTE_MS = 60_000;
/** After a failed take, how long calls go unchecked before the store is asked again. */
const STORE_RETRY_MS = 5000;
/** At most one warning per this long while the store keeps failing: the metric counts every failure. */
const WARNING_INTERVAL_MS = 60_000;

/**
 * `[app.limits] requests_per_minute` and `turns_per_minute` per caller, counted together by every instance on the
 * database (`LeasedLimiter`). A failing store never fails a call: it is let through, counted in the metrics, and
 * a warning is logged now and then.
 */
@Injectable()
export class RateLimitsService implements StoreFailureReport {
  private readonly logger = new Logger(RateLimitsService.name);
  private readonly limiters: Record<RateLimitName, LeasedLimiter>;
  private readonly warn = throttled((message) => this.logger.warn(message), WARNING_INTERVAL_MS);

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(RATE_LIMIT_STORE) store: RateLimitStore,
    @Inject(RATE_LIMIT_METRICS) private readonly metrics: RateLimitMetrics,
  ) {
    const outage = new StoreOutage(STORE_RETRY_MS, this);
    const { requestsPerMinute, turnsPerMinute } = config.app.limits;
    this.limiters = {
      [REQUESTS_LIMIT]: new LeasedLimiter(
        { name: REQUESTS_LIMIT, max: requestsPerMinute, windowMs: MINUTE_MS },
        store,
        outage,
      ),
      [TURNS_LIMIT]: new LeasedLimiter({ name: TURNS_LIMIT, max: turnsPerMinute, windowMs: MINUTE_MS }, store, outage),
    };
  }

  /**
   * One call of `caller` (a key's user, or a client address) against `limit`: a promise only when the store is asked.
   */
  hit(limit: RateLimitName, caller: string): LimitVerdict | Promise<LimitVerdict> {
    return this.limiters[limit].hit(caller);
  }

  max(limit: RateLimitName): number {
    return this.limiters[limit].spec.max;
  }

  failed(error: unknown): void {
    this.metrics.observeRateLimitStoreError();
    const reason = error instanceof Error ? error.message : String(error);
    this.warn(
      `Rate limits are not being checked: their store in the database failed (${reason}). Requests are let ` +
        'through until it answers again (skillhost_rate_limit_store_errors_total counts the failures).',
    );
  }

  unchecked(limit: RateLimitName): void {
    this.metrics.observeRateLimitUnchecked(limit);
  }

  recovered(): void {
    this.logger.log('Rate limits are checked again: their store in the database answers.');
  }
}
