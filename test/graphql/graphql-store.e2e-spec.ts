import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { UsersService } from '../../src/domain/users/users.service.js';
import { zipOf } from '../support/skill-archives.js';
import { skillMd, tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { failure, type GraphqlTestContext, startGraphqlApp } from './graphql-test-app.js';

/** The store over GraphQL: the twin of the REST routes (installing is REST's: it takes an upload). */
describe('GraphQL: skill versions, rollback, uninstall, switches and filters', () => {
  let tree: TempTree;
  let ctx: GraphqlTestContext;
  const keys = { admin: '', alice: '' };
  const as = (who: keyof typeof keys) => ctx.client(keys[who]);
  const install = async (who: keyof typeof keys, path: string, files: Record<string, string>) => {
    const archive = await zipOf(files);
    await request(ctx.app.getHttpServer())
      .post(path)
      .set('authorization', `Bearer ${keys[who]}`)
      .set('content-type', archive.contentType)
      .send(archive.body)
      .expect(201);
  };
  const notes = (body: string) => ({ 'notes/SKILL.md': skillMd({ name: 'notes', description: 'Team notes.', body }) });

  beforeAll(async () => {
    tree = tempTree();
    writeSkill(tree, 'skills', 'pdf', { description: 'Works with PDF files.' });
    ctx = await startGraphqlApp([tree.path('skills')], {
      'app.auth.mode': 'api_key',
      'app.skills.store_directory': tree.path('store'),
    });
    const users = ctx.app.get(UsersService);
    keys.admin = (await users.createKey((await users.createUser('root', 'admin')).id)).key;
    keys.alice = (await users.createKey((await users.createUser('alice', 'member')).id)).key;
    await install('admin', '/v1/admin/skills', notes('First.'));
    await install('admin', '/v1/admin/skills', notes('Second.'));
    await install('alice', '/v1/skills', { 'mine/SKILL.md': skillMd({ name: 'mine', description: "Alice's own." }) });
  });
  afterAll(async () => {
    await ctx?.close();
    tree?.cleanup();
  });

  it('skillVersions answers what GET /v1/skills/{name}/versions answers, personal first', async () => {
    const { skillVersions } = await as('alice').request<{ skillVersions: Record<string, unknown> }>(
      '{ skillVersions(name: "notes") { name scope current versions { version digest installedAt installedBy ' +
        'fileCount totalBytes source { url ref path commit digest } } } }',
    );
    const rest = await request(ctx.app.getHttpServer())
      .get('/v1/skills/notes/versions')
      .set('authorization', `Bearer ${keys.alice}`)
      .expect(200);
    expect(skillVersions).toEqual(rest.body);
    expect(skillVersions).toMatchObject({ name: 'notes', scope: 'shared', current: 2 });
    expect(
      (await as('alice').request<{ skillVersions: { scope: string } }>('{ skillVersions(name: "mine") { scope } }'))
        .skillVersions.scope,
    ).toBe('personal');
    expect(
      (await failure(as('admin').request('{ skillVersions(name: "mine") { scope } }'))).errors[0].extensions,
    ).toMatchObject({ code: 'SKILL_NOT_FOUND' });
  });

  it('rollbackSkill and setSkillEnabled are for admins; they change what everyone reads', async () => {
    expect(
      (await failure(as('alice').request('mutation { rollbackSkill(name: "notes", version: 1) { version } }')))
        .errors[0].extensions,
    ).toMatchObject({ code: 'FORBIDDEN' });
    const { rollbackSkill } = await as('admin').request<{ rollbackSkill: Record<string, unknown> }>(
      'mutation { rollbackSkill(name: "notes", version: 1) { name version digest changed } }',
    );
    expect(rollbackSkill).toMatchObject({ name: 'notes', version: 1, changed: true });
    expect(
      (await as('alice').request<{ skill: { name: string } }>('{ skill(name: "notes") { name } }')).skill.name,
    ).toBe('notes');
    expect(
      (await failure(as('admin').request('mutation { rollbackSkill(name: "notes", version: 0) { version } }')))
        .errors[0].extensions,
    ).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(
      (
        await as('admin').request<{ setSkillEnabled: unknown }>(
          'mutation { setSkillEnabled(name: "pdf", enabled: false) { name enabled } }',
        )
      ).setSkillEnabled,
    ).toEqual({ name: 'pdf', enabled: false });
    expect((await failure(as('alice').request('{ skill(name: "pdf") { name } }'))).errors[0].extensions).toMatchObject({
      code: 'SKILL_DISABLED',
    });
    await as('admin').request('mutation { setSkillEnabled(name: "pdf", enabled: true) { enabled } }');
  });

  it("filters: mySkillFilter / setMySkillFilter / setChatSkillFilter narrow the caller's catalogue", async () => {
    const { setMySkillFilter } = await as('alice').request<{ setMySkillFilter: unknown }>(
      'mutation { setMySkillFilter(exclude: ["pdf"]) { include exclude offered } }',
    );
    expect(setMySkillFilter).toEqual({ include: null, exclude: ['pdf'], offered: ['mine', 'notes'] });
    expect(
      (await as('alice').request<{ mySkillFilter: unknown }>('{ mySkillFilter { exclude offered } }')).mySkillFilter,
    ).toEqual({ exclude: ['pdf'], offered: ['mine', 'notes'] });
    const chatId = (
      await as('alice').request<{ createChat: { id: string } }>('mutation { createChat(title: "f") { id } }')
    ).createChat.id;
    const { setChatSkillFilter } = await as('alice').request<{ setChatSkillFilter: unknown }>(
      'mutation($id: ID!) { setChatSkillFilter(chatId: $id, include: ["no*"]) { include offered } }',
      { id: chatId },
    );
    expect(setChatSkillFilter).toEqual({ include: ['no*'], offered: ['notes'] });
    expect(
      (
        await failure(
          as('admin').request('mutation($id: ID!) { setChatSkillFilter(chatId: $id) { offered } }', { id: chatId }),
        )
      ).errors[0].extensions,
    ).toMatchObject({ code: 'CHAT_NOT_FOUND' });
    expect(
      (await failure(as('alice').request('mutation { setMySkillFilter(include: null) { offered } }'))).errors[0]
        .extensions,
    ).toMatchObject({ code: 'VALIDATION_FAILED' });
    await as('alice').request('mutation { setMySkillFilter { offered } }');
  });

  it('uninstallSkill: your own personal skill; a shared one only as an admin', async () => {
    expect(
      (await failure(as('alice').request('mutation { uninstallSkill(name: "notes", scope: "shared") }'))).errors[0]
        .extensions,
    ).toMatchObject({ code: 'FORBIDDEN' });
    expect(
      (await failure(as('admin').request('mutation { uninstallSkill(name: "mine") }'))).errors[0].extensions,
    ).toMatchObject({ code: 'SKILL_NOT_FOUND' });
    expect(
      (await as('alice').request<{ uninstallSkill: boolean }>('mutation { uninstallSkill(name: "mine") }'))
        .uninstallSkill,
    ).toBe(true);
    expect(
      (
        await as('admin').request<{ uninstallSkill: boolean }>(
          'mutation { uninstallSkill(name: "notes", scope: "shared") }',
        )
      ).uninstallSkill,
    ).toBe(true);
    expect(
      (
        await as('alice').request<{ skills: { skills: { name: string }[] } }>('{ skills { skills { name } } }')
      ).skills.skills.map((s) => s.name),
    ).toEqual(['pdf']);
  });

  it('reloadSkills answers the diff', async () => {
    writeSkill(tree, 'skills', 'late', { description: 'Late.' });
    const { reloadSkills } = await as('admin').request<{ reloadSkills: { diff: unknown } }>(
      'mutation { reloadSkills { diff { added { name digest source } removed { name } changed { name } unchanged } } }',
    );
    expect(reloadSkills.diff).toEqual({
      added: [{ name: 'late', digest: expect.stringMatching(/^sha256:/), source: tree.path('skills') }],
      removed: [],
      changed: [],
      unchanged: 1,
    });
  });
});
