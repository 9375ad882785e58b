import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { versionOf } from '@skillhost/core';
import pg from 'pg';
import type { DataSource } from 'typeorm';
import {
  type InstallKey,
  type NewVersion,
  SKILL_STORE_CHANNEL,
  type VersionInstall,
} from '../../src/domain/skills/store/skill-version-store.js';
import { createDataSource, runPendingMigrations } from '../../src/infra/database/data-source.js';
import { SkillStoreRepository } from '../../src/infra/database/skill-store.repository.js';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';

/** A skill's version as the store service hands it over: manifest, and each file's content by digest. */
function versionFor(name: string, body: string): NewVersion {
  const files = [
    { path: 'SKILL.md', bytes: Buffer.from(`---\nname: ${name}\ndescription: The ${name} skill.\n---\n\n${body}\n`) },
    { path: 'notes.md', bytes: Buffer.from(`notes of ${name}: ${body}`) },
  ];
  const version = versionOf(files);
  const digests = new Map(version.files.map((entry) => [entry.path, entry.digest]));
  return {
    name,
    digest: version.digest,
    manifest: version.files,
    totalBytes: version.totalBytes,
    blobs: new Map(files.map((file) => [digests.get(file.path)!, file.bytes])),
  };
}

const shared = (name: string): InstallKey => ({ scope: 'shared', ownerId: null, name });
const install = (key: InstallKey, body: string): VersionInstall => ({
  key,
  version: versionFor(key.name, body),
  source: { url: 'file:///repo.git', path: `skills/${key.name}` },
});

/**
 * SkillStoreRepository.installMany on a real database: a batch of installs is one transaction (all or nothing), one
 * generation bump and one notification; the quota counts a batch's new names together; a rolled-back skill is held
 * inside a batch; two batches over the same skills in opposite orders do not deadlock.
 */
describe(`${SkillStoreRepository.name}.installMany`, () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let other: DataSource;
  let sut: SkillStoreRepository;
  let listener: pg.Client;
  const heard: string[] = [];
  let alice: string;

  const generation = async () => (await sut.state()).generation;
  const installedNames = async () =>
    (await query<{ name: string }>(db.url, 'SELECT name FROM installed_skills ORDER BY name')).map((row) => row.name);
  const storedVersions = async (digests: string[]) =>
    (
      await query<{ n: number }>(db.url, 'SELECT count(*)::int AS n FROM skill_versions WHERE digest = ANY($1)', [
        digests,
      ])
    )[0].n;
  /** The notifications heard once a round trip on the listener's own connection shows it has read its socket. */
  const notifications = async () => {
    await listener.query('SELECT 1');
    return heard.splice(0);
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = createDataSource(db.url, { poolSize: 2 });
    other = createDataSource(db.url, { poolSize: 2 });
    await dataSource.initialize();
    await other.initialize();
    await runPendingMigrations(dataSource);
    sut = new SkillStoreRepository(dataSource);
    [{ id: alice }] = await query<{ id: string }>(
      db.url,
      "INSERT INTO users (name, role) VALUES ('alice', 'member') RETURNING id",
    );
    listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    listener.on('notification', (message) => heard.push(message.payload ?? ''));
    await listener.query(`LISTEN ${SKILL_STORE_CHANNEL}`);
  });
  afterAll(async () => {
    await listener?.end();
    await dataSource?.destroy();
    await other?.destroy();
    await db?.drop();
  });
  beforeEach(async () => {
    await notifications();
  });

  it('installs every skill of a batch with one generation bump and one notification', async () => {
    const before = await generation();
    const batch = [install(shared('alpha'), 'one'), install(shared('beta'), 'one'), install(shared('gamma'), 'one')];
    const answer = await sut.installMany(batch, { installedBy: null });
    expect(answer).toEqual({ installed: batch.map(() => ({ version: 1, created: true })) });
    expect(await installedNames()).toEqual(['alpha', 'beta', 'gamma']);
    expect(BigInt(await generation()) - BigInt(before)).toBe(1n);
    expect(await notifications()).toHaveLength(1);
    const history = await sut.history(shared('beta'));
    expect(history?.versions[0]).toMatchObject({ version: 1, source: { path: 'skills/beta' } });
    expect(await sut.blobs([...batch[1].version.blobs.keys()])).toEqual(batch[1].version.blobs);
  });

  it('changes nothing, and announces nothing, for a batch whose content is installed already', async () => {
    const before = await generation();
    const again = [install(shared('alpha'), 'one'), install(shared('beta'), 'one')];
    expect(await sut.installMany(again, { installedBy: null })).toEqual({
      installed: [
        { version: 1, created: false },
        { version: 1, created: false },
      ],
    });
    expect(await generation()).toBe(before);
    expect(await notifications()).toEqual([]);
  });

  it('answers results in the order asked, whatever order the skills are locked in', async () => {
    const batch = [install(shared('gamma'), 'two'), install(shared('alpha'), 'one'), install(shared('beta'), 'two')];
    expect(await sut.installMany(batch, { installedBy: null })).toEqual({
      installed: [
        { version: 2, created: true },
        { version: 1, created: false },
        { version: 2, created: true },
      ],
    });
    expect(await notifications()).toHaveLength(1);
  });

  it('rolls every install back when the database refuses the last one, naming that skill', async () => {
    // The database refuses versions of one skill; the batch's others are locked and written before it (by name).
    await query(
      db.url,
      `CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF (SELECT name FROM installed_skills WHERE id = NEW.installed_id) = 'zz-poison' THEN
           RAISE EXCEPTION 'poison refused';
         END IF;
         RETURN NEW;
       END $$`,
    );
    await query(
      db.url,
      'CREATE TRIGGER refuse_poison BEFORE INSERT ON installed_skill_versions FOR EACH ROW EXECUTE FUNCTION ' +
        'refuse_poison()',
    );
    try {
      const before = await generation();
      const batch = [
        install(shared('delta'), 'one'),
        install(shared('alpha'), 'three'),
        install(shared('zz-poison'), 'one'),
      ];
      const error = await sut.installMany(batch, { installedBy: null }).then(
        () => undefined,
        (thrown: Error) => thrown,
      );
      expect(error?.message).toBe(
        "Installing skill 'zz-poison' failed, so none of the 3 skill(s) was installed: poison refused",
      );
      expect(await installedNames()).toEqual(['alpha', 'beta', 'gamma']);
      expect((await sut.history(shared('alpha')))?.versions.map((version) => version.version)).toEqual([1]);
      expect(await storedVersions(batch.map((entry) => entry.version.digest))).toBe(0);
      expect(await generation()).toBe(before);
      expect(await notifications()).toEqual([]);
    } finally {
      await query(db.url, 'DROP TRIGGER refuse_poison ON installed_skill_versions');
      await query(db.url, 'DROP FUNCTION refuse_poison()');
    }
  });

  it("counts a batch's new personal skills together against the quota: past it, nothing is written", async () => {
    const personal = (name: string): InstallKey => ({ scope: 'personal', ownerId: alice, name });
    await sut.installMany([install(personal('mine'), 'one')], { installedBy: alice, maxPersonal: 2 });
    expect(await sut.personalCount(alice, ['mine', 'new-a'])).toEqual({ owned: 1, existing: ['mine'] });
    const before = await generation();
    const batch = [
      install(personal('mine'), 'two'),
      install(personal('new-a'), 'one'),
      install(personal('new-b'), 'one'),
    ];
    expect(await sut.installMany(batch, { installedBy: alice, maxPersonal: 2 })).toEqual({
      quotaReached: { owned: 1, adding: ['new-a', 'new-b'] },
    });
    expect(await sut.personalCount(alice, [])).toEqual({ owned: 1, existing: [] });
    expect((await sut.history(personal('mine')))?.versions).toHaveLength(1);
    expect(await storedVersions(batch.map((entry) => entry.version.digest))).toBe(0);
    expect(await generation()).toBe(before);
    // The existing one and one new one fit.
    expect(await sut.installMany(batch.slice(0, 2), { installedBy: alice, maxPersonal: 2 })).toEqual({
      installed: [
        { version: 2, created: true },
        { version: 1, created: true },
      ],
    });
  });

  it('holds a rolled-back skill inside a batch with keepRolledBack, and installs the others', async () => {
    expect(await sut.rollback(shared('gamma'), 1)).toMatchObject({ outcome: 'rolled-back' });
    await notifications();
    const batch = [install(shared('gamma'), 'three'), install(shared('beta'), 'three')];
    expect(await sut.installMany(batch, { installedBy: null, keepRolledBack: true })).toEqual({
      installed: [{ held: 1 }, { version: 3, created: true }],
    });
    expect((await sut.history(shared('gamma')))?.current).toBe(1);
    expect(await notifications()).toHaveLength(1);
    // Without it (an admin's own import) the new content becomes current.
    expect(await sut.installMany(batch.slice(0, 1), { installedBy: null })).toEqual({
      installed: [{ version: 3, created: true }],
    });
  });

  it('lets two batches over the same skills in opposite orders both finish (locks taken in one order)', async () => {
    const names = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'];
    const forward = names.map((name) => install(shared(name), 'forward'));
    const backward = names.map((name) => install(shared(name), 'backward')).reverse();
    const second = new SkillStoreRepository(other);
    const answers = await Promise.all([
      sut.installMany(forward, { installedBy: null }),
      second.installMany(backward, { installedBy: null }),
    ]);
    expect(answers.map((answer) => 'installed' in answer && answer.installed.length)).toEqual([6, 6]);
    const versions = await Promise.all(names.map(async (name) => (await sut.history(shared(name)))?.versions.length));
    expect(versions).toEqual([2, 2, 2, 2, 2, 2]);
  });

  it('lets two batches storing the same new content in opposite orders both finish, storing it once', async () => {
    const names = ['q1', 'q2', 'q3', 'q4', 'q5', 'q6'];
    const forward = names.map((name) => install(shared(name), 'same'));
    const backward = [...forward].reverse();
    const answers = await Promise.all([
      sut.installMany(forward, { installedBy: null }),
      new SkillStoreRepository(other).installMany(backward, { installedBy: null }),
    ]);
    const created = answers.flatMap((answer) =>
      'installed' in answer ? answer.installed.map((outcome) => 'created' in outcome && outcome.created) : [],
    );
    expect(created.filter(Boolean)).toHaveLength(6);
    expect(created).toHaveLength(12);
    expect(await storedVersions(forward.map((entry) => entry.version.digest))).toBe(6);
  });

  // Regression, fixed since the import-atomic tests found it. Was: the notification said `store undefined` and
  // requestReload answered undefined (TypeORM answers an UPDATE … RETURNING with [rows, affected]).
  it('announces the new generation, and a reload answers its own', async () => {
    await sut.installMany([install(shared('announced'), 'one')], { installedBy: null });
    expect(await notifications()).toEqual([`store ${await generation()}`]);
    const reload = await sut.requestReload();
    expect(reload).toBe((await sut.state()).reloadGeneration);
    expect(await notifications()).toEqual(['reload']);
  });

  it('refuses one skill twice in a batch, writing nothing', async () => {
    await expect(
      sut.installMany([install(shared('twice'), 'a'), install(shared('twice'), 'b')], { installedBy: null }),
    ).rejects.toThrow("installMany was given the shared skill 'twice' twice.");
    expect(await sut.history(shared('twice'))).toBeNull();
  });
});
