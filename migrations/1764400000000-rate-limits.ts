import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The rate limits' budgets, shared by every instance (src/infra/database/rate-limit.repository.ts): one row per limit
 * and caller, in the columns and order rate-limiter-flexible's `RateLimiterPostgres` writes (`key`, `points`,
 * `expire` in epoch ms), which is told the table exists. Rows are deleted an hour after their window ends.
 */
export class RateLimits1764400000000 implements MigrationInterface {
  name = 'RateLimits1764400000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE rate_limits (
        key varchar(255) NOT NULL,
        points integer NOT NULL DEFAULT 0,
        expire bigint,
        CONSTRAINT pk_rate_limits PRIMARY KEY (key)
      )`);
    await queryRunner.query('CREATE INDEX ix_rate_limits_expire ON rate_limits (expire)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE rate_limits');
  }
}
