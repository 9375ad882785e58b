import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';
import type {
  ChatMessage,
  MessageRole,
  StoredCommand,
  StoredToolCard,
  ToolCardSummary,
} from '../../../domain/chats/chat.types.js';

export type { MessageRole, StoredCommand, StoredToolCard, ToolCardSummary };

@Entity('chat_messages')
@Index('uq_chat_messages_chat_seq', ['chatId', 'seq'], { unique: true })
export class ChatMessageEntity implements ChatMessage {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'pk_chat_messages' })
  id: string;

  @Column({ name: 'chat_id', type: 'uuid' })
  chatId: string;

  /** Position within the chat, 1-based, assigned under the chat's row lock. */
  @Column({ type: 'integer' })
  seq: number;

  @Column({ type: 'text' })
  role: MessageRole;

  @Column({ type: 'text' })
  content: string;

  @Column({ name: 'tool_cards', type: 'jsonb', default: () => "'[]'::jsonb" })
  toolCards: StoredToolCard[];

  /**
   * The first skill a user message invoked explicitly (`/name`, `$name`), if any; all of them are in `invokedSkills`.
   */
  @Column({ name: 'invoked_skill', type: 'text', nullable: true })
  invokedSkill: string | null;

  /** Every skill the user message invoked explicitly, in order. */
  @Column({ name: 'invoked_skills', type: 'text', array: true, default: () => "'{}'" })
  invokedSkills: string[];

  /** The command the user message ran, with its expansion. */
  @Column({ type: 'jsonb', nullable: true })
  command: StoredCommand | null;

  @Column({ type: 'text', nullable: true })
  model: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
