import { describe, expect, it } from '@jest/globals';
import { UserFilterCache } from './user-filter-cache.js';

describe(UserFilterCache.name, () => {
  const clock = () => {
    let now = 0;
    return { now: () => now, advance: (ms: number) => (now += ms) };
  };
  const reader = (filter: { exclude: string[] } | null) => {
    const read = { count: 0, filter };
    const fn = async () => {
      read.count++;
      return read.filter;
    };
    return { read, fn };
  };

  it('reads every time until the bus listens', async () => {
    const sut = new UserFilterCache(5_000);
    const { read, fn } = reader(null);
    await sut.get('alice', fn);
    await sut.get('alice', fn);
    expect(read.count).toBe(2);
  });

  it('remembers a filter until it is forgotten or expires', async () => {
    const time = clock();
    const sut = new UserFilterCache(5_000, time.now);
    sut.enable();
    const { read, fn } = reader({ exclude: ['pdf'] });
    expect(await sut.get('alice', fn)).toEqual({ exclude: ['pdf'] });
    expect(await sut.get('alice', fn)).toEqual({ exclude: ['pdf'] });
    expect(read.count).toBe(1);
    read.filter = null;
    sut.forget('alice');
    expect(await sut.get('alice', fn)).toBeNull();
    expect(read.count).toBe(2);
    read.filter = { exclude: ['docx'] };
    time.advance(5_000);
    expect(await sut.get('alice', fn)).toEqual({ exclude: ['docx'] });
    sut.clear();
    await sut.get('alice', fn);
    expect(read.count).toBe(4);
  });

  // Such a read may have been answered before the save: remembered, it would be served until it expired.
  it('does not remember a read that was under way when a filter was forgotten', async () => {
    const sut = new UserFilterCache(5_000);
    sut.enable();
    let release: (value: null) => void = () => undefined;
    const slow = sut.get('alice', () => new Promise<null>((resolve) => (release = resolve)));
    sut.forget('alice');
    release(null);
    expect(await slow).toBeNull();
    const { read, fn } = reader({ exclude: ['pdf'] });
    expect(await sut.get('alice', fn)).toEqual({ exclude: ['pdf'] });
    expect(read.count).toBe(1);
  });
});
