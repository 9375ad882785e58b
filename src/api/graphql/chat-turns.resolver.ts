import { Args, Mutation, Query, Resolver, Subscription } from '@nestjs/graphql';
import { CurrentPrincipal, RequireScope } from '../http/decorators/auth.decorators.js';
import type { Principal } from '../../domain/users/principal.js';
import type { ChatEvent } from '../../domain/chats/chat-events.service.js';
import { ChatContextService } from '../../domain/chats/chat-context.service.js';
import { ChatToolsService } from '../../domain/chats/chat-tools.service.js';
import { presentChatContext, presentToolRun, presentTurn } from '../presenters/chat.presenter.js';
import { ChatsService } from '../../domain/chats/chats.service.js';
import { TurnRunner } from '../../domain/chats/turn-runner.js';
import { RequireFeature } from '../http/guards/feature.guard.js';
import { CountsAsTurn } from '../http/decorators/rate-limit.decorators.js';
import { ChatContextDto, ToolRunDto, TurnDto } from '../http/dto/chat-responses.dto.js';
import {
  ActivateSkillArgs,
  ChatContextArgs,
  ChatEventsArgs,
  ListSkillResourcesArgs,
  ReadSkillResourceArgs,
  RunSkillToolArgs,
  SendMessageArgs,
} from './dto/chat.args.js';
import { ChatEventModel } from './models/chat-event.model.js';

/** The twin of ChatController's turn and tool routes, and the live events of a chat's turns. */
@Resolver()
@RequireScope('chats')
export class ChatTurnsResolver {
  constructor(
    private readonly chats: ChatsService,
    private readonly turns: TurnRunner,
    private readonly contexts: ChatContextService,
    private readonly tools: ChatToolsService,
  ) {}

  @Mutation(() => TurnDto, {
    description:
      'One turn, exactly as POST /v1/chats/{id}/messages runs it; its events also reach `chatEvents` subscribers.',
  })
  @CountsAsTurn()
  async sendMessage(
    @CurrentPrincipal() principal: Principal,
    @Args() { chatId, content, model, tools }: SendMessageArgs,
  ) {
    return presentTurn(await this.turns.run(principal, chatId, { content, model, tools }));
  }

  @Query(() => ChatContextDto, {
    description:
      'For teams running their own model loop: the system prompt and tools the model would get next (GET ' +
      '/v1/chats/{id}/context).',
  })
  async chatContext(@CurrentPrincipal() principal: Principal, @Args() { id, model, tools, message }: ChatContextArgs) {
    return presentChatContext(await this.contexts.getContext(principal, id, { model, tools, message }));
  }

  @Mutation(() => ToolRunDto, {
    description:
      "Activates a skill in a chat with the configured style's activation tool (`skills.activate`, " +
      '`activate_skill`, `load_skill` or `use_skill`), stored like a model-made call.',
  })
  @RequireFeature(['skills', 'tools'])
  async activateSkill(@CurrentPrincipal() principal: Principal, @Args() { chatId, name }: ActivateSkillArgs) {
    return presentToolRun(await this.tools.activateSkill(principal, chatId, name));
  }

  @Mutation(() => ToolRunDto, {
    description:
      'Runs skills.readResource against a chat, stored like a model-made call (POST ' +
      '/v1/chats/{id}/tools/skills.readResource).',
  })
  @RequireFeature(['skills', 'tools'])
  async readSkillResource(
    @CurrentPrincipal() principal: Principal,
    @Args() { chatId, name, path }: ReadSkillResourceArgs,
  ) {
    return presentToolRun(await this.tools.executeTool(principal, chatId, 'skills.readResource', { name, path }));
  }

  @Mutation(() => ToolRunDto, {
    description:
      'Runs skills.listResources against a chat (`skillhost` style), stored like a model-made call (POST ' +
      '/v1/chats/{id}/tools/skills.listResources).',
  })
  @RequireFeature(['skills', 'tools'])
  async listSkillResources(
    @CurrentPrincipal() principal: Principal,
    @Args() { chatId, name, type }: ListSkillResourcesArgs,
  ) {
    return presentToolRun(
      await this.tools.executeTool(
        principal,
        chatId,
        'skills.listResources',
        type === undefined || type === null ? { name } : { name, type },
      ),
    );
  }

  @Mutation(() => ToolRunDto, {
    description:
      'Runs any tool of the configured style against a chat, stored like a model-made call (POST ' +
      '/v1/chats/{id}/tools/{tool}).',
  })
  @RequireFeature(['skills', 'tools'])
  async runSkillTool(
    @CurrentPrincipal() principal: Principal,
    @Args() { chatId, tool, arguments: args }: RunSkillToolArgs,
  ) {
    return presentToolRun(await this.tools.executeTool(principal, chatId, tool, args));
  }

  @Subscription(() => ChatEventModel, {
    description: "The events of every turn in one of the caller's chats from now on, whichever API started the turn.",
    resolve: (event: ChatEvent) => event,
  })
  chatEvents(@CurrentPrincipal() principal: Principal, @Args() { chatId }: ChatEventsArgs) {
    return this.chats.subscribe(principal, chatId);
  }
}
