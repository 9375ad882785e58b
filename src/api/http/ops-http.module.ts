import { type DynamicModule, Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { AuthHttpModule } from './auth-http.module.js';
import { LifecycleModule } from '../../domain/lifecycle/lifecycle.module.js';
import { RateLimitsModule } from '../../domain/limits/rate-limits.module.js';
import { MetricsModule } from '../../infra/observability/metrics.service.js';
import type { AppConfig } from '../../config/app-config.js';
import { PersistenceModule } from '../../infra/database/persistence.module.js';
import { HealthController } from './health.controller.js';
import { MetricsController, PublicMetricsController } from './metrics.controller.js';
import { RateLimitGuard } from './guards/rate-limit.guard.js';
import { ReadinessChecks } from './readiness.checks.js';
import { RequestObserver } from './request-observer.js';

/**
 * Operations: health probes, `/metrics`, the request log line and metric, and the rate limits
 * (whose guard AppModule registers after the principal guard; their counts are RateLimitsModule's). Metrics themselves
 * are MetricsModule's.
 */
@Module({})
export class OpsModule {
  /** `skills`: the app's TeamSkillsModule, which the readiness checks ask. */
  static forConfig(config: AppConfig, skills: DynamicModule): DynamicModule {
    return {
      module: OpsModule,
      // terminus would log every failing probe as an error; ReadinessChecks logs changes instead.
      imports: [
        TerminusModule.forRoot({ logger: false }),
        PersistenceModule,
        skills,
        AuthHttpModule,
        LifecycleModule,
        MetricsModule,
        RateLimitsModule.forRoot({ imports: [PersistenceModule, MetricsModule] }),
      ],
      controllers: [HealthController, config.app.metrics.public ? PublicMetricsController : MetricsController],
      providers: [ReadinessChecks, RequestObserver, RateLimitGuard],
      exports: [RateLimitGuard],
    };
  }
}
