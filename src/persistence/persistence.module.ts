import { Module } from '@nestjs/common';
import { ChatRepository } from './chat.repository.js';
import { DatabaseLifecycle, dataSourceProvider } from './database.provider.js';

@Module({
  providers: [DatabaseLifecycle, dataSourceProvider, ChatRepository],
  exports: [ChatRepository],
})
export class PersistenceModule {}
