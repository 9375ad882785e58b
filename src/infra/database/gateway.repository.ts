import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { toStorableJson, toStorableTextOrNull } from '@skillhost/core';
import type { ConversationItem } from '../../domain/chats/gateway/conversation-items.js';
import type { GatewayStore, StoredResponse } from '../../domain/chats/gateway/gateway-store.js';
import { runQuery } from './database-errors.js';
import { DATA_SOURCE } from './persistence.tokens.js';

interface ResponseRow {
  id: string;
  user_id: string;
  chat_id: string;
  model: string;
  items: ConversationItem[];
  output: ConversationItem[];
  instructions: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  created_at: Date;
}

/**
 * The gateway's tables (migration Gateway1764500000000). A fingerprint or response of a chat that was deleted is gone
 * with it (foreign keys, on delete cascade); the chat's owner is checked on every read, so another user's is none.
 */
@Injectable()
export class GatewayRepository implements GatewayStore {
  constructor(@Inject(DATA_SOURCE) private readonly dataSource: DataSource) {}

  chatForFingerprint(userId: string, fingerprint: string): Promise<string | null> {
    return runQuery(async () => {
      const rows = await this.dataSource.query<{ chat_id: string }[]>(
        `SELECT g.chat_id FROM gateway_conversations g JOIN chats c ON c.id = g.chat_id AND c.owner_id = $1
          WHERE g.user_id = $1 AND g.fingerprint = $2`,
        [userId, fingerprint],
      );
      return rows[0]?.chat_id ?? null;
    });
  }

  rememberFingerprint(userId: string, fingerprint: string, chatId: string): Promise<void> {
    return runQuery(async () => {
      // Of two conversations that reached the same history (two chats opened with the same words), the latest is
      // continued; one deleted meanwhile leaves nothing to remember.
      await this.dataSource.query(
        `INSERT INTO gateway_conversations (user_id, fingerprint, chat_id)
           SELECT $1, $2, id FROM chats WHERE id = $3 AND owner_id = $1
         ON CONFLICT (user_id, fingerprint) DO UPDATE SET chat_id = EXCLUDED.chat_id, updated_at = now()`,
        [userId, fingerprint, chatId],
      );
    });
  }

  saveResponse(response: StoredResponse): Promise<void> {
    return runQuery(async () => {
      await this.dataSource.query(
        `INSERT INTO gateway_responses
           (id, user_id, chat_id, model, items, output, instructions, input_tokens, output_tokens, created_at)
           SELECT $1, $2, id, $4, $5, $6, $7, $8, $9, $10 FROM chats WHERE id = $3 AND owner_id = $2`,
        [
          response.id,
          response.userId,
          response.chatId,
          response.model,
          JSON.stringify(toStorableJson(response.items)),
          JSON.stringify(toStorableJson(response.output)),
          toStorableTextOrNull(response.instructions),
          response.usage.inputTokens,
          response.usage.outputTokens,
          response.createdAt,
        ],
      );
    });
  }

  findResponse(id: string, userId: string): Promise<StoredResponse | null> {
    return runQuery(async () => {
      const rows = await this.dataSource.query<ResponseRow[]>(
        `SELECT r.* FROM gateway_responses r JOIN chats c ON c.id = r.chat_id AND c.owner_id = $2
          WHERE r.id = $1 AND r.user_id = $2`,
        [id, userId],
      );
      const row = rows[0];
      if (row === undefined) return null;
      return {
        id: row.id,
        userId: row.user_id,
        chatId: row.chat_id,
        model: row.model,
        createdAt: new Date(row.created_at),
        items: row.items,
        output: row.output,
        instructions: row.instructions,
        usage: { inputTokens: row.input_tokens, outputTokens: row.output_tokens },
      };
    });
  }
}
