import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Trigger eval cases kept by the service (docs/trigger-evals.md): requests added through the API for a skill, by name,
 * beside those of its `evals/triggers.json`; runs use both. Who added each (the name kept after the user is gone) and
 * when; `seq` keeps the order they were added in, several in one statement included.
 */
export class SkillEvalCases1764850000000 implements MigrationInterface {
  name = 'SkillEvalCases1764850000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE skill_eval_cases (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        seq bigint GENERATED ALWAYS AS IDENTITY,
        skill_name text NOT NULL,
        query text NOT NULL,
        should_trigger boolean NOT NULL,
        expect_skill text,
        added_by uuid,
        added_by_name text,
        added_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_skill_eval_cases PRIMARY KEY (id),
        CONSTRAINT fk_skill_eval_cases_added_by FOREIGN KEY (added_by) REFERENCES users (id) ON DELETE SET NULL,
        CONSTRAINT ck_skill_eval_cases_query CHECK (char_length(query) BETWEEN 1 AND 4000),
        CONSTRAINT ck_skill_eval_cases_expect_skill CHECK (
          expect_skill IS NULL OR (NOT should_trigger AND char_length(expect_skill) BETWEEN 1 AND 64)
        )
      )`);
    await queryRunner.query('CREATE INDEX ix_skill_eval_cases_skill ON skill_eval_cases (skill_name, seq)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE skill_eval_cases');
  }
}
