import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { LifecycleModule } from '../lifecycle/lifecycle.module.js';
import { ScriptsModule } from '../sandbox/scripts.module.js';
import { SkillSearchService } from '../skills/ranking/skill-search.service.js';
import { SkillRegistryService, SkillResourcesService } from '@skillhost/nest';
import type { PortAdapters } from '../shared/port-adapters.js';
import { ChatContextService } from './chat-context.service.js';
import { ChatEventsService } from './chat-events.service.js';
import { CHAT_STORE, type ChatStore } from './chat-store.js';
import { CHAT_METRICS, type ChatMetrics } from './chat-metrics.js';
import { ChatToolsService } from './chat-tools.service.js';
import { ChatsService } from './chats.service.js';
import { GatewayService } from './gateway/gateway.service.js';
import { ModelLoopService } from './llm/model-loop.service.js';
import { ModelEvalService } from './model-eval.service.js';
import { SkillToolsService } from './skill-tools.service.js';
import { TURN_ADMISSION, type TurnAdmission } from './turn-admission.js';
import { TurnGate } from '../lifecycle/turn-gate.service.js';
import { TurnPlanner } from './turn-planner.js';
import { TURN_EVENT_SHAPES, type TurnEventShapes, TurnRunner } from './turn-runner.js';
import { SKILL_USAGE_RECORDER, type UsageRecorder } from '../skills/usage/skill-usage.js';

function createTurnPlanner(
  config: AppConfig,
  searching: SkillSearchService,
  skillTools: SkillToolsService,
): TurnPlanner {
  const { basePrompt, skills, tools } = config.app;
  return new TurnPlanner(
    { basePrompt, explicitPrefixes: skills.explicitPrefixes, skills, toolsEnabled: tools.enabled },
    searching,
    (view) => skillTools.style(view),
  );
}

function createTurnRunner(
  config: AppConfig,
  store: ChatStore,
  views: SkillRegistryService,
  planner: TurnPlanner,
  tools: SkillToolsService,
  instructions: SkillResourcesService,
  events: ChatEventsService,
  admission: TurnAdmission,
  metrics: ChatMetrics,
  models: ModelLoopService,
  shapes: TurnEventShapes,
  usage: UsageRecorder,
): TurnRunner {
  const { models: configured, defaultModel, historyMessages, tools: toolSettings } = config.app;
  const settings = {
    models: configured,
    defaultModel,
    historyMessages,
    maxSteps: toolSettings.maxSteps,
    maxAnswerBytes: toolSettings.maxAnswerBytes,
  };
  return new TurnRunner({
    settings,
    store,
    views,
    planner,
    tools,
    instructions,
    events,
    shapes,
    admission,
    metrics,
    models,
    usage,
  });
}

/**
 * What the outer layers give the chats: the adapters of their ports, provided by the app that
 * wires the layers (`CHAT_STORE` from the database, `LANGUAGE_MODELS` from the model providers,
 * `CHAT_METRICS` and `SCRIPT_METRICS` from observability, `TURN_EVENT_SHAPES` from the doors' presenters), and the
 * app's one TeamSkillsModule.
 */
export interface ChatAdapters extends PortAdapters {
  providers: Provider[];
  skills: DynamicModule;
}

/** Chats and their turns: the rules, without the routes (those are in api/http and api/graphql). */
@Module({})
export class ChatModule {
  static forRoot(adapters: ChatAdapters): DynamicModule {
    return {
      module: ChatModule,
      imports: [adapters.skills, ScriptsModule.forRoot(adapters), LifecycleModule, ...adapters.imports],
      providers: [
        ...adapters.providers,
        ChatsService,
        GatewayService,
        ChatContextService,
        ChatToolsService,
        SkillToolsService,
        ChatEventsService,
        ModelLoopService,
        ModelEvalService,
        { provide: TURN_ADMISSION, useExisting: TurnGate satisfies new (...args: never[]) => TurnAdmission },
        {
          provide: TurnPlanner,
          useFactory: createTurnPlanner,
          inject: [APP_CONFIG, SkillSearchService, SkillToolsService],
        },
        {
          provide: TurnRunner,
          useFactory: createTurnRunner,
          inject: [
            APP_CONFIG,
            CHAT_STORE,
            SkillRegistryService,
            TurnPlanner,
            SkillToolsService,
            SkillResourcesService,
            ChatEventsService,
            TURN_ADMISSION,
            CHAT_METRICS,
            ModelLoopService,
            TURN_EVENT_SHAPES,
            SKILL_USAGE_RECORDER,
          ],
        },
      ],
      exports: [
        ChatsService,
        GatewayService,
        ChatContextService,
        ChatToolsService,
        TurnRunner,
        ChatEventsService,
        adapters.skills,
      ],
    };
  }
}
