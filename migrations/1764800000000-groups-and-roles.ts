import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Groups and roles: the role `editor` beside admin and member; groups made by admins (`source` 'admin') or from the
 * sign-in provider's groups claim ('provider'), and who is in them; for a shared store skill its audience (the whole
 * team, or only the groups in `installed_skill_groups`) and who may publish it besides admins (an owning user or
 * group); and the audit log of changes to skills, roles and memberships.
 */
export class GroupsAndRoles1764800000000 implements MigrationInterface {
  name = 'GroupsAndRoles1764800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE users DROP CONSTRAINT ck_users_role');
    await queryRunner.query(
      `ALTER TABLE users ADD CONSTRAINT ck_users_role CHECK (role IN ('admin', 'editor', 'member'))`,
    );
    await queryRunner.query(`
      CREATE TABLE groups (
        id uuid NOT NULL,
        name text NOT NULL,
        source text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_groups PRIMARY KEY (id),
        CONSTRAINT uq_groups_source_name UNIQUE (source, name),
        CONSTRAINT ck_groups_source CHECK (source IN ('admin', 'provider')),
        CONSTRAINT ck_groups_name CHECK (char_length(name) BETWEEN 1 AND 128 AND name !~ '[[:cntrl:]]')
      )`);
    await queryRunner.query(`
      CREATE TABLE group_members (
        group_id uuid NOT NULL,
        user_id uuid NOT NULL,
        added_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_group_members PRIMARY KEY (group_id, user_id),
        CONSTRAINT fk_group_members_group FOREIGN KEY (group_id) REFERENCES groups (id) ON DELETE CASCADE,
        CONSTRAINT fk_group_members_user FOREIGN KEY (user_id) REFERENCES users (id) ON DELETE CASCADE
      )`);
    // Every view is built with the user's groups: this index answers that read.
    await queryRunner.query('CREATE INDEX ix_group_members_user ON group_members (user_id)');
    await queryRunner.query(`
      ALTER TABLE installed_skills
        ADD COLUMN audience text NOT NULL DEFAULT 'team',
        ADD COLUMN owning_user_id uuid,
        ADD COLUMN owning_group_id uuid,
        ADD CONSTRAINT ck_installed_skills_audience CHECK (audience IN ('team', 'groups')),
        ADD CONSTRAINT fk_installed_skills_owning_user FOREIGN KEY (owning_user_id) REFERENCES users (id)
          ON DELETE SET NULL,
        ADD CONSTRAINT fk_installed_skills_owning_group FOREIGN KEY (owning_group_id) REFERENCES groups (id)
          ON DELETE SET NULL`);
    await queryRunner.query(`
      CREATE TABLE installed_skill_groups (
        installed_id uuid NOT NULL,
        group_id uuid NOT NULL,
        CONSTRAINT pk_installed_skill_groups PRIMARY KEY (installed_id, group_id),
        CONSTRAINT fk_installed_skill_groups_skill FOREIGN KEY (installed_id) REFERENCES installed_skills (id)
          ON DELETE CASCADE,
        CONSTRAINT fk_installed_skill_groups_group FOREIGN KEY (group_id) REFERENCES groups (id) ON DELETE CASCADE
      )`);
    await queryRunner.query(`
      CREATE TABLE audit_log (
        id bigint GENERATED ALWAYS AS IDENTITY,
        at timestamptz NOT NULL DEFAULT now(),
        actor_id uuid,
        actor_name text,
        action text NOT NULL,
        target text NOT NULL,
        details jsonb NOT NULL DEFAULT '{}',
        CONSTRAINT pk_audit_log PRIMARY KEY (id),
        CONSTRAINT fk_audit_log_actor FOREIGN KEY (actor_id) REFERENCES users (id) ON DELETE SET NULL,
        CONSTRAINT ck_audit_log_details CHECK (jsonb_typeof(details) = 'object')
      )`);
    await queryRunner.query('CREATE INDEX ix_audit_log_at ON audit_log (at DESC, id DESC)');
    await queryRunner.query('CREATE INDEX ix_audit_log_action ON audit_log (action, at DESC)');
    await queryRunner.query('CREATE INDEX ix_audit_log_target ON audit_log (target, at DESC)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE audit_log');
    await queryRunner.query('DROP TABLE installed_skill_groups');
    await queryRunner.query(`
      ALTER TABLE installed_skills
        DROP COLUMN owning_group_id,
        DROP COLUMN owning_user_id,
        DROP COLUMN audience`);
    await queryRunner.query('DROP TABLE group_members');
    await queryRunner.query('DROP TABLE groups');
    // Editors become members: the older schema knows no other role.
    await queryRunner.query(`UPDATE users SET role = 'member' WHERE role = 'editor'`);
    await queryRunner.query('ALTER TABLE users DROP CONSTRAINT ck_users_role');
    await queryRunner.query(`ALTER TABLE users ADD CONSTRAINT ck_users_role CHECK (role IN ('admin', 'member'))`);
  }
}
