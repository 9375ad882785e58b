import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { Chat } from '../../../domain/chats/chat.types.js';

@Entity('chats')
export class ChatEntity implements Chat {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'pk_chats' })
  id: string;

  @Column({ type: 'text', nullable: true })
  title: string | null;

  @Column({ name: 'owner_id', type: 'uuid' })
  ownerId: string;

  /** Position of the chat's last message; bumped under the row lock by every write of messages. */
  @Column({ name: 'last_seq', type: 'integer', default: 0, select: false })
  lastSeq: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
