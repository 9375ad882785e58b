import { AppError, ErrorCode } from '../errors/app-error.js';
import { unstorableCharacter } from '../util/storable-text.js';
/**
 * How a chat came to activate a skill: the user named it, the model called a tool, a fallback chose it, or a command.
 */
export type ActivationHow = 'explicit' | 'tool' | 'fallback' | 'command';

/** One activation to remember: the skill, how it was activated, and the version it was (`sha256:…`) when it has one. */
export interface NewSkillActivation {
  skillName: string;
  how: ActivationHow;
  /** The version activated (`sha256:…`); the chat reads that version until it activates the skill again. */
  version?: string;
}

/** One row a skill, as the server's turns and `PostgresActivationStore` both upsert them. */
export interface ActivationUpsert {
  name: string;
  /** How it was first activated among these. */
  how: ActivationHow;
  /** How many times: a skill activated twice counts twice. */
  count: number;
  /** The last version activated, or null. */
  version: string | null;
}

/** Activations grouped by skill (a statement may not upsert one row twice), in the order each skill first appears. */
export function activationRows(activations: readonly NewSkillActivation[]): ActivationUpsert[] {
  const grouped = new Map<string, ActivationUpsert>();
  for (const activation of activations) {
    const row = grouped.get(activation.skillName);
    if (row === undefined)
      grouped.set(activation.skillName, {
        name: activation.skillName,
        how: activation.how,
        count: 1,
        version: activation.version ?? null,
      });
    else {
      row.count++;
      row.version = activation.version ?? null;
    }
  }
  return [...grouped.values()];
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
  /** The chat's activated skills, first activated first (those first activated in one `record` call by name). */
  activated(chatId: string): Promise<StoredSkillActivation[]>;
}

/** Anything that runs a parameterised query as `pg` does: a `pg.Pool`, a `pg.Client`, a pool's checked-out client. */
export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

const TABLE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
/**
 * PostgreSQL's answers when two sessions create the same table at once (unique violation in the catalogue, the table or
 * its row type exists): the other one made it.
 */
const CREATED_MEANWHILE = new Set(['23505', '42P07', '42710']);
const MAX_CHAT_ID = 200;
const MAX_SKILL_NAME = 64;
const HOWS: readonly ActivationHow[] = ['explicit', 'tool', 'fallback', 'command'];

/** The table `PostgresActivationStore` uses, for an app's own migrations (`ensureSchema()` runs the same statement). */
export function activationTableSql(table = 'skillhost_activations'): string {
  return `CREATE TABLE IF NOT EXISTS ${quotedTable(table)} (
  chat_id text NOT NULL,
  skill_name text NOT NULL,
  how text NOT NULL,
  version_digest text,
  first_activated_at timestamptz NOT NULL DEFAULT now(),
  last_activated_at timestamptz NOT NULL DEFAULT now(),
  activation_count integer NOT NULL DEFAULT 1,
  CONSTRAINT "${checkedName(table)}_pkey" PRIMARY KEY (chat_id, skill_name)
)`;
}

/**
 * Activations in a PostgreSQL table of their own (`skillhost_activations` unless told another),
 * through the app's own `pg` pool. Chat ids are the app's (any text up to 200 characters); there is
 * no foreign key, so it fits beside any schema.
 */
export class PostgresActivationStore implements ActivationStore {
  /** As given, and quoted for the statements. */
  private readonly name: string;
  private readonly table: string;

  constructor(
    private readonly db: PgQueryable,
    options: { table?: string } = {},
  ) {
    this.name = options.table ?? 'skillhost_activations';
    this.table = quotedTable(this.name);
  }

  /** Creates the table when it does not exist (or run `activationTableSql()` in a migration instead). */
  async ensureSchema(): Promise<void> {
    try {
      await this.db.query(activationTableSql(this.name));
    } catch (error) {
      // Replicas starting together race on CREATE TABLE IF NOT EXISTS; the loser's table exists.
      if (!CREATED_MEANWHILE.has((error as { code?: string }).code ?? '')) throw error;
    }
  }

  async record(chatId: string, activations: readonly NewSkillActivation[]): Promise<void> {
    checkChatId(chatId);
    for (const activation of activations) checkActivation(activation);
    // In name order: concurrent calls for one chat then lock its rows in one order, never in a cycle.
    const rows = activationRows(activations).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    if (rows.length === 0) return;
    await this.db.query(
      `INSERT INTO ${this.table} AS t (chat_id, skill_name, how, version_digest, activation_count)
       SELECT $1, a.name, a.how, a.version, a.count FROM json_to_recordset($2::json) AS a (name text, how text, ` +
        `version text, count int)
       ON CONFLICT (chat_id, skill_name) DO UPDATE
         SET last_activated_at = now(), activation_count = t.activation_count + EXCLUDED.activation_count, ` +
        `version_digest = EXCLUDED.version_digest`,
      [chatId, JSON.stringify(rows)],
    );
  }

  async activated(chatId: string): Promise<StoredSkillActivation[]> {
    checkChatId(chatId);
    const { rows } = await this.db.query(
      `SELECT skill_name, how, version_digest, first_activated_at, last_activated_at, activation_count FROM ` +
        `${this.table}
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

/**
 * A value the store cannot take: VALIDATION_FAILED naming it, as every refusal of Skillhost's services is an AppError
 * with a code.
 */
function invalid(field: string, message: string): AppError {
  return new AppError(ErrorCode.VALIDATION_FAILED, message, { field });
}

/**
 * The table's name, quoted (so `order` or `user` are names like any other); PostgreSQL's own `pg_` names are refused.
 */
function quotedTable(table: string): string {
  return `"${checkedName(table)}"`;
}

function checkedName(table: string): string {
  if (typeof table !== 'string' || !TABLE_NAME.test(table) || table.startsWith('pg_')) {
    throw invalid(
      'table',
      `Activation table name must be a plain lower-case SQL identifier (letters, digits, _; not pg_…), not ` +
        `${JSON.stringify(table)}`,
    );
  }
  return table;
}

/** Text PostgreSQL stores as given: no NUL, no unpaired surrogate. */
function storable(text: unknown, max: number): text is string {
  return typeof text === 'string' && text !== '' && text.length <= max && unstorableCharacter(text) === undefined;
}

function checkChatId(chatId: string): void {
  if (!storable(chatId, MAX_CHAT_ID))
    throw invalid(
      'chatId',
      `A chat id must be a non-empty string of at most ${MAX_CHAT_ID} characters, without NUL or unpaired surrogates`,
    );
}

function checkActivation(activation: NewSkillActivation): void {
  const { skillName, how, version } = activation ?? ({} as NewSkillActivation);
  // A skill name as the specification allows it: never a line break someone could splice into a prompt.
  if (!storable(skillName, MAX_SKILL_NAME) || /\s/.test(skillName))
    throw invalid(
      'skillName',
      `A skill name must be a non-empty string of at most ${MAX_SKILL_NAME} characters, without spaces`,
    );
  if (!HOWS.includes(how)) throw invalid('how', `An activation's how must be one of ${HOWS.join(', ')}`);
  if (version !== undefined && !storable(version, 200))
    throw invalid('version', 'A version must be a string such as sha256:…');
}
