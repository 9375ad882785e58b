import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Turn events too large for a NOTIFY payload (PostgreSQL's limit is 8000 bytes; a `done` event
 * carries the whole answer) wait here for the instances whose subscribers watch the chat; the
 * NOTIFY carries the row's id. Rows are read within seconds and removed after a minute. No
 * foreign key to `chats`: a row outlives nothing, and the insert must not lock the chat's row
 * while its turn is being stored.
 */
export class ChatEventRelay1764200000000 implements MigrationInterface {
  name = 'ChatEventRelay1764200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE chat_event_relay (
        id bigserial NOT NULL,
        chat_id uuid NOT NULL,
        payload jsonb NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_chat_event_relay PRIMARY KEY (id)
      )`);
    await queryRunner.query('CREATE INDEX ix_chat_event_relay_created_at ON chat_event_relay (created_at)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE chat_event_relay');
  }
}
