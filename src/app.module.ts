import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { AuthModule } from './auth/auth.module.js';
import { PrincipalGuard } from './auth/principal.guard.js';
import { AppExceptionFilter } from './common/app-exception.filter.js';
import { FeatureGuard } from './common/feature.guard.js';
import { createValidationPipe } from './common/validation.pipe.js';
import type { AppConfig } from './config/app-config.js';
import { ConfigModule } from './config/config.module.js';
import { GraphqlApiModule } from './graphql/graphql-api.module.js';
import { LifecycleModule } from './ops/lifecycle.service.js';
import { LoggingModule } from './ops/logging.js';
import { MetricsModule } from './ops/metrics.service.js';
import { OpsModule } from './ops/ops.module.js';
import { RateLimitGuard } from './ops/rate-limit.guard.js';
import { ChatModule } from './chat/chat.module.js';
import { PersistenceModule } from './persistence/persistence.module.js';
import { SkillsApiModule } from './skills/skills-api.module.js';
import { McpModule } from './mcp/mcp.module.js';

@Module({})
export class AppModule {
  /** The whole application for one validated configuration (main.ts and tests build it the same way). */
  static forConfig(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        LoggingModule,
        LifecycleModule,
        MetricsModule,
        PersistenceModule,
        AuthModule,
        SkillsApiModule,
        ChatModule,
        McpModule,
        GraphqlApiModule,
        OpsModule.forConfig(config),
      ],
      providers: [
        { provide: APP_FILTER, useClass: AppExceptionFilter },
        // Who first (401/403), then how much they may (429), then whether the feature is on.
        { provide: APP_GUARD, useExisting: PrincipalGuard },
        { provide: APP_GUARD, useExisting: RateLimitGuard },
        { provide: APP_GUARD, useClass: FeatureGuard },
        { provide: APP_PIPE, useFactory: createValidationPipe },
      ],
    };
  }
}
