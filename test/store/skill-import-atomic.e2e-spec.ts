import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import request from 'supertest';
import { SKILL_STORE_CHANNEL } from '../../src/domain/skills/store/skill-version-store.js';
import { keysFor } from '../support/api-keys.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { query } from '../support/database.js';
import { type GitRepo, gitRepo } from '../support/files/git-repo.js';
import { serveGitOverHttp } from '../support/git-http-server.js';
import { skillMd, tempTree, type TempTree } from '../support/files/skill-tree.js';

/** Skill folders under `parent`, each a valid skill named as its folder (`body` tells versions apart). */
const skills = (parent: string, names: string[], body = 'first') =>
  Object.fromEntries(
    names.map((name) => [
      `${parent}/${name}/SKILL.md`,
      skillMd({ name, description: `The ${name} skill.`, body: `# ${name}\n\n${body}\n` }),
    ]),
  );

/**
 * An import of several skills is all or nothing: a refused skill, two of one name, the personal quota or a database
 * failure at the last skill installs none of them; a good import installs all of them with one generation bump and one
 * store notification; a mirror holds a rolled-back skill of the lot and updates the others.
 */
describe('importing several skills: all or nothing', () => {
  let tree: TempTree;
  let repo: GitRepo;
  let ctx: ChatTestContext;
  let listener: pg.Client;
  const heard: string[] = [];
  const keys: Record<string, string> = {};
  const http = () => request(ctx.app.getHttpServer());
  const as = (user: string) => ({ authorization: `Bearer ${keys[user]}` });
  const importAs = (user: string, source: string, path = '/v1/admin/skills/import') =>
    http().post(path).set(as(user)).send({ source });
  const installed = async () =>
    (
      await query<{ name: string; scope: string }>(
        ctx.db.url,
        'SELECT name, scope FROM installed_skills ORDER BY scope, name',
      )
    ).map((row) => `${row.scope}:${row.name}`);
  const generation = async () =>
    (await query<{ g: string }>(ctx.db.url, 'SELECT generation::text AS g FROM skill_store_state'))[0].g;
  /** The store's announcements since the last call (a round trip on the listener reads what has arrived). */
  const announcements = async () => {
    await listener.query('SELECT 1');
    return heard.splice(0).filter((payload) => payload.startsWith('store '));
  };
  /** Asserts that a refused import changed nothing: no skill, no generation, no announcement. */
  const expectUnchanged = async (before: { skills: string[]; generation: string }) => {
    expect(await installed()).toEqual(before.skills);
    expect(await generation()).toBe(before.generation);
    expect(await announcements()).toEqual([]);
  };
  const snapshot = async () => {
    await announcements();
    return { skills: await installed(), generation: await generation() };
  };

  beforeAll(async () => {
    tree = tempTree('skillhost-import-atomic-');
    repo = gitRepo(tree.path('repo'));
    repo.commit(
      {
        ...skills('team', ['alpha', 'beta', 'gamma']),
        ...skills('refused', ['alpha', 'beta']),
        // The third skill's name is not its folder's: the standard rules refuse it.
        'refused/gamma/SKILL.md': skillMd({ name: 'not-gamma', description: 'Misnamed.' }),
        'twins/a/pdf/SKILL.md': skillMd({ name: 'pdf', description: 'One pdf.' }),
        'twins/b/pdf/SKILL.md': skillMd({ name: 'pdf', description: 'Another pdf.' }),
        ...skills('broken', ['one', 'two', 'zz-last']),
        ...skills('mine', ['p-one', 'p-two', 'p-three']),
      },
      'first',
    );
    repo.push();
    ctx = await startChatApp([], {
      'app.auth.mode': 'api_key',
      'app.skills.store_directory': tree.path('store'),
      'app.skills.max_personal_skills': 2,
      // The member's imports read git over HTTP on 127.0.0.1, a loopback address members may reach only when listed.
      'app.skills.import.member_hosts': ['127.0.0.1'],
    });
    Object.assign(keys, await keysFor(ctx.app, { root: 'admin', ann: 'member' }));
    listener = new pg.Client({ connectionString: ctx.db.url });
    await listener.connect();
    listener.on('notification', (message) => heard.push(message.payload ?? ''));
    await listener.query(`LISTEN ${SKILL_STORE_CHANNEL}`);
  });
  afterAll(async () => {
    await listener?.end();
    await ctx?.close();
    tree?.cleanup();
  });

  // Regression, fixed since the import-atomic work found it. Was: alpha and beta stayed installed when gamma failed.
  it('installs nothing when the third skill is refused, and the error names it', async () => {
    const before = await snapshot();
    const answer = await importAs('root', `git+file://${repo.bare}#:refused`).expect(400);
    expect(answer.body.code).toBe('VALIDATION_FAILED');
    expect(answer.body.message).toContain("Skill 'refused/gamma' (3 of 3) was refused, so none of the 3 was installed");
    expect(answer.body.details).toMatchObject({ skill: 'refused/gamma', problems: expect.any(Array) });
    await expectUnchanged(before);
  });

  it('installs nothing when two skills of the import have one name, naming both', async () => {
    const before = await snapshot();
    const answer = await importAs('root', `git+file://${repo.bare}#:twins`).expect(400);
    expect(answer.body).toMatchObject({ code: 'VALIDATION_FAILED', details: { skill: 'twins/b/pdf' } });
    expect(answer.body.message).toContain("'twins/a/pdf' and 'twins/b/pdf' are both named 'pdf'");
    await expectUnchanged(before);
  });

  it("installs none of a member's new personal skills when together they pass the quota", async () => {
    const server = await serveGitOverHttp(repo.bare);
    try {
      const before = await snapshot();
      const answer = await importAs('ann', `git+${server.url}/bare.git#:mine`, '/v1/skills/import').expect(403);
      expect(answer.body).toMatchObject({
        code: 'SKILL_QUOTA_EXCEEDED',
        details: { name: 'p-two', names: ['p-one', 'p-three', 'p-two'], limit: 2 },
      });
      expect(answer.body.message).toContain(
        'ann has 0 personal skill(s) and the import adds 3 new ones (p-one, p-three, p-two), more than the 2 ' +
          "that [app.skills] max_personal_skills allows: 'p-two' is the first",
      );
      await expectUnchanged(before);
      // One of them fits, and then the other two still do not.
      await importAs('ann', `git+${server.url}/bare.git#:mine/p-one`, '/v1/skills/import').expect(201);
      const again = await importAs('ann', `git+${server.url}/bare.git#:mine`, '/v1/skills/import').expect(403);
      expect(again.body.details).toMatchObject({ names: ['p-three', 'p-two'] });
      expect(await installed()).toEqual([...before.skills, 'personal:p-one']);
    } finally {
      await server.close();
    }
  });

  it('installs nothing when the database fails at the last skill', async () => {
    await query(
      ctx.db.url,
      `CREATE FUNCTION refuse_last() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         IF (SELECT name FROM installed_skills WHERE id = NEW.installed_id) = 'zz-last' THEN
           RAISE EXCEPTION 'refused by the test';
         END IF;
         RETURN NEW;
       END $$`,
    );
    await query(
      ctx.db.url,
      'CREATE TRIGGER refuse_last BEFORE INSERT ON installed_skill_versions FOR EACH ROW EXECUTE FUNCTION ' +
        'refuse_last()',
    );
    try {
      const before = await snapshot();
      const answer = await importAs('root', `git+file://${repo.bare}#:broken`).expect(500);
      expect(answer.body.code).toBe('INTERNAL');
      await expectUnchanged(before);
      const versions = await query<{ n: number }>(
        ctx.db.url,
        "SELECT count(*)::int AS n FROM skill_versions WHERE name IN ('one', 'two', 'zz-last')",
      );
      expect(versions[0].n).toBe(0);
    } finally {
      await query(ctx.db.url, 'DROP TRIGGER refuse_last ON installed_skill_versions');
      await query(ctx.db.url, 'DROP FUNCTION refuse_last()');
    }
  });

  it('installs every skill of a good import with one generation bump and one store announcement', async () => {
    const before = await snapshot();
    const answer = await importAs('root', `git+file://${repo.bare}#:team`).expect(201);
    expect(answer.body.skills.map((skill: { name: string; version: number }) => [skill.name, skill.version])).toEqual([
      ['alpha', 1],
      ['beta', 1],
      ['gamma', 1],
    ]);
    expect(await installed()).toEqual([...before.skills, 'shared:alpha', 'shared:beta', 'shared:gamma']);
    expect(BigInt(await generation()) - BigInt(before.generation)).toBe(1n);
    expect(await announcements()).toEqual([`store ${await generation()}`]);
    const beta = await http().get('/v1/skills/beta/resources/SKILL.md').set(as('ann')).expect(200);
    expect(beta.text).toContain('first');
  });

  it('lets a mirror hold the rolled-back skill of the lot and update the others, in one bump', async () => {
    repo.commit(skills('team', ['alpha', 'beta'], 'second'), 'second');
    repo.push();
    await importAs('root', `git+file://${repo.bare}#:team`).expect(201);
    await http().post('/v1/admin/skills/alpha/rollback').set(as('root')).send({ version: 1 }).expect(200);
    repo.commit(skills('team', ['alpha', 'beta'], 'third'), 'third');
    repo.push();
    const before = await snapshot();
    await http()
      .post('/v1/admin/skills/mirrors')
      .set(as('root'))
      .send({ name: 'team', source: `git+file://${repo.bare}#main:team`, interval: '1h' })
      .expect(201);
    // Added mirrors are due at once: the schedule may have run it first, so `created` is not asserted.
    const run = await http().post('/v1/admin/skills/mirrors/team/run').set(as('root')).expect(200);
    expect(
      run.body.lastResult.skills.map((skill: { name: string; version: number; held: boolean }) => [
        skill.name,
        skill.version,
        skill.held,
      ]),
    ).toEqual([
      ['alpha', 1, true],
      ['beta', 3, false],
      ['gamma', 1, false],
    ]);
    expect(BigInt(await generation()) - BigInt(before.generation)).toBe(1n);
    expect(await announcements()).toHaveLength(1);
    expect((await http().get('/v1/skills/alpha/resources/SKILL.md').set(as('ann')).expect(200)).text).toContain(
      'first',
    );
    expect((await http().get('/v1/skills/beta/resources/SKILL.md').set(as('ann')).expect(200)).text).toContain('third');
  });
});
