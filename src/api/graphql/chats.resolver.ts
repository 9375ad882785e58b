import { Args, Context, Mutation, Parent, Query, ResolveField, Resolver } from '@nestjs/graphql';
import { CurrentPrincipal, RequireScope } from '../http/decorators/auth.decorators.js';
import type { Principal } from '../../domain/users/principal.js';
import { presentActivation, presentChat, presentMessage, presentPage } from '../presenters/chat.presenter.js';
import { ChatsService } from '../../domain/chats/chats.service.js';
import { ActivatedSkillDto, ChatDto, ChatPageDto, MessagePageDto } from '../http/dto/chat-responses.dto.js';
import { ChatLoadersService } from './chat-loaders.service.js';
import { ChatIdArgs, CreateChatArgs } from './dto/chat.args.js';
import { PageArgs } from './dto/page.args.js';

/**
 * The twin of ChatController's chat routes. Another user's chat is CHAT_NOT_FOUND, exactly as a
 * missing one; the nested fields of chats are loaded in batches, one query per field and operation.
 */
@Resolver(() => ChatDto)
@RequireScope('chats')
export class ChatsResolver {
  constructor(
    private readonly chatService: ChatsService,
    private readonly loaders: ChatLoadersService,
  ) {}

  @Query(() => ChatPageDto, { description: "The caller's chats, newest first (GET /v1/chats)." })
  async chats(@CurrentPrincipal() principal: Principal, @Args() page: PageArgs) {
    return presentPage(await this.chatService.listChats(principal, page.limit, page.offset), presentChat);
  }

  @Query(() => ChatDto, { description: "One of the caller's chats (GET /v1/chats/{id})." })
  async chat(@CurrentPrincipal() principal: Principal, @Args() { id }: ChatIdArgs) {
    return presentChat(await this.chatService.getChat(principal, id));
  }

  @Mutation(() => ChatDto, { description: 'POST /v1/chats.' })
  async createChat(@CurrentPrincipal() principal: Principal, @Args() { title }: CreateChatArgs) {
    return presentChat(await this.chatService.createChat(principal, title));
  }

  @Mutation(() => Boolean, {
    description: 'Deletes a chat with its messages and activations; true when done (DELETE /v1/chats/{id}).',
  })
  async deleteChat(@CurrentPrincipal() principal: Principal, @Args() { id }: ChatIdArgs) {
    await this.chatService.deleteChat(principal, id);
    return true;
  }

  @ResolveField(() => [ActivatedSkillDto], {
    description: 'The skills this chat has activated, first activated first.',
  })
  async activatedSkills(@Parent() chat: ChatDto, @Context() context: object, @CurrentPrincipal() principal: Principal) {
    return (await this.loaders.of(context, principal).activatedSkills.load(chat.id)).map(presentActivation);
  }

  @ResolveField(() => MessagePageDto, {
    description: 'Its messages in order, each with its tool cards (GET /v1/chats/{id}/messages).',
  })
  async messages(
    @Parent() chat: ChatDto,
    @Args() page: PageArgs,
    @Context() context: object,
    @CurrentPrincipal() principal: Principal,
  ) {
    return presentPage(
      await this.loaders.of(context, principal).messages(page.limit, page.offset).load(chat.id),
      presentMessage,
    );
  }
}
