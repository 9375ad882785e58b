import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { GroupsService } from '../../src/domain/users/groups.service.js';
import { MAX_PROVIDER_GROUPS } from '../../src/domain/users/group.types.js';
import { createDataSource, runPendingMigrations } from '../../src/infra/database/data-source.js';
import { GroupRepository } from '../../src/infra/database/group.repository.js';
import { UserRepository } from '../../src/infra/database/user.repository.js';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';

/**
 * `GroupsService.setProviderGroups`, what sign-in calls with the provider's groups claim, on a real database: it makes
 * the provider groups it needs, makes the user's provider memberships exactly the claim's, never touches groups admins
 * made, and writes one audit entry per change.
 */
describe(`${GroupsService.name}.setProviderGroups`, () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let sut: GroupsService;
  let users: UserRepository;
  const ADMIN = { id: null, name: null };

  beforeAll(async () => {
    db = await createTestDatabase();
    dataSource = createDataSource(db.url, { poolSize: 4 });
    await dataSource.initialize();
    await runPendingMigrations(dataSource);
    sut = new GroupsService(new GroupRepository(dataSource));
    users = new UserRepository(dataSource);
  });
  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  const groupNames = async (userId: string) =>
    (await sut.groupsOf(userId)).map((group) => `${group.source}:${group.name}`);

  it(
    "makes the claim's groups, then replaces the user's provider memberships and keeps the " + 'admin-made ones',
    async () => {
      const ann = (await users.create('ann', 'member'))!;
      const adminGroup = await sut.createGroup('finance', ADMIN);
      await sut.addMember(adminGroup.id, ann.id, ADMIN);

      expect(await sut.setProviderGroups(ann.id, ['finance', 'ops', 'ops', ' eng '])).toEqual({
        joined: ['eng', 'finance', 'ops'],
        left: [],
        ignored: [],
      });
      // A provider group may share its name with an admin group: they are two groups, each kept by its own side.
      expect(await groupNames(ann.id)).toEqual(['provider:eng', 'admin:finance', 'provider:finance', 'provider:ops']);

      expect(await sut.setProviderGroups(ann.id, ['ops', 'sales'])).toEqual({
        joined: ['sales'],
        left: ['eng', 'finance'],
        ignored: [],
      });
      expect(await groupNames(ann.id)).toEqual(['admin:finance', 'provider:ops', 'provider:sales']);

      expect(await sut.setProviderGroups(ann.id, [])).toEqual({ joined: [], left: ['ops', 'sales'], ignored: [] });
      expect(await groupNames(ann.id)).toEqual(['admin:finance']);
      // The groups stay for the other users who have them; an unchanged claim writes nothing.
      const audit = await query<{ action: string; details: { joined: string[]; left: string[] } }>(
        db.url,
        "SELECT action, details FROM audit_log WHERE action = 'group.provider-sync' ORDER BY id",
      );
      expect(audit.map((row) => [row.details.joined, row.details.left])).toEqual([
        [['eng', 'finance', 'ops'], []],
        [['sales'], ['eng', 'finance']],
        [[], ['ops', 'sales']],
      ]);
      await sut.setProviderGroups(ann.id, []);
      expect(
        await query(db.url, "SELECT count(*)::int AS n FROM audit_log WHERE action = 'group.provider-sync'"),
      ).toEqual([{ n: 3 }]);
    },
  );

  it("does not touch another user's provider memberships", async () => {
    const bea = (await users.create('bea', 'member'))!;
    const cid = (await users.create('cid', 'member'))!;
    await sut.setProviderGroups(bea.id, ['ops']);
    await sut.setProviderGroups(cid.id, ['ops', 'legal']);
    await sut.setProviderGroups(bea.id, []);
    expect(await groupNames(cid.id)).toEqual(['provider:legal', 'provider:ops']);
  });

  it('leaves out names no group may have and names past the limit, and reports them', async () => {
    const dee = (await users.create('dee', 'member'))!;
    const many = Array.from({ length: MAX_PROVIDER_GROUPS + 5 }, (_, i) => `g${String(i).padStart(3, '0')}`);
    const result = await sut.setProviderGroups(dee.id, ['', 'bad\u0000name', 'x'.repeat(129), 42, ...many]);
    expect(result.joined).toHaveLength(MAX_PROVIDER_GROUPS);
    expect(result.ignored.slice(0, 4)).toEqual(['', 'bad?name', 'x'.repeat(80), 'number']);
    expect(result.ignored).toHaveLength(4 + 5);
    expect(await groupNames(dee.id)).toHaveLength(MAX_PROVIDER_GROUPS);
  });

  it('applies two sign-ins of one user at once one after the other, and makes a new group once', async () => {
    const eve = (await users.create('eve', 'member'))!;
    const fay = (await users.create('fay', 'member'))!;
    await Promise.all([
      sut.setProviderGroups(eve.id, ['brand-new', 'a']),
      sut.setProviderGroups(eve.id, ['brand-new', 'b']),
      sut.setProviderGroups(fay.id, ['brand-new']),
    ]);
    const eveGroups = await groupNames(eve.id);
    expect([
      ['provider:a', 'provider:brand-new'],
      ['provider:b', 'provider:brand-new'],
    ]).toContainEqual(eveGroups);
    expect(
      await query(db.url, "SELECT count(*)::int AS n FROM groups WHERE name = 'brand-new' AND source = 'provider'"),
    ).toEqual([{ n: 1 }]);
  });

  it('is USER_NOT_FOUND for a user that does not exist', async () => {
    await expect(sut.setProviderGroups('00000000-0000-4000-8000-00000000beef', ['ops'])).rejects.toMatchObject({
      code: 'USER_NOT_FOUND',
    });
  });
});
