import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The skill store: file contents and versions, content-addressed (`sha256:<hex>`), so a version is
 * stored once however many installs and chats use it; installed skills (shared, or one user's
 * personal ones) with their numbered history; persisted switches; per-user and per-chat skill
 * filters; the version each chat activated; and one row whose generation every change bumps, so
 * instances that missed a notification notice it on their next check.
 */
export class SkillStore1764300000000 implements MigrationInterface {
  name = 'SkillStore1764300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE skill_blobs (
        digest text NOT NULL,
        size integer NOT NULL,
        content bytea NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_skill_blobs PRIMARY KEY (digest),
        CONSTRAINT ck_skill_blobs_digest CHECK (digest ~ '^sha256:[0-9a-f]{64}$'),
        CONSTRAINT ck_skill_blobs_size CHECK (size = octet_length(content))
      )`);
    await queryRunner.query(`
      CREATE TABLE skill_versions (
        digest text NOT NULL,
        name text NOT NULL,
        manifest jsonb NOT NULL,
        total_bytes integer NOT NULL,
        file_count integer NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_skill_versions PRIMARY KEY (digest),
        CONSTRAINT ck_skill_versions_digest CHECK (digest ~ '^sha256:[0-9a-f]{64}$'),
        CONSTRAINT ck_skill_versions_manifest CHECK (jsonb_typeof(manifest) = 'array')
      )`);
    await queryRunner.query(
      `
      CREATE TABLE installed_skills (
        id uuid NOT NULL,
        name text NOT NULL,
        scope text NOT NULL,
        owner_id uuid,
        current_version integer NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_installed_skills PRIMARY KEY (id),
        CONSTRAINT ck_installed_skills_scope CHECK (scope IN ('shared', 'personal') AND (scope = 'shared') = ` +
        `(owner_id IS NULL)),
        CONSTRAINT fk_installed_skills_owner FOREIGN KEY (owner_id) REFERENCES users (id) ON DELETE CASCADE
      )`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX uq_installed_skills_shared ON installed_skills (name) WHERE scope = 'shared'`,
    );
    await queryRunner.query(
      `CREATE UNIQUE INDEX uq_installed_skills_personal ON installed_skills (owner_id, name) WHERE scope = 'personal'`,
    );
    await queryRunner.query(
      `
      CREATE TABLE installed_skill_versions (
        installed_id uuid NOT NULL,
        version integer NOT NULL,
        digest text NOT NULL,
        installed_at timestamptz NOT NULL DEFAULT now(),
        installed_by uuid,
        CONSTRAINT pk_installed_skill_versions PRIMARY KEY (installed_id, version),
        CONSTRAINT uq_installed_skill_versions_digest UNIQUE (installed_id, digest),
        CONSTRAINT fk_installed_skill_versions_skill FOREIGN KEY (installed_id) REFERENCES installed_skills (id) ON ` +
        `DELETE CASCADE,
        CONSTRAINT fk_installed_skill_versions_version FOREIGN KEY (digest) REFERENCES skill_versions (digest),
        CONSTRAINT fk_installed_skill_versions_user FOREIGN KEY (installed_by) REFERENCES users (id) ON DELETE SET ` +
        `NULL
      )`,
    );
    await queryRunner.query(`
      CREATE TABLE skill_switches (
        name text NOT NULL,
        enabled boolean NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        updated_by uuid,
        CONSTRAINT pk_skill_switches PRIMARY KEY (name),
        CONSTRAINT fk_skill_switches_user FOREIGN KEY (updated_by) REFERENCES users (id) ON DELETE SET NULL
      )`);
    await queryRunner.query(`
      CREATE TABLE skill_store_state (
        id integer NOT NULL,
        generation bigint NOT NULL,
        reload_generation bigint NOT NULL,
        CONSTRAINT pk_skill_store_state PRIMARY KEY (id),
        CONSTRAINT ck_skill_store_state_single CHECK (id = 1)
      )`);
    await queryRunner.query('INSERT INTO skill_store_state (id, generation, reload_generation) VALUES (1, 0, 0)');
    await queryRunner.query(`ALTER TABLE users ADD COLUMN skill_filter jsonb`);
    await queryRunner.query(`ALTER TABLE chats ADD COLUMN skill_filter jsonb`);
    await queryRunner.query(`ALTER TABLE chat_activated_skills ADD COLUMN version_digest text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE chat_activated_skills DROP COLUMN version_digest');
    await queryRunner.query('ALTER TABLE chats DROP COLUMN skill_filter');
    await queryRunner.query('ALTER TABLE users DROP COLUMN skill_filter');
    await queryRunner.query('DROP TABLE skill_store_state');
    await queryRunner.query('DROP TABLE skill_switches');
    await queryRunner.query('DROP TABLE installed_skill_versions');
    await queryRunner.query('DROP TABLE installed_skills');
    await queryRunner.query('DROP TABLE skill_versions');
    await queryRunner.query('DROP TABLE skill_blobs');
  }
}
