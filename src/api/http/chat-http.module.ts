import { type DynamicModule, Module } from '@nestjs/common';
import { CatalogueController } from './catalogue.controller.js';
import { AdminChatsController, ChatController } from './chat.controller.js';
import { ModelsController } from './models.controller.js';

/** The chat routes over the app's ChatModule (given, so that every door shares one instance of it). */
@Module({})
export class ChatHttpModule {
  static forChats(chats: DynamicModule): DynamicModule {
    return {
      module: ChatHttpModule,
      imports: [chats],
      controllers: [ChatController, AdminChatsController, CatalogueController, ModelsController],
    };
  }
}
