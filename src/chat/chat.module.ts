import { Module, type Type } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module.js';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { MetricsService } from '../ops/metrics.service.js';
import { TurnGate } from '../ops/turn-gate.service.js';
import { ChatRepository } from '../persistence/chat.repository.js';
import { PersistenceModule } from '../persistence/persistence.module.js';
import { ScriptsModule } from '../scripts/scripts.module.js';
import { SkillSearchService } from '../skills/ranking/skill-search.service.js';
import { SkillRegistryService } from '../skills/skill-registry.service.js';
import { SkillResourcesService } from '../skills/skill-resources.service.js';
import { SkillsApiModule } from '../skills/skills-api.module.js';
import { CatalogueController } from './catalogue.controller.js';
import { ChatContextService } from './chat-context.service.js';
import { ChatEventsService } from './chat-events.service.js';
import { CHAT_METRICS, type ChatMetrics } from './chat-metrics.js';
import { ChatToolsService } from './chat-tools.service.js';
import { AdminChatsController, ChatController } from './chat.controller.js';
import { turnEventShapes } from './chat.presenter.js';
import { ChatsService } from './chats.service.js';
import { LanguageModelFactory } from './llm/language-model.factory.js';
import { ModelLoopService } from './llm/model-loop.service.js';
import { ModelsController } from './models.controller.js';
import { SkillToolsService } from './skill-tools.service.js';
import { TURN_ADMISSION, type TurnAdmission } from './turn-admission.js';
import { TurnPlanner } from './turn-planner.js';
import { TurnRunner } from './turn-runner.js';

function createTurnPlanner(config: AppConfig, searching: SkillSearchService, skillTools: SkillToolsService): TurnPlanner {
  const { basePrompt, skills, tools } = config.app;
  return new TurnPlanner({ basePrompt, explicitPrefixes: skills.explicitPrefixes, skills, toolsEnabled: tools.enabled }, searching, (view) => skillTools.style(view));
}

function createTurnRunner(
  config: AppConfig,
  store: ChatRepository,
  views: SkillRegistryService,
  planner: TurnPlanner,
  tools: SkillToolsService,
  instructions: SkillResourcesService,
  events: ChatEventsService,
  admission: TurnAdmission,
  metrics: ChatMetrics,
  models: ModelLoopService,
): TurnRunner {
  const { models: configured, defaultModel, historyMessages, tools: toolSettings } = config.app;
  const settings = { models: configured, defaultModel, historyMessages, maxSteps: toolSettings.maxSteps, maxAnswerBytes: toolSettings.maxAnswerBytes };
  return new TurnRunner({ settings, store, views, planner, tools, instructions, events, shapes: turnEventShapes, admission, metrics, models });
}

@Module({
  imports: [SkillsApiModule, PersistenceModule, AuthModule, ScriptsModule],
  controllers: [ChatController, AdminChatsController, CatalogueController, ModelsController],
  providers: [
    ChatsService,
    ChatContextService,
    ChatToolsService,
    SkillToolsService,
    ChatEventsService,
    LanguageModelFactory,
    ModelLoopService,
    // The server's adapters of the chat's ports (global providers of the app), checked against the ports here.
    { provide: TURN_ADMISSION, useExisting: TurnGate satisfies Type<TurnAdmission> },
    { provide: CHAT_METRICS, useExisting: MetricsService satisfies Type<ChatMetrics> },
    { provide: TurnPlanner, useFactory: createTurnPlanner, inject: [APP_CONFIG, SkillSearchService, SkillToolsService] },
    {
      provide: TurnRunner,
      useFactory: createTurnRunner,
      inject: [APP_CONFIG, ChatRepository, SkillRegistryService, TurnPlanner, SkillToolsService, SkillResourcesService, ChatEventsService, TURN_ADMISSION, CHAT_METRICS, ModelLoopService],
    },
  ],
  exports: [ChatsService, ChatContextService, ChatToolsService, TurnRunner],
})
export class ChatModule {}
