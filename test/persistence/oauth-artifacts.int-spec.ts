import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { UNUSED_CLIENT_DAYS } from '../../src/api/oauth/oauth-server.service.js';
import { createDataSource, runPendingMigrations } from '../../src/infra/database/data-source.js';
import { OAuthArtifactRepository } from '../../src/infra/database/oauth-artifact.repository.js';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';

/**
 * The OAuth server's sweep on a real database: expired artifacts go a day after they expire, and registered clients
 * go once they are older than UNUSED_CLIENT_DAYS and hold no live grant (open registration would otherwise grow the
 * table for ever); a client in use, or a young one, stays.
 */
describe(`${OAuthArtifactRepository.name}.deleteExpired`, () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let sut: OAuthArtifactRepository;

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = createDataSource(db.url, { poolSize: 2 });
    await dataSource.initialize();
    await runPendingMigrations(dataSource);
    sut = new OAuthArtifactRepository(dataSource);
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  const client = async (id: string, ageDays: number) => {
    await sut.upsert('Client', id, { client_id: id, client_name: id }, undefined);
    await query(db.url, 'UPDATE oauth_artifacts SET created_at = now() - make_interval(days => $2) WHERE id = $1', [
      id,
      ageDays,
    ]);
  };
  const grant = async (id: string, clientId: string, expiresInSeconds: number) => {
    await sut.upsert('Grant', id, { clientId, accountId: 'someone' }, expiresInSeconds);
  };

  it('deletes old clients without a live grant, and what expired over a day ago; keeps the rest', async () => {
    const old = UNUSED_CLIENT_DAYS + 1;
    await client('old-unused', old);
    await client('old-in-use', old);
    await grant('grant-live', 'old-in-use', 3600);
    await client('old-grant-ended', old);
    await grant('grant-ended', 'old-grant-ended', 60);
    await query(db.url, "UPDATE oauth_artifacts SET expires_at = now() - interval '1 hour' WHERE id = 'grant-ended'");
    await client('young-unused', UNUSED_CLIENT_DAYS - 1);
    await sut.upsert('AccessToken', 'token-long-expired', { grantId: 'gone' }, 60);
    await query(
      db.url,
      "UPDATE oauth_artifacts SET expires_at = now() - interval '2 days' WHERE id = 'token-long-expired'",
    );

    expect(await sut.deleteExpired(UNUSED_CLIENT_DAYS)).toBe(3);
    const left = await query<{ model: string; id: string }>(
      db.url,
      "SELECT model, id FROM oauth_artifacts WHERE model <> 'SkillhostShared' ORDER BY model, id",
    );
    expect(left).toEqual([
      { model: 'Client', id: 'old-in-use' },
      { model: 'Client', id: 'young-unused' },
      { model: 'Grant', id: 'grant-ended' },
      { model: 'Grant', id: 'grant-live' },
    ]);
  });
});
