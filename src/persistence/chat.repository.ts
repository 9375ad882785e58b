import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
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

  /** The last `count` user/assistant messages, oldest first: the history a model gets. */
  recentConversation(chatId: string, count: number): Promise<ChatMessageEntity[]> {
    if (count === 0) return Promise.resolve([]);
    return this.run(async () => {
      const rows = await this.dataSource.manager
        .createQueryBuilder(ChatMessageEntity, 'm')
        .where('m.chat_id = :chatId', { chatId })
        .andWhere("m.role IN ('user', 'assistant')")
        .orderBy('m.seq', 'DESC')
        .limit(count)
        .getMany();
      return rows.reverse();
    });
  }

  activatedSkills(chatId: string): Promise<ChatActivatedSkillEntity[]> {
    return this.run(() => this.dataSource.manager.find(ChatActivatedSkillEntity, { where: { chatId }, order: { firstActivatedAt: 'ASC', skillName: 'ASC' } }));
  }

  /**
   * Stores a turn's messages and activations in one transaction of four statements. Touching the
   * chat row locks it first, so concurrent turns in one chat get consecutive positions (each
   * statement after the lock sees the others' committed rows) and a deleted chat fails cleanly.
   */
  recordTurn(chatId: string, messages: NewMessage[], activations: NewActivation[]): Promise<{ messages: ChatMessageEntity[]; activatedSkills: ChatActivatedSkillEntity[] }> {
    return this.run(() =>
      this.dataSource.transaction(async (manager) => {
        const locked = await manager.query('UPDATE chats SET updated_at = now() WHERE id = $1 RETURNING id', [chatId]);
        if (locked.length === 0) throw chatNotFound(chatId);
        const stored = messages.length > 0 ? await insertMessages(manager, chatId, messages) : [];
        await upsertActivations(manager, chatId, activations);
        const activatedSkills = await manager.find(ChatActivatedSkillEntity, { where: { chatId }, order: { firstActivatedAt: 'ASC', skillName: 'ASC' } });
        return { messages: stored, activatedSkills };
      }),
    );
  }

  /** Runs a query, turning "the database is gone" into DATABASE_UNAVAILABLE (503) for the caller. */
  private async run<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (error instanceof AppError) throw error;
      if (isUnavailable(error)) {
        throw new AppError(ErrorCode.DATABASE_UNAVAILABLE, 'The database is unavailable; nothing was changed. Try again shortly.');
      }
      throw error;
    }
  }
}

export function chatNotFound(id: string): AppError {
  return new AppError(ErrorCode.CHAT_NOT_FOUND, `Chat '${id}' not found.`, { id });
}

interface MessageRow {
  id: string;
  chat_id: string;
  seq: number;
  role: MessageRole;
  content: string;
  tool_cards: StoredToolCard[];
  invoked_skill: string | null;
  model: string | null;
  created_at: Date;
}

/** All of a turn's messages in one INSERT, numbered after the chat's last message. */
async function insertMessages(manager: EntityManager, chatId: string, messages: NewMessage[]): Promise<ChatMessageEntity[]> {
  const params: unknown[] = [chatId];
  const rows = messages.map((message, index) => {
    const at = params.length;
    params.push(randomUUID(), index + 1, message.role, message.content, JSON.stringify(message.toolCards ?? []), message.invokedSkill ?? null, message.model ?? null);
    return `($${at + 1}::uuid, $${at + 2}::int, $${at + 3}, $${at + 4}, $${at + 5}::jsonb, $${at + 6}, $${at + 7})`;
  });
  const inserted: MessageRow[] = await manager.query(
    `INSERT INTO chat_messages (id, chat_id, seq, role, content, tool_cards, invoked_skill, model)
     SELECT v.id, $1, last.seq + v.ord, v.role, v.content, v.tool_cards, v.invoked_skill, v.model
     FROM (VALUES ${rows.join(', ')}) AS v (id, ord, role, content, tool_cards, invoked_skill, model)
     CROSS JOIN (SELECT COALESCE(MAX(seq), 0) AS seq FROM chat_messages WHERE chat_id = $1) AS last
     RETURNING *`,
    params,
  );
  return inserted.sort((a, b) => a.seq - b.seq).map(toMessageEntity);
}

function toMessageEntity(row: MessageRow): ChatMessageEntity {
  return Object.assign(new ChatMessageEntity(), {
    id: row.id,
    chatId: row.chat_id,
    seq: row.seq,
    role: row.role,
    content: row.content,
    toolCards: row.tool_cards,
    invokedSkill: row.invoked_skill,
    model: row.model,
    createdAt: row.created_at,
  });
}

/**
 * One atomic statement for all of a turn's activations (grouped per skill first, since one
 * statement may not touch a row twice): concurrent activations never lose or duplicate a row.
 */
async function upsertActivations(manager: EntityManager, chatId: string, activations: NewActivation[]): Promise<void> {
  const grouped = new Map<string, { how: ActivationHow; count: number }>();
  for (const activation of activations) {
    const entry = grouped.get(activation.skillName);
    if (entry) entry.count++;
    else grouped.set(activation.skillName, { how: activation.how, count: 1 });
  }
  if (grouped.size === 0) return;
  const params: unknown[] = [chatId];
  const rows = [...grouped].map(([skillName, { how, count }]) => {
    params.push(skillName, how, count);
    const at = params.length;
    return `($1, $${at - 2}, $${at - 1}, clock_timestamp(), clock_timestamp(), $${at}::int)`;
  });
  await manager.query(
    `INSERT INTO chat_activated_skills (chat_id, skill_name, how, first_activated_at, last_activated_at, activation_count)
     VALUES ${rows.join(', ')}
     ON CONFLICT ON CONSTRAINT pk_chat_activated_skills
     DO UPDATE SET last_activated_at = EXCLUDED.last_activated_at,
                   activation_count = chat_activated_skills.activation_count + EXCLUDED.activation_count`,
    params,
  );
}
