import { Module } from '@nestjs/common';
import { PersistenceModule } from '../../../infra/database/persistence.module.js';
import { SkillStoreService } from './skill-store.service.js';
import { SKILL_STORE } from '@skillhost/core';

/** The skill store (installed and pinned versions in PostgreSQL), for the server's registry and its routes. */
@Module({
  imports: [PersistenceModule],
  providers: [SkillStoreService, { provide: SKILL_STORE, useExisting: SkillStoreService }],
  exports: [SkillStoreService, SKILL_STORE],
})
export class SkillStoreModule {}
