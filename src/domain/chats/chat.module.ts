import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module.js';
import { PersistenceModule } from '../../infra/database/persistence.module.js';
import { ScriptsModule } from '../sandbox/scripts.module.js';
import { TeamSkillsModule } from '../skills/team-skills.module.js';
import { ChatEventsService } from './chat-events.service.js';
import { ChatService } from './chat.service.js';
import { LanguageModelFactory } from '../../infra/llm/language-model.factory.js';
import { SkillToolsService } from './skill-tools.service.js';

/** Chats and their turns: the rules, without the routes (api/http/chat-http.module.ts). */
@Module({
  imports: [TeamSkillsModule, PersistenceModule, UsersModule, ScriptsModule],
  providers: [ChatService, SkillToolsService, ChatEventsService, LanguageModelFactory],
  exports: [ChatService, SkillToolsService, ChatEventsService, LanguageModelFactory, TeamSkillsModule, UsersModule],
})
export class ChatModule {}
