import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { ChatEventRelay } from '../../domain/chats/chat-event-relay.js';
import { runQuery } from './database-errors.js';
import { DATA_SOURCE } from './persistence.tokens.js';

/**
 * Turn events too large for a NOTIFY payload, kept briefly in `chat_event_relay` for the other
 * instances to read by id. The event is stored as its JSON text (a jsonb string), so it comes
 * back exactly as it was sent: a jsonb object would reorder its keys and refuse `\u0000` and
 * unpaired surrogates that JSON text may spell.
 */
@Injectable()
export class ChatEventRelayRepository implements ChatEventRelay {
  constructor(@Inject(DATA_SOURCE) private readonly dataSource: DataSource) {}

  /** Stores one event's JSON text and returns its id; rows older than a minute go in the same statement. */
  async store(chatId: string, eventJson: string): Promise<string> {
    const rows = await runQuery<{ id: string }[]>(() =>
      this.dataSource.query(
        `WITH expired AS (DELETE FROM chat_event_relay WHERE created_at < now() - interval '1 minute')
         INSERT INTO chat_event_relay (chat_id, payload) VALUES ($1, to_jsonb($2::text)) RETURNING id`,
        [chatId, eventJson],
      ),
    );
    return String(rows[0].id);
  }

  /** The event's JSON text, or null when no row of that chat has the id (removed after a minute). */
  async find(id: string, chatId: string): Promise<string | null> {
    const rows = await runQuery<{ json: string }[]>(() =>
      this.dataSource.query(`SELECT payload #>> '{}' AS json FROM chat_event_relay WHERE id = $1 AND chat_id = $2`, [
        id,
        chatId,
      ]),
    );
    return rows[0]?.json ?? null;
  }
}
