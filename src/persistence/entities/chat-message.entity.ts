import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

export type MessageRole = 'user' | 'assistant' | 'tool';

/** A tool card as stored: the user-visible record of one tool call. */
export interface StoredToolCard {
  id: string;
  tool: string;
  args: unknown;
  status: 'ok' | 'error';
  summary: { skill: string | null; path?: string; truncated: boolean };
  output: string;
  durationMs: number;
}

@Entity('chat_messages')
@Index('uq_chat_messages_chat_seq', ['chatId', 'seq'], { unique: true })
export class ChatMessageEntity {
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

  /** The skill a user message invoked explicitly (`/name`), if any. */
  @Column({ name: 'invoked_skill', type: 'text', nullable: true })
  invokedSkill: string | null;

  @Column({ type: 'text', nullable: true })
  model: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
