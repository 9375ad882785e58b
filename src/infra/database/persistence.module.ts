import { Module } from '@nestjs/common';
import { LifecycleModule } from '../../domain/lifecycle/lifecycle.module.js';
import { ApiKeyRepository } from './api-key.repository.js';
import { ChatEventRelayRepository } from './chat-event-relay.repository.js';
import { ChatRepository } from './chat.repository.js';
import { DatabaseHealthRepository } from './database-health.repository.js';
import { DatabaseLifecycle, dataSourceProvider } from './database.provider.js';
import { PgNotificationsService } from './pg-notifications.service.js';
import { SkillStoreRepository } from './skill-store.repository.js';
import { UserRepository } from './user.repository.js';

@Module({
  imports: [LifecycleModule],
  providers: [DatabaseLifecycle, dataSourceProvider, ChatRepository, UserRepository, ApiKeyRepository, DatabaseHealthRepository, PgNotificationsService, ChatEventRelayRepository, SkillStoreRepository],
  exports: [ChatRepository, UserRepository, ApiKeyRepository, DatabaseHealthRepository, PgNotificationsService, ChatEventRelayRepository, SkillStoreRepository],
})
export class PersistenceModule {}
