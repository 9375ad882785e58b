import { Inject, Injectable, Logger, type OnModuleInit, Optional } from '@nestjs/common';
import {
  SKILL_STORE,
  SKILLS_METRICS,
  SKILLS_SETTINGS,
  SkillRegistry,
  type SkillStoreReader,
  type SkillsMetrics,
  type SkillsSettings,
} from '@skillhost/core';

/**
 * The registry of @skillhost/core as a Nest provider: settings from `SkillsModule`, and the metrics
 * and skill store when the app provides them. The first scan runs when the module initialises.
 */
@Injectable()
export class SkillRegistryService extends SkillRegistry implements OnModuleInit {
  constructor(
    @Inject(SKILLS_SETTINGS) settings: SkillsSettings,
    @Optional() @Inject(SKILLS_METRICS) metrics?: SkillsMetrics,
    @Optional() @Inject(SKILL_STORE) store?: SkillStoreReader,
  ) {
    super(settings, metrics, store, new Logger(SkillRegistryService.name));
  }

  onModuleInit(): Promise<void> | void {
    return this.init();
  }
}
