import { Module } from '@nestjs/common';
import { PersistenceModule } from '../../persistence/persistence.module.js';
import { SkillStoreService } from './skill-store.service.js';

/** The skill store (installed and pinned versions in PostgreSQL), for the server's registry and its routes. */
@Module({
  imports: [PersistenceModule],
  providers: [SkillStoreService],
  exports: [SkillStoreService],
})
export class SkillStoreModule {}
