import { describe, expect, it } from '@jest/globals';
import { formatMirrorInterval, mirrorIntervalSeconds } from './mirror-interval.js';

describe('mirror intervals', () => {
  it('reads a whole number and a unit within one minute and seven days', () => {
    expect(mirrorIntervalSeconds('15m')).toBe(900);
    expect(mirrorIntervalSeconds('90s')).toBe(90);
    expect(mirrorIntervalSeconds('2h')).toBe(7200);
    expect(mirrorIntervalSeconds('7d')).toBe(604_800);
  });

  it('refuses what is too short, too long or not a duration', () => {
    for (const text of ['59s', '8d', '15', 'm', '1.5h', '-1m', '0m', '15 minutes', ''])
      expect(mirrorIntervalSeconds(text)).toBeUndefined();
  });

  it('writes an interval in its largest whole unit', () => {
    expect(formatMirrorInterval(900)).toBe('15m');
    expect(formatMirrorInterval(90)).toBe('90s');
    expect(formatMirrorInterval(86_400)).toBe('1d');
    expect(formatMirrorInterval(5400)).toBe('90m');
  });
});
