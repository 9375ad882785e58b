/** The limits of `[app.limits]`, by the names the metrics, the errors and the store's keys use. */
export const REQUESTS_LIMIT = 'requests_per_minute';
export const TURNS_LIMIT = 'turns_per_minute';
export type RateLimitName = typeof REQUESTS_LIMIT | typeof TURNS_LIMIT;

/** One limit: at most `max` points per key in each window of `windowMs`. */
export interface LimitSpec {
  name: RateLimitName;
  max: number;
  windowMs: number;
}

/** What a take from the shared budget got. */
export interface BudgetGrant {
  /** Points taken, from 0 to the number asked: fewer when the budget had fewer left. */
  granted: number;
  /** Points left to everyone in this window after the take. */
  remaining: number;
  /** When the window ends, in ms from now; a new window starts with the whole budget. */
  msBeforeNext: number;
}

/**
 * Budgets shared by every instance on one database (the server's PersistenceModule provides it), in fixed windows
 * per key.
 */
export interface RateLimitStore {
  /**
   * Takes up to `points` from `key`'s budget for `limit`, atomically: what all instances are granted in one window
   * never adds up to more than `limit.max`. Rejects, within about a second, when the store does not answer.
   */
  take(limit: LimitSpec, key: string, points: number): Promise<BudgetGrant>;
}

export const RATE_LIMIT_STORE = Symbol('SKILLHOST_RATE_LIMIT_STORE');

/** Where the limiter's trouble is counted (the server's MetricsModule provides it). */
export interface RateLimitMetrics {
  /** A take from the store failed or timed out. */
  observeRateLimitStoreError(): void;
  /** A call let through without being counted, because the store was failing. */
  observeRateLimitUnchecked(limit: RateLimitName): void;
}

export const RATE_LIMIT_METRICS = Symbol('SKILLHOST_RATE_LIMIT_METRICS');
