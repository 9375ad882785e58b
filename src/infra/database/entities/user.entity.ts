import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import type { User, UserRole } from '../../../domain/users/user.types.js';

export { LOCAL_USER, USER_NAME_PATTERN, USER_ROLES, type UserRole } from '../../../domain/users/user.types.js';

@Entity('users')
export class UserEntity implements User {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'pk_users' })
  id: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text' })
  role: UserRole;

  /** A disabled user's keys stop working; its chats stay. */
  @Column({ type: 'boolean', default: false })
  disabled: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
