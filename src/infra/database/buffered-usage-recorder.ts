import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import {
  SKILL_USAGE_STORE,
  type UsageEvent,
  type UsageRecorder,
  type UsageStore,
  UsageTally,
  usageDay,
} from '../../domain/skills/usage/skill-usage.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Keys kept while the database refuses flushes; past it new keys are dropped (and said so) rather than eat memory. */
const MAX_PENDING_KEYS = 100_000;

/**
 * The usage funnel's recorder: `record` adds to counts in memory (a Map, no I/O, nothing awaited on the turn path);
 * every `flush_interval_ms`, and before the database pool closes at a clean shutdown (after the turns in flight were
 * drained), everything gathered is written in one multi-row upsert. A failed flush puts its rows back for the next.
 *
 * On a crash (SIGKILL, out of memory, power) the counts gathered since the last flush are lost: at most one interval's
 * worth on this instance. Counts are never written twice, since a flush's rows leave the buffer before the write and
 * come back only when it failed (a write that committed but whose answer was lost counts once more: rare, and only
 * upwards).
 */
@Injectable()
export class BufferedUsageRecorder implements UsageRecorder, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('SkillUsage');
  private readonly tally = new UsageTally();
  private flushTimer: NodeJS.Timeout | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private dropped = 0;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SKILL_USAGE_STORE) private readonly store: UsageStore,
  ) {}

  private get settings() {
    return this.config.app.skills.usage;
  }

  onApplicationBootstrap(): void {
    if (!this.settings.enabled) return;
    this.flushTimer = setInterval(() => void this.flush(), this.settings.flushIntervalMs).unref();
    this.sweepTimer = setInterval(() => void this.sweep(), DAY_MS).unref();
    void this.sweep();
  }

  async beforeApplicationShutdown(): Promise<void> {
    clearInterval(this.flushTimer);
    clearInterval(this.sweepTimer);
    await this.flush();
  }

  record(events: readonly UsageEvent[]): void {
    if (!this.settings.enabled || events.length === 0) return;
    const day = usageDay(new Date());
    for (const event of events) {
      if (this.tally.size >= MAX_PENDING_KEYS) {
        this.dropped += 1;
        continue;
      }
      this.tally.add(day, event);
    }
  }

  /** Writes what was gathered; flushes run one after another, so a shutdown's waits for the interval's. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.writeGathered());
    return this.flushing;
  }

  private async writeGathered(): Promise<void> {
    const rows = this.tally.drain();
    if (this.dropped > 0) {
      this.logger.warn(`${this.dropped} usage counts were dropped: the database refused flushes for too long`);
      this.dropped = 0;
    }
    if (rows.length === 0) return;
    try {
      await this.store.add(rows);
    } catch (error) {
      this.tally.merge(rows);
      this.logger.warn(`Skill usage not written (${(error as Error).message}); ${rows.length} rows kept for later`);
    }
  }

  /** Deletes the days past `retention_days` (every instance may: the delete is the same whoever runs it). */
  async sweep(now = new Date()): Promise<number> {
    const cutoff = usageDay(new Date(now.getTime() - this.settings.retentionDays * DAY_MS));
    try {
      const deleted = await this.store.deleteBefore(cutoff);
      if (deleted > 0) this.logger.log(`Deleted ${deleted} usage rows before ${cutoff} (retention)`);
      return deleted;
    } catch (error) {
      this.logger.warn(`Skill usage retention sweep failed: ${(error as Error).message}`);
      return 0;
    }
  }
}
