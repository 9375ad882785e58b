import { Module } from '@nestjs/common';
import { MetricsModule } from '../../infra/observability/metrics.service.js';
import { APP_CONFIG } from '../../config/app-config.js';
import { PersistenceModule } from '../../infra/database/persistence.module.js';
import { CodeSkillService } from './code/code-skill.service.js';
import { SkillSearchService } from './ranking/skill-search.service.js';
import { SkillWatcherService } from './skill-watcher.service.js';
import { SkillsModule } from '@skillhost/nest';
import { skillsSettingsOf } from './skills-settings-of.js';
import { SkillLifecycleService } from './store/skill-lifecycle.service.js';
import { SkillStoreModule } from './store/skill-store.module.js';
import { SkillSyncService } from './store/skill-sync.service.js';

/** The library's SkillsModule, built from the server's configuration and reading its skill store. */
const skills = SkillsModule.forSettings({
  imports: [SkillStoreModule, MetricsModule],
  inject: [APP_CONFIG],
  useFactory: skillsSettingsOf,
});

/**
 * The server's skills: the same registry and resources an embedding app gets, plus the store,
 * code skills, search, the watcher and sync between instances (the routes are in api/http).
 */
@Module({
  imports: [PersistenceModule, SkillStoreModule, skills],
  providers: [CodeSkillService, SkillWatcherService, SkillSyncService, SkillLifecycleService, SkillSearchService],
  exports: [skills, SkillStoreModule, CodeSkillService, SkillLifecycleService, SkillSearchService],
})
export class TeamSkillsModule {}
