import { type DynamicModule, Module } from '@nestjs/common';
import { AdminSkillUsageController } from './admin-skill-usage.controller.js';
import { CommandsController } from './commands.controller.js';
import { SkillEvalCasesController } from './skill-eval-cases.controller.js';
import { SkillEvalsController } from './skill-evals.controller.js';
import { SkillMirrorsController } from './skill-mirrors.controller.js';
import { SkillStoreController } from './skill-store.controller.js';
import { SkillsController } from './skills.controller.js';

/** The skills, commands and store routes over the app's TeamSkillsModule (given, so every door shares one). */
@Module({})
export class SkillsHttpModule {
  static forSkills(skills: DynamicModule): DynamicModule {
    return {
      module: SkillsHttpModule,
      imports: [skills],
      controllers: [
        SkillsController,
        CommandsController,
        SkillStoreController,
        SkillMirrorsController,
        SkillEvalsController,
        SkillEvalCasesController,
        AdminSkillUsageController,
      ],
    };
  }
}
