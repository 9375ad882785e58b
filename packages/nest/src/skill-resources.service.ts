import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import {
  SKILL_STORE,
  SKILLS_SETTINGS,
  SkillResources,
  type SkillStoreReader,
  type SkillsSettings,
} from '@skillhost/core';
import { SkillRegistryService } from './skill-registry.service.js';

/** The resources reader of @skillhost/core as a Nest provider, over the module's registry. */
@Injectable()
export class SkillResourcesService extends SkillResources {
  constructor(
    registry: SkillRegistryService,
    @Inject(SKILLS_SETTINGS) settings: SkillsSettings,
    @Optional() @Inject(SKILL_STORE) store?: SkillStoreReader,
  ) {
    super(registry, settings, store, new Logger(SkillResourcesService.name));
  }
}
