import type { CatalogueSnapshot } from '@skillhost/core';

/**
 * Values made from a user's view of the catalogue, remembered per view and key. A view never changes: a reload or a
 * change of the user's filter makes another object (`viewForUser`), so a value made from one holds for as long as it
 * is asked for, and the next request after a change misses at once. The views are held weakly (a value goes with its
 * view), and at most `perView` keys of each are kept, least recently used first out: keys come from clients (any
 * name is a cursor), so they must not fill memory. A promise is remembered, so concurrent requests make a value once;
 * one that fails, or that `lasting` says may change (a skill left out for a reason that may pass), is made again.
 */
export class ViewCache<T> {
  private readonly views = new WeakMap<CatalogueSnapshot, Map<string, Promise<T>>>();

  constructor(private readonly perView: number) {}

  get(
    view: CatalogueSnapshot,
    key: string,
    make: () => Promise<T>,
    lasting: (value: T) => boolean = () => true,
  ): Promise<T> {
    let values = this.views.get(view);
    if (values === undefined) {
      values = new Map();
      this.views.set(view, values);
    }
    const known = values.get(key);
    if (known !== undefined) {
      values.delete(key);
      values.set(key, known);
      return known;
    }
    const made = make();
    if (values.size >= this.perView) values.delete(values.keys().next().value as string);
    values.set(key, made);
    const kept = values;
    const forget = () => {
      if (kept.get(key) === made) kept.delete(key);
    };
    made.then((value) => lasting(value) || forget(), forget);
    return made;
  }
}
