import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

export type MessageRole = 'user' | 'assistant' | 'tool';

/** A tool card as stored: the user-visible record of one tool call. */
/** What a card shows without its output; see `ToolCardSummary` in src/chat/tools/skill-tool.ts. */
export interface ToolCardSummary {
  skill: string | null;
  path?: string;
  type?: string;
  count?: number;
  candidates?: string[];
  /** `skills.runScript`: the command as run, its exit code (null when a signal ended it), and whether the time limit did. */
  command?: string;
  exitCode?: number | null;
  timedOut?: boolean;
  /** An activation in a chat: the version activated (`sha256:…`), which the chat reads until it activates the skill again. */
  version?: string;
  /** An activation in a chat whose version could not be kept (past `max_install_bytes`): why. */
  versionWarning?: string;
  truncated: boolean;
}

/** A user message that ran a command: what the user typed is `content`, the model got `prompt`. */
export interface StoredCommand {
  name: string;
  arguments: string;
  prompt: string;
}

export interface StoredToolCard {
  id: string;
  tool: string;
  args: unknown;
  status: 'ok' | 'error';
  summary: ToolCardSummary;
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

  /** The first skill a user message invoked explicitly (`/name`, `$name`), if any; all of them are in `invokedSkills`. */
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
