import { describe, expect, it } from '@jest/globals';
import { ImportSlots } from './import-slots.js';

describe(ImportSlots.name, () => {
  it('refuses a slot past the cap at once, and gives it again once released', () => {
    const sut = new ImportSlots(2);
    const first = sut.tryAcquire();
    const second = sut.tryAcquire();
    expect(first).toBeDefined();
    expect(second).toBeDefined();
    expect(sut.tryAcquire()).toBeUndefined();
    first!();
    first!(); // A second release of the same slot frees nothing more.
    const third = sut.tryAcquire();
    expect(third).toBeDefined();
    expect(sut.tryAcquire()).toBeUndefined();
  });

  it('lets a waiter (a mirror run) take the next free slot before anyone trying later', async () => {
    const sut = new ImportSlots(1);
    const held = sut.tryAcquire()!;
    let waited = false;
    const waiting = sut.acquire().then((release) => {
      waited = true;
      return release;
    });
    await Promise.resolve();
    expect(waited).toBe(false);
    held();
    // The slot went to the waiter: a caller trying now is refused.
    expect(sut.tryAcquire()).toBeUndefined();
    const release = await waiting;
    expect(waited).toBe(true);
    release();
    expect(sut.tryAcquire()).toBeDefined();
  });
});
