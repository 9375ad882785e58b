import { describe, expect, it } from '@jest/globals';
import { AppError, ErrorCode } from '@skillhost/core';
import type { AppConfig } from '../../config/app-config.js';
import { TurnGate } from './turn-gate.service.js';

const configWithLimit = (maxConcurrentTurns: number) =>
  ({ app: { limits: { maxConcurrentTurns } } }) as unknown as AppConfig;

function busyReason(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe(ErrorCode.BUSY);
    return (error as AppError).details?.reason;
  }
  throw new Error('expected BUSY');
}

describe(TurnGate.name, () => {
  it('admits up to max_concurrent_turns at once and one more after a release; a release counts once', () => {
    const sut = new TurnGate(configWithLimit(2));
    const first = sut.enter();
    sut.enter();
    expect(busyReason(() => sut.enter())).toBe('max_concurrent_turns');
    expect(busyReason(() => sut.assertOpen())).toBe('max_concurrent_turns');
    first();
    first();
    expect(sut.inFlight).toBe(1);
    sut.enter();
    expect(sut.inFlight).toBe(2);
  });

  it('refuses every turn once closed, naming the shutdown, while the ones in flight go on', () => {
    const sut = new TurnGate(configWithLimit(5));
    const running = sut.enter();
    sut.close();
    expect(busyReason(() => sut.enter())).toBe('shutting_down');
    expect(sut.inFlight).toBe(1);
    running();
    expect(sut.inFlight).toBe(0);
  });

  it('whenIdle resolves true when the last turn is released, false at the timeout or when hurried', async () => {
    const sut = new TurnGate(configWithLimit(5));
    expect(await sut.whenIdle(10)).toBe(true);
    const release = sut.enter();
    const idle = sut.whenIdle(5_000);
    setTimeout(release, 20);
    expect(await idle).toBe(true);

    sut.enter();
    expect(await sut.whenIdle(50)).toBe(false);
    expect(await sut.whenIdle(5_000, Promise.resolve())).toBe(false);
  });
});
