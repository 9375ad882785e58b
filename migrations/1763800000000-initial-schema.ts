import type { MigrationInterface, QueryRunner } from 'typeorm';

/** chats, chat_messages and chat_activated_skills, with named constraints and cascading deletes. */
export class InitialSchema1763800000000 implements MigrationInterface {
  name = 'InitialSchema1763800000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE chats (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        title text,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_chats PRIMARY KEY (id)
      )`);
    await queryRunner.query(`CREATE INDEX ix_chats_created_at ON chats (created_at DESC, id)`);
    await queryRunner.query(`
      CREATE TABLE chat_messages (
        id uuid NOT NULL DEFAULT gen_random_uuid(),
        chat_id uuid NOT NULL,
        seq integer NOT NULL,
        role text NOT NULL,
        content text NOT NULL,
        tool_cards jsonb NOT NULL DEFAULT '[]'::jsonb,
        invoked_skill text,
        model text,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_chat_messages PRIMARY KEY (id),
        CONSTRAINT fk_chat_messages_chat FOREIGN KEY (chat_id) REFERENCES chats (id) ON DELETE CASCADE,
        CONSTRAINT uq_chat_messages_chat_seq UNIQUE (chat_id, seq),
        CONSTRAINT ck_chat_messages_role CHECK (role IN ('user', 'assistant', 'tool')),
        CONSTRAINT ck_chat_messages_seq CHECK (seq > 0)
      )`);
    await queryRunner.query(`
      CREATE TABLE chat_activated_skills (
        chat_id uuid NOT NULL,
        skill_name text NOT NULL,
        how text NOT NULL,
        first_activated_at timestamptz NOT NULL DEFAULT now(),
        last_activated_at timestamptz NOT NULL DEFAULT now(),
        activation_count integer NOT NULL DEFAULT 1,
        CONSTRAINT pk_chat_activated_skills PRIMARY KEY (chat_id, skill_name),
        CONSTRAINT fk_chat_activated_skills_chat FOREIGN KEY (chat_id) REFERENCES chats (id) ON DELETE CASCADE,
        CONSTRAINT ck_chat_activated_skills_how CHECK (how IN ('explicit', 'tool', 'fallback')),
        CONSTRAINT ck_chat_activated_skills_count CHECK (activation_count > 0)
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE chat_activated_skills');
    await queryRunner.query('DROP TABLE chat_messages');
    await queryRunner.query('DROP TABLE chats');
  }
}
