import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Where an imported version came from (git URL, ref and commit; a discovery index and its digest). */
export class SkillVersionSource1764600000000 implements MigrationInterface {
  name = 'SkillVersionSource1764600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE installed_skill_versions
        ADD COLUMN source jsonb,
        ADD CONSTRAINT ck_installed_skill_versions_source CHECK (source IS NULL OR jsonb_typeof(source) = 'object')`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE installed_skill_versions DROP COLUMN source');
  }
}
