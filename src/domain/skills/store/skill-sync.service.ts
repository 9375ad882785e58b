import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  Optional,
} from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../../config/app-config.js';
import { NOTIFICATION_BUS, type NotificationBus } from '../../shared/notification-bus.js';
import { SKILL_STORE_CHANNEL } from './skill-version-store.js';
import { SkillRegistryService } from '@skillhost/nest';
import { SkillStoreService } from './skill-store.service.js';

/**
 * Keeps this instance's catalogue in step with the others on the same database. Every store
 * change (install, uninstall, rollback, switch) and every reload asked for bumps a generation in
 * PostgreSQL and notifies `skillhost_skills` at commit; this service hears it and reads the store
 * again (or rescans the folders). A check of the generations every `sync_interval_ms` catches a
 * notification missed while the listening connection was down.
 */
@Injectable()
export class SkillSyncService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(SkillSyncService.name);
  private timer: NodeJS.Timeout | undefined;
  private unlisten: (() => void) | undefined;
  private unreconnect: (() => void) | undefined;
  private checking: Promise<void> | undefined;
  private again = false;
  private failing = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly registry: SkillRegistryService,
    private readonly store: SkillStoreService,
    @Optional() @Inject(NOTIFICATION_BUS) private readonly notifications?: NotificationBus,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.app.skills.enabled) return;
    this.unlisten = this.notifications?.listen(SKILL_STORE_CHANNEL, () => void this.check());
    this.unreconnect = this.notifications?.onReconnect(() => void this.check());
    this.timer = setInterval(() => void this.check(), this.config.app.skills.syncIntervalMs);
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.unlisten?.();
    this.unreconnect?.();
  }

  /**
   * Compares the database's generations with the catalogue's, and catches up; one check at a time, one more when asked
   * meanwhile.
   */
  check(): Promise<void> {
    if (this.checking !== undefined) {
      this.again = true;
      return this.checking;
    }
    this.checking = this.compare().finally(() => {
      this.checking = undefined;
      if (this.again) {
        this.again = false;
        void this.check();
      }
    });
    return this.checking;
  }

  private async compare(): Promise<void> {
    if (this.timer === undefined) return;
    try {
      // A reload under way (this instance's own, asked for by an operator) is what a notification
      // usually announces: compare once it is done, not while it reads. One that began while the
      // database was read is waited for too, and the database read again, so it is not done twice.
      let database: { generation: string; reloadGeneration: string };
      do {
        await this.registry.settled();
        database = await this.store.generations();
      } while (this.registry.busy);
      // Only a newer generation is news: a database read before a reload that finished meanwhile is older than what is
      // loaded.
      const loaded = this.registry.loadedGenerations;
      if (newer(database.reloadGeneration, loaded.reloadGeneration)) {
        this.logger.log(`A reload was asked for (generation ${database.reloadGeneration}): rescanning`);
        await this.registry.reload();
      } else if (newer(database.generation, loaded.generation)) {
        await this.registry.refreshStore();
      }
      if (this.failing) this.logger.log('Skill store checks work again');
      this.failing = false;
    } catch (error) {
      // Logged once per outage: the next check tries again.
      if (!this.failing) this.logger.warn(`Skill store check failed: ${(error as Error).message}`);
      this.failing = true;
    }
  }
}

/** Whether generation `a` (PostgreSQL bigint counters, as text; '' before the first read) comes after `b`. */
function newer(a: string, b: string): boolean {
  return BigInt(a || '0') > BigInt(b || '0');
}
