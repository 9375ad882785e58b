import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * chats.last_seq: the position of the chat's last message. A turn's write bumps it in the same
 * statement that locks the chat row, so message numbering is serialised by that lock and a whole
 * turn is stored by one statement.
 */
export class ChatLastSeq1763900000000 implements MigrationInterface {
  name = 'ChatLastSeq1763900000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE chats ADD COLUMN last_seq integer NOT NULL DEFAULT 0');
    await queryRunner.query(
      'UPDATE chats c SET last_seq = m.max_seq FROM (SELECT chat_id, MAX(seq) AS max_seq FROM chat_messages ' +
        'GROUP BY chat_id) m WHERE m.chat_id = c.id',
    );
    await queryRunner.query('ALTER TABLE chats ADD CONSTRAINT ck_chats_last_seq CHECK (last_seq >= 0)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('ALTER TABLE chats DROP CONSTRAINT ck_chats_last_seq');
    await queryRunner.query('ALTER TABLE chats DROP COLUMN last_seq');
  }
}
