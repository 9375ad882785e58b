import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { migrate } from '../../src/infra/database/migrate.js';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';

const tables = (url: string) =>
  query<{ table_name: string }>(
    url,
    "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
  ).then((rows) => rows.map((r) => r.table_name));

const STORE_TABLES = [
  'installed_skill_versions',
  'installed_skills',
  'skill_blobs',
  'skill_store_state',
  'skill_switches',
  'skill_versions',
];
const ALL_TABLES = [
  'api_keys',
  'audit_log',
  'chat_activated_skills',
  'chat_event_relay',
  'chat_messages',
  'chats',
  'gateway_conversations',
  'gateway_responses',
  'group_members',
  'groups',
  'installed_skill_groups',
  'installed_skill_versions',
  'installed_skills',
  'migrations',
  'oauth_artifacts',
  'rate_limits',
  'sign_in_attempts',
  'skill_blobs',
  'skill_eval_cases',
  'skill_eval_runs',
  'skill_mirrors',
  'skill_store_state',
  'skill_switches',
  'skill_usage_daily',
  'skill_versions',
  'user_identities',
  'users',
  'web_sessions',
];
const SIGN_IN_TABLES = ['sign_in_attempts', 'user_identities', 'web_sessions'];
/** The tables before kept trigger eval cases, the skills usage funnel, and trigger eval runs. */
const TABLES_BEFORE_CASES = ALL_TABLES.filter((t) => t !== 'skill_eval_cases');
const TABLES_BEFORE_USAGE = TABLES_BEFORE_CASES.filter((t) => t !== 'skill_usage_daily');
const TABLES_BEFORE_EVALS = TABLES_BEFORE_USAGE.filter((t) => t !== 'skill_eval_runs');
const TABLES_BEFORE_SIGN_IN = TABLES_BEFORE_EVALS.filter((t) => !SIGN_IN_TABLES.includes(t) && t !== 'oauth_artifacts');
const GATEWAY_TABLES = ['gateway_conversations', 'gateway_responses'];
const GROUP_TABLES = ['audit_log', 'group_members', 'groups', 'installed_skill_groups'];
/** The tables before groups and roles, sign-in and OAuth: what the older migrations' checks below expect. */
const TABLES_BEFORE_GROUPS = TABLES_BEFORE_SIGN_IN.filter((t) => !GROUP_TABLES.includes(t));
const ALL_MIGRATIONS =
  'InitialSchema1763800000000, ChatLastSeq1763900000000, UsersAndApiKeys1764000000000, ' +
  'CommandsAndInvocations1764100000000, ChatEventRelay1764200000000, SkillStore1764300000000, ' +
  'RateLimits1764400000000, Gateway1764500000000, SkillVersionSource1764600000000, SkillMirrors1764700000000, ' +
  'GroupsAndRoles1764800000000, SignIn1764810000000, OAuthArtifacts1764820000000, SkillEvalRuns1764830000000, ' +
  'SkillUsage1764840000000, SkillEvalCases1764850000000, SkillUsageApi1764870000000';

/** Reverts migrations, newest first, up to and including `name`: the tests below do not depend on later migrations. */
async function revertThrough(url: string, name: string): Promise<void> {
  const reverted: string[] = [];
  while (reverted.at(-1) !== `Reverted: ${name}`) {
    await migrate(url, 'revert', (line) => reverted.push(line));
    if (reverted.at(-1) === 'No migration to revert.') throw new Error(`${name} was never applied`);
  }
}

describe('migrations', () => {
  let db: TestDatabase;
  const log: string[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db?.drop());

  it('run creates the schema with named constraints; revert removes it; run again restores it', async () => {
    await migrate(db.url, 'run', (l) => log.push(l));
    expect(await tables(db.url)).toEqual(ALL_TABLES);
    const constraints = await query<{ conname: string }>(
      db.url,
      "SELECT conname FROM pg_constraint WHERE conrelid::regclass::text IN ('chats', 'chat_messages', " +
        "'chat_activated_skills', 'users', 'api_keys', 'chat_event_relay') AND contype <> 'n' ORDER BY conname",
    );
    expect(constraints.map((c) => c.conname)).toEqual([
      'ck_api_keys_key_hash',
      'ck_chat_activated_skills_count',
      'ck_chat_activated_skills_how',
      'ck_chat_messages_command',
      'ck_chat_messages_role',
      'ck_chat_messages_seq',
      'ck_chats_last_seq',
      'ck_users_name',
      'ck_users_role',
      'fk_api_keys_user',
      'fk_chat_activated_skills_chat',
      'fk_chat_messages_chat',
      'fk_chats_owner',
      'pk_api_keys',
      'pk_chat_activated_skills',
      'pk_chat_event_relay',
      'pk_chat_messages',
      'pk_chats',
      'pk_users',
      'uq_api_keys_key_hash',
      'uq_chat_messages_chat_seq',
      'uq_users_name',
    ]);
    const timestamps = await query<{ data_type: string }>(
      db.url,
      "SELECT DISTINCT data_type FROM information_schema.columns WHERE table_schema = 'public' AND column_name " +
        "LIKE '%_at'",
    );
    expect(timestamps).toEqual([{ data_type: 'timestamp with time zone' }]);
    const relayIndexes = await query<{ indexname: string }>(
      db.url,
      "SELECT indexname FROM pg_indexes WHERE tablename = 'chat_event_relay' ORDER BY indexname",
    );
    expect(relayIndexes.map((i) => i.indexname)).toEqual(['ix_chat_event_relay_created_at', 'pk_chat_event_relay']);
    const storeConstraints = await query<{ conname: string }>(
      db.url,
      `SELECT conname FROM pg_constraint WHERE conrelid::regclass::text IN (${STORE_TABLES.map((t) => `'${t}'`).join(
        ', ',
      )}) AND contype <> 'n' ORDER BY conname`,
    );
    expect(storeConstraints.map((c) => c.conname)).toEqual([
      'ck_installed_skill_versions_source',
      'ck_installed_skills_audience',
      'ck_installed_skills_scope',
      'ck_skill_blobs_digest',
      'ck_skill_blobs_size',
      'ck_skill_store_state_single',
      'ck_skill_versions_digest',
      'ck_skill_versions_manifest',
      'fk_installed_skill_versions_skill',
      'fk_installed_skill_versions_user',
      'fk_installed_skill_versions_version',
      'fk_installed_skills_owner',
      'fk_installed_skills_owning_group',
      'fk_installed_skills_owning_user',
      'fk_skill_switches_user',
      'pk_installed_skill_versions',
      'pk_installed_skills',
      'pk_skill_blobs',
      'pk_skill_store_state',
      'pk_skill_switches',
      'pk_skill_versions',
      'uq_installed_skill_versions_digest',
    ]);
    const rateLimitIndexes = await query<{ indexname: string }>(
      db.url,
      "SELECT indexname FROM pg_indexes WHERE tablename = 'rate_limits' ORDER BY indexname",
    );
    expect(rateLimitIndexes.map((i) => i.indexname)).toEqual(['ix_rate_limits_expire', 'pk_rate_limits']);
    const gatewayConstraints = await query<{ conname: string }>(
      db.url,
      "SELECT conname FROM pg_constraint WHERE conrelid::regclass::text IN ('gateway_conversations', " +
        "'gateway_responses') AND contype <> 'n' ORDER BY conname",
    );
    expect(gatewayConstraints.map((c) => c.conname)).toEqual([
      'fk_gateway_conversations_chat',
      'fk_gateway_responses_chat',
      'pk_gateway_conversations',
      'pk_gateway_responses',
    ]);
    const mirrorConstraints = await query<{ conname: string }>(
      db.url,
      "SELECT conname FROM pg_constraint WHERE conrelid::regclass::text = 'skill_mirrors' AND contype <> 'n' ORDER " +
        'BY conname',
    );
    expect(mirrorConstraints.map((c) => c.conname)).toEqual([
      'ck_skill_mirrors_interval',
      'ck_skill_mirrors_name',
      'ck_skill_mirrors_origin',
      'fk_skill_mirrors_created_by',
      'pk_skill_mirrors',
    ]);
    await migrate(db.url, 'run', (l) => log.push(l));
    const groupConstraints = await query<{ conname: string }>(
      db.url,
      `SELECT conname FROM pg_constraint WHERE conrelid::regclass::text IN (${GROUP_TABLES.map((t) => `'${t}'`).join(
        ', ',
      )}) AND contype <> 'n' ORDER BY conname`,
    );
    expect(groupConstraints.map((c) => c.conname)).toEqual([
      'ck_audit_log_details',
      'ck_groups_name',
      'ck_groups_source',
      'fk_audit_log_actor',
      'fk_group_members_group',
      'fk_group_members_user',
      'fk_installed_skill_groups_group',
      'fk_installed_skill_groups_skill',
      'pk_audit_log',
      'pk_group_members',
      'pk_groups',
      'pk_installed_skill_groups',
      'uq_groups_source_name',
    ]);
    const signInConstraints = await query<{ conname: string }>(
      db.url,
      "SELECT conname FROM pg_constraint WHERE conrelid::regclass::text IN ('user_identities', 'sign_in_attempts', " +
        "'web_sessions') AND contype <> 'n' ORDER BY conname",
    );
    expect(signInConstraints.map((c) => c.conname)).toEqual([
      'ck_web_sessions_token_hash',
      'fk_user_identities_user',
      'fk_web_sessions_user',
      'pk_sign_in_attempts',
      'pk_user_identities',
      'pk_web_sessions',
      'uq_web_sessions_token_hash',
    ]);
    const usageIndexes = await query<{ indexname: string }>(
      db.url,
      "SELECT indexname FROM pg_indexes WHERE tablename = 'skill_usage_daily' ORDER BY indexname",
    );
    expect(usageIndexes.map((i) => i.indexname)).toEqual(['ix_skill_usage_daily_day', 'pk_skill_usage_daily']);
    const apiColumn = () =>
      query(
        db.url,
        "SELECT column_default FROM information_schema.columns WHERE table_name = 'skill_usage_daily' AND " +
          "column_name = 'activated_api'",
      );
    expect(await apiColumn()).toEqual([{ column_default: '0' }]);
    await migrate(db.url, 'revert', (l) => log.push(l));
    expect(await apiColumn()).toEqual([]);
    expect(await tables(db.url)).toEqual(ALL_TABLES);
    const caseConstraints = await query<{ conname: string }>(
      db.url,
      "SELECT conname FROM pg_constraint WHERE conrelid::regclass::text = 'skill_eval_cases' AND contype <> 'n' " +
        'ORDER BY conname',
    );
    expect(caseConstraints.map((c) => c.conname)).toEqual([
      'ck_skill_eval_cases_expect_skill',
      'ck_skill_eval_cases_query',
      'fk_skill_eval_cases_added_by',
      'pk_skill_eval_cases',
    ]);
    await migrate(db.url, 'revert', (l) => log.push(l));
    expect(await tables(db.url)).toEqual(TABLES_BEFORE_CASES);
    await migrate(db.url, 'revert', (l) => log.push(l));
    expect(await tables(db.url)).toEqual(TABLES_BEFORE_USAGE);
    await migrate(db.url, 'revert', (l) => log.push(l));
    expect(await tables(db.url)).toEqual(TABLES_BEFORE_EVALS);
    await migrate(db.url, 'revert', (l) => log.push(l));
    expect(await tables(db.url)).toEqual(TABLES_BEFORE_EVALS.filter((t) => t !== 'oauth_artifacts'));
    await migrate(db.url, 'revert', (l) => log.push(l));
    expect(await tables(db.url)).toEqual(TABLES_BEFORE_SIGN_IN);
    const emailColumn = await query(
      db.url,
      "SELECT column_name FROM information_schema.columns WHERE table_name = 'users' AND column_name = 'email'",
    );
    expect(emailColumn).toEqual([]);
    await migrate(db.url, 'run', (l) => log.push(l));
    // Back to before sign-in: the usage funnel's api way, kept eval cases, the usage funnel, trigger eval runs, OAuth
    // and sign-in go.
    for (let i = 0; i < 6; i++) await migrate(db.url, 'revert', (l) => log.push(l));
    await query(db.url, "INSERT INTO users (id, name, role) VALUES (gen_random_uuid(), 'an-editor', 'editor')");
    await migrate(db.url, 'revert', (l) => log.push(l));
    expect(await tables(db.url)).toEqual(TABLES_BEFORE_GROUPS);
    // The older schema knows no editors: they become members rather than stop the revert.
    expect(await query(db.url, "SELECT role FROM users WHERE name = 'an-editor'")).toEqual([{ role: 'member' }]);
    const audience = await query(
      db.url,
      "SELECT column_name FROM information_schema.columns WHERE table_name = 'installed_skills' AND column_name IN " +
        "('audience', 'owning_user_id', 'owning_group_id')",
    );
    expect(audience).toEqual([]);
    await migrate(db.url, 'revert', (l) => log.push(l));
    expect(await tables(db.url)).toEqual(TABLES_BEFORE_GROUPS.filter((t) => t !== 'skill_mirrors'));
    await migrate(db.url, 'revert', (l) => log.push(l));
    const sourceColumn = await query<{ column_name: string }>(
      db.url,
      "SELECT column_name FROM information_schema.columns WHERE table_name = 'installed_skill_versions' AND " +
        "column_name = 'source'",
    );
    expect(sourceColumn).toEqual([]);
    await migrate(db.url, 'revert', (l) => log.push(l));
    expect(await tables(db.url)).toEqual(
      TABLES_BEFORE_GROUPS.filter((t) => t !== 'skill_mirrors' && !GATEWAY_TABLES.includes(t)),
    );
    await migrate(db.url, 'revert', (l) => log.push(l));
    expect(await tables(db.url)).toEqual(
      TABLES_BEFORE_GROUPS.filter((t) => t !== 'skill_mirrors' && t !== 'rate_limits' && !GATEWAY_TABLES.includes(t)),
    );
    await migrate(db.url, 'revert', (l) => log.push(l));
    expect(await tables(db.url)).toEqual(
      TABLES_BEFORE_GROUPS.filter(
        (t) => t !== 'skill_mirrors' && t !== 'rate_limits' && !GATEWAY_TABLES.includes(t) && !STORE_TABLES.includes(t),
      ),
    );
    const storeColumns = await query(
      db.url,
      "SELECT column_name FROM information_schema.columns WHERE column_name IN ('skill_filter', 'version_digest')",
    );
    expect(storeColumns).toEqual([]);
    await migrate(db.url, 'revert', (l) => log.push(l));
    expect(await tables(db.url)).toEqual(
      TABLES_BEFORE_GROUPS.filter(
        (t) =>
          t !== 'skill_mirrors' &&
          t !== 'rate_limits' &&
          t !== 'chat_event_relay' &&
          !GATEWAY_TABLES.includes(t) &&
          !STORE_TABLES.includes(t),
      ),
    );
    await migrate(db.url, 'revert', (l) => log.push(l));
    const messageColumns = await query<{ column_name: string }>(
      db.url,
      "SELECT column_name FROM information_schema.columns WHERE table_name = 'chat_messages' AND column_name IN " +
        "('invoked_skills', 'command')",
    );
    expect(messageColumns).toEqual([]);
    await migrate(db.url, 'revert', (l) => log.push(l));
    expect(await tables(db.url)).toEqual(['chat_activated_skills', 'chat_messages', 'chats', 'migrations']);
    await migrate(db.url, 'revert', (l) => log.push(l));
    const columns = await query<{ column_name: string }>(
      db.url,
      "SELECT column_name FROM information_schema.columns WHERE table_name = 'chats' ORDER BY column_name",
    );
    expect(columns.map((c) => c.column_name)).toEqual(['created_at', 'id', 'title', 'updated_at']);
    await migrate(db.url, 'revert', (l) => log.push(l));
    expect(await tables(db.url)).toEqual(['migrations']);
    await migrate(db.url, 'run', (l) => log.push(l));
    expect(await tables(db.url)).toEqual(ALL_TABLES);
    expect(log).toEqual([
      `Applied: ${ALL_MIGRATIONS}`,
      'No pending migrations.',
      'Reverted: SkillUsageApi1764870000000',
      'Reverted: SkillEvalCases1764850000000',
      'Reverted: SkillUsage1764840000000',
      'Reverted: SkillEvalRuns1764830000000',
      'Reverted: OAuthArtifacts1764820000000',
      'Reverted: SignIn1764810000000',
      'Applied: SignIn1764810000000, OAuthArtifacts1764820000000, SkillEvalRuns1764830000000, ' +
        'SkillUsage1764840000000, SkillEvalCases1764850000000, SkillUsageApi1764870000000',
      'Reverted: SkillUsageApi1764870000000',
      'Reverted: SkillEvalCases1764850000000',
      'Reverted: SkillUsage1764840000000',
      'Reverted: SkillEvalRuns1764830000000',
      'Reverted: OAuthArtifacts1764820000000',
      'Reverted: SignIn1764810000000',
      'Reverted: GroupsAndRoles1764800000000',
      'Reverted: SkillMirrors1764700000000',
      'Reverted: SkillVersionSource1764600000000',
      'Reverted: Gateway1764500000000',
      'Reverted: RateLimits1764400000000',
      'Reverted: SkillStore1764300000000',
      'Reverted: ChatEventRelay1764200000000',
      'Reverted: CommandsAndInvocations1764100000000',
      'Reverted: UsersAndApiKeys1764000000000',
      'Reverted: ChatLastSeq1763900000000',
      'Reverted: InitialSchema1763800000000',
      `Applied: ${ALL_MIGRATIONS}`,
    ]);
  });

  it('gives chats made before users existed to the built-in admin `local`', async () => {
    const other = await createTestDatabase();
    try {
      await migrate(other.url, 'run', () => undefined);
      await revertThrough(other.url, 'UsersAndApiKeys1764000000000');
      await query(other.url, "INSERT INTO chats (id, title) VALUES ('11111111-1111-4111-8111-111111111111', 'old')");
      await migrate(other.url, 'run', () => undefined);
      expect(
        await query(other.url, 'SELECT c.title, u.name, u.role FROM chats c JOIN users u ON u.id = c.owner_id'),
      ).toEqual([{ title: 'old', name: 'local', role: 'admin' }]);
    } finally {
      await other.drop();
    }
  });

  it('keeps what older messages invoked, and turns command activations into explicit ones on revert', async () => {
    const other = await createTestDatabase();
    const chat = '22222222-2222-4222-8222-222222222222';
    try {
      await migrate(other.url, 'run', () => undefined);
      await revertThrough(other.url, 'CommandsAndInvocations1764100000000');
      await query(
        other.url,
        "INSERT INTO chats (id, title, owner_id, last_seq) SELECT $1, 'old', id, 2 FROM users WHERE name = 'local'",
        [chat],
      );
      await query(
        other.url,
        'INSERT INTO chat_messages (id, chat_id, seq, role, content, invoked_skill) VALUES (gen_random_uuid(), ' +
          "$1, 1, 'user', '/pdf go', 'pdf'), (gen_random_uuid(), $1, 2, 'assistant', 'ok', NULL)",
        [chat],
      );
      await migrate(other.url, 'run', () => undefined);
      expect(await query(other.url, 'SELECT invoked_skills, command FROM chat_messages ORDER BY seq')).toEqual([
        { invoked_skills: ['pdf'], command: null },
        { invoked_skills: [], command: null },
      ]);
      await query(
        other.url,
        'INSERT INTO chat_activated_skills (chat_id, skill_name, how, first_activated_at, last_activated_at, ' +
          "activation_count) VALUES ($1, 'pdf', 'command', now(), now(), 1)",
        [chat],
      );
      await expect(query(other.url, "UPDATE chat_messages SET command = '[]'::jsonb WHERE seq = 1")).rejects.toThrow(
        /ck_chat_messages_command/,
      );
      await revertThrough(other.url, 'CommandsAndInvocations1764100000000');
      expect(await query(other.url, 'SELECT how FROM chat_activated_skills')).toEqual([{ how: 'explicit' }]);
    } finally {
      await other.drop();
    }
  });
});
