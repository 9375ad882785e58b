import { type DynamicModule, Module } from '@nestjs/common';
import type { PortAdapters } from '../shared/port-adapters.js';
import { RateLimitsService } from './rate-limits.service.js';

/** The rate limits; `adapters` provide `RATE_LIMIT_STORE` and `RATE_LIMIT_METRICS`. */
@Module({})
export class RateLimitsModule {
  static forRoot(adapters: PortAdapters): DynamicModule {
    return {
      module: RateLimitsModule,
      imports: adapters.imports,
      providers: [RateLimitsService],
      exports: [RateLimitsService],
    };
  }
}
