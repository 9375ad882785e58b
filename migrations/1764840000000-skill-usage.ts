import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The skills usage funnel: one row per UTC day, skill, version and model ('' when there is none), each counter added
 * to by the instances' batched upserts (SkillUsageRepository). Days older than `[app.skills.usage] retention_days`
 * are swept; the day index serves the sweep and the date filters.
 */
export class SkillUsage1764840000000 implements MigrationInterface {
  name = 'SkillUsage1764840000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE skill_usage_daily (
        day date NOT NULL,
        skill text NOT NULL,
        version text NOT NULL DEFAULT '',
        model text NOT NULL DEFAULT '',
        offered bigint NOT NULL DEFAULT 0,
        activated_tool bigint NOT NULL DEFAULT 0,
        activated_slash bigint NOT NULL DEFAULT 0,
        activated_command bigint NOT NULL DEFAULT 0,
        activated_mcp bigint NOT NULL DEFAULT 0,
        activated_gateway bigint NOT NULL DEFAULT 0,
        resources_read bigint NOT NULL DEFAULT 0,
        scripts_run bigint NOT NULL DEFAULT 0,
        errors bigint NOT NULL DEFAULT 0,
        turns bigint NOT NULL DEFAULT 0,
        CONSTRAINT pk_skill_usage_daily PRIMARY KEY (skill, day, version, model)
      )`);
    await queryRunner.query('CREATE INDEX ix_skill_usage_daily_day ON skill_usage_daily (day)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE skill_usage_daily');
  }
}
