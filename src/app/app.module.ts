import { OAuthModule, OAuthProbesModule } from '../api/oauth/oauth.module.js';
import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { AuthHttpModule } from '../api/http/auth-http.module.js';
import { AppExceptionFilter } from '../api/errors/app-exception.filter.js';
import { FeatureGuard } from '../api/http/guards/feature.guard.js';
import { createAppPipe } from '../api/http/pipes/validation.pipe.js';
import type { AppConfig } from '../config/app-config.js';
import { ConfigModule } from '../config/config.module.js';
import type { ProcessRole } from '../config/process-role.js';
import { GraphqlApiModule } from '../api/graphql/graphql-api.module.js';
import { LifecycleModule } from '../domain/lifecycle/lifecycle.module.js';
import { LoggingModule } from '../infra/observability/logging.js';
import { MetricsModule } from '../infra/observability/metrics.service.js';
import { TelemetryModule } from '../infra/observability/telemetry.service.js';
import { OpsModule } from '../api/http/ops-http.module.js';
import { RequestGuards } from '../api/http/guards/request-guards.js';
import { ChatHttpModule } from '../api/http/chat-http.module.js';
import { PersistenceModule } from '../infra/database/persistence.module.js';
import { SkillsHttpModule } from '../api/http/skills-http.module.js';
import { McpModule } from '../api/mcp/mcp.module.js';
import { chatsWithAdapters, skillsWithAdapters } from './domain-modules.js';
import { GatewayModule } from '../api/gateway/gateway.module.js';

@Module({})
export class AppModule {
  /** The whole application for one validated configuration (main.ts and tests build it the same way). */
  static forConfig(config: AppConfig, role?: ProcessRole): DynamicModule {
    // One instance of the skills and of the chats for every door that uses them.
    const skills = skillsWithAdapters();
    const chats = chatsWithAdapters(skills);
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config, role),
        LoggingModule,
        LifecycleModule,
        MetricsModule,
        TelemetryModule,
        PersistenceModule,
        AuthHttpModule,
        config.app.auth.oauth.enabled ? OAuthModule : OAuthProbesModule,
        SkillsHttpModule.forSkills(skills),
        ChatHttpModule.forChats(chats),
        McpModule.forSkills(skills),
        GatewayModule.forChats(chats),
        GraphqlApiModule.forChats(chats),
        OpsModule.forConfig(config, skills),
      ],
      providers: [
        { provide: APP_FILTER, useClass: AppExceptionFilter },
        // Who first (401/403), then how much they may (429), then whether the feature is on: one guard (see there).
        FeatureGuard,
        { provide: APP_GUARD, useClass: RequestGuards },
        { provide: APP_PIPE, useFactory: () => createAppPipe() },
      ],
    };
  }
}
