import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

@Entity('chats')
export class ChatEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'pk_chats' })
  id: string;

  @Column({ type: 'text', nullable: true })
  title: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
