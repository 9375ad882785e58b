import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver.js';
import { AppError, ErrorCode } from '../common/app-error.js';
import { type ActivationHow, ChatActivatedSkillEntity } from './entities/chat-activated-skill.entity.js';
import { ChatMessageEntity, type MessageRole, type StoredToolCard } from './entities/chat-message.entity.js';
import { ChatEntity } from './entities/chat.entity.js';
import { DATA_SOURCE } from './persistence.tokens.js';

export interface NewMessage {
  role: MessageRole;
  content: string;
  toolCards?: StoredToolCard[];
  invokedSkill?: string | null;
  model?: string | null;
}

export interface NewActivation {
  skillName: string;
  how: ActivationHow;
}

export interface Page<T> {
  items: T[];
  total: number;
  limit: number;
  offset: number;
}

const DATABASE_UNAVAILABLE_MESSAGE = 'The database is unavailable; nothing was changed. Try again shortly.';

/** Codes that mean the server is gone or refusing us, not that the query was wrong. */
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08006', '53300', '3D000']);

function isUnavailable(error: unknown): boolean {
  const e = error as { code?: string; message?: string; driverError?: { code?: string } };
  const code = e?.code ?? e?.driverError?.code;
  return (
    (code !== undefined && UNAVAILABLE_CODES.has(code)) ||
    /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable|Cannot use a pool after calling end/i.test(e?.message ?? '')
  );
}

/** The only code that touches TypeORM for chats: every query, every transaction. */
@Injectable()
export class ChatRepository {
  constructor(@Inject(DATA_SOURCE) private readonly dataSource: DataSource) {}

  createChat(title: string | null): Promise<ChatEntity> {
    return this.run(async () => {
      const chat = this.dataSource.manager.create(ChatEntity, { id: randomUUID(), title });
      return this.dataSource.manager.save(chat);
    });
  }

  listChats(limit: number, offset: number): Promise<Page<ChatEntity>> {
    return this.run(async () => {
      const [items, total] = await this.dataSource.manager.findAndCount(ChatEntity, { order: { createdAt: 'DESC', id: 'ASC' }, take: limit, skip: offset });
      return { items, total, limit, offset };
    });
  }

  findChat(id: string): Promise<ChatEntity | null> {
    return this.run(() => this.dataSource.manager.findOneBy(ChatEntity, { id }));
  }

  /** The chat, or CHAT_NOT_FOUND. */
  async getChat(id: string): Promise<ChatEntity> {
    const chat = await this.findChat(id);
    if (chat === null) throw chatNotFound(id);
    return chat;
  }

  deleteChat(id: string): Promise<boolean> {
    return this.run(async () => {
      const result = await this.dataSource.manager.delete(ChatEntity, { id });
      return (result.affected ?? 0) > 0;
    });
  }

  listMessages(chatId: string, limit: number, offset: number): Promise<Page<ChatMessageEntity>> {
    return this.run(async () => {
      const [items, total] = await this.dataSource.manager.findAndCount(ChatMessageEntity, { where: { chatId }, order: { seq: 'ASC' }, take: limit, skip: offset });
      return { items, total, limit, offset };
    });
  }

  /**
   * Everything a turn reads, in one round trip: whether the chat exists, its last `historyCount`
   * user/assistant messages (oldest first) and the names of its activated skills.
   */
  turnContext(chatId: string, historyCount: number): Promise<{ history: { role: 'user' | 'assistant'; content: string }[]; activated: string[] } | null> {
    return this.run(async () => {
      const rows = await this.prepared<{ history: { role: 'user' | 'assistant'; content: string }[] | null; activated: string[] | null }>(TURN_CONTEXT, [chatId, historyCount]);
      if (rows.length === 0) return null;
      return { history: rows[0].history ?? [], activated: rows[0].activated ?? [] };
    });
  }

  activatedSkills(chatId: string): Promise<ChatActivatedSkillEntity[]> {
    return this.run(() => this.dataSource.manager.find(ChatActivatedSkillEntity, { where: { chatId }, order: { firstActivatedAt: 'ASC', skillName: 'ASC' } }));
  }

  /**
   * Stores a turn — its messages and activations — with one statement, so it is atomic without an
   * explicit transaction. Its first step bumps the chat's last_seq, which locks the chat row:
   * concurrent writes to one chat are serialised and get consecutive positions, and a chat that
   * does not exist (or was just deleted) stores nothing and answers CHAT_NOT_FOUND. The statement
   * answers only what the database decides (the messages' positions and times, the chat's
   * activations); the messages' contents are not sent back.
   */
  recordTurn(chatId: string, messages: NewMessage[], activations: NewActivation[]): Promise<{ messages: ChatMessageEntity[]; activatedSkills: ChatActivatedSkillEntity[] }> {
    return this.run(async () => {
      const rows = messages.map((m, index) => ({
        id: randomUUID(),
        ord: index + 1,
        role: m.role,
        content: m.content,
        tool_cards: m.toolCards ?? [],
        invoked_skill: m.invokedSkill ?? null,
        model: m.model ?? null,
      }));
      const grouped = groupActivations(activations).map(([name, { how, count }]) => ({ name, how, count }));
      const [row] = await this.prepared<{ found: number; messages: { seq: number; created_at: string }[] | null; activated: ActivationRow[] | null }>(RECORD_TURN, [
        chatId,
        rows.length,
        JSON.stringify(rows),
        JSON.stringify(grouped),
      ]);
      if (row.found === 0) throw chatNotFound(chatId);
      const stored = row.messages ?? [];
      return {
        messages: rows.map((m, index) =>
          Object.assign(new ChatMessageEntity(), {
            id: m.id,
            chatId,
            seq: stored[index].seq,
            role: m.role,
            content: m.content,
            toolCards: m.tool_cards,
            invokedSkill: m.invoked_skill,
            model: m.model,
            createdAt: new Date(stored[index].created_at),
          }),
        ),
        activatedSkills: (row.activated ?? []).map((a) => toActivationEntity(chatId, a)),
      };
    });
  }

  /**
   * Runs one of the turn's statements as a named prepared statement on the pool TypeORM manages:
   * each connection parses and plans it once, not on every turn.
   */
  private async prepared<T>(statement: { name: string; text: string }, values: unknown[]): Promise<T[]> {
    const pool = (this.dataSource.driver as PostgresDriver).master as Pool | undefined;
    // No pool: the data source is closed (the app is shutting down).
    if (pool === undefined) throw new AppError(ErrorCode.DATABASE_UNAVAILABLE, DATABASE_UNAVAILABLE_MESSAGE);
    return (await pool.query({ ...statement, values })).rows as T[];
  }

  /** Runs a query, turning "the database is gone" into DATABASE_UNAVAILABLE (503) for the caller. */
  private async run<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof AppError) throw error;
      if (isUnavailable(error)) {
        throw new AppError(ErrorCode.DATABASE_UNAVAILABLE, DATABASE_UNAVAILABLE_MESSAGE);
      }
      throw error;
    }
  }
}

export function chatNotFound(id: string): AppError {
  return new AppError(ErrorCode.CHAT_NOT_FOUND, `Chat '${id}' not found.`, { id });
}

interface ActivationRow {
  skill_name: string;
  how: ActivationHow;
  first_activated_at: string;
  last_activated_at: string;
  activation_count: number;
}

function toActivationEntity(chatId: string, row: ActivationRow): ChatActivatedSkillEntity {
  return Object.assign(new ChatActivatedSkillEntity(), {
    chatId,
    skillName: row.skill_name,
    how: row.how,
    firstActivatedAt: new Date(row.first_activated_at),
    lastActivatedAt: new Date(row.last_activated_at),
    activationCount: row.activation_count,
  });
}

/** One row per skill (a statement may not upsert the same row twice); the first `how` wins. */
function groupActivations(activations: NewActivation[]): [string, { how: ActivationHow; count: number }][] {
  const grouped = new Map<string, { how: ActivationHow; count: number }>();
  for (const activation of activations) {
    const entry = grouped.get(activation.skillName);
    if (entry) entry.count++;
    else grouped.set(activation.skillName, { how: activation.how, count: 1 });
  }
  return [...grouped];
}

/** The turn's read: one fixed statement text, prepared once per connection. */
const TURN_CONTEXT = {
  name: 'skillhost_turn_context',
  text: `SELECT
      (SELECT json_agg(json_build_object('role', h.role, 'content', h.content) ORDER BY h.seq)
         FROM (SELECT role, content, seq FROM chat_messages
                WHERE chat_id = c.id AND role IN ('user', 'assistant')
                ORDER BY seq DESC LIMIT $2) h) AS history,
      (SELECT json_agg(a.skill_name ORDER BY a.first_activated_at, a.skill_name)
         FROM chat_activated_skills a WHERE a.chat_id = c.id) AS activated
    FROM chats c WHERE c.id = $1`,
};

/**
 * The turn's write, whatever its number of messages and activations: $1 chat id, $2 message count,
 * $3 the messages and $4 the activations (one per skill), each a JSON array.
 */
const RECORD_TURN = {
  name: 'skillhost_record_turn',
  text: `
    WITH chat AS (
      UPDATE chats SET updated_at = now(), last_seq = last_seq + $2 WHERE id = $1 RETURNING id, last_seq
    ), inserted AS (
      INSERT INTO chat_messages (id, chat_id, seq, role, content, tool_cards, invoked_skill, model)
      SELECT m.id, chat.id, chat.last_seq - $2 + m.ord, m.role, m.content, m.tool_cards, m.invoked_skill, m.model
      FROM json_to_recordset($3::json) AS m (id uuid, ord int, role text, content text, tool_cards jsonb, invoked_skill text, model text)
      CROSS JOIN chat
      RETURNING seq, created_at
    ), upserted AS (
      INSERT INTO chat_activated_skills (chat_id, skill_name, how, first_activated_at, last_activated_at, activation_count)
      SELECT chat.id, a.name, a.how, clock_timestamp(), clock_timestamp(), a.count
      FROM json_to_recordset($4::json) AS a (name text, how text, count int) CROSS JOIN chat
      ON CONFLICT ON CONSTRAINT pk_chat_activated_skills
      DO UPDATE SET last_activated_at = EXCLUDED.last_activated_at,
                    activation_count = chat_activated_skills.activation_count + EXCLUDED.activation_count
      RETURNING skill_name, how, first_activated_at, last_activated_at, activation_count
    ), activated AS (
      SELECT * FROM upserted
      UNION ALL
      SELECT skill_name, how, first_activated_at, last_activated_at, activation_count
        FROM chat_activated_skills
       WHERE chat_id = $1 AND skill_name NOT IN (SELECT skill_name FROM upserted)
    )
    SELECT (SELECT count(*)::int FROM chat) AS found,
           (SELECT json_agg(json_build_object('seq', i.seq, 'created_at', i.created_at) ORDER BY i.seq) FROM inserted i) AS messages,
           (SELECT json_agg(a ORDER BY a.first_activated_at, a.skill_name) FROM activated a) AS activated`,
};
