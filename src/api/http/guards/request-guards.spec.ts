import { describe, expect, it } from '@jest/globals';
import type { ExecutionContext } from '@nestjs/common';
import { type PromptGuard, runInOrder } from './request-guards.js';

const context = {} as ExecutionContext;

/** A guard that notes its turn in `calls` and answers `verdict` (or throws it). */
function guard(name: string, calls: string[], verdict: () => boolean | Promise<boolean>): PromptGuard {
  return {
    canActivate: () => {
      calls.push(name);
      return verdict();
    },
  };
}

describe(runInOrder.name, () => {
  it('answers at once, without a promise, when every guard does', () => {
    const calls: string[] = [];

    const verdict = runInOrder([guard('a', calls, () => true), guard('b', calls, () => true)], context, 0);

    expect(verdict).toBe(true);
    expect(calls).toEqual(['a', 'b']);
  });

  it('waits for a guard that must wait before asking the next one', async () => {
    const calls: string[] = [];
    const later = guard('a', calls, () => new Promise((resolve) => setTimeout(() => resolve(true), 10)));

    const verdict = runInOrder([later, guard('b', calls, () => true)], context, 0);

    expect(calls).toEqual(['a']);
    await expect(verdict).resolves.toBe(true);
    expect(calls).toEqual(['a', 'b']);
  });

  it('stops at the first guard that refuses or throws, sync or not', async () => {
    const calls: string[] = [];
    const refused = new Error('401');

    expect(runInOrder([guard('a', calls, () => false), guard('b', calls, () => true)], context, 0)).toBe(false);
    expect(() =>
      runInOrder(
        [
          guard('c', calls, () => {
            throw refused;
          }),
          guard('d', calls, () => true),
        ],
        context,
        0,
      ),
    ).toThrow(refused);
    await expect(
      runInOrder([guard('e', calls, () => Promise.reject(refused)), guard('f', calls, () => true)], context, 0),
    ).rejects.toBe(refused);
    expect(calls).toEqual(['a', 'c', 'e']);
  });
});
