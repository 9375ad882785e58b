import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Mirrors: sources imported again every interval. A mirror from the configuration is written here at start-up
 * (`origin` 'config'), one added by the API is `origin` 'api'; either way its last run is recorded here, where every
 * instance reads it, and `claimed_until` is the lease of the one run at a time.
 */
export class SkillMirrors1764700000000 implements MigrationInterface {
  name = 'SkillMirrors1764700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE skill_mirrors (
        name text NOT NULL,
        origin text NOT NULL,
        source text NOT NULL,
        interval_seconds integer NOT NULL,
        created_by uuid,
        created_at timestamptz NOT NULL DEFAULT now(),
        next_run_at timestamptz NOT NULL DEFAULT now(),
        claimed_until timestamptz,
        last_run_at timestamptz,
        last_success_at timestamptz,
        last_error_at timestamptz,
        last_error text,
        last_result jsonb,
        CONSTRAINT pk_skill_mirrors PRIMARY KEY (name),
        CONSTRAINT ck_skill_mirrors_name CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,63}$'),
        CONSTRAINT ck_skill_mirrors_origin CHECK (origin IN ('config', 'api')),
        CONSTRAINT ck_skill_mirrors_interval CHECK (interval_seconds > 0),
        CONSTRAINT fk_skill_mirrors_created_by FOREIGN KEY (created_by) REFERENCES users (id) ON DELETE SET NULL
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE skill_mirrors');
  }
}
