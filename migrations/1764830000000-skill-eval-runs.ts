import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Trigger eval runs (docs/trigger-evals.md): the last run of each skill's cases per version (`digest`), level and
 * model (`''` at the catalogue level, which uses none), with its score and each case's result, so precision and recall
 * can be read per skill, version and model without calling the model again.
 */
export class SkillEvalRuns1764830000000 implements MigrationInterface {
  name = 'SkillEvalRuns1764830000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE skill_eval_runs (
        skill_name text NOT NULL,
        digest text NOT NULL,
        level text NOT NULL,
        model text NOT NULL,
        score jsonb NOT NULL,
        cases jsonb NOT NULL,
        run_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_skill_eval_runs PRIMARY KEY (skill_name, digest, level, model),
        CONSTRAINT ck_skill_eval_runs_level CHECK (level IN ('catalogue', 'model'))
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE skill_eval_runs');
  }
}
