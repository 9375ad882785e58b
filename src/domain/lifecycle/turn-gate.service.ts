import { Inject, Injectable } from '@nestjs/common';
import { AppError, ErrorCode } from '@skillhost/core';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';

/** Counts the turn out; calling it again does nothing. */
export type TurnRelease = () => void;

/**
 * Which chat turns are running on this instance: at most `app.limits.max_concurrent_turns` at
 * once (past it 503 BUSY), none started once shutdown began (503 BUSY), and a way for the
 * shutdown to wait until the ones in flight have been answered and stored.
 */
@Injectable()
export class TurnGate {
  private running = 0;
  private closed = false;
  private readonly idleWaiters = new Set<() => void>();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  get inFlight(): number {
    return this.running;
  }

  /** Throws BUSY when a turn could not start now; for checks made before a turn's answer is committed to (a stream). */
  assertOpen(): void {
    if (this.closed) {
      throw new AppError(
        ErrorCode.BUSY,
        'This Skillhost instance is shutting down and starts no new turns; send the turn again in a moment ' +
          '(another instance, or this one once restarted, will take it).',
        {
          reason: 'shutting_down',
        },
      );
    }
    const limit = this.config.app.limits.maxConcurrentTurns;
    if (this.running >= limit) {
      throw new AppError(
        ErrorCode.BUSY,
        `This Skillhost instance is already running ${limit} turns (app.limits.max_concurrent_turns); send the ` +
          `turn again in a moment.`,
        {
          reason: 'max_concurrent_turns',
          limit,
        },
      );
    }
  }

  /** Counts a turn in (or throws BUSY, see `assertOpen`). */
  enter(): TurnRelease {
    this.assertOpen();
    this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      if (this.running === 0) for (const wake of this.idleWaiters) wake();
    };
  }

  /** From now on every turn is refused; the ones in flight go on. */
  close(): void {
    this.closed = true;
  }

  /**
   * Resolves true once no turn is in flight, or false when `timeoutMs` passes (or `hurry`
   * settles) first.
   */
  whenIdle(timeoutMs: number, hurry?: Promise<unknown>): Promise<boolean> {
    if (this.running === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const finish = (idle: boolean) => {
        clearTimeout(timer);
        this.idleWaiters.delete(wake);
        resolve(idle);
      };
      const wake = () => finish(true);
      const timer = setTimeout(() => finish(false), timeoutMs);
      this.idleWaiters.add(wake);
      void hurry?.then(
        () => finish(false),
        () => finish(false),
      );
    });
  }
}
