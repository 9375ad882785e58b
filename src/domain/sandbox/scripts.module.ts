import { type DynamicModule, Module } from '@nestjs/common';
import type { PortAdapters } from '../shared/port-adapters.js';
import { ScriptsService } from './scripts.service.js';

/**
 * Running skills' scripts in the sandbox; checks the sandbox at start-up when scripts are enabled. `adapters` provide
 * `SCRIPT_METRICS`.
 */
@Module({})
export class ScriptsModule {
  static forRoot(adapters: PortAdapters): DynamicModule {
    return { module: ScriptsModule, imports: adapters.imports, providers: [ScriptsService], exports: [ScriptsService] };
  }
}
