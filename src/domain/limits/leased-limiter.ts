import type { LimitSpec, RateLimitName, RateLimitStore } from './rate-limit-store.js';

/** What one more call gets: let through, or refused until `retryAfterMs` from now. */
export type LimitVerdict = { allowed: true } | { allowed: false; retryAfterMs: number };

const ALLOWED: LimitVerdict = Object.freeze({ allowed: true });

/** The most points one instance takes for a key at once. */
export const MAX_BATCH = 100;
/** A batch is at most this fraction of what is left, so leases held elsewhere strand little of the budget. */
export const BATCH_DIVISOR = 8;
/**
 * After the store refuses a key, calls are refused here without asking it again for this long (at most until the
 * window ends): a client hammering while refused costs one query a second, not one a call.
 */
export const REFUSAL_RECHECK_MS = 1000;

/** How many points to take from the store when `remaining` are left: fewer as the budget runs out, down to one. */
export function batchSize(remaining: number): number {
  return Math.min(MAX_BATCH, Math.max(1, Math.floor(remaining / BATCH_DIVISOR)));
}

/** Points this instance took from the store for one key, and may spend without asking again. */
interface Lease {
  points: number;
  /** The store's window end, on this clock: points of an ended window are worth nothing. */
  expiresAt: number;
  /** What the store said was left when last asked (the whole budget before the first ask). */
  remaining: number;
  refusedUntil: number;
  filling: Promise<void> | undefined;
}

/** What happens while the store fails: calls are let through unchecked, and counted. */
export interface StoreFailureReport {
  failed(error: unknown): void;
  unchecked(limit: RateLimitName): void;
  recovered(): void;
}

/**
 * Shared by every limit on one store: once a take fails, calls are let through without asking for `retryMs`, so a
 * database that is down or frozen costs one timeout per `retryMs`, not one per call.
 */
export class StoreOutage {
  private until = 0;
  private down = false;

  constructor(
    private readonly retryMs: number,
    private readonly report: StoreFailureReport,
  ) {}

  /** True (and the call counted as unchecked) while the store is being left alone. */
  skipping(limit: RateLimitName, now: number): boolean {
    if (now >= this.until) return false;
    this.report.unchecked(limit);
    return true;
  }

  failed(error: unknown, now: number): void {
    this.until = now + this.retryMs;
    this.down = true;
    this.report.failed(error);
  }

  answered(): void {
    if (!this.down) return;
    this.down = false;
    this.report.recovered();
  }
}

/**
 * A limit whose budget lives in a store shared by every instance, spent here from leases: this instance takes a batch
 * of points for a key and lets calls through from it without a round trip, so a caller far from the limit costs one
 * query per batch. Batches shrink as the budget runs out (`batchSize`), so near the limit every call asks the store,
 * which never grants more than the budget in total.
 *
 * Windows are fixed per key (they start at the key's first call), not sliding. Nothing is let through beyond `max`
 * a window across all instances; fewer may be: points leased by an instance the caller no longer reaches stay unspent
 * until the window ends, at most `batchSize(remaining)` per instance and key (so at most `MAX_BATCH`, and an eighth
 * of what was left when it was taken).
 *
 * `hit` answers synchronously when the lease decides (points left, or a refusal still fresh); it returns a promise
 * only when it asks the store. While the store fails, calls are let through (`StoreOutage`).
 */
export class LeasedLimiter {
  private readonly leases = new Map<string, Lease>();
  private lastSweep: number;

  constructor(
    readonly spec: LimitSpec,
    private readonly store: RateLimitStore,
    private readonly outage: StoreOutage,
    private readonly clock: () => number = Date.now,
  ) {
    this.lastSweep = clock();
  }

  hit(key: string): LimitVerdict | Promise<LimitVerdict> {
    const now = this.clock();
    if (now - this.lastSweep >= this.spec.windowMs) this.sweep(now);
    const lease = this.leases.get(key);
    if (lease !== undefined && now < lease.expiresAt) {
      if (lease.points > 0) {
        lease.points--;
        return ALLOWED;
      }
      if (now < lease.refusedUntil) return { allowed: false, retryAfterMs: lease.expiresAt - now };
    }
    if (lease?.filling === undefined && this.outage.skipping(this.spec.name, now)) return ALLOWED;
    return this.refill(key, lease);
  }

  /** Keys holding a lease or a refusal. */
  get activeKeys(): number {
    return this.leases.size;
  }

  /** One take from the store per key at a time: concurrent calls wait for it, then try the lease again. */
  private async refill(key: string, existing: Lease | undefined): Promise<LimitVerdict> {
    let lease = existing;
    if (lease === undefined) {
      lease = { points: 0, expiresAt: 0, remaining: this.spec.max, refusedUntil: 0, filling: undefined };
      this.leases.set(key, lease);
    }
    lease.filling ??= this.fill(key, lease);
    await lease.filling;
    return this.hit(key);
  }

  private async fill(key: string, lease: Lease): Promise<void> {
    const windowEnded = this.clock() >= lease.expiresAt;
    lease.points = 0;
    try {
      const grant = await this.store.take(this.spec, key, batchSize(windowEnded ? this.spec.max : lease.remaining));
      const now = this.clock();
      this.outage.answered();
      lease.points = grant.granted;
      lease.remaining = grant.remaining;
      lease.expiresAt = now + grant.msBeforeNext;
      lease.refusedUntil = grant.granted > 0 ? 0 : Math.min(lease.expiresAt, now + REFUSAL_RECHECK_MS);
    } catch (error) {
      this.outage.failed(error, this.clock());
    } finally {
      lease.filling = undefined;
    }
  }

  /** Drops keys whose window has ended, so memory follows the callers of the last window. */
  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [key, lease] of this.leases)
      if (lease.expiresAt <= now && lease.filling === undefined) this.leases.delete(key);
  }
}
