import type { StoredSkillFilter } from './skill-version-store.js';

/** Users remembered at most; past it the cache starts again (one SELECT each to fill it back). */
const MAX_USERS = 10_000;

/**
 * Users' skill filters as last read from the database, for the requests that need one on every call (each MCP page,
 * each discovery-index request). A filter saved on any instance is forgotten everywhere at once through the
 * notification bus; `ttlMs` bounds how long a filter may be served after a change whose notification was lost (sent
 * while the listening connection was down, or never sent). A read that was under way while a filter was forgotten is
 * returned but not remembered: it may be from before the change.
 */
export class UserFilterCache {
  private readonly entries = new Map<string, { filter: StoredSkillFilter | null; readAt: number }>();
  /** Bumped by every forget: a read started before a bump may be stale. */
  private epoch = 0;
  /** Off until the bus listens: a change announced before then would be missed. */
  private enabled = false;

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** From here on filters are remembered (the bus listens). */
  enable(): void {
    this.enabled = true;
  }

  async get(userId: string, read: () => Promise<StoredSkillFilter | null>): Promise<StoredSkillFilter | null> {
    const hit = this.entries.get(userId);
    if (hit !== undefined && this.now() - hit.readAt < this.ttlMs) return hit.filter;
    const epoch = this.epoch;
    const readAt = this.now();
    const filter = await read();
    if (this.enabled && epoch === this.epoch) {
      if (this.entries.size >= MAX_USERS) this.entries.clear();
      this.entries.set(userId, { filter, readAt });
    }
    return filter;
  }

  forget(userId: string): void {
    this.epoch++;
    this.entries.delete(userId);
  }

  /** Every filter forgotten: notifications may have been missed. */
  clear(): void {
    this.epoch++;
    this.entries.clear();
  }
}
