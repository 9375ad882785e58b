import { describe, expect, it } from '@jest/globals';
import { throttled } from './log-throttle.js';

describe(throttled.name, () => {
  it('logs the first at once, leaves out the rest of the interval, and then says how many it left out', () => {
    const lines: string[] = [];
    let clock = 1_000;
    const warn = throttled(
      (message) => lines.push(message),
      60_000,
      () => clock,
    );
    warn('refused a');
    for (let i = 0; i < 500; i++) warn('refused b');
    clock += 60_000;
    warn('refused c');
    warn('refused d');
    clock += 60_000;
    warn('refused e');
    expect(lines).toEqual([
      'refused a',
      'refused c (and 500 more like it since the last such line)',
      'refused e (and 1 more like it since the last such line)',
    ]);
  });
});
