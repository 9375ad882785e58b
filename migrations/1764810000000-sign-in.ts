import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Sign-in with an identity provider: the link from a provider's subject to a user (one user per issuer and subject),
 * a user's email for linking by verified email, sign-ins under way (single-use, for state, nonce and the PKCE
 * verifier) and web sessions. Sessions and attempts store only SHA-256 hashes of their secrets.
 */
export class SignIn1764810000000 implements MigrationInterface {
  name = 'SignIn1764810000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE users ADD COLUMN email text');
    await queryRunner.query('CREATE UNIQUE INDEX uq_users_email ON users (lower(email))');
    await queryRunner.query(`
      CREATE TABLE user_identities (
        issuer text NOT NULL,
        subject text NOT NULL,
        user_id uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_user_identities PRIMARY KEY (issuer, subject),
        CONSTRAINT fk_user_identities_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
      )`);
    await queryRunner.query('CREATE INDEX ix_user_identities_user ON user_identities (user_id)');
    await queryRunner.query(`
      CREATE TABLE sign_in_attempts (
        state_hash text NOT NULL,
        browser_hash text NOT NULL,
        code_verifier text NOT NULL,
        nonce text NOT NULL,
        return_to text NOT NULL,
        expires_at timestamptz NOT NULL,
        CONSTRAINT pk_sign_in_attempts PRIMARY KEY (state_hash)
      )`);
    await queryRunner.query('CREATE INDEX ix_sign_in_attempts_expires_at ON sign_in_attempts (expires_at)');
    await queryRunner.query(`
      CREATE TABLE web_sessions (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        token_hash text NOT NULL,
        user_id uuid NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_seen_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz NOT NULL,
        CONSTRAINT pk_web_sessions PRIMARY KEY (id),
        CONSTRAINT uq_web_sessions_token_hash UNIQUE (token_hash),
        CONSTRAINT ck_web_sessions_token_hash CHECK (token_hash ~ '^[0-9a-f]{64}$'),
        CONSTRAINT fk_web_sessions_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
      )`);
    await queryRunner.query('CREATE INDEX ix_web_sessions_expires_at ON web_sessions (expires_at)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE web_sessions');
    await queryRunner.query('DROP TABLE sign_in_attempts');
    await queryRunner.query('DROP TABLE user_identities');
    await queryRunner.query('DROP INDEX uq_users_email');
    await queryRunner.query('ALTER TABLE users DROP COLUMN email');
  }
}
