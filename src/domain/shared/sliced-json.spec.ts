import { describe, expect, it } from '@jest/globals';
import { stringifyInSlices } from './sliced-json.js';

describe(stringifyInSlices.name, () => {
  it('gives exactly what JSON.stringify gives, the array member included', async () => {
    const object = {
      count: 3,
      note: 'a "quoted" \u2028 line',
      items: [{ name: 'a' }, { name: 'b', extra: undefined }, null, 'x'],
      skipped: undefined,
      after: [1, 2],
    };
    expect(await stringifyInSlices(object, 'items')).toBe(JSON.stringify(object));
  });

  it('gives the event loop turns while it writes a long array, and still the same text', async () => {
    const items = Array.from({ length: 20_000 }, (_, i) => ({ name: `skill-${i}`, description: 'x'.repeat(200) }));
    let turns = 0;
    const ticking = setInterval(() => turns++, 0);
    const text = await stringifyInSlices({ items }, 'items', 1);
    clearInterval(ticking);
    expect(text).toBe(JSON.stringify({ items }));
    expect(turns).toBeGreaterThan(0);
  });
});
