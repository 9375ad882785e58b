import type { DynamicModule } from '@nestjs/common';
import { turnEventShapes } from '../api/presenters/chat.presenter.js';
import { ChatModule } from '../domain/chats/chat.module.js';
import { LANGUAGE_MODELS } from '../domain/chats/llm/language-models.js';
import { TURN_EVENT_SHAPES } from '../domain/chats/turn-runner.js';
import { TeamSkillsModule } from '../domain/skills/team-skills.module.js';
import { PersistenceModule } from '../infra/database/persistence.module.js';
import { LanguageModelFactory } from '../infra/llm/language-model.factory.js';
import { MetricsModule } from '../infra/observability/metrics.service.js';

/**
 * The domain as the server wires it, without the doors: the skills and the chats with the adapters of their ports. The
 * server's module graph (app.module.ts) and a command that runs the server's own services (`skillhost eval --level
 * model`) build them here, so both call the same models through the same planner and tools.
 */

/** The skills with the adapters of their ports: the store's tables and notifications, and metrics. */
export function skillsWithAdapters(): DynamicModule {
  return TeamSkillsModule.forRoot({ imports: [PersistenceModule, MetricsModule] });
}

/**
 * The chats with the adapters of their ports: storage from the database, models from the providers, metrics from
 * observability, the turn's event shapes from the doors; and the app's one skills module.
 */
export function chatsWithAdapters(skills: DynamicModule): DynamicModule {
  return ChatModule.forRoot({
    skills,
    imports: [PersistenceModule, MetricsModule],
    providers: [
      { provide: LANGUAGE_MODELS, useClass: LanguageModelFactory },
      { provide: TURN_EVENT_SHAPES, useValue: turnEventShapes },
    ],
  });
}
