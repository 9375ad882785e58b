/**
 * How many script sandboxes run at once on this instance, for each user and in each turn. Every
 * door that runs a script (the model's loop, the tool API over REST and GraphQL, a code skill's
 * `ctx.tools.call`) takes its slot here, so one model step with a dozen calls, or one user with
 * many chats, cannot start more sandboxes than the machine was sized for. A call with no free slot
 * is refused at once rather than queued: the model reads why and runs its scripts one at a time,
 * and the turn's time is not spent waiting.
 */

/**
 * `[app.scripts] max_concurrent`, `max_concurrent_per_user`, `max_concurrent_per_turn`; 0 for the last two: no cap of
 * their own.
 */
export interface SandboxSlotLimits {
  instance: number;
  perUser: number;
  perTurn: number;
}

import type { ScriptCaller } from '@skillhost/core';

export type SlotScope = 'turn' | 'user' | 'instance';

export type SlotGrant = { release: () => void } | { refused: SlotScope; limit: number };

export class SandboxSlots {
  private total = 0;
  private readonly byUser = new Map<string, number>();
  private readonly byTurn = new Map<string, number>();

  constructor(private readonly limits: SandboxSlotLimits) {}

  /** Sandboxes running now on this instance. */
  get running(): number {
    return this.total;
  }

  /**
   * A slot for `caller`, or the cap that is full: the turn's first (its advice, one at a time, is
   * the one the model can follow), then the user's, then the instance's. `release` gives the
   * slot back; calling it again does nothing.
   */
  take(caller: ScriptCaller): SlotGrant {
    if (
      caller.turnId !== undefined &&
      this.limits.perTurn > 0 &&
      count(this.byTurn, caller.turnId) >= this.limits.perTurn
    )
      return { refused: 'turn', limit: this.limits.perTurn };
    if (
      caller.userId !== undefined &&
      this.limits.perUser > 0 &&
      count(this.byUser, caller.userId) >= this.limits.perUser
    )
      return { refused: 'user', limit: this.limits.perUser };
    if (this.total >= this.limits.instance) return { refused: 'instance', limit: this.limits.instance };
    this.total++;
    add(this.byUser, caller.userId, 1);
    add(this.byTurn, caller.turnId, 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.total--;
        add(this.byUser, caller.userId, -1);
        add(this.byTurn, caller.turnId, -1);
      },
    };
  }
}

function count(counts: ReadonlyMap<string, number>, key: string): number {
  return counts.get(key) ?? 0;
}

/** Adds `delta` to `key`'s count, forgetting keys that reach 0 (turns and users come and go). */
function add(counts: Map<string, number>, key: string | undefined, delta: number): void {
  if (key === undefined) return;
  const next = count(counts, key) + delta;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}
