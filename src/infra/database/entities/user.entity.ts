import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export type UserRole = 'admin' | 'member';
export const USER_ROLES: readonly UserRole[] = ['admin', 'member'];

/** The built-in admin: every request acts as it when auth is off, and it owns chats made before users existed. */
export const LOCAL_USER = Object.freeze({ id: '00000000-0000-4000-8000-000000000001', name: 'local' });

/** Lowercase letters, digits, `.`, `_` and `-`, 1–64 characters, starting with a letter or digit (also a database constraint). */
export const USER_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]{0,63}$/;

@Entity('users')
export class UserEntity {
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
