import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A user message may invoke several skills and run a command: `invoked_skills` (in order; the
 * first stays in `invoked_skill` for older readers) and `command` (name, arguments, the prompt the
 * model got). Activations gain `how = 'command'`.
 */
export class CommandsAndInvocations1764100000000 implements MigrationInterface {
  name = 'CommandsAndInvocations1764100000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE chat_messages ADD COLUMN invoked_skills text[] NOT NULL DEFAULT '{}'`);
    await queryRunner.query(
      'UPDATE chat_messages SET invoked_skills = ARRAY[invoked_skill] WHERE invoked_skill IS NOT NULL',
    );
    await queryRunner.query('ALTER TABLE chat_messages ADD COLUMN command jsonb');
    await queryRunner.query(
      `ALTER TABLE chat_messages ADD CONSTRAINT ck_chat_messages_command CHECK (command IS NULL OR ` +
        `jsonb_typeof(command) = 'object')`,
    );
    await queryRunner.query('ALTER TABLE chat_activated_skills DROP CONSTRAINT ck_chat_activated_skills_how');
    await queryRunner.query(
      `ALTER TABLE chat_activated_skills ADD CONSTRAINT ck_chat_activated_skills_how CHECK (how IN ('explicit', ` +
        `'tool', 'fallback', 'command'))`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // A command activation was an explicit choice of the user's: the closest older meaning.
    await queryRunner.query(`UPDATE chat_activated_skills SET how = 'explicit' WHERE how = 'command'`);
    await queryRunner.query('ALTER TABLE chat_activated_skills DROP CONSTRAINT ck_chat_activated_skills_how');
    await queryRunner.query(
      `ALTER TABLE chat_activated_skills ADD CONSTRAINT ck_chat_activated_skills_how CHECK (how IN ('explicit', ` +
        `'tool', 'fallback'))`,
    );
    await queryRunner.query('ALTER TABLE chat_messages DROP CONSTRAINT ck_chat_messages_command');
    await queryRunner.query('ALTER TABLE chat_messages DROP COLUMN command');
    await queryRunner.query('ALTER TABLE chat_messages DROP COLUMN invoked_skills');
  }
}
