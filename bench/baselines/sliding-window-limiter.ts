import type { LimitVerdict } from '../../src/domain/limits/leased-limiter.js';

interface CallLog {
  /** When counted calls were made, oldest first; entries before `head` have left the window. */
  times: number[];
  head: number;
}

/**
 * The baseline of bench/rate-limit.bench.ts: the per-instance, in-memory limiter the shared one (src/domain/limits)
 * replaced, kept here as it was to measure against.
 *
 * At most `limit` calls per key in any `windowMs` (a sliding window, not minute-aligned buckets):
 * a refused call is not counted, and a caller is let through again as soon as its oldest counted
 * call leaves the window. Memory: at most `limit` timestamps per key seen within the last window;
 * keys idle for a whole window are dropped.
 */
export class SlidingWindowLimiter {
  private readonly logs = new Map<string, CallLog>();
  private lastSweep = 0;

  constructor(
    readonly limit: number,
    readonly windowMs: number,
  ) {}

  hit(key: string, now: number): LimitVerdict {
    if (now - this.lastSweep >= this.windowMs) this.sweep(now);
    let log = this.logs.get(key);
    if (log === undefined) {
      log = { times: [], head: 0 };
      this.logs.set(key, log);
    }
    const windowStart = now - this.windowMs;
    while (log.head < log.times.length && log.times[log.head] <= windowStart) log.head++;
    // Compact now and then rather than shifting on every call.
    if (log.head > 64 && log.head * 2 > log.times.length) {
      log.times = log.times.slice(log.head);
      log.head = 0;
    }
    if (log.times.length - log.head >= this.limit)
      return { allowed: false, retryAfterMs: log.times[log.head] + this.windowMs - now };
    log.times.push(now);
    return { allowed: true };
  }

  /** Keys with a call inside the window. */
  get activeKeys(): number {
    return this.logs.size;
  }

  private sweep(now: number): void {
    this.lastSweep = now;
    const windowStart = now - this.windowMs;
    for (const [key, log] of this.logs) {
      const newest = log.times[log.times.length - 1];
      if (newest === undefined || newest <= windowStart) this.logs.delete(key);
    }
  }
}
