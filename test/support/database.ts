import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { EmbeddedFolderInUseError } from '../../src/infra/database/embedded-postgres.owner.js';
import { EmbeddedPostgresServer } from '../../src/infra/database/embedded-postgres.server.js';
import { freePort } from './ports.js';
import { runFolder } from './files/run-folder.js';

/**
 * Each test file gets its own fresh database on the test server (DATABASE_URL, or the embedded
 * PostgreSQL the global set-up started), so files never see each other's rows. The app under test
 * runs the real migrations on it.
 */
export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * DATABASE_URL when set; otherwise one embedded PostgreSQL for the whole run, started by the first
 * test file that needs it and found by the next ones in its data folder (Jest gives each file its
 * own copy of `process.env`, so the URL kept there serves the rest of one file only).
 */
export async function serverUrl(): Promise<string> {
  const url = process.env.DATABASE_URL || process.env.SKILLHOST_TEST_DATABASE_URL;
  if (url) return url;
  // In this run's folder (test/support/global-teardown.mjs stops it there), on a port of its own.
  const server = new EmbeddedPostgresServer({ dataDir: runFolder('pg', 'data'), port: await freePort() });
  process.env.SKILLHOST_TEST_DATABASE_URL = await connectOrWaitForStart(server);
  return process.env.SKILLHOST_TEST_DATABASE_URL;
}

/**
 * The shared server, started here or by another test worker of this run; a worker that finds the
 * folder held by one still starting it waits for it to run (parallel runs: `npm run test:unit`).
 */
async function connectOrWaitForStart(server: EmbeddedPostgresServer): Promise<string> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      return await server.connectOrStart();
    } catch (error) {
      if (!(error instanceof EmbeddedFolderInUseError) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const base = new URL(await serverUrl());
  const name = `skillhost_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base.toString() });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(base.toString());
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: base.toString() });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** Plain SQL against a test database, for assertions on the rows themselves. */
export async function query<T = Record<string, unknown>>(
  url: string,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}
