import { Module } from '@nestjs/common';
import { PersistenceModule } from '../persistence/persistence.module.js';
import { SkillsModule } from '../skills/skills.module.js';
import { ChatController } from './chat.controller.js';
import { ChatService } from './chat.service.js';
import { SkillToolsService } from './skill-tools.service.js';

@Module({
  imports: [SkillsModule, PersistenceModule],
  controllers: [ChatController],
  providers: [ChatService, SkillToolsService],
})
export class ChatModule {}
