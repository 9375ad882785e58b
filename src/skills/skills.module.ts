import { Module } from '@nestjs/common';
import { PersistenceModule } from '../persistence/persistence.module.js';
import { CodeSkillService } from './code/code-skill.service.js';
import { CommandsController } from './commands.controller.js';
import { SkillRegistryService } from './skill-registry.service.js';
import { SkillResourcesService } from './skill-resources.service.js';
import { SkillLifecycleService } from './store/skill-lifecycle.service.js';
import { SkillStoreController } from './store/skill-store.controller.js';
import { SkillStoreService } from './store/skill-store.service.js';
import { SkillSyncService } from './store/skill-sync.service.js';
import { SkillWatcherService } from './skill-watcher.service.js';
import { SkillsController } from './skills.controller.js';
import { SkillSearchService } from './ranking/skill-search.service.js';

@Module({
  imports: [PersistenceModule],
  controllers: [SkillsController, CommandsController, SkillStoreController],
  providers: [SkillRegistryService, SkillResourcesService, CodeSkillService, SkillWatcherService, SkillStoreService, SkillSyncService, SkillLifecycleService, SkillSearchService],
  exports: [SkillRegistryService, SkillResourcesService, CodeSkillService, SkillStoreService, SkillLifecycleService, SkillSearchService],
})
export class SkillsModule {}
