import { Module } from '@nestjs/common';
import { TeamSkillsModule } from '../../domain/skills/team-skills.module.js';
import { CommandsController } from './commands.controller.js';
import { SkillStoreController } from './skill-store.controller.js';
import { SkillsController } from './skills.controller.js';

/** The skills, commands and store routes over TeamSkillsModule. */
@Module({
  imports: [TeamSkillsModule],
  controllers: [SkillsController, CommandsController, SkillStoreController],
})
export class SkillsHttpModule {}
