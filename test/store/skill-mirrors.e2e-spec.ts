import { renameSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { UsersService } from '../../src/domain/users/users.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { type GitRepo, gitRepo } from '../support/files/git-repo.js';
import { skillMd, tempTree, type TempTree } from '../support/files/skill-tree.js';

const report = (guide: string) => ({
  'skills/report/SKILL.md': skillMd({ name: 'report', description: 'Writes weekly reports.' }),
  'skills/report/references/guide.md': guide,
});

interface MirrorBody {
  name: string;
  origin: string;
  readOnly: boolean;
  interval: string;
  lastSuccessAt: string | null;
  lastErrorAt: string | null;
  lastError: string | null;
  lastResult: { skills: { name: string; version: number; created: boolean; held: boolean }[] } | null;
}

describe('mirrors: skills kept up to date from their source', () => {
  let tree: TempTree;
  let repo: GitRepo;
  let ctx: ChatTestContext;
  const keys: Record<string, string> = {};
  const http = () => request(ctx.app.getHttpServer());
  const as = (user: string) => ({ authorization: `Bearer ${keys[user]}` });
  const run = async (name: string): Promise<MirrorBody> =>
    (await http().post(`/v1/admin/skills/mirrors/${name}/run`).set(as('root')).expect(200)).body;
  const versions = async () =>
    (await http().get('/v1/skills/report/versions').set(as('root')).expect(200)).body as {
      current: number;
      versions: { version: number; source: { commit: string } | null }[];
    };
  const guide = async () =>
    (await http().get('/v1/skills/report/resources/references/guide.md').set(as('ann')).expect(200)).text;

  beforeAll(async () => {
    tree = tempTree('skillhost-mirrors-');
    repo = gitRepo(tree.path('repo'));
    repo.commit(report('guide, first edition'), 'first');
    repo.push();
    ctx = await startChatApp([], {
      'app.auth.mode': 'api_key',
      'app.skills.store_directory': tree.path('store'),
      // A configured mirror whose source is never there: listed read-only, its runs touch nothing of the tests'.
      'app.skills.mirrors': { configured: { source: `git+file://${tree.path('absent.git')}`, interval: '1h' } },
    });
    const users = ctx.app.get(UsersService);
    for (const [name, role] of [
      ['root', 'admin'],
      ['ann', 'member'],
    ] as const)
      keys[name] = (await users.createKey((await users.createUser(name, role)).id)).key;
  });

  afterAll(async () => {
    await ctx?.close();
    tree?.cleanup();
  });

  it('adds a mirror (admins only) and lists it beside the configuration’s, which is read-only', async () => {
    await http().get('/v1/admin/skills/mirrors').set(as('ann')).expect(403);
    const added = await http()
      .post('/v1/admin/skills/mirrors')
      .set(as('root'))
      .send({ name: 'team', source: `git+file://${repo.bare}#main:skills`, interval: '15m' })
      .expect(201);
    expect(added.body).toMatchObject({
      name: 'team',
      origin: 'api',
      readOnly: false,
      interval: '15m',
      lastError: null,
    });
    const listed = await http().get('/v1/admin/skills/mirrors').set(as('root')).expect(200);
    expect(listed.body.map((m: MirrorBody) => [m.name, m.origin, m.readOnly, m.interval])).toEqual([
      ['configured', 'config', true, '1h'],
      ['team', 'api', false, '15m'],
    ]);
    const removed = await http().delete('/v1/admin/skills/mirrors/configured').set(as('root')).expect(409);
    expect(removed.body.code).toBe('SKILL_MIRROR_CONFIGURED');
    const taken = await http()
      .post('/v1/admin/skills/mirrors')
      .set(as('root'))
      .send({ name: 'team', source: `git+file://${repo.bare}` })
      .expect(409);
    expect(taken.body.code).toBe('SKILL_MIRROR_NAME_TAKEN');
    const bad = await http()
      .post('/v1/admin/skills/mirrors')
      .set(as('root'))
      .send({ name: 'Bad Name', source: 'git+ssh://host/repo.git', interval: '5s' })
      .expect(400);
    expect(bad.body.code).toBe('VALIDATION_FAILED');
    expect(bad.body.message).toMatch(/name: .*source: .*interval: '5s'/);
  });

  it('imports the source; the same commit again is no new version; a new commit is one', async () => {
    // Added mirrors are due at once: the schedule may have run this one first, so `created` is not asserted here.
    const firstRun = await run('team');
    expect(firstRun.lastResult?.skills).toEqual([expect.objectContaining({ name: 'report', version: 1, held: false })]);
    expect(firstRun.lastSuccessAt).not.toBeNull();
    const again = await run('team');
    expect(again.lastResult?.skills).toEqual([expect.objectContaining({ version: 1, created: false })]);
    expect((await versions()).versions.map((v) => v.version)).toEqual([1]);

    const second = repo.commit(report('guide, second edition'), 'second');
    repo.push();
    const newer = await run('team');
    expect(newer.lastResult?.skills).toEqual([expect.objectContaining({ version: 2, created: true })]);
    const history = await versions();
    expect(history.current).toBe(2);
    expect(history.versions.find((v) => v.version === 2)?.source?.commit).toBe(second);
    expect(await guide()).toContain('second edition');
  });

  it('records a failing source in the admin view, and the last good version keeps serving', async () => {
    const before = (await http().get('/v1/admin/skills/mirrors').set(as('root'))).body.find(
      (m: MirrorBody) => m.name === 'team',
    ) as MirrorBody;
    renameSync(repo.bare, `${repo.bare}.moved`);
    try {
      const failed = await run('team');
      expect(failed.lastError).toMatch(/\S/);
      expect(failed.lastErrorAt).not.toBeNull();
      expect(failed.lastSuccessAt).toBe(before.lastSuccessAt);
      expect(failed.lastResult).toEqual(before.lastResult);
      expect((await versions()).current).toBe(2);
      expect(await guide()).toContain('second edition');
    } finally {
      renameSync(`${repo.bare}.moved`, repo.bare);
    }
  });

  it('keeps a skill an admin rolled back where it is: a new commit installs nothing', async () => {
    await http().post('/v1/admin/skills/report/rollback').set(as('root')).send({ version: 1 }).expect(200);
    repo.commit(report('guide, third edition'), 'third');
    repo.push();
    const held = await run('team');
    expect(held.lastResult?.skills).toEqual([expect.objectContaining({ version: 1, created: false, held: true })]);
    const history = await versions();
    expect([history.current, history.versions.map((v) => v.version)]).toEqual([1, [1, 2]]);
    expect(await guide()).toContain('first edition');
  });

  it('removes a mirror the API added; the skills it installed stay', async () => {
    await http().delete('/v1/admin/skills/mirrors/team').set(as('root')).expect(204);
    const gone = await http().post('/v1/admin/skills/mirrors/team/run').set(as('root')).expect(404);
    expect(gone.body).toMatchObject({ code: 'SKILL_MIRROR_NOT_FOUND', details: { mirrors: ['configured'] } });
    expect((await versions()).current).toBe(1);
  });
});
