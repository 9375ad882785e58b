import { Inject, Injectable } from '@nestjs/common';
import type { Principal } from '../users/principal.js';
import type { Page } from '../shared/page.js';
import type { StoredSkillFilter } from '../shared/skill-filter.js';
import { CHAT_STORE, type ChatStore, type OwnedChat } from './chat-store.js';
import type { Chat, ChatActivation, ChatMessage } from './chat.types.js';
import { isUuid } from '../shared/uuid.js';
import { type SkillFilterResult, SkillLifecycleService } from '../skills/store/skill-lifecycle.service.js';
import { SkillStoreService } from '../skills/store/skill-store.service.js';
import { chatNotFound } from './chat-errors.js';
import { type ChatEvent, ChatEventsService } from './chat-events.service.js';

/**
 * The caller's chats and their messages, a chat's skill filter, and its live events: everything of a chat but its turns
 * and tools.
 */
@Injectable()
export class ChatsService {
  constructor(
    @Inject(CHAT_STORE) private readonly chats: ChatStore,
    private readonly events: ChatEventsService,
    private readonly skillStore: SkillStoreService,
    private readonly lifecycle: SkillLifecycleService,
  ) {}

  /** A title of white space only is none: the chat is then titled from its first message. */
  createChat(principal: Principal, title?: string): Promise<Chat> {
    return this.chats.createChat(principal.userId, title === undefined || title.trim() === '' ? null : title);
  }

  listChats(principal: Principal, limit = 50, offset = 0): Promise<Page<Chat>> {
    return this.chats.listChats(principal.userId, limit, offset);
  }

  /** Every user's chats, for operators (the route is admin-only). */
  listAllChats(limit = 50, offset = 0): Promise<Page<OwnedChat>> {
    return this.chats.listAllChats(limit, offset);
  }

  /** The caller's chat, or CHAT_NOT_FOUND: another user's chat is answered exactly as a missing one. */
  async getChat(principal: Principal, id: string): Promise<Chat> {
    const chat = isUuid(id) ? await this.chats.findChat(id, principal.userId) : null;
    if (chat === null) throw chatNotFound(id);
    return chat;
  }

  /** Activated skills of chats the caller has already been given (batched for GraphQL's nested fields). */
  activatedSkills(chatIds: readonly string[]): Promise<Map<string, ChatActivation[]>> {
    return this.chats.activatedSkills(chatIds);
  }

  async getChatWithActivations(
    principal: Principal,
    id: string,
  ): Promise<{ chat: Chat; activatedSkills: ChatActivation[] }> {
    const chat = await this.getChat(principal, id);
    return { chat, activatedSkills: (await this.chats.activatedSkills([chat.id])).get(chat.id) ?? [] };
  }

  async deleteChat(principal: Principal, id: string): Promise<void> {
    if (!isUuid(id) || !(await this.chats.deleteChat(id, principal.userId))) throw chatNotFound(id);
  }

  async listMessages(principal: Principal, id: string, limit = 50, offset = 0): Promise<Page<ChatMessage>> {
    const page = isUuid(id) ? await this.chats.listMessages(id, principal.userId, limit, offset) : null;
    if (page === null) throw chatNotFound(id);
    return page;
  }

  /**
   * A page of messages of each of several of the caller's chats, in one query (batched for
   * GraphQL's nested `Chat.messages`); a chat that is not the caller's is absent from the map.
   */
  messagePages(
    principal: Principal,
    chatIds: readonly string[],
    limit = 50,
    offset = 0,
  ): Promise<Map<string, Page<ChatMessage>>> {
    return this.chats.messagePages(chatIds.filter(isUuid), principal.userId, limit, offset);
  }

  /** The chat's turn events from now on; the caller must own the chat. */
  async subscribe(principal: Principal, id: string): Promise<AsyncIterableIterator<ChatEvent>> {
    await this.getChat(principal, id);
    return this.events.subscribe(id);
  }

  /** The chat's own skill filter, and what the user's and the chat's filters together offer. */
  async getSkillFilter(principal: Principal, id: string): Promise<SkillFilterResult> {
    const context = isUuid(id) ? await this.chats.turnContext(id, principal.userId, 0) : null;
    if (context === null) throw chatNotFound(id);
    return this.lifecycle.presentFilter(principal, context.chatFilter, context.userFilter);
  }

  async setSkillFilter(principal: Principal, id: string, filter: StoredSkillFilter): Promise<SkillFilterResult> {
    if (!isUuid(id)) throw chatNotFound(id);
    const { found, filter: stored } = await this.skillStore.setChatFilter(id, principal.userId, filter);
    if (!found) throw chatNotFound(id);
    return this.lifecycle.presentFilter(principal, stored, await this.skillStore.userFilter(principal.userId));
  }
}
