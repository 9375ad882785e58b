import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '../users/principal.js';
import {
  AppError,
  type CatalogueChoice,
  type CatalogueLimits,
  type CatalogueSnapshot,
  isCodeSkill,
  type PromptCommand,
  type ToolDefinitionView,
} from '@skillhost/core';
import { isUuid } from '../shared/uuid.js';
import { APP_CONFIG, type AppConfig, type CatalogueFormat } from '../../config/app-config.js';
import type { StoredSkillFilter } from '../shared/skill-filter.js';
import { CHAT_STORE, type ChatStore } from './chat-store.js';
import { SkillSearchService } from '../skills/ranking/skill-search.service.js';
import { SkillRegistryService, SkillResourcesService } from '@skillhost/nest';
import { SkillStoreService } from '../skills/store/skill-store.service.js';
import { chatNotFound } from './chat-errors.js';
import { findModel } from './chat-models.js';
import { chatView } from './chat-view.js';
import { CONTEXT_MESSAGES, promptCommands, type RequestedSkill, TurnPlanner } from './turn-planner.js';

/**
 * An activated skill's pinned version against the one loaded now (`newer-available`: activating it again moves the chat
 * there).
 */
export interface ActivatedVersion {
  name: string;
  version: string | null;
  currentVersion: string | null;
  status: 'current' | 'newer-available' | 'disabled' | 'filtered-out' | 'gone';
}

/** Exactly what the model would get next in a chat. */
export interface ChatContext {
  model: string | null;
  systemPrompt: string;
  /** The catalogue the prompt lists, and the limits it was chosen within; undefined with skills off. */
  catalogue: CatalogueChoice | undefined;
  catalogueLimits: CatalogueLimits;
  tools: readonly ToolDefinitionView[];
  activatedSkills: readonly string[];
  activatedVersions: ActivatedVersion[];
  skills: {
    offered: string[];
    filteredOut: string[];
    userFilter: StoredSkillFilter | null;
    chatFilter: StoredSkillFilter | null;
  };
  commands: PromptCommand[];
}

export interface ContextOptions {
  model?: string;
  tools?: boolean;
  message?: string;
}

/**
 * What the model would get next in a chat, and the catalogue a message would list: the turn's plan, without the turn.
 */
@Injectable()
export class ChatContextService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CHAT_STORE) private readonly chats: ChatStore,
    private readonly registry: SkillRegistryService,
    private readonly resources: SkillResourcesService,
    private readonly skillStore: SkillStoreService,
    private readonly searching: SkillSearchService,
    private readonly planner: TurnPlanner,
  ) {}

  /**
   * Exactly what the model would get next in this chat: system prompt, tool definitions, and the
   * commands the prompt lists. With `message`, the catalogue is the one a turn with that message
   * would list (ranked with the chat's last messages, when the chat's skills do not all fit).
   */
  async getContext(principal: Principal, id: string, options: ContextOptions = {}): Promise<ChatContext> {
    const model = findModel(this.config.app, options.model);
    // The same one-query read a turn makes: existence, activated names, and the last messages when a message is ranked.
    const historyCount =
      options.message === undefined ? 0 : Math.min(CONTEXT_MESSAGES, this.config.app.historyMessages);
    const context = isUuid(id) ? await this.chats.turnContext(id, principal.userId, historyCount) : null;
    if (context === null) throw chatNotFound(id);
    const view = await chatView(this.registry, principal.userId, context);
    // The message is read as a turn reads it: a command expands to its prompt and requires its skills.
    const plan = this.planner.plan({
      content: options.message ?? '',
      view,
      model,
      tools: options.tools,
      activated: context.activated,
      history: context.history,
    });
    const fallback =
      plan.toolsAvailable || view === undefined ? [] : await this.fallbackBodies(plan.requested, view, context.pins);
    const { system, catalogue } = this.planner.systemPrompt(plan, { fallback });
    return {
      model: model?.name ?? null,
      systemPrompt: system,
      catalogue,
      catalogueLimits: this.planner.catalogueLimits,
      tools: plan.style?.definitions ?? [],
      activatedSkills: context.activated,
      activatedVersions: view ? await this.activatedVersions(context.activated, context.pins, view) : [],
      skills: {
        offered: view ? [...view.skills.keys()] : [],
        filteredOut: view ? [...view.filteredOut] : [],
        userFilter: context.userFilter,
        chatFilter: context.chatFilter,
      },
      commands: view ? promptCommands(view) : [],
    };
  }

  /**
   * The catalogue a message would list in a new chat of the caller (`GET /v1/skills-catalogue?query=`):
   * read as a turn reads it (`/name`, commands), the user's filter applied. Without a message: every
   * skill the caller may see.
   */
  async previewCatalogue(principal: Principal, message: string | undefined, format: CatalogueFormat): Promise<string> {
    if (message === undefined)
      return this.searching.wholeCatalogue(await this.registry.userView(principal.userId), format);
    // A new chat: the user's filter, the default model, the configured style.
    const view = await this.registry.viewForUser(principal.userId);
    return this.planner.previewCatalogue(view, message, findModel(this.config.app, undefined), format);
  }

  /**
   * Without tools, a turn puts the requested skills' instructions in the prompt: what the context route shows (code
   * skills run only in a turn).
   */
  private async fallbackBodies(
    requested: readonly RequestedSkill[],
    view: CatalogueSnapshot,
    pins: ReadonlyMap<string, string>,
  ): Promise<{ name: string; body: string }[]> {
    const bodies: { name: string; body: string }[] = [];
    for (const { skillName } of requested) {
      const record = view.skills.get(skillName);
      if (record === undefined || isCodeSkill(record)) continue;
      try {
        const skill = await this.resources.activate(skillName, { snapshot: view, pins });
        bodies.push({ name: skill.name, body: skill.body });
      } catch (error) {
        if (!AppError.isInstance(error)) throw error;
      }
    }
    return bodies;
  }

  /** Each activated skill's pinned version against the one loaded now. */
  private activatedVersions(
    activated: readonly string[],
    pins: ReadonlyMap<string, string>,
    view: CatalogueSnapshot,
  ): Promise<ActivatedVersion[]> {
    return Promise.all(
      activated.map(async (name) => {
        const skill = view.skills.get(name);
        const version = pins.get(name) ?? null;
        const current =
          skill === undefined ? null : ((await this.skillStore.keptDigest(skill)) ?? skill.digest ?? null);
        return { name, version, currentVersion: current, status: versionStatus(name, view, version, current) };
      }),
    );
  }
}

function versionStatus(
  name: string,
  view: CatalogueSnapshot,
  version: string | null,
  current: string | null,
): ActivatedVersion['status'] {
  if (!view.skills.has(name))
    return view.disabled.has(name) ? 'disabled' : view.filteredOut.has(name) ? 'filtered-out' : 'gone';
  return version === null || current === null || current === version ? 'current' : 'newer-available';
}
