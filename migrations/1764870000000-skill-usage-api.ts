import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The usage funnel's sixth activation way, `api`: a client of the REST or GraphQL API activating a skill outside a
 * turn (a chat's tool routes, `GET /v1/skills/:name/body`). Existing rows had none: 0. Adding a column with a constant
 * default rewrites no row (PostgreSQL 11+), so it is quick on a large table.
 */
export class SkillUsageApi1764870000000 implements MigrationInterface {
  name = 'SkillUsageApi1764870000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE skill_usage_daily ADD COLUMN activated_api bigint NOT NULL DEFAULT 0');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE skill_usage_daily DROP COLUMN activated_api');
  }
}
