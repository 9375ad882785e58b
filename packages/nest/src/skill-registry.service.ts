import { Inject, Injectable, Logger, type OnModuleInit, Optional } from '@nestjs/common';
import {
  SKILL_SOURCES,
  SKILL_STORE,
  SKILLS_METRICS,
  SKILLS_SETTINGS,
  SkillRegistry,
  type SkillSource,
  type SkillStoreReader,
  type SkillsMetrics,
  type SkillsSettings,
} from '@skillhost/core';

/**
 * The registry of @skillhost/core as a Nest provider: settings from `SkillsModule`, and the metrics,
 * skill store and the app's own skill sources when it provides them. The first read runs when the
 * module initialises.
 */
@Injectable()
export class SkillRegistryService extends SkillRegistry implements OnModuleInit {
  constructor(
    @Inject(SKILLS_SETTINGS) settings: SkillsSettings,
    @Optional() @Inject(SKILLS_METRICS) metrics?: SkillsMetrics,
    @Optional() @Inject(SKILL_STORE) store?: SkillStoreReader,
    @Optional() @Inject(SKILL_SOURCES) sources?: readonly SkillSource[],
  ) {
    super(settings, metrics, store, new Logger(SkillRegistryService.name), sources);
  }

  onModuleInit(): Promise<void> | void {
    return this.init();
  }
}
