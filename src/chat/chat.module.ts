import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { PersistenceModule } from '../persistence/persistence.module.js';
import { ScriptsModule } from '../scripts/scripts.module.js';
import { SkillsApiModule } from '../skills/skills-api.module.js';
import { ChatEventsService } from './chat-events.service.js';
import { CatalogueController } from './catalogue.controller.js';
import { ModelsController } from './models.controller.js';
import { AdminChatsController, ChatController } from './chat.controller.js';
import { ChatService } from './chat.service.js';
import { LanguageModelFactory } from './llm/language-model.factory.js';
import { SkillToolsService } from './skill-tools.service.js';

@Module({
  imports: [SkillsApiModule, PersistenceModule, AuthModule, ScriptsModule],
  controllers: [ChatController, AdminChatsController, CatalogueController, ModelsController],
  providers: [ChatService, SkillToolsService, ChatEventsService, LanguageModelFactory],
  exports: [ChatService],
})
export class ChatModule {}
