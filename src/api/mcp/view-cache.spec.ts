import { describe, expect, it } from '@jest/globals';
import type { CatalogueSnapshot } from '@skillhost/core';
import { ViewCache } from './view-cache.js';

/** A view stands for itself only by identity here: the cache never reads one. */
const aView = () => ({}) as CatalogueSnapshot;

/** `make` for `key`, counting how often it ran. */
function maker(made: string[], key: string, value = key) {
  return () => {
    made.push(key);
    return Promise.resolve(value);
  };
}

describe(ViewCache.name, () => {
  it('makes a value once per view and key, and again for another view (a reload, a filter change)', async () => {
    const sut = new ViewCache<string>(8);
    const made: string[] = [];
    const [first, second] = [aView(), aView()];
    expect(await sut.get(first, 'a', maker(made, 'a', 'first-a'))).toBe('first-a');
    expect(await sut.get(first, 'a', maker(made, 'a', 'other'))).toBe('first-a');
    expect(await sut.get(second, 'a', maker(made, 'a', 'second-a'))).toBe('second-a');
    expect(await sut.get(first, 'b', maker(made, 'b'))).toBe('b');
    expect(made).toEqual(['a', 'a', 'b']);
  });

  it('makes a value once for concurrent asks', async () => {
    const sut = new ViewCache<string>(8);
    const made: string[] = [];
    const view = aView();
    const both = await Promise.all([sut.get(view, 'a', maker(made, 'a')), sut.get(view, 'a', maker(made, 'a'))]);
    expect([both, made]).toEqual([['a', 'a'], ['a']]);
  });

  it('keeps at most perView keys of a view, the least recently used going first', async () => {
    const sut = new ViewCache<string>(2);
    const made: string[] = [];
    const view = aView();
    await sut.get(view, 'a', maker(made, 'a'));
    await sut.get(view, 'b', maker(made, 'b'));
    await sut.get(view, 'a', maker(made, 'a'));
    // 'b' is the least recently used: it makes room for 'c', and 'a' stays.
    await sut.get(view, 'c', maker(made, 'c'));
    await sut.get(view, 'a', maker(made, 'a'));
    await sut.get(view, 'b', maker(made, 'b'));
    expect(made).toEqual(['a', 'b', 'c', 'b']);
  });

  it('forgets a value that failed or that may change, so the next ask makes it again', async () => {
    const sut = new ViewCache<string>(8);
    const view = aView();
    await expect(sut.get(view, 'a', () => Promise.reject(new Error('database down')))).rejects.toThrow('database down');
    expect(await sut.get(view, 'a', () => Promise.resolve('a'))).toBe('a');
    const passing = (value: string) => value !== 'passing';
    expect(await sut.get(view, 'b', () => Promise.resolve('passing'), passing)).toBe('passing');
    expect(await sut.get(view, 'b', () => Promise.resolve('lasting'), passing)).toBe('lasting');
    expect(await sut.get(view, 'b', () => Promise.resolve('not asked'), passing)).toBe('lasting');
  });
});
