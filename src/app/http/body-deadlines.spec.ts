import { describe, expect, it } from '@jest/globals';
import { BODY_RATE_GRACE_MS } from '../../config/config-schema.js';
import { bodyVerdict } from './body-deadlines.js';

describe(bodyVerdict.name, () => {
  const progress = (overrides: Partial<{ elapsedMs: number; waitedMs: number; bytes: number }> = {}) => ({
    elapsedMs: 1000,
    waitedMs: 1000,
    bytes: 0,
    ...overrides,
  });

  it('a body still within its deadline and grace period may go on, however slow', () => {
    expect(bodyVerdict(progress({ elapsedMs: 29_999, waitedMs: BODY_RATE_GRACE_MS - 1, bytes: 0 }), 30_000, 1024)).toBe(
      'ok',
    );
  });

  it('a body at its deadline is cut, whatever its rate', () => {
    expect(bodyVerdict(progress({ elapsedMs: 30_000, waitedMs: 0, bytes: 10_000_000 }), 30_000, 1024)).toBe('timeout');
  });

  it('after the grace period, a body under the minimum average rate is slow; at it, it goes on', () => {
    expect(bodyVerdict(progress({ elapsedMs: 6000, waitedMs: 6000, bytes: 6 * 1024 - 1 }), 30_000, 1024)).toBe('slow');
    expect(bodyVerdict(progress({ elapsedMs: 6000, waitedMs: 6000, bytes: 6 * 1024 }), 30_000, 1024)).toBe('ok');
  });

  it('time the server spent not reading is not held against the client', () => {
    expect(bodyVerdict(progress({ elapsedMs: 20_000, waitedMs: 1000, bytes: 10 }), 30_000, 1024)).toBe('ok');
  });

  it('a minimum of 0 turns the rate check off', () => {
    expect(bodyVerdict(progress({ elapsedMs: 20_000, waitedMs: 20_000, bytes: 0 }), 30_000, 0)).toBe('ok');
  });
});
