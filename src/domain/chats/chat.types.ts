import type { ActivationHow, StoredCommand, StoredToolCard, ToolCardSummary } from '@skillhost/core';

/** What the chats read: plain shapes, which the database's entities satisfy. */

export type { ActivationHow, StoredCommand, StoredToolCard, ToolCardSummary };

export type MessageRole = 'user' | 'assistant' | 'tool';

export interface Chat {
  id: string;
  title: string | null;
  ownerId: string;
  createdAt: Date;
  updatedAt: Date;
}

export interface ChatMessage {
  id: string;
  chatId: string;
  /** Position within the chat, 1-based. */
  seq: number;
  role: MessageRole;
  content: string;
  toolCards: StoredToolCard[];
  /**
   * The first skill a user message invoked explicitly (`/name`, `$name`), if any; all of them are in `invokedSkills`.
   */
  invokedSkill: string | null;
  /** Every skill the user message invoked explicitly, in order. */
  invokedSkills: string[];
  /** The command the user message ran, with its expansion. */
  command: StoredCommand | null;
  model: string | null;
  createdAt: Date;
}

/** A skill a chat has activated: one per chat and skill. */
export interface ChatActivation {
  chatId: string;
  skillName: string;
  /** How the skill was first activated in this chat. */
  how: ActivationHow;
  firstActivatedAt: Date;
  lastActivatedAt: Date;
  activationCount: number;
  /** The version last activated (`sha256:…`); null for skills without versions. */
  versionDigest: string | null;
}
