import { Injectable } from '@nestjs/common';
import { TurnGate } from './turn-gate.service.js';
import type { DatabaseState } from './database-state.js';

/**
 * Where the process is in its life, for everything that must act differently while it stops:
 * readiness reports not-ready, new turns are refused, turns in flight are awaited. It also knows
 * when the database is known to be down (the embedded server died and is being restarted).
 */
@Injectable()
export class LifecycleService implements DatabaseState {
  private shuttingDown = false;
  private databaseProblem: string | undefined;
  private readonly cutController = new AbortController();

  constructor(private readonly turns: TurnGate) {}

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Refuses new turns from now on; the ones in flight go on. */
  beginShutdown(): void {
    this.shuttingDown = true;
    this.turns.close();
  }

  /**
   * Aborted when shutdown stops waiting for the turns still in flight (the grace period ended):
   * the database pool closes at once, so a cut turn that has not begun its write stores nothing.
   */
  get cutSignal(): AbortSignal {
    return this.cutController.signal;
  }

  cutTurns(): void {
    this.cutController.abort();
  }

  /** Why the database is known to be unavailable, or undefined when it is not known to be. */
  get databaseDown(): string | undefined {
    return this.databaseProblem;
  }

  markDatabaseDown(reason: string): void {
    this.databaseProblem = reason;
  }

  markDatabaseUp(): void {
    this.databaseProblem = undefined;
  }

  /** Ready for new work: not shutting down, and the database not known to be down. */
  get isReady(): boolean {
    return !this.shuttingDown && this.databaseProblem === undefined;
  }
}
