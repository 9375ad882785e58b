import { Args, Context, Mutation, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import { CurrentPrincipal } from '../http/decorators/auth.decorators.js';
import type { Principal } from '../../domain/users/principal.js';
import { presentActivation, presentChat, presentMessage, presentPage } from '../presenters/chat.presenter.js';
import { ChatsService } from '../../domain/chats/chats.service.js';
import { ChatLoadersService } from './chat-loaders.service.js';
import { ChatIdArgs, CreateChatArgs } from './dto/chat.args.js';
import { PageArgs } from './dto/page.args.js';
import { ActivatedSkillModel, ChatModel, ChatPageModel } from './models/chat.model.js';
import { MessagePageModel } from './models/message.model.js';

/**
 * The twin of ChatController's chat routes. Another user's chat is CHAT_NOT_FOUND, exactly as a
 * missing one; the nested fields of chats are loaded in batches, one query per field and operation.
 */
@Resolver(() => ChatModel)
export class ChatsResolver {
  constructor(
    private readonly chatService: ChatsService,
    private readonly loaders: ChatLoadersService,
  ) {}

  @Query(() => ChatPageModel, { description: "The caller's chats, newest first (GET /v1/chats)." })
  async chats(@CurrentPrincipal() principal: Principal, @Args() page: PageArgs) {
    return presentPage(await this.chatService.listChats(principal, page.limit, page.offset), presentChat);
  }

  @Query(() => ChatModel, { description: 'One of the caller\'s chats (GET /v1/chats/{id}).' })
  async chat(@CurrentPrincipal() principal: Principal, @Args() { id }: ChatIdArgs) {
    return presentChat(await this.chatService.getChat(principal, id));
  }

  @Mutation(() => ChatModel, { description: 'POST /v1/chats.' })
  async createChat(@CurrentPrincipal() principal: Principal, @Args() { title }: CreateChatArgs) {
    return presentChat(await this.chatService.createChat(principal, title));
  }

  @Mutation(() => Boolean, { description: 'Deletes a chat with its messages and activations; true when done (DELETE /v1/chats/{id}).' })
  async deleteChat(@CurrentPrincipal() principal: Principal, @Args() { id }: ChatIdArgs) {
    await this.chatService.deleteChat(principal, id);
    return true;
  }

  @ResolveField(() => [ActivatedSkillModel], { description: 'The skills this chat has activated, first activated first.' })
  async activatedSkills(@Parent() chat: ChatModel, @Context() context: object, @CurrentPrincipal() principal: Principal) {
    return (await this.loaders.of(context, principal).activatedSkills.load(chat.id)).map(presentActivation);
  }

  @ResolveField(() => MessagePageModel, { description: 'Its messages in order, each with its tool cards (GET /v1/chats/{id}/messages).' })
  async messages(@Parent() chat: ChatModel, @Args() page: PageArgs, @Context() context: object, @CurrentPrincipal() principal: Principal) {
    return presentPage(await this.loaders.of(context, principal).messages(page.limit, page.offset).load(chat.id), presentMessage);
  }
}
