import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { ActivationHow, ChatActivation } from '../../../domain/chats/chat.types.js';

export type { ActivationHow };

/** Which skills a chat has activated: names only, one row per chat and skill. */
@Entity('chat_activated_skills')
export class ChatActivatedSkillEntity implements ChatActivation {
  @PrimaryColumn({ name: 'chat_id', type: 'uuid', primaryKeyConstraintName: 'pk_chat_activated_skills' })
  chatId: string;

  @PrimaryColumn({ name: 'skill_name', type: 'text', primaryKeyConstraintName: 'pk_chat_activated_skills' })
  skillName: string;

  /** How the skill was first activated in this chat. */
  @Column({ type: 'text' })
  how: ActivationHow;

  @Column({ name: 'first_activated_at', type: 'timestamptz' })
  firstActivatedAt: Date;

  @Column({ name: 'last_activated_at', type: 'timestamptz' })
  lastActivatedAt: Date;

  @Column({ name: 'activation_count', type: 'integer' })
  activationCount: number;

  /**
   * The version last activated (`sha256:…`): what the chat reads; null for skills without versions (programmatic, or
   * too large to keep).
   */
  @Column({ name: 'version_digest', type: 'text', nullable: true })
  versionDigest: string | null;
}
