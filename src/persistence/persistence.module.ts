import { Module } from '@nestjs/common';
import { ApiKeyRepository } from './api-key.repository.js';
import { ChatRepository } from './chat.repository.js';
import { DatabaseHealthRepository } from './database-health.repository.js';
import { DatabaseLifecycle, dataSourceProvider } from './database.provider.js';
import { UserRepository } from './user.repository.js';

@Module({
  providers: [DatabaseLifecycle, dataSourceProvider, ChatRepository, UserRepository, ApiKeyRepository, DatabaseHealthRepository],
  exports: [ChatRepository, UserRepository, ApiKeyRepository, DatabaseHealthRepository],
})
export class PersistenceModule {}
