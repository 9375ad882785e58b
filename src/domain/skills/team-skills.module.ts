import { type DynamicModule, Module } from '@nestjs/common';
import { SkillsModule } from '@skillhost/nest';
import { APP_CONFIG } from '../../config/app-config.js';
import type { PortAdapters } from '../shared/port-adapters.js';
import { CodeSkillService } from './code/code-skill.service.js';
import { SkillSearchService } from './ranking/skill-search.service.js';
import { SkillWatcherService } from './skill-watcher.service.js';
import { SkillUsageService } from './usage/skill-usage.service.js';
import { SkillReadsService } from './skill-reads.service.js';
import { skillsSettingsOf } from './skills-settings-of.js';
import { SkillImportService } from './store/skill-import.service.js';
import { SkillLifecycleService } from './store/skill-lifecycle.service.js';
import { SkillMirrorService } from './store/skill-mirror.service.js';
import { SkillStoreModule } from './store/skill-store.module.js';
import { SkillSyncService } from './store/skill-sync.service.js';
import { CatalogueEvalFollowerService } from './evals/catalogue-eval-follower.service.js';
import { TriggerEvalService } from './evals/trigger-eval.service.js';
import { EvalCaseService } from './evals/eval-case.service.js';

/**
 * The server's skills: the same registry and resources an embedding app gets, plus the store,
 * code skills, search, the watcher and sync between instances (the routes are in api/http).
 */
@Module({})
export class TeamSkillsModule {
  /**
   * `adapters` provide the store's ports (`SKILL_VERSION_STORE`, the skill filters, `SKILL_USE`, `NOTIFICATION_BUS`)
   * and `SKILLS_METRICS`. Build it once and give the same module to every importer: each call is a new instance.
   */
  static forRoot(adapters: PortAdapters): DynamicModule {
    const store = SkillStoreModule.forRoot(adapters);
    // The library's SkillsModule, built from the server's configuration and reading its skill store.
    const skills = SkillsModule.forSettings({
      imports: [store, ...adapters.imports],
      inject: [APP_CONFIG],
      useFactory: skillsSettingsOf,
    });
    return {
      module: TeamSkillsModule,
      imports: [...adapters.imports, store, skills],
      providers: [
        CodeSkillService,
        SkillWatcherService,
        SkillSyncService,
        SkillImportService,
        SkillLifecycleService,
        SkillMirrorService,
        SkillSearchService,
        TriggerEvalService,
        EvalCaseService,
        CatalogueEvalFollowerService,
        SkillUsageService,
        SkillReadsService,
      ],
      exports: [
        skills,
        store,
        CodeSkillService,
        SkillLifecycleService,
        SkillMirrorService,
        SkillSearchService,
        TriggerEvalService,
        EvalCaseService,
        SkillUsageService,
        SkillReadsService,
      ],
    };
  }
}
