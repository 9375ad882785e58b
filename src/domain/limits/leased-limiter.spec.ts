import { describe, expect, it } from '@jest/globals';
import {
  batchSize,
  LeasedLimiter,
  type LimitVerdict,
  MAX_BATCH,
  REFUSAL_RECHECK_MS,
  type StoreFailureReport,
  StoreOutage,
} from './leased-limiter.js';
import type { BudgetGrant, LimitSpec, RateLimitStore } from './rate-limit-store.js';

/** A clock the test moves. */
function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

/**
 * The store's contract in memory: a fixed window per key from its first take, grants up to what is left. `asked`
 * records every take; `fail` makes the next takes reject.
 */
function fakeStore(now: () => number) {
  const windows = new Map<string, { used: number; endsAt: number }>();
  const asked: number[] = [];
  const store = {
    asked,
    fail: false,
    async take(limit: LimitSpec, key: string, points: number): Promise<BudgetGrant> {
      asked.push(points);
      if (store.fail) throw new Error('connection refused');
      let window = windows.get(key);
      if (window === undefined || window.endsAt <= now()) {
        window = { used: 0, endsAt: now() + limit.windowMs };
        windows.set(key, window);
      }
      const granted = Math.min(points, limit.max - window.used);
      window.used += granted;
      return { granted, remaining: limit.max - window.used, msBeforeNext: window.endsAt - now() };
    },
  } satisfies RateLimitStore & Record<string, unknown>;
  return store;
}

function recordingReport() {
  const events: string[] = [];
  const report: StoreFailureReport = {
    failed: (error) => events.push(`failed: ${(error as Error).message}`),
    unchecked: (limit) => events.push(`unchecked ${limit}`),
    recovered: () => events.push('recovered'),
  };
  return { events, report };
}

const spec = (max: number): LimitSpec => ({ name: 'requests_per_minute', max, windowMs: 60_000 });

function limiterOn(store: RateLimitStore, time: ReturnType<typeof clock>, max: number, report = recordingReport()) {
  return new LeasedLimiter(spec(max), store, new StoreOutage(5000, report.report), time.now);
}

async function hits(sut: LeasedLimiter, key: string, count: number): Promise<LimitVerdict[]> {
  const verdicts: LimitVerdict[] = [];
  for (let i = 0; i < count; i++) verdicts.push(await sut.hit(key));
  return verdicts;
}

const allowedIn = (verdicts: LimitVerdict[]) => verdicts.filter((v) => v.allowed).length;

describe(LeasedLimiter.name, () => {
  it('asks for an eighth of what is left, at most 100 and at least 1', () => {
    expect([1, 7, 8, 16, 600, 800, 1_000_000].map(batchSize)).toEqual([1, 1, 1, 2, 75, MAX_BATCH, MAX_BATCH]);
  });

  it('far from the limit, lets a batch of calls through from one take, deciding them without a promise', async () => {
    const time = clock();
    const store = fakeStore(time.now);
    const sut = limiterOn(store, time, 600);
    expect(await sut.hit('user:a')).toEqual({ allowed: true });
    expect(store.asked).toEqual([75]);
    for (let i = 0; i < 74; i++) expect(sut.hit('user:a')).toEqual({ allowed: true });
    expect(store.asked).toEqual([75]);
    expect(sut.hit('user:a')).toBeInstanceOf(Promise);
  });

  it('lets exactly the limit through in a window, with batches shrinking to one near it, then refuses', async () => {
    const time = clock();
    const store = fakeStore(time.now);
    const sut = limiterOn(store, time, 600);
    expect(allowedIn(await hits(sut, 'user:a', 600))).toBe(600);
    expect(store.asked.slice(0, 3)).toEqual([75, 65, 57]);
    expect(store.asked.slice(-8)).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
    time.advance(15_000);
    expect(await sut.hit('user:a')).toEqual({ allowed: false, retryAfterMs: 45_000 });
  });

  it('two instances on one store let the limit through in total, however calls alternate between them', async () => {
    const time = clock();
    const store = fakeStore(time.now);
    const instances = [limiterOn(store, time, 50), limiterOn(store, time, 50)];
    let allowed = 0;
    for (let i = 0; i < 200; i++) if ((await instances[i % 2].hit('user:a')).allowed) allowed++;
    expect(allowed).toBe(50);
    // A burst on one instance, while the other holds a lease: still never more than the limit.
    const bursty = [limiterOn(store, time, 50), limiterOn(store, time, 50)];
    let burst = allowedIn(await hits(bursty[0], 'user:b', 3));
    burst += allowedIn(await hits(bursty[1], 'user:b', 100));
    burst += allowedIn(await hits(bursty[0], 'user:b', 100));
    expect(burst).toBe(50);
  });

  it('strands at most one lease per other instance: a caller that moves on gets all but that', async () => {
    const time = clock();
    const store = fakeStore(time.now);
    const [first, second] = [limiterOn(store, time, 600), limiterOn(store, time, 600)];
    await first.hit('user:a');
    // The other 74 points of `first`'s batch stay there until the window ends.
    expect(allowedIn(await hits(second, 'user:a', 600))).toBe(600 - 75);
  });

  it('points leased in a window are worth nothing once it ends; the next window has the whole budget', async () => {
    const time = clock();
    const store = fakeStore(time.now);
    const sut = limiterOn(store, time, 80);
    await sut.hit('user:a');
    expect(store.asked).toEqual([10]);
    time.advance(60_000);
    expect(sut.hit('user:a')).toBeInstanceOf(Promise);
    expect(allowedIn(await hits(sut, 'user:a', 100))).toBe(79);
  });

  it('once refused, refuses again without asking for a second, then asks once more', async () => {
    const time = clock();
    const store = fakeStore(time.now);
    const sut = limiterOn(store, time, 2);
    await hits(sut, 'user:a', 3);
    const asked = store.asked.length;
    for (let i = 0; i < 50; i++) expect(sut.hit('user:a')).toMatchObject({ allowed: false });
    expect(store.asked.length).toBe(asked);
    time.advance(REFUSAL_RECHECK_MS);
    expect(await sut.hit('user:a')).toMatchObject({ allowed: false });
    expect(store.asked.length).toBe(asked + 1);
  });

  it('concurrent calls on an empty lease share one take', async () => {
    const time = clock();
    const store = fakeStore(time.now);
    const sut = limiterOn(store, time, 600);
    const verdicts = await Promise.all(Array.from({ length: 20 }, () => sut.hit('user:a')));
    expect(allowedIn(verdicts)).toBe(20);
    expect(store.asked).toEqual([75]);
  });

  it('keeps a budget per key', async () => {
    const time = clock();
    const sut = limiterOn(fakeStore(time.now), time, 1);
    expect(await sut.hit('user:a')).toEqual({ allowed: true });
    expect(await sut.hit('user:a')).toMatchObject({ allowed: false });
    expect(await sut.hit('user:b')).toEqual({ allowed: true });
  });

  it('a failing store lets calls through, counted, and is left alone for a while, then asked again', async () => {
    const time = clock();
    const store = fakeStore(time.now);
    const report = recordingReport();
    const sut = limiterOn(store, time, 1, report);
    store.fail = true;
    expect(await Promise.all([sut.hit('user:a'), sut.hit('user:a')])).toEqual([{ allowed: true }, { allowed: true }]);
    expect(sut.hit('user:b')).toEqual({ allowed: true });
    expect(store.asked).toEqual([1]);
    expect(report.events).toEqual([
      'failed: connection refused',
      'unchecked requests_per_minute',
      'unchecked requests_per_minute',
      'unchecked requests_per_minute',
    ]);
    time.advance(5000);
    store.fail = false;
    expect(await sut.hit('user:a')).toEqual({ allowed: true });
    expect(await sut.hit('user:a')).toMatchObject({ allowed: false });
    expect(report.events.slice(4)).toEqual(['recovered']);
  });

  it('forgets keys whose window ended, so memory follows the callers of the last window', async () => {
    const time = clock();
    const sut = limiterOn(fakeStore(time.now), time, 600);
    for (let i = 0; i < 100; i++) await sut.hit(`ip:${i}`);
    expect(sut.activeKeys).toBe(100);
    time.advance(60_000);
    await sut.hit('ip:late');
    expect(sut.activeKeys).toBe(1);
  });
});
