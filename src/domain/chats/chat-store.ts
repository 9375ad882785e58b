import type { NewSkillActivation } from '@skillhost/core';
import type { Page } from '../shared/page.js';
import type { StoredSkillFilter } from '../shared/skill-filter.js';
import type { Chat, ChatActivation, ChatMessage, MessageRole, StoredCommand, StoredToolCard } from './chat.types.js';

export interface NewMessage {
  role: MessageRole;
  content: string;
  toolCards?: StoredToolCard[];
  /** The skills a user message invoked explicitly, in order. */
  invokedSkills?: readonly string[];
  command?: StoredCommand | null;
  model?: string | null;
}

export type NewActivation = NewSkillActivation;

export interface TurnContext {
  history: { role: 'user' | 'assistant'; content: string }[];
  activated: string[];
  /** The version each activated skill was activated at, by name (skills activated without one are absent). */
  pins: Map<string, string>;
  /** The owner's and the chat's skill filters. */
  userFilter: StoredSkillFilter | null;
  chatFilter: StoredSkillFilter | null;
}

export interface StoredTurn {
  messages: ChatMessage[];
  activatedSkills: ChatActivation[];
}

/** A chat with its owner's name, for the operators' listing. */
export interface OwnedChat {
  chat: Chat;
  ownerName: string;
}

/**
 * The chats' storage as the chats' rules use it. Every method that reaches one chat takes its owner
 * and answers `null` (or false) when no chat of that owner has the id: the service owns "not found".
 */
export interface ChatStore {
  createChat(ownerId: string, title: string | null): Promise<Chat>;
  listChats(ownerId: string, limit: number, offset: number): Promise<Page<Chat>>;
  /** Every chat of every user, newest first, with its owner's name. */
  listAllChats(limit: number, offset: number): Promise<Page<OwnedChat>>;
  findChat(id: string, ownerId: string): Promise<Chat | null>;
  /** True when the owner's chat existed and is gone (its messages and activations with it). */
  deleteChat(id: string, ownerId: string): Promise<boolean>;
  /** The chat's messages in order, or null when the owner has no such chat. */
  listMessages(chatId: string, ownerId: string, limit: number, offset: number): Promise<Page<ChatMessage> | null>;
  /**
   * Everything a turn reads: its last `historyCount` user/assistant messages, its activated skills and the skill
   * filters; null when the owner has no such chat.
   */
  turnContext(chatId: string, ownerId: string, historyCount: number): Promise<TurnContext | null>;
  /** The activated skills of chats already known to exist. */
  activatedSkills(chatIds: readonly string[]): Promise<Map<string, ChatActivation[]>>;
  /**
   * Stores a turn (its messages and activations) atomically; `title` titles a chat that has none yet. Null when the
   * owner has no such chat.
   */
  recordTurn(
    chatId: string,
    ownerId: string,
    messages: NewMessage[],
    activations: NewActivation[],
    title?: string | null,
  ): Promise<StoredTurn | null>;
  /** One page of messages for each of several of the owner's chats; chats that are not the owner's are absent. */
  messagePages(
    chatIds: readonly string[],
    ownerId: string,
    limit: number,
    offset: number,
  ): Promise<Map<string, Page<ChatMessage>>>;
}

export const CHAT_STORE = Symbol('CHAT_STORE');
