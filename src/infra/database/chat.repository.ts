import type { ChatSkillFilters } from '../../domain/skills/store/skill-filter-store.js';
import type { SkillUse } from '../../domain/skills/ranking/skill-use.js';
import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { type DataSource, In } from 'typeorm';
import type {
  ChatStore,
  NewActivation,
  NewMessage,
  OwnedChat,
  StoredTurn,
  TurnContext,
} from '../../domain/chats/chat-store.js';
import type { Page } from '../../domain/shared/page.js';
import { activationRows, toStorableJson, toStorableText, toStorableTextOrNull } from '@skillhost/core';
import { runQuery } from './database-errors.js';
import { type ActivationHow, ChatActivatedSkillEntity } from './entities/chat-activated-skill.entity.js';
import {
  ChatMessageEntity,
  type MessageRole,
  type StoredCommand,
  type StoredToolCard,
} from './entities/chat-message.entity.js';
import { ChatEntity } from './entities/chat.entity.js';
import { DATA_SOURCE } from './persistence.tokens.js';
import { runPrepared } from './prepared-statement.js';
import type { StoredSkillFilter } from '../../domain/shared/skill-filter.js';

export type { NewActivation, NewMessage, OwnedChat, Page, StoredTurn, TurnContext };

/**
 * The only code that touches TypeORM for chats. Every method that reaches one chat takes its
 * owner and answers `null` (or false) when no chat of that owner has the id: whether the chat is
 * missing or another user's is not the repository's business, and "not found" is the service's.
 */
@Injectable()
export class ChatRepository implements ChatStore, ChatSkillFilters, SkillUse {
  constructor(@Inject(DATA_SOURCE) private readonly dataSource: DataSource) {}

  /** One prepared INSERT … RETURNING: TypeORM's `save` would first look the new id up. */
  createChat(ownerId: string, title: string | null): Promise<ChatEntity> {
    return runQuery(async () => {
      const [row] = await runPrepared<{ id: string; title: string | null; created_at: Date; updated_at: Date }>(
        this.dataSource,
        CREATE_CHAT,
        [randomUUID(), ownerId, toStorableTextOrNull(title)],
      );
      return Object.assign(new ChatEntity(), {
        id: row.id,
        ownerId,
        title: row.title,
        createdAt: new Date(row.created_at),
        updatedAt: new Date(row.updated_at),
      });
    });
  }

  listChats(ownerId: string, limit: number, offset: number): Promise<Page<ChatEntity>> {
    return runQuery(async () => {
      const [items, total] = await this.dataSource.manager.findAndCount(ChatEntity, {
        where: { ownerId },
        order: { createdAt: 'DESC', id: 'ASC' },
        take: limit,
        skip: offset,
      });
      return { items, total, limit, offset };
    });
  }

  /** Every chat of every user, newest first, with its owner's name. */
  listAllChats(limit: number, offset: number): Promise<Page<OwnedChat>> {
    return runQuery(async () => {
      const [rows, [{ total }]] = await Promise.all([
        this.dataSource.query<
          {
            id: string;
            title: string | null;
            owner_id: string;
            owner_name: string;
            created_at: Date;
            updated_at: Date;
          }[]
        >(
          `SELECT c.id, c.title, c.owner_id, u.name AS owner_name, c.created_at, c.updated_at
             FROM chats c JOIN users u ON u.id = c.owner_id
            ORDER BY c.created_at DESC, c.id ASC LIMIT $1 OFFSET $2`,
          [limit, offset],
        ),
        this.dataSource.query<{ total: number }[]>('SELECT count(*)::int AS total FROM chats'),
      ]);
      const items = rows.map((r) => ({
        chat: Object.assign(new ChatEntity(), {
          id: r.id,
          title: r.title,
          ownerId: r.owner_id,
          createdAt: r.created_at,
          updatedAt: r.updated_at,
        }),
        ownerName: r.owner_name,
      }));
      return { items, total, limit, offset };
    });
  }

  findChat(id: string, ownerId: string): Promise<ChatEntity | null> {
    return runQuery(() => this.dataSource.manager.findOneBy(ChatEntity, { id, ownerId }));
  }

  /** True when the owner's chat existed and is gone (its messages and activations with it). */
  deleteChat(id: string, ownerId: string): Promise<boolean> {
    return runQuery(async () => {
      const result = await this.dataSource.manager.delete(ChatEntity, { id, ownerId });
      return (result.affected ?? 0) > 0;
    });
  }

  /** Sets the owner's chat's skill filter; false when the owner has no such chat. */
  setSkillFilter(chatId: string, ownerId: string, filter: StoredSkillFilter | null): Promise<boolean> {
    return runQuery(async () => {
      const [, affected] = await this.dataSource.query<[unknown, number]>(
        'UPDATE chats SET skill_filter = $3::jsonb WHERE id = $1 AND owner_id = $2',
        [chatId, ownerId, filter === null ? null : JSON.stringify(filter)],
      );
      return affected > 0;
    });
  }

  /** The chat's messages in order, or null when the owner has no such chat. */
  listMessages(
    chatId: string,
    ownerId: string,
    limit: number,
    offset: number,
  ): Promise<Page<ChatMessageEntity> | null> {
    return runQuery(async () => {
      if ((await this.findChat(chatId, ownerId)) === null) return null;
      const [items, total] = await this.dataSource.manager.findAndCount(ChatMessageEntity, {
        where: { chatId },
        order: { seq: 'ASC' },
        take: limit,
        skip: offset,
      });
      return { items, total, limit, offset };
    });
  }

  /**
   * Everything a turn reads, in one round trip: whether the owner's chat exists (null if not), its
   * last `historyCount` user/assistant messages (oldest first) and the names of its activated skills.
   */
  turnContext(chatId: string, ownerId: string, historyCount: number): Promise<TurnContext | null> {
    return runQuery(async () => {
      const rows = await runPrepared<{
        history: TurnContext['history'] | null;
        activated: { name: string; version: string | null }[] | null;
        user_filter: StoredSkillFilter | null;
        chat_filter: StoredSkillFilter | null;
      }>(this.dataSource, TURN_CONTEXT, [chatId, historyCount, ownerId]);
      if (rows.length === 0) return null;
      const activated = rows[0].activated ?? [];
      return {
        history: rows[0].history ?? [],
        activated: activated.map((entry) => entry.name),
        pins: new Map(
          activated.flatMap((entry) => (entry.version === null ? [] : [[entry.name, entry.version] as const])),
        ),
        userFilter: rows[0].user_filter,
        chatFilter: rows[0].chat_filter,
      };
    });
  }

  /**
   * The team's use of each skill: in how many chats it was activated within the last `days` days,
   * the most used first (at most `limit`). Counted per chat, so one chat activating a skill over and
   * over counts once.
   */
  skillUse(days: number, limit: number): Promise<Map<string, number>> {
    return runQuery(async () => {
      const rows = await this.dataSource.query<{ skill_name: string; chats: number }[]>(
        `SELECT skill_name, count(*)::int AS chats FROM chat_activated_skills
          WHERE last_activated_at > now() - make_interval(days => $1)
          GROUP BY skill_name ORDER BY chats DESC, skill_name LIMIT $2`,
        [days, limit],
      );
      return new Map(rows.map((row) => [row.skill_name, row.chats]));
    });
  }

  /** The activated skills of chats already known to exist (one query for any number of chats). */
  activatedSkills(chatIds: readonly string[]): Promise<Map<string, ChatActivatedSkillEntity[]>> {
    return runQuery(async () => {
      const rows =
        chatIds.length === 0
          ? []
          : await this.dataSource.manager.find(ChatActivatedSkillEntity, {
              where: { chatId: In([...chatIds]) },
              order: { firstActivatedAt: 'ASC', skillName: 'ASC' },
            });
      const byChat = new Map<string, ChatActivatedSkillEntity[]>(chatIds.map((id) => [id, []]));
      for (const row of rows) byChat.get(row.chatId)?.push(row);
      return byChat;
    });
  }

  /**
   * Stores a turn — its messages and activations — with one statement, so it is atomic without an
   * explicit transaction. Its first step bumps the chat's last_seq, which locks the chat row:
   * concurrent writes to one chat are serialised and get consecutive positions, and a chat that is
   * not the owner's (missing, another user's, or just deleted) stores nothing and answers null.
   * The statement answers only what the database decides (the messages' positions and times, the
   * chat's activations); the messages' contents are not sent back.
   *
   * `title` becomes the chat's title when it has none yet, in the same statement: under the row
   * lock, so of two turns racing to be a chat's first, the one stored first titles it.
   */
  recordTurn(
    chatId: string,
    ownerId: string,
    messages: NewMessage[],
    activations: NewActivation[],
    title: string | null = null,
  ): Promise<StoredTurn | null> {
    return runQuery(async () => {
      const rows = messages.map((m, index) => ({
        id: randomUUID(),
        ord: index + 1,
        role: m.role,
        // Model output (text, tool names and arguments) may hold NUL or lone surrogates, which
        // PostgreSQL refuses: stored with U+FFFD in their place, and answered as stored.
        content: toStorableText(m.content),
        tool_cards: toStorableJson(m.toolCards ?? []),
        invoked_skill: toStorableTextOrNull(m.invokedSkills?.[0]),
        invoked_skills: (m.invokedSkills ?? []).map(toStorableText),
        command: m.command ? toStorableJson(m.command) : null,
        model: toStorableTextOrNull(m.model),
      }));
      const grouped = activationRows(activations);
      const [row] = await runPrepared<{
        found: number;
        messages: { seq: number; created_at: string }[] | null;
        activated: ActivationRow[] | null;
      }>(this.dataSource, RECORD_TURN, [
        chatId,
        rows.length,
        JSON.stringify(rows),
        JSON.stringify(grouped),
        ownerId,
        toStorableTextOrNull(title),
      ]);
      if (row.found === 0) return null;
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
            invokedSkills: m.invoked_skills,
            command: m.command,
            model: m.model,
            createdAt: new Date(stored[index].created_at),
          }),
        ),
        activatedSkills: (row.activated ?? []).map((a) => toActivationEntity(chatId, a)),
      };
    });
  }

  /**
   * One page of messages for each of several of the owner's chats, in one statement (GraphQL's
   * nested `Chat.messages`). Chats that are not the owner's are absent from the answer.
   */
  messagePages(
    chatIds: readonly string[],
    ownerId: string,
    limit: number,
    offset: number,
  ): Promise<Map<string, Page<ChatMessageEntity>>> {
    return runQuery(async () => {
      const pages = new Map<string, Page<ChatMessageEntity>>();
      if (chatIds.length === 0) return pages;
      const rows = await this.dataSource.query<MessagePageRow[]>(MESSAGE_PAGES, [[...chatIds], ownerId, offset, limit]);
      for (const row of rows) {
        let page = pages.get(row.chat_id);
        if (page === undefined) pages.set(row.chat_id, (page = { items: [], total: row.total, limit, offset }));
        if (row.id === null) continue;
        page.items.push(
          Object.assign(new ChatMessageEntity(), {
            id: row.id,
            chatId: row.chat_id,
            seq: row.seq,
            role: row.role,
            content: row.content,
            toolCards: row.tool_cards,
            invokedSkill: row.invoked_skill,
            invokedSkills: row.invoked_skills,
            command: row.command,
            model: row.model,
            createdAt: row.created_at,
          }),
        );
      }
      return pages;
    });
  }
}

interface ActivationRow {
  skill_name: string;
  how: ActivationHow;
  first_activated_at: string;
  last_activated_at: string;
  activation_count: number;
  version_digest: string | null;
}

function toActivationEntity(chatId: string, row: ActivationRow): ChatActivatedSkillEntity {
  return Object.assign(new ChatActivatedSkillEntity(), {
    chatId,
    skillName: row.skill_name,
    how: row.how,
    firstActivatedAt: new Date(row.first_activated_at),
    lastActivatedAt: new Date(row.last_activated_at),
    activationCount: row.activation_count,
    versionDigest: row.version_digest,
  });
}

/**
 * The turn's read: one fixed statement text, prepared once per connection. $3 is the owner. A
 * command's message goes to the model as the prompt it expanded to, as in the turn that ran it.
 */
const CREATE_CHAT = {
  name: 'skillhost_create_chat_v1',
  text: 'INSERT INTO chats (id, owner_id, title) VALUES ($1, $2, $3) RETURNING id, title, created_at, updated_at',
};

const TURN_CONTEXT = {
  name: 'skillhost_turn_context_v4',
  text:
    `SELECT
      (SELECT json_agg(json_build_object('role', h.role, 'content', h.content) ORDER BY h.seq)
         FROM (SELECT role, COALESCE(command->>'prompt', content) AS content, seq FROM chat_messages
                WHERE chat_id = c.id AND role IN ('user', 'assistant')
                ORDER BY seq DESC LIMIT $2) h) AS history,
      (SELECT json_agg(json_build_object('name', a.skill_name, 'version', a.version_digest) ORDER BY ` +
    `a.first_activated_at, a.skill_name)
         FROM chat_activated_skills a WHERE a.chat_id = c.id) AS activated,
      (SELECT u.skill_filter FROM users u WHERE u.id = c.owner_id) AS user_filter,
      c.skill_filter AS chat_filter
    FROM chats c WHERE c.id = $1 AND c.owner_id = $3`,
};

/**
 * The turn's write, whatever its number of messages and activations: $1 chat id, $2 message count,
 * $3 the messages and $4 the activations (one per skill), each a JSON array, $5 the owner, $6 the
 * title for a chat that has none (null: keep it untitled).
 */
const RECORD_TURN = {
  name: 'skillhost_record_turn_v5',
  text:
    `
    WITH chat AS (
      UPDATE chats SET updated_at = now(), last_seq = last_seq + $2, title = COALESCE(title, $6::text)
       WHERE id = $1 AND owner_id = $5 RETURNING id, last_seq
    ), inserted AS (
      INSERT INTO chat_messages (id, chat_id, seq, role, content, tool_cards, invoked_skill, invoked_skills, ` +
    `command, model)
      SELECT m.id, chat.id, chat.last_seq - $2 + m.ord, m.role, m.content, m.tool_cards, m.invoked_skill, ` +
    `m.invoked_skills, m.command, m.model
      FROM json_to_recordset($3::json) AS m (id uuid, ord int, role text, content text, tool_cards jsonb, ` +
    `invoked_skill text, invoked_skills text[], command jsonb, model text)
      CROSS JOIN chat
      RETURNING seq, created_at
    ), upserted AS (
      INSERT INTO chat_activated_skills (chat_id, skill_name, how, first_activated_at, last_activated_at, ` +
    `activation_count, version_digest)
      SELECT chat.id, a.name, a.how, clock_timestamp(), clock_timestamp(), a.count, a.version
      FROM json_to_recordset($4::json) AS a (name text, how text, count int, version text) CROSS JOIN chat
      ON CONFLICT ON CONSTRAINT pk_chat_activated_skills
      DO UPDATE SET last_activated_at = EXCLUDED.last_activated_at,
                    activation_count = chat_activated_skills.activation_count + EXCLUDED.activation_count,
                    version_digest = EXCLUDED.version_digest
      RETURNING skill_name, how, first_activated_at, last_activated_at, activation_count, version_digest
    ), activated AS (
      SELECT * FROM upserted
      UNION ALL
      SELECT skill_name, how, first_activated_at, last_activated_at, activation_count, version_digest
        FROM chat_activated_skills
       WHERE chat_id = $1 AND skill_name NOT IN (SELECT skill_name FROM upserted)
    )
    SELECT (SELECT count(*)::int FROM chat) AS found,
           (SELECT json_agg(json_build_object('seq', i.seq, 'created_at', i.created_at) ORDER BY i.seq) FROM ` +
    `inserted i) AS messages,
           (SELECT json_agg(a ORDER BY a.first_activated_at, a.skill_name) FROM activated a) AS activated`,
};

interface MessagePageRow {
  chat_id: string;
  total: number;
  /** The message columns are null for a chat with no message in the page. */
  id: string | null;
  seq: number;
  role: MessageRole;
  content: string;
  tool_cards: StoredToolCard[];
  invoked_skill: string | null;
  invoked_skills: string[];
  command: StoredCommand | null;
  model: string | null;
  created_at: Date;
}

/**
 * Pages of several chats at once: $1 the chat ids, $2 the owner, $3 offset, $4 limit. One row per
 * message in a page, or one row of nulls for a chat whose page is empty (so its total still comes).
 * The lateral join walks each chat's (chat_id, seq) index and reads only the rows of its page.
 */
const MESSAGE_PAGES =
  `
  SELECT c.id AS chat_id,
         (SELECT count(*)::int FROM chat_messages t WHERE t.chat_id = c.id) AS total,
         m.id, m.seq, m.role, m.content, m.tool_cards, m.invoked_skill, m.invoked_skills, m.command, m.model, ` +
  `m.created_at
    FROM chats c
    LEFT JOIN LATERAL (
      SELECT id, seq, role, content, tool_cards, invoked_skill, invoked_skills, command, model, created_at
        FROM chat_messages WHERE chat_id = c.id ORDER BY seq LIMIT $4 OFFSET $3
    ) m ON true
   WHERE c.id = ANY($1::uuid[]) AND c.owner_id = $2
   ORDER BY c.id, m.seq`;
