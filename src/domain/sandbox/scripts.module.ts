import { Module } from '@nestjs/common';
import { MetricsModule } from '../../infra/observability/metrics.service.js';
import { ScriptsService } from './scripts.service.js';

/** Running skills' scripts in the sandbox; checks the sandbox at start-up when scripts are enabled. */
@Module({
  imports: [MetricsModule],
  providers: [ScriptsService],
  exports: [ScriptsService],
})
export class ScriptsModule {}
