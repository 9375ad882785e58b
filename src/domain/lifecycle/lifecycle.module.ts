import { Module } from '@nestjs/common';
import { TurnGate } from './turn-gate.service.js';
import { DATABASE_STATE } from './database-state.js';
import { LifecycleService } from './lifecycle.service.js';

/** Where the process is in its life (and the turn gate that closes with it), for the modules that import it. */
@Module({
  providers: [LifecycleService, TurnGate, { provide: DATABASE_STATE, useExisting: LifecycleService }],
  exports: [LifecycleService, TurnGate, DATABASE_STATE],
})
export class LifecycleModule {}
