import { describe, expect, it } from '@jest/globals';
import { SlidingWindowLimiter } from './rate-limiter.js';

describe(SlidingWindowLimiter.name, () => {
  it('lets `limit` calls through in a window and refuses the next, saying when the oldest leaves the window', () => {
    const sut = new SlidingWindowLimiter(3, 60_000);
    expect(sut.hit('a', 1_000)).toEqual({ allowed: true });
    expect(sut.hit('a', 2_000)).toEqual({ allowed: true });
    expect(sut.hit('a', 3_000)).toEqual({ allowed: true });
    expect(sut.hit('a', 10_000)).toEqual({ allowed: false, retryAfterMs: 51_000 });
  });

  it('slides: one call is let through again as each counted one turns a window old', () => {
    const sut = new SlidingWindowLimiter(2, 60_000);
    sut.hit('a', 0);
    sut.hit('a', 30_000);
    expect(sut.hit('a', 59_999).allowed).toBe(false);
    expect(sut.hit('a', 60_000)).toEqual({ allowed: true });
    expect(sut.hit('a', 60_001)).toEqual({ allowed: false, retryAfterMs: 29_999 });
    expect(sut.hit('a', 90_000)).toEqual({ allowed: true });
  });

  it('does not count refused calls: hammering while refused does not push the window out', () => {
    const sut = new SlidingWindowLimiter(1, 60_000);
    sut.hit('a', 0);
    for (let t = 1_000; t < 60_000; t += 1_000) expect(sut.hit('a', t).allowed).toBe(false);
    expect(sut.hit('a', 60_000).allowed).toBe(true);
  });

  it('keeps a budget per key', () => {
    const sut = new SlidingWindowLimiter(1, 60_000);
    expect(sut.hit('user:a', 0).allowed).toBe(true);
    expect(sut.hit('user:a', 1).allowed).toBe(false);
    expect(sut.hit('user:b', 1).allowed).toBe(true);
  });

  it('forgets keys idle for a whole window, so memory follows the callers of the last minute', () => {
    const sut = new SlidingWindowLimiter(5, 60_000);
    for (let i = 0; i < 100; i++) sut.hit(`ip:${i}`, 60_000 + i);
    expect(sut.activeKeys).toBe(100);
    sut.hit('ip:late', 200_000);
    expect(sut.activeKeys).toBe(1);
  });

  it('stays exact over many windows of calls (the log is compacted, not lost)', () => {
    const sut = new SlidingWindowLimiter(100, 1_000);
    let allowed = 0;
    // One call every 5 ms for 10 s: 200 a window are tried, 100 a window may pass.
    for (let t = 0; t < 10_000; t += 5) if (sut.hit('a', t).allowed) allowed++;
    expect(allowed).toBe(1_000);
  });
});
