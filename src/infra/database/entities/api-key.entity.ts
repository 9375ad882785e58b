import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import type { ApiKey } from '../../../domain/users/user.types.js';

/** An API key as stored: its SHA-256 and a short visible prefix, never the key itself. */
@Entity('api_keys')
export class ApiKeyEntity implements ApiKey {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'pk_api_keys' })
  id: string;

  @Column({ name: 'user_id', type: 'uuid' })
  userId: string;

  @Column({ type: 'text', nullable: true })
  label: string | null;

  @Column({ type: 'text' })
  prefix: string;

  @Column({ name: 'key_hash', type: 'text', select: false })
  keyHash: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** Written at most once a minute per key. */
  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt: Date | null;
}
