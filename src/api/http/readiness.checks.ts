import { Injectable, Logger } from '@nestjs/common';
import { type HealthCheckResult, type HealthIndicatorFunction, HealthIndicatorService } from '@nestjs/terminus';
import { DatabaseHealthRepository } from '../../infra/database/database-health.repository.js';
import { SkillRegistryService } from '@skillhost/nest';
import { LifecycleService } from '../../domain/lifecycle/lifecycle.service.js';

/** Inside Kubernetes' default probe timeout (1 s): a database slower than this is "not ready". */
export const DATABASE_PING_TIMEOUT_MS = 800;

/**
 * What "ready for traffic" means: the database answers, the skills snapshot is loaded (when skills
 * are on), and the process is not shutting down.
 */
@Injectable()
export class ReadinessChecks {
  private readonly logger = new Logger('Readiness');
  /** The checks that failed last time, so only a change is logged, not every probe. */
  private lastFailing: string[] = [];

  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly database: DatabaseHealthRepository,
    private readonly registry: SkillRegistryService,
    private readonly lifecycle: LifecycleService,
  ) {}

  all(): HealthIndicatorFunction[] {
    return [() => this.databaseAnswers(), () => this.skillsLoaded(), () => this.notShuttingDown()];
  }

  async databaseAnswers() {
    const check = this.indicators.check('database');
    // Known to be down (the embedded server is being restarted): no need to wait for a ping to say so.
    const knownDown = this.lifecycle.databaseDown;
    if (knownDown !== undefined) return check.down({ message: knownDown });
    const ping = await this.database.ping(DATABASE_PING_TIMEOUT_MS);
    return ping.ok ? check.up({ responseTimeMs: ping.ms }) : check.down({ message: ping.reason });
  }

  skillsLoaded() {
    const check = this.indicators.check('skills');
    if (!this.registry.enabled) return check.up({ enabled: false });
    try {
      const snapshot = this.registry.snapshot;
      return check.up({ enabled: true, loaded: snapshot.skills.size, scannedAt: snapshot.scannedAt });
    } catch {
      return check.down({ message: 'No skills snapshot is loaded yet.' });
    }
  }

  /** Logs when the instance stops or starts being ready, and why. */
  noteOutcome(result: HealthCheckResult): void {
    const failing = Object.keys(result.error ?? {}).sort();
    if (failing.join() === this.lastFailing.join()) return;
    this.lastFailing = failing;
    if (failing.length === 0) this.logger.log('Ready');
    else
      this.logger.warn(
        `Not ready: ${failing
          .map(
            (name) =>
              `${name} (${String((result.error?.[name] as { message?: unknown } | undefined)?.message ?? 'down')})`,
          )
          .join(', ')}`,
      );
  }

  notShuttingDown() {
    const check = this.indicators.check('lifecycle');
    return this.lifecycle.isShuttingDown ? check.down({ message: 'This instance is shutting down.' }) : check.up();
  }
}
