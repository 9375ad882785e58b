import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { migrate } from '../../src/persistence/migrate.js';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';

const tables = (url: string) =>
  query<{ table_name: string }>(url, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name").then((rows) => rows.map((r) => r.table_name));

describe('migrations', () => {
  let db: TestDatabase;
  const log: string[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => db?.drop());

  it('run creates the schema with named constraints; revert removes it; run again restores it', async () => {
    await migrate(db.url, 'run', (l) => log.push(l));
    expect(await tables(db.url)).toEqual(['chat_activated_skills', 'chat_messages', 'chats', 'migrations']);
    const constraints = await query<{ conname: string }>(db.url, "SELECT conname FROM pg_constraint WHERE conrelid::regclass::text IN ('chats', 'chat_messages', 'chat_activated_skills') AND contype <> 'n' ORDER BY conname");
    expect(constraints.map((c) => c.conname)).toEqual([
      'ck_chat_activated_skills_count',
      'ck_chat_activated_skills_how',
      'ck_chat_messages_role',
      'ck_chat_messages_seq',
      'ck_chats_last_seq',
      'fk_chat_activated_skills_chat',
      'fk_chat_messages_chat',
      'pk_chat_activated_skills',
      'pk_chat_messages',
      'pk_chats',
      'uq_chat_messages_chat_seq',
    ]);
    const timestamps = await query<{ data_type: string }>(db.url, "SELECT DISTINCT data_type FROM information_schema.columns WHERE table_schema = 'public' AND column_name LIKE '%_at'");
    expect(timestamps).toEqual([{ data_type: 'timestamp with time zone' }]);
    await migrate(db.url, 'run', (l) => log.push(l));
    await migrate(db.url, 'revert', (l) => log.push(l));
    const columns = await query<{ column_name: string }>(db.url, "SELECT column_name FROM information_schema.columns WHERE table_name = 'chats' ORDER BY column_name");
    expect(columns.map((c) => c.column_name)).toEqual(['created_at', 'id', 'title', 'updated_at']);
    await migrate(db.url, 'revert', (l) => log.push(l));
    expect(await tables(db.url)).toEqual(['migrations']);
    await migrate(db.url, 'run', (l) => log.push(l));
    expect(await tables(db.url)).toEqual(['chat_activated_skills', 'chat_messages', 'chats', 'migrations']);
    expect(log).toEqual([
      'Applied: InitialSchema1763800000000, ChatLastSeq1763900000000',
      'No pending migrations.',
      'Reverted: ChatLastSeq1763900000000',
      'Reverted: InitialSchema1763800000000',
      'Applied: InitialSchema1763800000000, ChatLastSeq1763900000000',
    ]);
  });
});
