import { Module } from '@nestjs/common';
import { ScriptsService } from './scripts.service.js';

/** Running skills' scripts in the sandbox; checks the sandbox at start-up when scripts are enabled. */
@Module({
  providers: [ScriptsService],
  exports: [ScriptsService],
})
export class ScriptsModule {}
