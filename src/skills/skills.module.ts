import { Module } from '@nestjs/common';
import { CodeSkillService } from './code/code-skill.service.js';
import { CommandsController } from './commands.controller.js';
import { SkillRegistryService } from './skill-registry.service.js';
import { SkillResourcesService } from './skill-resources.service.js';
import { SkillWatcherService } from './skill-watcher.service.js';
import { SkillsController } from './skills.controller.js';

@Module({
  controllers: [SkillsController, CommandsController],
  providers: [SkillRegistryService, SkillResourcesService, CodeSkillService, SkillWatcherService],
  exports: [SkillRegistryService, SkillResourcesService, CodeSkillService],
})
export class SkillsModule {}
