import { Module } from '@nestjs/common';
import { ChatModule } from '../../domain/chats/chat.module.js';
import { CatalogueController } from './catalogue.controller.js';
import { AdminChatsController, ChatController } from './chat.controller.js';
import { ModelsController } from './models.controller.js';

/** The chat routes over ChatModule. */
@Module({
  imports: [ChatModule],
  controllers: [ChatController, AdminChatsController, CatalogueController, ModelsController],
})
export class ChatHttpModule {}
