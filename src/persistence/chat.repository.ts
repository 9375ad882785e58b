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
   * Stores a turn's messages and activations in one transaction. The chat row is locked first, so
   * concurrent turns in one chat get consecutive positions and a deleted chat fails cleanly.
   */
  recordTurn(chatId: string, messages: NewMessage[], activations: NewActivation[]): Promise<{ messages: ChatMessageEntity[]; activatedSkills: ChatActivatedSkillEntity[] }> {
    return this.run(() =>
      this.dataSource.transaction(async (manager) => {
        await lockChat(manager, chatId);
        const stored: ChatMessageEntity[] = [];
        if (messages.length > 0) {
          const [{ next }] = await manager.query('SELECT COALESCE(MAX(seq), 0) + 1 AS next FROM chat_messages WHERE chat_id = $1', [chatId]);
          let seq = Number(next);
          for (const message of messages) {
            const entity = manager.create(ChatMessageEntity, {
              id: randomUUID(),
              chatId,
              seq: seq++,
              role: message.role,
              content: message.content,
              toolCards: message.toolCards ?? [],
              invokedSkill: message.invokedSkill ?? null,
              model: message.model ?? null,
            });
            stored.push(await manager.save(entity));
          }
        }
        for (const activation of activations) await upsertActivation(manager, chatId, activation);
        await manager.query('UPDATE chats SET updated_at = now() WHERE id = $1', [chatId]);
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

async function lockChat(manager: EntityManager, chatId: string): Promise<void> {
  const rows = await manager.query('SELECT id FROM chats WHERE id = $1 FOR UPDATE', [chatId]);
  if (rows.length === 0) throw chatNotFound(chatId);
}

/** One atomic statement: concurrent activations of one skill never lose or duplicate a row. */
async function upsertActivation(manager: EntityManager, chatId: string, activation: NewActivation): Promise<void> {
  await manager.query(
    `INSERT INTO chat_activated_skills (chat_id, skill_name, how, first_activated_at, last_activated_at, activation_count)
     VALUES ($1, $2, $3, clock_timestamp(), clock_timestamp(), 1)
     ON CONFLICT ON CONSTRAINT pk_chat_activated_skills
     DO UPDATE SET last_activated_at = EXCLUDED.last_activated_at,
                   activation_count = chat_activated_skills.activation_count + 1`,
    [chatId, activation.skillName, activation.how],
  );
}
