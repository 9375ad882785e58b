import { type DynamicModule, Module } from '@nestjs/common';
import { SKILL_STORE } from '@skillhost/core';
import type { PortAdapters } from '../../shared/port-adapters.js';
import { SkillStoreService } from './skill-store.service.js';

/**
 * The skill store (installed and pinned versions in PostgreSQL), for the server's registry and its routes. `adapters`
 * provide `SKILL_VERSION_STORE`, `USER_SKILL_FILTERS` and `CHAT_SKILL_FILTERS`.
 */
@Module({})
export class SkillStoreModule {
  static forRoot(adapters: PortAdapters): DynamicModule {
    return {
      module: SkillStoreModule,
      imports: adapters.imports,
      providers: [SkillStoreService, { provide: SKILL_STORE, useExisting: SkillStoreService }],
      exports: [SkillStoreService, SKILL_STORE],
    };
  }
}
