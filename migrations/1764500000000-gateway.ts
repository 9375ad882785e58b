import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The OpenAI-compatible gateway's memory (src/infra/database/gateway.repository.ts): which chat a stateless client's
 * resent history continues (a digest of the conversation as the client sees it, per user), and the responses API's
 * stored responses. Both go with their chat.
 */
export class Gateway1764500000000 implements MigrationInterface {
  name = 'Gateway1764500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE gateway_conversations (
        user_id uuid NOT NULL,
        fingerprint char(64) NOT NULL,
        chat_id uuid NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_gateway_conversations PRIMARY KEY (user_id, fingerprint),
        CONSTRAINT fk_gateway_conversations_chat FOREIGN KEY (chat_id) REFERENCES chats (id) ON DELETE CASCADE
      )`);
    await queryRunner.query('CREATE INDEX ix_gateway_conversations_chat ON gateway_conversations (chat_id)');
    await queryRunner.query(`
      CREATE TABLE gateway_responses (
        id text NOT NULL,
        user_id uuid NOT NULL,
        chat_id uuid NOT NULL,
        model text NOT NULL,
        items jsonb NOT NULL,
        output jsonb NOT NULL,
        instructions text,
        input_tokens integer,
        output_tokens integer,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT pk_gateway_responses PRIMARY KEY (id),
        CONSTRAINT fk_gateway_responses_chat FOREIGN KEY (chat_id) REFERENCES chats (id) ON DELETE CASCADE
      )`);
    await queryRunner.query('CREATE INDEX ix_gateway_responses_chat ON gateway_responses (chat_id)');
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE gateway_responses');
    await queryRunner.query('DROP TABLE gateway_conversations');
  }
}
