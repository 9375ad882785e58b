import type { MigrationInterface, QueryRunner } from 'typeorm';
import { LOCAL_USER } from '../src/infra/database/entities/user.entity.js';

/**
 * users and api_keys (SHA-256 hashes only), and an owner for every chat: chats that exist before
 * this migration go to the built-in user `local`.
 */
export class UsersAndApiKeys1764000000000 implements MigrationInterface {
  name = 'UsersAndApiKeys1764000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE users (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        name text NOT NULL,
        role text NOT NULL,
        disabled boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_users PRIMARY KEY (id),
        CONSTRAINT uq_users_name UNIQUE (name),
        CONSTRAINT ck_users_role CHECK (role IN ('admin', 'member')),
        CONSTRAINT ck_users_name CHECK (name ~ '^[a-z0-9][a-z0-9._-]{0,63}$')
      )`);
    await queryRunner.query(`INSERT INTO users (id, name, role) VALUES ($1, $2, 'admin')`, [
      LOCAL_USER.id,
      LOCAL_USER.name,
    ]);
    await queryRunner.query(`
      CREATE TABLE api_keys (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        user_id uuid NOT NULL,
        label text,
        prefix text NOT NULL,
        key_hash text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        revoked_at timestamptz,
        expires_at timestamptz,
        CONSTRAINT pk_api_keys PRIMARY KEY (id),
        CONSTRAINT fk_api_keys_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE,
        CONSTRAINT uq_api_keys_key_hash UNIQUE (key_hash),
        CONSTRAINT ck_api_keys_key_hash CHECK (key_hash ~ '^[0-9a-f]{64}$')
      )`);
    await queryRunner.query('CREATE INDEX ix_api_keys_user ON api_keys (user_id, created_at)');
    await queryRunner.query('ALTER TABLE chats ADD COLUMN owner_id uuid');
    await queryRunner.query('UPDATE chats SET owner_id = $1', [LOCAL_USER.id]);
    await queryRunner.query('ALTER TABLE chats ALTER COLUMN owner_id SET NOT NULL');
    // RESTRICT: users are disabled, never deleted with their chats by accident.
    await queryRunner.query(
      'ALTER TABLE chats ADD CONSTRAINT fk_chats_owner FOREIGN KEY (owner_id) REFERENCES users (id) ON DELETE RESTRICT',
    );
    await queryRunner.query('DROP INDEX ix_chats_created_at');
    await queryRunner.query('CREATE INDEX ix_chats_owner_created_at ON chats (owner_id, created_at DESC, id)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP INDEX ix_chats_owner_created_at');
    await queryRunner.query('CREATE INDEX ix_chats_created_at ON chats (created_at DESC, id)');
    await queryRunner.query('ALTER TABLE chats DROP CONSTRAINT fk_chats_owner');
    await queryRunner.query('ALTER TABLE chats DROP COLUMN owner_id');
    await queryRunner.query('DROP TABLE api_keys');
    await queryRunner.query('DROP TABLE users');
  }
}
