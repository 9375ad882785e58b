import type { ActivationHow } from './entities/chat-activated-skill.entity.js';

export type { ActivationHow };

/** One activation to remember: the skill, how it was activated, and the version it was (`sha256:…`) when it has one. */
export interface NewSkillActivation {
  skillName: string;
  how: ActivationHow;
  version?: string;
}

/** What a chat has activated, one entry per skill. */
export interface StoredSkillActivation {
  skillName: string;
  /** How it was first activated in the chat. */
  how: ActivationHow;
  /** The version last activated, when it has one. */
  version: string | null;
  firstActivatedAt: Date;
  lastActivatedAt: Date;
  activationCount: number;
}

/**
 * Which skills each chat has activated, for an app that keeps its chats itself. Two methods, so an
 * app can keep activations beside its own chats (any database, any ORM); `PostgresActivationStore`
 * is the one Skillhost provides.
 */
export interface ActivationStore {
  /** Remembers activations in a chat: a skill activated again counts once more and keeps its first `how`. */
  record(chatId: string, activations: readonly NewSkillActivation[]): Promise<void>;
  /** The chat's activated skills, first activated first. */
  activated(chatId: string): Promise<StoredSkillActivation[]>;
}

/** Anything that runs a parameterised query as `pg` does: a `pg.Pool`, a `pg.Client`, a pool's checked-out client. */
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
}

const TABLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
const MAX_CHAT_ID = 200;
const MAX_SKILL_NAME = 64;
const HOWS: readonly ActivationHow[] = ['explicit', 'tool', 'fallback', 'command'];

/** The table `PostgresActivationStore` uses, for an app's own migrations (`ensureSchema()` runs the same statement). */
export function activationTableSql(table = 'skillhost_activations'): string {
  return `CREATE TABLE IF NOT EXISTS ${checkedTable(table)} (
  chat_id text NOT NULL,
  skill_name text NOT NULL,
  how text NOT NULL,
  version_digest text,
  first_activated_at timestamptz NOT NULL DEFAULT now(),
  last_activated_at timestamptz NOT NULL DEFAULT now(),
  activation_count integer NOT NULL DEFAULT 1,
  PRIMARY KEY (chat_id, skill_name)
)`;
}

/**
 * Activations in a PostgreSQL table of their own (`skillhost_activations` unless told another),
 * through the app's own `pg` pool. Chat ids are the app's (any text up to 200 characters); there is
 * no foreign key, so it fits beside any schema.
 */
export class PostgresActivationStore implements ActivationStore {
  private readonly table: string;

  constructor(
    private readonly db: PgQueryable,
    options: { table?: string } = {},
  ) {
    this.table = checkedTable(options.table ?? 'skillhost_activations');
  }

  /** Creates the table when it does not exist (or run `activationTableSql()` in a migration instead). */
  async ensureSchema(): Promise<void> {
    await this.db.query(activationTableSql(this.table));
  }

  async record(chatId: string, activations: readonly NewSkillActivation[]): Promise<void> {
    checkChatId(chatId);
    // One row a skill: a skill activated twice in one call counts twice (and keeps the last version).
    const grouped = new Map<string, { how: ActivationHow; count: number; version: string | null }>();
    for (const activation of activations) {
      checkActivation(activation);
      const known = grouped.get(activation.skillName);
      grouped.set(activation.skillName, { how: known?.how ?? activation.how, count: (known?.count ?? 0) + 1, version: activation.version ?? null });
    }
    if (grouped.size === 0) return;
    const rows = [...grouped].map(([name, { how, count, version }]) => ({ name, how, count, version }));
    await this.db.query(
      `INSERT INTO ${this.table} AS t (chat_id, skill_name, how, version_digest, activation_count)
       SELECT $1, a.name, a.how, a.version, a.count FROM json_to_recordset($2::json) AS a (name text, how text, version text, count int)
       ON CONFLICT (chat_id, skill_name) DO UPDATE
         SET last_activated_at = now(), activation_count = t.activation_count + EXCLUDED.activation_count, version_digest = EXCLUDED.version_digest`,
      [chatId, JSON.stringify(rows)],
    );
  }

  async activated(chatId: string): Promise<StoredSkillActivation[]> {
    checkChatId(chatId);
    const { rows } = await this.db.query(
      `SELECT skill_name, how, version_digest, first_activated_at, last_activated_at, activation_count FROM ${this.table}
        WHERE chat_id = $1 ORDER BY first_activated_at, skill_name`,
      [chatId],
    );
    return rows.map((row: Record<string, unknown>) => ({
      skillName: row.skill_name as string,
      how: row.how as ActivationHow,
      version: (row.version_digest as string | null) ?? null,
      firstActivatedAt: new Date(row.first_activated_at as string | Date),
      lastActivatedAt: new Date(row.last_activated_at as string | Date),
      activationCount: Number(row.activation_count),
    }));
  }
}

function checkedTable(table: string): string {
  if (typeof table !== 'string' || !TABLE_NAME.test(table)) throw new TypeError(`Activation table name must be a plain lower-case SQL identifier (letters, digits, _), not ${JSON.stringify(table)}`);
  return table;
}

function checkChatId(chatId: string): void {
  if (typeof chatId !== 'string' || chatId === '' || chatId.length > MAX_CHAT_ID || chatId.includes('\0')) {
    throw new TypeError(`A chat id must be a non-empty string of at most ${MAX_CHAT_ID} characters without NUL`);
  }
}

function checkActivation(activation: NewSkillActivation): void {
  const { skillName, how, version } = activation ?? ({} as NewSkillActivation);
  if (typeof skillName !== 'string' || skillName === '' || skillName.length > MAX_SKILL_NAME || skillName.includes('\0')) {
    throw new TypeError(`A skill name must be a non-empty string of at most ${MAX_SKILL_NAME} characters`);
  }
  if (!HOWS.includes(how)) throw new TypeError(`An activation's how must be one of ${HOWS.join(', ')}`);
  if (version !== undefined && (typeof version !== 'string' || version.length > 200 || version.includes('\0'))) throw new TypeError('A version must be a string such as sha256:…');
}
