import { rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import request from 'supertest';
import { UsersService } from '../../src/domain/users/users.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { query } from '../support/database.js';
import {
  multipartOf,
  tarGzOf,
  type UploadBody,
  type UploadFiles,
  zipOf,
  zipWithChangedByteOf,
} from '../support/skill-archives.js';
import { skillMd, tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { RecordingLogger } from './http-client.js';
import {
  abortedUpload,
  filePart,
  filesUnder,
  rawMultipart,
  type RawPart,
  storeCounts,
  waitForLockWaiters,
} from './skill-store-attacks.js';

/**
 * The skill store as a hostile client or a careless operator meets it: one user reaching for
 * another's personal skill by every front door, names and paths that mean something else after
 * normalising, malformed and cut uploads, races, odd numbers and filters, and the pinned versions
 * of chats while skills are switched off, pulled, re-installed or edited on disk. Every refusal is
 * checked for its status and code and for nothing stored; what is found broken is `it.failing`
 * with a `// BUG:` line, to be flipped when fixed.
 */

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** A one-skill upload: `<name>/SKILL.md` (and any other files under `<name>/`). */
const skillFiles = (name: string, extra: UploadFiles = {}, body?: string): UploadFiles => ({
  [`${name}/SKILL.md`]: skillMd({ name, description: `The ${name} skill. Use when a test needs ${name}.`, body }),
  ...Object.fromEntries(Object.entries(extra).map(([path, content]) => [`${name}/${path}`, content])),
});

interface Users {
  keys: Record<string, string>;
}

/** Users root (admin), ann, bob and eve (members), with one API key each. */
async function createUsers(ctx: ChatTestContext): Promise<Users> {
  const users = ctx.app.get(UsersService);
  const keys: Record<string, string> = {};
  for (const [name, role] of [
    ['root', 'admin'],
    ['ann', 'member'],
    ['bob', 'member'],
    ['eve', 'member'],
  ] as const) {
    keys[name] = (await users.createKey((await users.createUser(name, role)).id)).key;
  }
  return { keys };
}

/** The requests every block makes, bound to one app and its users. */
function clientOf(context: () => ChatTestContext, users: () => Users) {
  const http = () => request(context().app.getHttpServer());
  const as = (user: string) => ({ authorization: `Bearer ${users().keys[user]}` });
  return {
    http,
    as,
    upload: (path: string, user: string, archive: UploadBody) =>
      http().post(path).set(as(user)).set('content-type', archive.contentType).send(archive.body),
    newChat: async (user: string) =>
      (await http().post('/v1/chats').set(as(user)).send({}).expect(201)).body.id as string,
    tool: async (user: string, chat: string, name: string, args: Record<string, unknown>) =>
      (await http().post(`/v1/chats/${chat}/tools/${name}`).set(as(user)).send(args).expect(200)).body,
    gql: async (user: string, document: string, variables: Record<string, unknown> = {}) =>
      (await http().post('/graphql').set(as(user)).send({ query: document, variables }).expect(200)).body,
    names: async (user: string) =>
      ((await http().get('/v1/skills').set(as(user)).expect(200)).body.skills as { name: string }[]).map(
        (skill) => skill.name,
      ),
    counts: () => storeCounts(context().db.url),
  };
}

/**
 * For a block: an app with API keys and a store folder in a temp tree that `populate` fills (its
 * skills in `skills/`), `overrides` on top, and the four users; closed and removed after the block.
 */
function useStoreApp(populate: (tree: TempTree) => void, overrides: Record<string, unknown> = {}) {
  let tree: TempTree | undefined;
  let ctx: ChatTestContext | undefined;
  let users: Users | undefined;
  beforeAll(async () => {
    tree = tempTree();
    populate(tree);
    ctx = await startChatApp([tree.path('skills')], {
      'app.auth.mode': 'api_key',
      'app.skills.store_directory': tree.path('store'),
      ...overrides,
    });
    users = await createUsers(ctx);
  });
  afterAll(async () => {
    await ctx?.close();
    tree?.cleanup();
  });
  return {
    c: clientOf(
      () => ctx!,
      () => users!,
    ),
    get tree() {
      return tree!;
    },
    get ctx() {
      return ctx!;
    },
  };
}

describe('the skill store against a hostile client', () => {
  let tree: TempTree;
  let ctx: ChatTestContext;
  let users: Users;
  let port: number;
  const logger = new RecordingLogger();
  const c = clientOf(
    () => ctx,
    () => users,
  );
  const { http, as, upload, newChat, tool, gql, names, counts } = c;

  beforeAll(async () => {
    tree = tempTree();
    writeSkill(tree, 'skills', 'pdf', { description: 'Works with PDF files.', body: 'Use the PDF tools.' });
    tree.write('skills/pdf/references/forms.md', 'forms');
    writeSkill(tree, 'skills', 'drift', { description: 'Drifts on disk.', body: 'DRIFT-BODY-ONE' });
    tree.write('skills/drift/references/notes.md', 'DRIFT-REF-ONE');
    writeSkill(tree, 'skills', 'takeover', { description: 'On disk first.', body: 'TAKEOVER-DISK' });
    ctx = await startChatApp(
      [tree.path('skills')],
      { 'app.auth.mode': 'api_key', 'app.skills.store_directory': tree.path('store') },
      undefined,
      {},
      logger,
    );
    users = await createUsers(ctx);
    await ctx.app.listen(0, '127.0.0.1');
    port = (ctx.app.getHttpServer().address() as AddressInfo).port;
  });
  afterAll(async () => {
    await ctx?.close();
    tree?.cleanup();
  });

  describe("a personal skill stays its owner's", () => {
    let annChat: string;
    let annDigest: string;

    beforeAll(async () => {
      const installed = await upload(
        '/v1/skills',
        'ann',
        await zipOf(skillFiles('diary', { 'references/secret.md': 'ANN-SECRET-1' }, 'ANN-BODY-SECRET')),
      ).expect(201);
      annDigest = installed.body.digest;
      annChat = await newChat('ann');
      const activated = await tool('ann', annChat, 'skills.activate', { name: 'diary' });
      expect(activated.toolCard.summary.version).toBe(annDigest);
    });

    it('another user gets SKILL_NOT_FOUND on every REST read, exactly as for a skill that does not exist', async () => {
      const missing = await http().get('/v1/skills/no-such-skill').set(as('bob')).expect(404);
      for (const path of [
        '/v1/skills/diary',
        '/v1/skills/diary/body',
        '/v1/skills/diary/resources',
        '/v1/skills/diary/resources?type=references',
        '/v1/skills/diary/resources/references/secret.md',
        '/v1/skills/diary/resources/SKILL.md',
      ]) {
        const answer = await http().get(path).set(as('bob'));
        expect({ path, status: answer.status, code: answer.body.code }).toEqual({
          path,
          status: 404,
          code: 'SKILL_NOT_FOUND',
        });
        expect(answer.body.details.available).toEqual(missing.body.details.available);
        expect(answer.text).not.toMatch(/ANN-|secret\.md/);
      }
      expect(await names('bob')).not.toContain('diary');
      for (const format of ['json', 'xml', 'markdown']) {
        expect(
          (await http().get(`/v1/skills-catalogue?format=${format}`).set(as('bob')).expect(200)).text,
        ).not.toContain('diary');
      }
      expect((await http().get('/v1/me/skills').set(as('bob')).expect(200)).body.offered).not.toContain('diary');
      // The admin is a user too: the personal skill is in the admin view, not in the admin's catalogue.
      expect((await http().get('/v1/skills/diary').set(as('root')).expect(404)).body.code).toBe('SKILL_NOT_FOUND');
      expect(
        (await http().get('/v1/skills/diary/resources/references/secret.md').set(as('ann')).expect(200)).text,
      ).toBe('ANN-SECRET-1');
    });

    it('another user cannot see it through GraphQL: skill, skillResource, skills, catalogue, chatContext', async () => {
      const skill = await gql('bob', 'query($n: String!) { skill(name: $n) { name description } }', { n: 'diary' });
      expect(skill.errors[0].extensions).toMatchObject({ code: 'SKILL_NOT_FOUND', status: 404 });
      const resource = await gql(
        'bob',
        'query($n: String!, $p: String!) { skillResource(name: $n, path: $p) { content } }',
        { n: 'diary', p: 'references/secret.md' },
      );
      expect(resource.errors[0].extensions).toMatchObject({ code: 'SKILL_NOT_FOUND', status: 404 });
      expect(JSON.stringify(resource)).not.toContain('ANN-');
      const listed = await gql('bob', '{ skills { skills { name } } catalogue(format: "markdown") }');
      expect(listed.data.skills.skills.map((s: { name: string }) => s.name)).not.toContain('diary');
      expect(listed.data.catalogue).not.toContain('diary');
      const bobChat = await newChat('bob');
      const context = await gql('bob', 'query($id: ID!) { chatContext(id: $id) { systemPrompt skills { offered } } }', {
        id: bobChat,
      });
      expect(context.data.chatContext.systemPrompt).not.toContain('diary');
      expect(context.data.chatContext.skills.offered).not.toContain('diary');
      const annContext = await gql('bob', 'query($id: ID!) { chatContext(id: $id) { systemPrompt } }', { id: annChat });
      expect(annContext.errors[0].extensions).toMatchObject({ code: 'CHAT_NOT_FOUND' });
      const activated = await gql(
        'bob',
        'mutation($id: ID!) { activateSkill(chatId: $id, name: "diary") { toolCard { status output } ' +
          'activatedSkills { name } } }',
        { id: bobChat },
      );
      expect(activated.data.activateSkill).toEqual({
        toolCard: { status: 'error', output: expect.stringContaining('SKILL_NOT_FOUND') },
        activatedSkills: [],
      });
      expect(activated.data.activateSkill.toolCard.output).not.toContain('ANN-');
    });

    it(
      "another user's chats cannot activate, read or list it, and their context and prompt never " + 'name it',
      async () => {
        const bobChat = await newChat('bob');
        for (const [name, args] of [
          ['skills.activate', { name: 'diary' }],
          ['skills.readResource', { name: 'diary', path: 'references/secret.md' }],
          ['skills.listResources', { name: 'diary' }],
        ] as const) {
          const run = await tool('bob', bobChat, name, args);
          expect({ name, status: run.toolCard.status, activated: run.activatedSkills }).toEqual({
            name,
            status: 'error',
            activated: [],
          });
          expect(run.toolCard.output).toContain('SKILL_NOT_FOUND');
          expect(run.toolCard.output).not.toMatch(/ANN-|secret\.md/);
        }
        const context = await http().get(`/v1/chats/${bobChat}/context`).set(as('bob')).expect(200);
        expect(context.body.systemPrompt).not.toContain('diary');
        expect(context.body.skills.offered).not.toContain('diary');
        expect(context.body.skills.filteredOut).not.toContain('diary');
        // Even a filter naming it offers it not.
        const narrowed = await http()
          .put(`/v1/chats/${bobChat}/skills`)
          .set(as('bob'))
          .send({ include: ['diary', 'dia*'] })
          .expect(200);
        expect(narrowed.body.offered).toEqual([]);
      },
    );

    it(
      "another user cannot read or change the owner's chat: its context, filter and tools are CHAT_NOT_FOUND with " +
        'nothing stored',
      async () => {
        const messages = async () =>
          (
            await query<{ n: number }>(ctx.db.url, 'SELECT count(*)::int AS n FROM chat_messages WHERE chat_id = $1', [
              annChat,
            ])
          )[0].n;
        const before = await messages();
        expect((await http().get(`/v1/chats/${annChat}/context`).set(as('bob')).expect(404)).body.code).toBe(
          'CHAT_NOT_FOUND',
        );
        expect((await http().get(`/v1/chats/${annChat}/skills`).set(as('bob')).expect(404)).body.code).toBe(
          'CHAT_NOT_FOUND',
        );
        expect(
          (await http().put(`/v1/chats/${annChat}/skills`).set(as('bob')).send({ include: [] }).expect(404)).body.code,
        ).toBe('CHAT_NOT_FOUND');
        const read = await http()
          .post(`/v1/chats/${annChat}/tools/skills.readResource`)
          .set(as('bob'))
          .send({ name: 'diary', path: 'references/secret.md' })
          .expect(404);
        expect(read.body.code).toBe('CHAT_NOT_FOUND');
        expect(read.text).not.toContain('ANN-');
        expect(await messages()).toBe(before);
        expect(
          (
            await query<{ skill_filter: unknown }>(ctx.db.url, 'SELECT skill_filter FROM chats WHERE id = $1', [
              annChat,
            ])
          )[0].skill_filter,
        ).toBeNull();
      },
    );

    it(
      "another user cannot list its versions or uninstall it, and the admin's shared routes do not " + 'reach it',
      async () => {
        for (const scope of ['', '?scope=personal', '?scope=shared']) {
          const answer = await http().get(`/v1/skills/diary/versions${scope}`).set(as('bob')).expect(404);
          expect(answer.body.code).toBe('SKILL_NOT_FOUND');
          expect(answer.text).not.toContain(annDigest);
        }
        expect((await http().delete('/v1/skills/diary').set(as('bob')).expect(404)).body.code).toBe('SKILL_NOT_FOUND');
        expect(
          (await http().post('/v1/admin/skills/diary/rollback').set(as('root')).send({ version: 1 }).expect(404)).body
            .code,
        ).toBe('SKILL_NOT_FOUND');
        expect((await http().delete('/v1/admin/skills/diary').set(as('root')).expect(404)).body.code).toBe(
          'SKILL_NOT_FOUND',
        );
        const own = await http().get('/v1/skills/diary/versions').set(as('ann')).expect(200);
        expect(own.body).toMatchObject({
          name: 'diary',
          scope: 'personal',
          current: 1,
          versions: [expect.objectContaining({ version: 1, digest: annDigest, installedBy: 'ann' })],
        });
        expect(
          (await tool('ann', annChat, 'skills.readResource', { name: 'diary', path: 'references/secret.md' })).toolCard
            .output,
        ).toBe('ANN-SECRET-1');
      },
    );

    it(
      'two users with a personal skill of one name each get their own, in REST, in chats and in ' + 'versions',
      async () => {
        const bobs = await upload(
          '/v1/skills',
          'bob',
          multipartOf(skillFiles('diary', { 'references/secret.md': 'BOB-SECRET-1' }, 'BOB-BODY')),
        ).expect(201);
        expect(bobs.body).toMatchObject({ name: 'diary', scope: 'personal', owner: 'bob', version: 1, warnings: [] });
        expect(bobs.body.digest).not.toBe(annDigest);
        expect(
          (await http().get('/v1/skills/diary/resources/references/secret.md').set(as('bob')).expect(200)).text,
        ).toBe('BOB-SECRET-1');
        expect(
          (await http().get('/v1/skills/diary/resources/references/secret.md').set(as('ann')).expect(200)).text,
        ).toBe('ANN-SECRET-1');
        const bobChat = await newChat('bob');
        const activated = await tool('bob', bobChat, 'skills.activate', { name: 'diary' });
        expect(activated.toolCard.output).toContain('BOB-BODY');
        expect(activated.toolCard.output).not.toContain('ANN-');
        expect(activated.toolCard.summary.version).toBe(bobs.body.digest);
        expect(
          (await tool('ann', annChat, 'skills.readResource', { name: 'diary', path: 'references/secret.md' })).toolCard
            .output,
        ).toBe('ANN-SECRET-1');
        expect((await http().get('/v1/skills/diary/versions').set(as('bob')).expect(200)).body.versions).toEqual([
          expect.objectContaining({ digest: bobs.body.digest, installedBy: 'bob' }),
        ]);
        await http().delete('/v1/skills/diary').set(as('bob')).expect(204);
        expect(
          (await tool('bob', bobChat, 'skills.readResource', { name: 'diary', path: 'references/secret.md' })).toolCard
            .output,
        ).toContain('SKILL_NOT_FOUND');
        expect(
          (await http().get('/v1/skills/diary/resources/references/secret.md').set(as('ann')).expect(200)).text,
        ).toBe('ANN-SECRET-1');
      },
    );

    it(
      "switching a personal skill's name off answers SKILL_DISABLED to its owner and SKILL_NOT_FOUND to everyone " +
        'else',
      async () => {
        expect(
          (await http().put('/v1/admin/skills/diary/enabled').set(as('root')).send({ enabled: false }).expect(200))
            .body,
        ).toEqual({ name: 'diary', enabled: false });
        try {
          expect((await http().get('/v1/skills/diary').set(as('ann')).expect(403)).body.code).toBe('SKILL_DISABLED');
          expect(
            (await tool('ann', annChat, 'skills.readResource', { name: 'diary', path: 'references/secret.md' }))
              .toolCard.output,
          ).toContain('SKILL_DISABLED');
          expect((await http().get('/v1/skills/diary').set(as('eve')).expect(404)).body.code).toBe('SKILL_NOT_FOUND');
          const eveChat = await newChat('eve');
          expect((await tool('eve', eveChat, 'skills.activate', { name: 'diary' })).toolCard.output).toContain(
            'SKILL_NOT_FOUND',
          );
          expect(
            (await http().put('/v1/admin/skills/diary/enabled').set(as('ann')).send({ enabled: true }).expect(403)).body
              .code,
          ).toBe('FORBIDDEN');
        } finally {
          await http().put('/v1/admin/skills/diary/enabled').set(as('root')).send({ enabled: true }).expect(200);
        }
        expect(
          (await http().get('/v1/skills/diary/resources/references/secret.md').set(as('ann')).expect(200)).text,
        ).toBe('ANN-SECRET-1');
      },
    );

    it(
      'a personal skill named like a shared one is installed but not offered; when the shared one goes, only its ' +
        'owner gets it',
      async () => {
        await upload(
          '/v1/admin/skills',
          'root',
          await zipOf(skillFiles('handbook', { 'references/h.md': 'TEAM-HANDBOOK' })),
        ).expect(201);
        const mine = await upload(
          '/v1/skills',
          'ann',
          await zipOf(skillFiles('handbook', { 'references/h.md': 'ANN-HANDBOOK' })),
        ).expect(201);
        expect(mine.body.warnings).toEqual([
          expect.stringContaining("A skill named 'handbook' from store wins over this one"),
        ]);
        expect(
          (await http().get('/v1/skills/handbook/resources/references/h.md').set(as('ann')).expect(200)).text,
        ).toBe('TEAM-HANDBOOK');
        expect(
          (await http().get('/v1/skills/handbook/resources/references/h.md').set(as('bob')).expect(200)).text,
        ).toBe('TEAM-HANDBOOK');
        await http().delete('/v1/admin/skills/handbook').set(as('root')).expect(204);
        expect(
          (await http().get('/v1/skills/handbook/resources/references/h.md').set(as('ann')).expect(200)).text,
        ).toBe('ANN-HANDBOOK');
        const bob = await http().get('/v1/skills/handbook/resources/references/h.md').set(as('bob')).expect(404);
        expect(bob.body.code).toBe('SKILL_NOT_FOUND');
        expect(bob.text).not.toContain('ANN-');
        await http().delete('/v1/skills/handbook').set(as('ann')).expect(204);
      },
    );

    it('a personal skill named like a disk skill never shadows it, for its owner either', async () => {
      const mine = await upload(
        '/v1/skills',
        'ann',
        await zipOf(skillFiles('pdf', { 'references/forms.md': 'ANN-FORMS' })),
      ).expect(201);
      expect(mine.body.warnings).toEqual([expect.stringContaining("A skill named 'pdf' from")]);
      expect((await http().get('/v1/skills/pdf/resources/references/forms.md').set(as('ann')).expect(200)).text).toBe(
        'forms',
      );
      const chat = await newChat('ann');
      expect(
        (await tool('ann', chat, 'skills.readResource', { name: 'pdf', path: 'references/forms.md' })).toolCard.output,
      ).toBe('forms');
      await http().delete('/v1/skills/pdf').set(as('ann')).expect(204);
    });
  });

  describe('names', () => {
    const invalid: [string, UploadFiles][] = [
      ['upper case', { 'Caps/SKILL.md': skillMd({ name: 'Caps' }) }],
      ['65 characters', { [`${'a'.repeat(65)}/SKILL.md`]: skillMd({ name: 'a'.repeat(65) }) }],
      ["'..' as the name (no top folder)", { 'SKILL.md': skillMd({ name: '..' }) }],
      ["'.' as the name (no top folder)", { 'SKILL.md': skillMd({ name: "'.'" }) }],
      ['a slash in the name', { 'SKILL.md': skillMd({ name: 'a/b' }) }],
      ['a NUL in the name', { 'SKILL.md': skillMd({ name: '"a\\0b"' }) }],
      ['a space in the name', { 'SKILL.md': skillMd({ name: '"a b"' }) }],
      ['a newline in the name', { 'SKILL.md': skillMd({ name: '"a\\nb"' }) }],
      ['no name at all', { 'SKILL.md': skillMd({}) }],
      ['a top folder that is not the name', { 'other/SKILL.md': skillMd({ name: 'named' }) }],
    ];
    it.each(invalid)('%s: 400 VALIDATION_FAILED, nothing stored', async (_case, files) => {
      const before = await counts();
      const answer = await upload('/v1/admin/skills', 'root', await zipOf(files)).expect(400);
      expect(answer.body.code).toBe('VALIDATION_FAILED');
      expect(answer.body.details.problems.length).toBeGreaterThan(0);
      expect(await counts()).toEqual(before);
    });

    it('a fullwidth name is installed under its NFKC form, and found by either spelling', async () => {
      const installed = await upload(
        '/v1/admin/skills',
        'root',
        await zipOf({ 'ｗｉｄｅ/SKILL.md': skillMd({ name: 'ｗｉｄｅ' }) }),
      ).expect(201);
      expect(installed.body.name).toBe('wide');
      expect(
        (
          await query<{ name: string }>(
            ctx.db.url,
            "SELECT name FROM installed_skills WHERE name LIKE '%ｗｉｄｅ%' OR name = 'wide'",
          )
        ).map((row) => row.name),
      ).toEqual(['wide']);
      expect((await http().get('/v1/skills/wide').set(as('bob')).expect(200)).body.name).toBe('wide');
      expect(
        (
          await http()
            .get(`/v1/skills/${encodeURIComponent('ｗｉｄｅ')}`)
            .set(as('bob'))
            .expect(200)
        ).body.name,
      ).toBe('wide');
    });

    // BUG: the store routes compare the raw URL name, while every read normalises it (NFKC): GET finds 'ｗｉｄｅ', versions
    // and uninstall answer 404 — SkillStoreController.versions/uninstall*/rollback pass `name` unnormalised to the
    // repository.
    it('names are NFKC-normalised on the store routes too: versions and uninstall find what GET finds', async () => {
      await upload(
        '/v1/admin/skills',
        'root',
        await zipOf({ 'ｌａｒｇｅ/SKILL.md': skillMd({ name: 'ｌａｒｇｅ' }) }),
      ).expect(201);
      expect(
        (
          await http()
            .get(`/v1/skills/${encodeURIComponent('ｌａｒｇｅ')}`)
            .set(as('bob'))
            .expect(200)
        ).body.name,
      ).toBe('large');
      expect(
        (
          await http()
            .get(`/v1/skills/${encodeURIComponent('ｌａｒｇｅ')}/versions`)
            .set(as('bob'))
            .expect(200)
        ).body,
      ).toMatchObject({ name: 'large', current: 1 });
      await http()
        .delete(`/v1/admin/skills/${encodeURIComponent('ｌａｒｇｅ')}`)
        .set(as('root'))
        .expect(204);
    });

    const routes: [string, string, string, Record<string, unknown> | null][] = [
      ['versions', 'GET', '/v1/skills/%s/versions', null],
      ['uninstall a personal skill', 'DELETE', '/v1/skills/%s', null],
      ['uninstall a shared skill', 'DELETE', '/v1/admin/skills/%s', null],
      ['rollback', 'POST', '/v1/admin/skills/%s/rollback', { version: 1 }],
      ['switch', 'PUT', '/v1/admin/skills/%s/enabled', { enabled: false }],
      ['detail', 'GET', '/v1/skills/%s', null],
    ];
    const send = async (method: string, path: string, body: Record<string, unknown> | null) => {
      const call = http()[method.toLowerCase() as 'get' | 'post' | 'put' | 'delete'](path).set(as('root'));
      return body === null ? await call : await call.send(body);
    };

    it.each(routes)(
      '%s: a 90-character name that is no skill is SKILL_NOT_FOUND',
      async (_route, method, path, body) => {
        const before = await counts();
        const answer = await send(method, path.replace('%s', 'n'.repeat(90)), body);
        expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 404, code: 'SKILL_NOT_FOUND' });
        expect(await counts()).toEqual(before);
      },
    );

    // BUG: a NUL in the name reaches PostgreSQL (invalid byte sequence 0x00) and answers 500 — the store routes' `name`
    // params are not checked (AppValidationPipe skips params; SkillStoreRepository runs the query as given).
    it.each(
      routes.filter(([route]) =>
        ['versions', 'uninstall a personal skill', 'uninstall a shared skill', 'rollback'].includes(route),
      ),
    )('%s: a name with a NUL is SKILL_NOT_FOUND, not a 500', async (_route, method, path, body) => {
      const before = await counts();
      const answer = await send(method, path.replace('%s', 'a%00b'), body);
      expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 404, code: 'SKILL_NOT_FOUND' });
      expect(await counts()).toEqual(before);
    });

    it.each(routes.filter(([route]) => ['switch', 'detail'].includes(route)))(
      '%s: a name with a NUL is SKILL_NOT_FOUND',
      async (_route, method, path, body) => {
        const answer = await send(method, path.replace('%s', 'a%00b'), body);
        expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 404, code: 'SKILL_NOT_FOUND' });
      },
    );
  });

  describe('multipart uploads', () => {
    const skill = (name: string) => filePart('SKILL.md', skillMd({ name }));
    const attacks: [string, RawPart][] = [
      ['../evil.md', filePart('../evil.md', 'boom')],
      ['../../evil.md', filePart('../../evil.md', 'boom')],
      ['references/../../evil.md', filePart('references/../../evil.md', 'boom')],
      ['./../evil.md', filePart('./../evil.md', 'boom')],
      ['..', filePart('..', 'boom')],
      ['/etc/evil.md', filePart('/etc/evil.md', 'boom')],
      ['//server/share/evil.md', filePart('//server/share/evil.md', 'boom')],
      ['C:\\evil.md', filePart('C:\\evil.md', 'boom')],
      ['C:evil.md', filePart('C:evil.md', 'boom')],
      ['c:/evil.md', filePart('c:/evil.md', 'boom')],
      ['references\\evil.md', filePart('references\\evil.md', 'boom')],
      ['..\\evil.md', filePart('..\\evil.md', 'boom')],
      ['a raw NUL byte', filePart(Buffer.from('references/a\u0000b.md'), 'boom')],
      ['a raw control byte', filePart(Buffer.from('references/a\u0001b.md'), 'boom')],
      ['an escape character', filePart(Buffer.from('references/\u001b[31mred.md'), 'boom')],
      ['an empty filename', filePart('', 'boom')],
      ['17 levels deep', filePart(`${'d/'.repeat(17)}deep.md`, 'boom')],
      ['a 1,100-byte path', filePart(`references/${'x'.repeat(1100)}.md`, 'boom')],
      ['the same path twice', filePart('SKILL.md', skillMd({ name: 'attack' }))],
      ['a file that is also a folder', filePart('SKILL.md/x.md', 'boom')],
      [
        'a percent-encoded ../ in filename*',
        {
          headers: 'Content-Disposition: form-data; name="file"; filename*=UTF-8\'\'..%2F..%2Fevil.md',
          content: 'boom',
        },
      ],
      [
        'a percent-encoded absolute path in filename*',
        {
          headers: 'Content-Disposition: form-data; name="file"; filename*=UTF-8\'\'%2Fetc%2Fevil.md',
          content: 'boom',
        },
      ],
      [
        'a percent-encoded NUL in filename*',
        { headers: 'Content-Disposition: form-data; name="file"; filename*=UTF-8\'\'a%00b.md', content: 'boom' },
      ],
      ['a form field', { headers: 'Content-Disposition: form-data; name="note"', content: 'just a field' }],
      [
        'a part with no filename but a file type',
        {
          headers: 'Content-Disposition: form-data; name="file"\r\nContent-Type: application/octet-stream',
          content: 'boom',
        },
      ],
    ];
    it.each(attacks)('%s: 400 INVALID_ARCHIVE, nothing stored, nothing written outside', async (_case, part) => {
      const before = await counts();
      const answer = await upload('/v1/admin/skills', 'root', rawMultipart([skill('attack'), part])).expect(400);
      expect(answer.body.code).toBe('INVALID_ARCHIVE');
      expect(answer.body.message).not.toContain(tree.root);
      expect(await counts()).toEqual(before);
      expect(filesUnder(tree.root).filter((path) => path.includes('evil') || path.includes('boom'))).toEqual([]);
    });

    // BUG: a part named 'references/' (a folder) is stored as a file named 'references' (201) — normalizeEntryPath
    // drops the trailing '/', and readMultipart, unlike the zip and tar readers, has no folder case; refuse it as
    // INVALID_ARCHIVE.
    it(
      "a part whose filename names a folder ('references/') is refused, not stored as a file of " + 'another name',
      async () => {
        const before = await counts();
        const answer = await upload(
          '/v1/skills',
          'eve',
          rawMultipart([skill('folder-part'), filePart('references/', 'boom')]),
        );
        await http().delete('/v1/skills/folder-part').set(as('eve'));
        expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 400, code: 'INVALID_ARCHIVE' });
        expect(await counts()).toEqual(before);
      },
    );

    it(
      "a literal '..%2f' in a plain filename is a file name like any other: stored as written, " + 'inside the skill',
      async () => {
        const answer = await upload(
          '/v1/skills',
          'eve',
          rawMultipart([skill('percent'), filePart('references/..%2fevil.md', 'literal')]),
        ).expect(201);
        expect(answer.body.files.map((file: { path: string }) => file.path)).toEqual([
          'SKILL.md',
          'references/..%2fevil.md',
        ]);
        expect(
          (await http().get('/v1/skills/percent/resources/references/..%252fevil.md').set(as('eve')).expect(200)).text,
        ).toBe('literal');
        expect(filesUnder(tree.path('store')).filter((path) => path.endsWith('evil.md'))).toEqual([
          expect.stringMatching(/^[0-9a-f]{64}\/percent\/references\/\.\.%2fevil\.md$/),
        ]);
        await http().delete('/v1/skills/percent').set(as('eve')).expect(204);
      },
    );

    it('a UTF-8 filename keeps its characters, and gives the same version as the same files zipped', async () => {
      const files = { 'SKILL.md': skillMd({ name: 'accents' }), 'references/café-Ünïcødé.md': 'accented' };
      const sent = await upload(
        '/v1/skills',
        'eve',
        rawMultipart(Object.entries(files).map(([path, content]) => filePart(path, content))),
      ).expect(201);
      expect(sent.body.files.map((file: { path: string }) => file.path)).toEqual([
        'SKILL.md',
        'references/café-Ünïcødé.md',
      ]);
      expect(
        (
          await http()
            .get(`/v1/skills/accents/resources/references/${encodeURIComponent('café-Ünïcødé.md')}`)
            .set(as('eve'))
            .expect(200)
        ).text,
      ).toBe('accented');
      const zipped = await upload('/v1/skills', 'eve', await zipOf(files)).expect(200);
      expect(zipped.body).toMatchObject({ version: 1, digest: sent.body.digest });
      await http().delete('/v1/skills/accents').set(as('eve')).expect(204);
    });

    it(
      'a part with a 200 KB filename is refused (400), nothing stored, and the server answers the ' + 'next upload',
      async () => {
        const before = await counts();
        const answer = await upload(
          '/v1/admin/skills',
          'root',
          rawMultipart([skill('attack'), filePart(`references/${'y'.repeat(200 * 1024)}.md`, 'boom')]),
        );
        expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 400, code: 'INVALID_ARCHIVE' });
        expect(answer.text.length).toBeLessThan(4096);
        expect(await counts()).toEqual(before);
        await upload('/v1/skills', 'eve', multipartOf({ 'SKILL.md': skillMd({ name: 'after-long' }) })).expect(201);
        await http().delete('/v1/skills/after-long').set(as('eve')).expect(204);
      },
    );

    it('5,000 tiny parts are 413 PAYLOAD_TOO_LARGE (files limit), nothing stored', async () => {
      const before = await counts();
      const parts = [skill('many'), ...Array.from({ length: 5000 }, (_, i) => filePart(`f/${i}.txt`, 'x'))];
      const answer = await upload('/v1/admin/skills', 'root', rawMultipart(parts)).expect(413);
      expect(answer.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { limit: 'maxFiles', maxFiles: 1000 } });
      expect(await counts()).toEqual(before);
    });

    it('5,000 parts the parser skips (no Content-Disposition) are refused too, not read forever', async () => {
      const before = await counts();
      const parts = [
        skill('many'),
        ...Array.from({ length: 5000 }, () => ({ headers: 'Content-Type: text/plain', content: 'x' })),
      ];
      const answer = await upload('/v1/admin/skills', 'root', rawMultipart(parts));
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
      expect(['INVALID_ARCHIVE', 'PAYLOAD_TOO_LARGE']).toContain(answer.body.code);
      expect(await counts()).toEqual(before);
    });

    const skipped: [string, RawPart][] = [
      ['a part without Content-Disposition', { headers: 'Content-Type: text/plain', content: 'DROPPED' }],
      [
        'an attachment part',
        { headers: 'Content-Disposition: attachment; filename="references/dropped.md"', content: 'DROPPED' },
      ],
      [
        'a filename with a bare line break',
        { headers: 'Content-Disposition: form-data; name="file"; filename="references/a\rb.md"', content: 'DROPPED' },
      ],
    ];
    it.each(skipped)('%s is refused (400 INVALID_ARCHIVE), not dropped in silence', async (_case, part) => {
      const before = await counts();
      const answer = await upload('/v1/skills', 'eve', rawMultipart([skill('dropped'), part]));
      await http().delete('/v1/skills/dropped').set(as('eve'));
      expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 400, code: 'INVALID_ARCHIVE' });
      expect(await counts()).toEqual(before);
    });
  });

  describe('who may upload', () => {
    it(
      'a member sending 12 MB to the admin route is 403, a caller without a key 401; nothing stored ' + 'either way',
      async () => {
        const before = await counts();
        const big = { body: Buffer.alloc(12 * 1024 * 1024, 1), contentType: 'application/zip' };
        const member = await upload('/v1/admin/skills', 'ann', big);
        expect({ status: member.status, code: member.body.code }).toEqual({ status: 403, code: 'FORBIDDEN' });
        const anonymous = await http().post('/v1/admin/skills').set('content-type', big.contentType).send(big.body);
        expect({ status: anonymous.status, code: anonymous.body.code }).toEqual({
          status: 401,
          code: 'UNAUTHENTICATED',
        });
        const personal = await http()
          .post('/v1/skills')
          .set('content-type', 'application/zip')
          .send((await zipOf(skillFiles('anon'))).body);
        expect({ status: personal.status, code: personal.body.code }).toEqual({ status: 401, code: 'UNAUTHENTICATED' });
        expect(await counts()).toEqual(before);
      },
    );

    it('a versions scope that is neither shared nor personal is 400 VALIDATION_FAILED', async () => {
      for (const scope of ['other', 'shared&scope=personal', '']) {
        const answer = await http().get(`/v1/skills/pdf/versions?scope=${scope}`).set(as('ann'));
        expect({ scope, status: answer.status, code: answer.body.code }).toEqual({
          scope,
          status: 400,
          code: 'VALIDATION_FAILED',
        });
      }
    });
  });

  describe('content types and bodies', () => {
    it.each([
      ['application/zip; charset=utf-8', 'zip-charset'],
      ['Application/ZIP', 'zip-upper'],
      ['application/x-zip-compressed', 'zip-legacy'],
    ])('a zip sent as %s is installed (media type parameters and case do not matter)', async (contentType, name) => {
      const archive = await zipOf(skillFiles(name));
      const answer = await upload('/v1/skills', 'eve', { body: archive.body, contentType }).expect(201);
      expect(answer.body).toMatchObject({ name, version: 1 });
      await http().delete(`/v1/skills/${name}`).set(as('eve')).expect(204);
    });

    it('a form whose content type carries a charset before the boundary is installed', async () => {
      const form = multipartOf(skillFiles('form-charset'));
      const contentType = form.contentType.replace('multipart/form-data;', 'multipart/form-data; charset=utf-8;');
      expect((await upload('/v1/skills', 'eve', { body: form.body, contentType }).expect(201)).body.name).toBe(
        'form-charset',
      );
      await http().delete('/v1/skills/form-charset').set(as('eve')).expect(204);
    });

    const wrong: [string, () => Promise<UploadBody>, number, string][] = [
      [
        'a zip sent as gzip',
        async () => ({ ...(await zipOf(skillFiles('wrong'))), contentType: 'application/gzip' }),
        400,
        'INVALID_ARCHIVE',
      ],
      [
        'a tar.gz sent as zip',
        async () => ({ ...(await tarGzOf(skillFiles('wrong'))), contentType: 'application/zip' }),
        400,
        'INVALID_ARCHIVE',
      ],
      [
        'a tar.gz sent as an uncompressed tar',
        async () => ({ ...(await tarGzOf(skillFiles('wrong'))), contentType: 'application/x-tar' }),
        400,
        'INVALID_ARCHIVE',
      ],
      [
        'a zip sent as multipart without a boundary',
        async () => ({ ...(await zipOf(skillFiles('wrong'))), contentType: 'multipart/form-data' }),
        400,
        'INVALID_ARCHIVE',
      ],
      [
        'a form with another boundary than its content type says',
        async () => ({ ...multipartOf(skillFiles('wrong')), contentType: 'multipart/form-data; boundary=not-the-one' }),
        400,
        'INVALID_ARCHIVE',
      ],
      [
        'a form with an empty boundary',
        async () => ({ ...multipartOf(skillFiles('wrong')), contentType: 'multipart/form-data; boundary=' }),
        400,
        'INVALID_ARCHIVE',
      ],
      [
        'a zip sent as text/plain',
        async () => ({ ...(await zipOf(skillFiles('wrong'))), contentType: 'text/plain' }),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      ],
      [
        'a zip sent as application/octet-stream',
        async () => ({ ...(await zipOf(skillFiles('wrong'))), contentType: 'application/octet-stream' }),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      ],
      [
        'a form sent urlencoded',
        async () => ({ ...multipartOf(skillFiles('wrong')), contentType: 'application/x-www-form-urlencoded' }),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      ],
      [
        'a zip sent as application/zipx',
        async () => ({ ...(await zipOf(skillFiles('wrong'))), contentType: 'application/zipx' }),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      ],
      [
        'an empty zip body',
        async () => ({ body: Buffer.alloc(0), contentType: 'application/zip' }),
        400,
        'INVALID_ARCHIVE',
      ],
      [
        'an empty gzip body',
        async () => ({ body: Buffer.alloc(0), contentType: 'application/gzip' }),
        400,
        'INVALID_ARCHIVE',
      ],
      [
        'an empty tar body',
        async () => ({ body: Buffer.alloc(0), contentType: 'application/x-tar' }),
        400,
        'INVALID_ARCHIVE',
      ],
      [
        'an empty form body',
        async () => ({ body: Buffer.alloc(0), contentType: 'multipart/form-data; boundary=xyz' }),
        400,
        'INVALID_ARCHIVE',
      ],
      [
        'a form with only its closing boundary',
        async () => ({ body: Buffer.from('--xyz--\r\n'), contentType: 'multipart/form-data; boundary=xyz' }),
        400,
        'INVALID_ARCHIVE',
      ],
      ['a zip of nothing', () => zipOf({}), 400, 'INVALID_ARCHIVE'],
      [
        'a zip holding only macOS metadata',
        () => zipOf({ '__MACOSX/._SKILL.md': 'meta', '.DS_Store': 'ds' }),
        400,
        'INVALID_ARCHIVE',
      ],
    ];
    it.each(wrong)('%s is refused with its status and code, nothing stored', async (_case, archive, status, code) => {
      const before = await counts();
      const answer = await upload('/v1/admin/skills', 'root', await archive());
      expect({ status: answer.status, code: answer.body.code }).toEqual({ status, code });
      expect(await counts()).toEqual(before);
    });

    it(
      'a zip one of whose entries no longer matches its CRC-32 is INVALID_ARCHIVE naming the entry, nothing ' +
        'stored, and no skill offered',
      async () => {
        // Regression, fixed since this pass found it. Was: 201, the changed bytes installed as the skill's content (the
        // CRC-32 was never checked).
        const before = await counts();
        const archive = await zipWithChangedByteOf(
          skillFiles('crc', { 'references/guide.md': 'GUIDE-CONTENT' }),
          'crc/references/guide.md',
        );
        const answer = await upload('/v1/skills', 'eve', archive).expect(400);
        expect(answer.body).toEqual({
          code: 'INVALID_ARCHIVE',
          message: expect.stringMatching(
            new RegExp(
              "^Entry 'crc\\/references\\/guide\\.md' does not match its CRC-32 \\(the archive says " +
                '0x[0-9a-f]{8}, its content is 0x[0-9a-f]{8}\\); the archive is corrupt: make it again and ' +
                'upload that\\.$',
            ),
          ),
          details: { entry: 'crc/references/guide.md', problem: 'crc32' },
        });
        expect(await counts()).toEqual(before);
        expect(await names('eve')).not.toContain('crc');
      },
    );

    it('a body with no content type is 415, nothing stored', async () => {
      const before = await counts();
      const answer = await http()
        .post('/v1/admin/skills')
        .set(as('root'))
        .unset('content-type')
        .send(Buffer.from('PK'));
      expect({ status: answer.status, code: answer.body.code }).toEqual({
        status: 415,
        code: 'UNSUPPORTED_MEDIA_TYPE',
      });
      expect(await counts()).toEqual(before);
    });

    it('a zip sent as application/json is refused as a 4xx with a code, nothing stored', async () => {
      const before = await counts();
      const answer = await upload('/v1/admin/skills', 'root', {
        ...(await zipOf(skillFiles('wrong'))),
        contentType: 'application/json',
      });
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
      expect(['VALIDATION_FAILED', 'UNSUPPORTED_MEDIA_TYPE']).toContain(answer.body.code);
      expect(await counts()).toEqual(before);
    });

    it(
      'uploads cut off mid-way (the client goes away) store nothing, log no error, and the next ' + 'upload is served',
      async () => {
        const before = await counts();
        const errorsBefore = logger.errors.length;
        const zip = await zipOf(skillFiles('cut', { 'references/big.md': 'z'.repeat(200_000) }));
        const form = multipartOf(skillFiles('cut', { 'references/big.md': 'z'.repeat(200_000) }));
        const gz = await tarGzOf(
          skillFiles('cut', {
            'references/big.md': Buffer.from(Array.from({ length: 200_000 }, (_, i) => (i * 7919) % 251)),
          }),
        );
        for (const [archive, user] of [
          [zip, 'root'],
          [form, 'root'],
          [gz, 'root'],
          [form, 'ann'],
        ] as const) {
          const path = user === 'root' ? '/v1/admin/skills' : '/v1/skills';
          await abortedUpload(
            port,
            path,
            { authorization: `Bearer ${users.keys[user]}`, 'content-type': archive.contentType },
            archive.body.length,
            archive.body.subarray(0, Math.floor(archive.body.length / 2)),
          );
        }
        const next = await upload('/v1/admin/skills', 'root', zip).expect(201);
        expect(next.body).toMatchObject({ name: 'cut', version: 1 });
        const after = await counts();
        expect({
          installed: after.installed - before.installed,
          installedVersions: after.installedVersions - before.installedVersions,
          versions: after.versions - before.versions,
        }).toEqual({ installed: 1, installedVersions: 1, versions: 1 });
        expect((await http().get('/health/live').set(as('eve'))).status).toBeLessThan(500);
        expect(logger.errors.slice(errorsBefore)).toEqual([]);
        await http().delete('/v1/admin/skills/cut').set(as('root')).expect(204);
      },
    );
  });

  describe('installs racing each other', () => {
    it('six different versions of one skill at once: all 201, versions 1 to 6, none lost', async () => {
      const archives = await Promise.all(
        Array.from({ length: 6 }, (_, i) => zipOf(skillFiles('race', { 'references/n.md': `content ${i}` }))),
      );
      const answers = await Promise.all(archives.map((archive) => upload('/v1/admin/skills', 'root', archive)));
      expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 201, 201, 201]);
      expect(answers.map((answer) => answer.body.version).sort()).toEqual([1, 2, 3, 4, 5, 6]);
      const history = await http().get('/v1/skills/race/versions').set(as('bob')).expect(200);
      expect(history.body.versions.map((v: { digest: string }) => v.digest).sort()).toEqual(
        answers.map((answer) => answer.body.digest).sort(),
      );
      expect(history.body.current).toBe(6);
      const current = answers.find((answer) => answer.body.version === 6)!.body.digest;
      const chat = await newChat('bob');
      expect((await tool('bob', chat, 'skills.activate', { name: 'race' })).toolCard.summary.version).toBe(current);
    });

    it('six identical installs at once: one version, one 201 and five 200, stored once', async () => {
      const before = await counts();
      const archive = await zipOf(skillFiles('twin', { 'references/t.md': 'twin' }));
      const answers = await Promise.all(Array.from({ length: 6 }, () => upload('/v1/admin/skills', 'root', archive)));
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
      expect(new Set(answers.map((answer) => `${answer.body.version} ${answer.body.digest}`)).size).toBe(1);
      const after = await counts();
      expect({
        blobs: after.blobs - before.blobs,
        versions: after.versions - before.versions,
        installed: after.installed - before.installed,
        installedVersions: after.installedVersions - before.installedVersions,
      }).toEqual({ blobs: 2, versions: 1, installed: 1, installedVersions: 1 });
    });

    it('two users install a personal skill of one name at once: each gets version 1 of their own', async () => {
      const [ann, bob] = await Promise.all([
        upload('/v1/skills', 'ann', await zipOf(skillFiles('scratch', { 'n.md': 'ann' }))),
        upload('/v1/skills', 'bob', await zipOf(skillFiles('scratch', { 'n.md': 'bob' }))),
      ]);
      expect([ann.status, ann.body.owner, ann.body.version, bob.status, bob.body.owner, bob.body.version]).toEqual([
        201,
        'ann',
        1,
        201,
        'bob',
        1,
      ]);
      expect((await http().get('/v1/skills/scratch/resources/n.md').set(as('ann')).expect(200)).text).toBe('ann');
      expect((await http().get('/v1/skills/scratch/resources/n.md').set(as('bob')).expect(200)).text).toBe('bob');
    });

    // BUG: SkillStoreRepository.lockOrCreate does INSERT … ON CONFLICT DO NOTHING, then SELECT … FOR UPDATE; an
    // uninstall that commits between the two leaves no row, and `row.id` throws: the install is a 500 (nothing of it
    // kept). The lock here only orders the two real requests so that they interleave that way every time.
    it('an install racing an uninstall of the same skill never answers 500: it installs version 1 again', async () => {
      await upload('/v1/admin/skills', 'root', await zipOf(skillFiles('tug', { 'v.md': 'old' }))).expect(201);
      const holder = new pg.Client({ connectionString: ctx.db.url });
      await holder.connect();
      let deleting: Promise<request.Response> | undefined;
      let installing: Promise<request.Response> | undefined;
      try {
        await holder.query('BEGIN');
        await holder.query("SELECT id FROM installed_skills WHERE name = 'tug' AND scope = 'shared' FOR UPDATE");
        deleting = http()
          .delete('/v1/admin/skills/tug')
          .set(as('root'))
          .then((answer) => answer);
        await waitForLockWaiters(ctx.db.url, 1);
        installing = upload('/v1/admin/skills', 'root', await zipOf(skillFiles('tug', { 'v.md': 'new' }))).then(
          (answer) => answer,
        );
        await waitForLockWaiters(ctx.db.url, 2);
      } finally {
        await holder.query('COMMIT').catch(() => undefined);
        await holder.end();
      }
      const [deleted, installed] = await Promise.all([deleting!, installing!]);
      expect(deleted.status).toBe(204);
      expect({ status: installed.status, version: installed.body.version, code: installed.body.code }).toEqual({
        status: 201,
        version: 1,
        code: undefined,
      });
      expect((await http().get('/v1/skills/tug/resources/v.md').set(as('bob')).expect(200)).text).toBe('new');
    });

    it('uninstalling one skill twice at once: one 204, one 404 SKILL_NOT_FOUND', async () => {
      await upload('/v1/admin/skills', 'root', await zipOf(skillFiles('gone-twice'))).expect(201);
      const answers = await Promise.all([
        http().delete('/v1/admin/skills/gone-twice').set(as('root')),
        http().delete('/v1/admin/skills/gone-twice').set(as('root')),
      ]);
      expect(answers.map((answer) => answer.status).sort()).toEqual([204, 404]);
      expect(answers.find((answer) => answer.status === 404)!.body.code).toBe('SKILL_NOT_FOUND');
    });
  });

  describe('rollback', () => {
    let digests: string[];
    const current = async () =>
      (
        await query<{ current_version: number }>(
          ctx.db.url,
          "SELECT current_version FROM installed_skills WHERE name = 'roll' AND scope = 'shared'",
        )
      )[0].current_version;

    beforeAll(async () => {
      digests = [];
      for (const text of ['one', 'two'])
        digests.push(
          (await upload('/v1/admin/skills', 'root', await zipOf(skillFiles('roll', { 'r.md': text }))).expect(201)).body
            .digest,
        );
    });

    const bodies: [string, unknown][] = [
      ['0', { version: 0 }],
      ['-1', { version: -1 }],
      ['1.5', { version: 1.5 }],
      ['"1"', { version: '1' }],
      ['2^31', { version: 2_147_483_648 }],
      ['1e300', { version: 1e300 }],
      ['null', { version: null }],
      ['true', { version: true }],
      ['[1]', { version: [1] }],
      ['{}', { version: {} }],
      ['no version', {}],
      ['an extra field', { version: 1, force: true }],
      ['a list body', [1]],
    ];
    it.each(bodies)('version %s: 400 VALIDATION_FAILED, the current version unchanged', async (_case, body) => {
      const answer = await http()
        .post('/v1/admin/skills/roll/rollback')
        .set(as('root'))
        .send(body as object);
      expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 400, code: 'VALIDATION_FAILED' });
      expect(await current()).toBe(2);
    });

    it('the largest integer is SKILL_VERSION_NOT_FOUND naming the versions there are', async () => {
      const answer = await http()
        .post('/v1/admin/skills/roll/rollback')
        .set(as('root'))
        .send({ version: 2_147_483_647 })
        .expect(404);
      expect(answer.body).toMatchObject({ code: 'SKILL_VERSION_NOT_FOUND', details: { versions: [1, 2] } });
      expect(await current()).toBe(2);
    });

    it(
      'a disk skill, an unknown skill and a member are refused; rolling to the current version ' + 'changes nothing',
      async () => {
        expect(
          (await http().post('/v1/admin/skills/pdf/rollback').set(as('root')).send({ version: 1 }).expect(404)).body
            .code,
        ).toBe('SKILL_NOT_FOUND');
        expect(
          (await http().post('/v1/admin/skills/nothing-here/rollback').set(as('root')).send({ version: 1 }).expect(404))
            .body.code,
        ).toBe('SKILL_NOT_FOUND');
        expect(
          (await http().post('/v1/admin/skills/roll/rollback').set(as('ann')).send({ version: 1 }).expect(403)).body
            .code,
        ).toBe('FORBIDDEN');
        expect(
          (await http().post('/v1/admin/skills/roll/rollback').set(as('root')).send({ version: 2 }).expect(200)).body,
        ).toEqual({ name: 'roll', version: 2, digest: digests[1], changed: false });
        expect(
          (await http().post('/v1/admin/skills/roll/rollback').set(as('root')).send({ version: 1 }).expect(200)).body,
        ).toEqual({ name: 'roll', version: 1, digest: digests[0], changed: true });
        expect((await http().get('/v1/skills/roll/resources/r.md').set(as('bob')).expect(200)).text).toBe('one');
      },
    );
  });

  describe('skill filters', () => {
    const userFilter = async (user: string) =>
      (await query<{ skill_filter: unknown }>(ctx.db.url, 'SELECT skill_filter FROM users WHERE name = $1', [user]))[0]
        .skill_filter;
    let chat: string;

    beforeAll(async () => {
      await http()
        .put('/v1/me/skills')
        .set(as('eve'))
        .send({ exclude: ['drift'] })
        .expect(200);
      chat = await newChat('eve');
      await http()
        .put(`/v1/chats/${chat}/skills`)
        .set(as('eve'))
        .send({ exclude: ['takeover'] })
        .expect(200);
    });

    const bad: [string, unknown][] = [
      ['10,000 entries', { include: Array.from({ length: 10_000 }, (_, i) => `s${i}`) }],
      ['201 entries', { exclude: Array.from({ length: 201 }, (_, i) => `s${i}`) }],
      ['a string instead of a list', { include: 'pdf' }],
      ['an object instead of a list', { include: { 0: 'pdf' } }],
      ['a number in the list', { include: [1] }],
      ['null in the list', { include: [null] }],
      ['a nested list', { include: [['pdf']] }],
      ["'*' alone", { include: ['*'] }],
      ["'**'", { exclude: ['**'] }],
      ["'pdf**'", { include: ['pdf**'] }],
      ["'*pdf'", { include: ['*pdf'] }],
      ["'p*f'", { include: ['p*f'] }],
      ['an empty entry', { include: [''] }],
      ['a space', { include: ['pdf tools'] }],
      ['a NUL', { include: ['pd\u0000f'] }],
      ['a tab', { include: ['pd\tf'] }],
      ['66 characters', { include: ['a'.repeat(66)] }],
      ['an unknown field', { include: ['pdf'], only: ['pdf'] }],
      ['a list as the body', ['pdf']],
    ];
    it.each(bad)('%s: 400 VALIDATION_FAILED for the user and the chat, both filters unchanged', async (_case, body) => {
      const mine = await http()
        .put('/v1/me/skills')
        .set(as('eve'))
        .send(body as object);
      expect({ status: mine.status, code: mine.body.code }).toEqual({ status: 400, code: 'VALIDATION_FAILED' });
      const chats = await http()
        .put(`/v1/chats/${chat}/skills`)
        .set(as('eve'))
        .send(body as object);
      expect({ status: chats.status, code: chats.body.code }).toEqual({ status: 400, code: 'VALIDATION_FAILED' });
      expect(await userFilter('eve')).toEqual({ exclude: ['drift'] });
      expect((await http().get(`/v1/chats/${chat}/skills`).set(as('eve')).expect(200)).body).toMatchObject({
        include: null,
        exclude: ['takeover'],
      });
    });

    // BUG: `{"include": null}` passes @IsOptional and reaches normalizeFilter (skill-store.service.ts), where
    // `null.map` throws: a 500 instead of a 400 (or null read as absent).
    it.each([
      ['the user filter', '/v1/me/skills'],
      ['the chat filter', '/v1/chats/%s/skills'],
    ])('null lists in %s are refused with 400 VALIDATION_FAILED, not a 500', async (_case, path) => {
      const answers: unknown[] = [];
      try {
        for (const body of [{ include: null }, { exclude: null }]) {
          const answer = await http().put(path.replace('%s', chat)).set(as('eve')).send(body);
          answers.push({ status: answer.status, code: answer.body.code });
        }
      } finally {
        await http()
          .put('/v1/me/skills')
          .set(as('eve'))
          .send({ exclude: ['drift'] })
          .expect(200);
        await http()
          .put(`/v1/chats/${chat}/skills`)
          .set(as('eve'))
          .send({ exclude: ['takeover'] })
          .expect(200);
      }
      expect(answers).toEqual([
        { status: 400, code: 'VALIDATION_FAILED' },
        { status: 400, code: 'VALIDATION_FAILED' },
      ]);
    });

    // BUG: entries are checked before NFKC normalising, so a fullwidth '＊' passes FILTER_ENTRY_PATTERN and is stored as
    // '*', a pattern the API refuses when sent as is (normalizeFilter in skill-store.service.ts should check after
    // normalising).
    it("a fullwidth '＊' is refused as '*' is, not stored as '*'", async () => {
      const answer = await http()
        .put('/v1/me/skills')
        .set(as('eve'))
        .send({ exclude: ['＊'] });
      const stored = await userFilter('eve');
      await http()
        .put('/v1/me/skills')
        .set(as('eve'))
        .send({ exclude: ['drift'] })
        .expect(200);
      expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 400, code: 'VALIDATION_FAILED' });
      expect(stored).toEqual({ exclude: ['drift'] });
    });

    it(
      "filters on another user's chat, or on a chat id that is no uuid, are CHAT_NOT_FOUND and " + 'change nothing',
      async () => {
        for (const [method, body] of [
          ['get', undefined],
          ['put', { include: [] }],
        ] as const) {
          const other = await http()[method](`/v1/chats/${chat}/skills`).set(as('bob')).send(body);
          expect({ status: other.status, code: other.body.code }).toEqual({ status: 404, code: 'CHAT_NOT_FOUND' });
          const odd = await http()[method]('/v1/chats/..%2f..%2fadmin/skills').set(as('eve')).send(body);
          expect(odd.status).toBe(404);
        }
        expect((await http().get(`/v1/chats/${chat}/skills`).set(as('eve')).expect(200)).body).toMatchObject({
          include: null,
          exclude: ['takeover'],
        });
      },
    );

    it(
      'a filter that offers nothing makes every skill SKILL_NOT_FOUND in the chat, saying the filter ' + 'is why',
      async () => {
        const empty = await newChat('eve');
        expect(
          (await http().put(`/v1/chats/${empty}/skills`).set(as('eve')).send({ include: [] }).expect(200)).body,
        ).toEqual({ include: [], exclude: null, offered: [] });
        const refused = await tool('eve', empty, 'skills.activate', { name: 'pdf' });
        expect(refused.toolCard.output).toMatch(/SKILL_NOT_FOUND.*filter/);
        expect(refused.activatedSkills).toEqual([]);
        const context = await http().get(`/v1/chats/${empty}/context`).set(as('eve')).expect(200);
        expect(context.body.skills.offered).toEqual([]);
        expect(context.body.systemPrompt).not.toContain('Works with PDF files.');
      },
    );
  });

  describe('the version a chat pinned', () => {
    let chat: string;
    let v1: string;
    let v2: string;
    const readPinned = async () =>
      (await tool('bob', chat, 'skills.readResource', { name: 'pinme', path: 'references/guide.md' })).toolCard;
    const versionsOf = async () =>
      (await http().get(`/v1/chats/${chat}/context`).set(as('bob')).expect(200)).body.activatedVersions;

    beforeAll(async () => {
      v1 = (
        await upload(
          '/v1/admin/skills',
          'root',
          await zipOf(skillFiles('pinme', { 'references/guide.md': 'PIN-ONE' })),
        ).expect(201)
      ).body.digest;
      chat = await newChat('bob');
      expect((await tool('bob', chat, 'skills.activate', { name: 'pinme' })).toolCard.summary.version).toBe(v1);
    });

    it(
      'a switched-off skill answers SKILL_DISABLED in the chat that pinned it; switched on, the chat reads its ' +
        'pin again',
      async () => {
        await http().put('/v1/admin/skills/pinme/enabled').set(as('root')).send({ enabled: false }).expect(200);
        for (const [name, args] of [
          ['skills.readResource', { name: 'pinme', path: 'references/guide.md' }],
          ['skills.listResources', { name: 'pinme' }],
          ['skills.activate', { name: 'pinme' }],
        ] as const) {
          const card = (await tool('bob', chat, name, args)).toolCard;
          expect({ name, status: card.status }).toEqual({ name, status: 'error' });
          expect(card.output).toContain('SKILL_DISABLED');
          expect(card.output).not.toContain('PIN-ONE');
        }
        expect((await http().get('/v1/skills/pinme/body').set(as('bob')).expect(403)).body.code).toBe('SKILL_DISABLED');
        expect(await versionsOf()).toEqual([{ name: 'pinme', version: v1, currentVersion: null, status: 'disabled' }]);
        await http().put('/v1/admin/skills/pinme/enabled').set(as('root')).send({ enabled: true }).expect(200);
        expect((await readPinned()).output).toBe('PIN-ONE');
      },
    );

    it('after a new version the chat still reads its pin, and its context says a newer one is there', async () => {
      v2 = (
        await upload(
          '/v1/admin/skills',
          'root',
          await zipOf(skillFiles('pinme', { 'references/guide.md': 'PIN-TWO' })),
        ).expect(201)
      ).body.digest;
      expect((await readPinned()).output).toBe('PIN-ONE');
      expect((await tool('bob', chat, 'skills.listResources', { name: 'pinme' })).toolCard.output).toContain(
        'references/guide.md',
      );
      expect(await versionsOf()).toEqual([
        { name: 'pinme', version: v1, currentVersion: v2, status: 'newer-available' },
      ]);
    });

    it(
      'after an uninstall the chat that pinned it gets SKILL_NOT_FOUND, and its context says the skill is gone ' +
        '(the pin is void)',
      async () => {
        await http().delete('/v1/admin/skills/pinme').set(as('root')).expect(204);
        for (const [name, args] of [
          ['skills.readResource', { name: 'pinme', path: 'references/guide.md' }],
          ['skills.listResources', { name: 'pinme' }],
        ] as const) {
          const card = (await tool('bob', chat, name, args)).toolCard;
          expect(card.output).toContain('SKILL_NOT_FOUND');
          expect(card.output).not.toContain('PIN-');
        }
        expect(await versionsOf()).toEqual([{ name: 'pinme', version: null, currentVersion: null, status: 'gone' }]);
      },
    );

    it(
      'after the pulled skill is installed again with fixed content, the chat never reads the pulled ' + 'files again',
      async () => {
        const fixed = (
          await upload(
            '/v1/admin/skills',
            'root',
            await zipOf(skillFiles('pinme', { 'references/guide.md': 'PIN-FIXED' })),
          ).expect(201)
        ).body;
        expect(fixed.version).toBe(1);
        const card = await readPinned();
        expect(card.output).not.toMatch(/PIN-ONE|PIN-TWO/);
        expect(card.output).toBe('PIN-FIXED');
      },
    );

    // BUG: the void-pin check in SkillResourcesService.pinned() only applies when the skill now loaded is a store skill
    // (`skill.store.history`); when a disk skill of the name takes over after the uninstall, the pulled store version
    // is read again through store.versionFolder(pin).
    it(
      'a pin to a pulled store version is void when a disk skill of that name appears: the chat reads the disk ' +
        'skill',
      async () => {
        await upload(
          '/v1/admin/skills',
          'root',
          await zipOf(skillFiles('pulled-disk', { 'references/guide.md': 'PULLED-STORE' })),
        ).expect(201);
        const pinned = await newChat('bob');
        await tool('bob', pinned, 'skills.activate', { name: 'pulled-disk' });
        await http().delete('/v1/admin/skills/pulled-disk').set(as('root')).expect(204);
        writeSkill(tree, 'skills', 'pulled-disk', { description: 'Now on disk.' });
        tree.write('skills/pulled-disk/references/guide.md', 'DISK-GUIDE');
        await http().post('/v1/admin/skills/reload').set(as('root')).expect(200);
        const card = (
          await tool('bob', pinned, 'skills.readResource', { name: 'pulled-disk', path: 'references/guide.md' })
        ).toolCard;
        expect(card.output).not.toContain('PULLED-STORE');
        expect(card.output).toBe('DISK-GUIDE');
      },
    );

    // BUG: a disk skill's kept version is cached per loaded record (SkillStoreService.kept), so a chat activating after
    // an edit on disk (before a reload) is shown the new SKILL.md but pinned to the version read first; after the
    // reload it reads files it was never shown.
    it('a disk skill edited without a reload: a chat activating it then is pinned to what it was shown', async () => {
      const before = await newChat('bob');
      const first = await tool('bob', before, 'skills.activate', { name: 'drift' });
      expect(first.toolCard.output).toContain('DRIFT-BODY-ONE');
      writeSkill(tree, 'skills', 'drift', { description: 'Drifts on disk.', body: 'DRIFT-BODY-TWO' });
      tree.write('skills/drift/references/notes.md', 'DRIFT-REF-TWO');
      const after = await newChat('bob');
      const second = await tool('bob', after, 'skills.activate', { name: 'drift' });
      expect(second.toolCard.output).toContain('DRIFT-BODY-TWO');
      await http().post('/v1/admin/skills/reload').set(as('root')).expect(200);
      writeSkill(tree, 'skills', 'drift', { description: 'Drifts on disk.', body: 'DRIFT-BODY-THREE' });
      tree.write('skills/drift/references/notes.md', 'DRIFT-REF-THREE');
      await http().post('/v1/admin/skills/reload').set(as('root')).expect(200);
      expect(
        (await tool('bob', before, 'skills.readResource', { name: 'drift', path: 'references/notes.md' })).toolCard
          .output,
      ).toBe('DRIFT-REF-ONE');
      expect(
        (await tool('bob', after, 'skills.readResource', { name: 'drift', path: 'references/notes.md' })).toolCard
          .output,
      ).toBe('DRIFT-REF-TWO');
      expect(second.toolCard.summary.version).not.toBe(first.toolCard.summary.version);
    });
  });

  describe('the reload diff', () => {
    it(
      'a store skill taking over a name when the disk skill goes is one change, with the store as ' + 'its source',
      async () => {
        const store = await upload(
          '/v1/admin/skills',
          'root',
          await zipOf(skillFiles('takeover', { 'r.md': 'TAKEOVER-STORE' })),
        ).expect(201);
        expect(store.body.warnings).toEqual([expect.stringContaining("A skill named 'takeover' from")]);
        const admin = await http().get('/v1/admin/skills').set(as('root')).expect(200);
        const disk = admin.body.valid.find((skill: { name: string }) => skill.name === 'takeover');
        expect(disk.digest).toMatch(DIGEST);
        expect(disk.digest).not.toBe(store.body.digest);
        rmSync(tree.path('skills/takeover'), { recursive: true });
        const reload = await http().post('/v1/admin/skills/reload').set(as('root')).expect(200);
        expect(reload.body.diff.changed).toContainEqual({
          name: 'takeover',
          oldDigest: disk.digest,
          newDigest: store.body.digest,
          source: 'store',
        });
        expect(reload.body.diff.removed).toEqual([]);
        expect(reload.body.diff.added).toEqual([]);
        expect((await http().get('/v1/skills/takeover/resources/r.md').set(as('bob')).expect(200)).text).toBe(
          'TAKEOVER-STORE',
        );
      },
    );

    it('a member cannot reload, and personal skills never appear in the diff', async () => {
      expect((await http().post('/v1/admin/skills/reload').set(as('ann')).expect(403)).body.code).toBe('FORBIDDEN');
      await upload('/v1/skills', 'ann', await zipOf(skillFiles('ann-only'))).expect(201);
      const reload = await http().post('/v1/admin/skills/reload').set(as('root')).expect(200);
      expect(JSON.stringify(reload.body.diff)).not.toContain('ann-only');
    });
  });

  describe('what a SKILL.md holds', () => {
    it('a NUL in the body installs; activating it in a chat stores the card (NUL replaced), never a 500', async () => {
      await upload('/v1/skills', 'eve', await zipOf(skillFiles('nul-body', {}, 'before\u0000after'))).expect(201);
      const chat = await newChat('eve');
      const run = await tool('eve', chat, 'skills.activate', { name: 'nul-body' });
      expect(run.toolCard.status).toBe('ok');
      expect(run.toolCard.output).toMatch(/before.after/);
      expect(run.toolCard.output).not.toContain('\u0000');
      const messages = await http().get(`/v1/chats/${chat}/messages`).set(as('eve')).expect(200);
      expect(JSON.stringify(messages.body)).toMatch(/before.after/);
    });

    it('invalid UTF-8 in the body installs and is shown with replacement characters', async () => {
      const skill = Buffer.concat([
        Buffer.from(skillMd({ name: 'bad-bytes', body: 'x' }).replace(/x\s*$/, '')),
        Buffer.from([0x62, 0xff, 0xfe, 0xed, 0xa0, 0x80, 0x65]),
      ]);
      await upload('/v1/skills', 'eve', await zipOf({ 'bad-bytes/SKILL.md': skill })).expect(201);
      const chat = await newChat('eve');
      const run = await tool('eve', chat, 'skills.activate', { name: 'bad-bytes' });
      expect(run.toolCard.status).toBe('ok');
      expect(run.toolCard.output).toContain('\ufffd');
    });

    it('a NUL in the frontmatter is VALIDATION_FAILED, nothing stored', async () => {
      const before = await counts();
      const answer = await upload(
        '/v1/skills',
        'eve',
        await zipOf({ 'SKILL.md': `---\nname: nul-front\ndescription: bad\u0000thing\n---\nbody\n` }),
      );
      expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 400, code: 'VALIDATION_FAILED' });
      expect(await counts()).toEqual(before);
    });

    it('a resource holding NUL is RESOURCE_BINARY in a chat and over REST', async () => {
      await upload(
        '/v1/skills',
        'eve',
        await zipOf(skillFiles('binary-ref', { 'assets/blob.bin': Buffer.from([0x41, 0, 0x42]) })),
      ).expect(201);
      expect(
        (await http().get('/v1/skills/binary-ref/resources/assets/blob.bin').set(as('eve')).expect(415)).body.code,
      ).toBe('RESOURCE_BINARY');
      const chat = await newChat('eve');
      expect(
        (await tool('eve', chat, 'skills.readResource', { name: 'binary-ref', path: 'assets/blob.bin' })).toolCard
          .output,
      ).toContain('RESOURCE_BINARY');
    });

    it('a 9 MiB SKILL.md (within the install limit) installs, and is cut on activation with a notice', async () => {
      const body = `# Big\n\n${'All work and no play. '.repeat(430_000)}`;
      const installed = await upload('/v1/skills', 'eve', await tarGzOf(skillFiles('huge-md', {}, body))).expect(201);
      expect(installed.body.files[0].size).toBeGreaterThan(9_000_000);
      const answer = await http().get('/v1/skills/huge-md/body').set(as('eve')).expect(200);
      expect(answer.body.truncated).toBe(true);
      expect(answer.body.body).toMatch(/\[Truncated: showing the first \d+ of \d+ bytes of SKILL\.md\.\]$/);
      const chat = await newChat('eve');
      const run = await tool('eve', chat, 'skills.activate', { name: 'huge-md' });
      expect(run.toolCard).toMatchObject({
        status: 'ok',
        summary: { truncated: true, version: installed.body.digest },
      });
    });
  });
});

describe('a skill past max_install_bytes', () => {
  const app = useStoreApp(
    (tree) => {
      writeSkill(tree, 'skills', 'bulky', { description: 'Too large to pin.', body: 'BULKY-BODY' });
      tree.write('skills/bulky/references/big.md', 'b'.repeat(4096));
      writeSkill(tree, 'skills', 'slim', { description: 'Small enough to pin.' });
    },
    { 'app.skills.max_install_bytes': 1024 },
  );
  const { c } = app;

  it(
    'activated from disk in a chat: the card says it is not pinned, no version is recorded, nothing ' + 'is stored',
    async () => {
      const before = await c.counts();
      const chat = await c.newChat('ann');
      const run = await c.tool('ann', chat, 'skills.activate', { name: 'bulky' });
      expect(run.toolCard.status).toBe('ok');
      expect(run.toolCard.output).toContain('BULKY-BODY');
      expect(run.toolCard.output).toMatch(/\[Note: .*not pinned.*max_install_bytes/);
      expect(run.toolCard.summary.version).toBeUndefined();
      expect(run.toolCard.summary.versionWarning).toMatch(/not pinned/);
      expect(run.activatedSkills).toEqual([expect.objectContaining({ name: 'bulky', version: null })]);
      expect(await c.counts()).toEqual(before);
      const context = await c.http().get(`/v1/chats/${chat}/context`).set(c.as('ann')).expect(200);
      expect(context.body.activatedVersions).toEqual([
        { name: 'bulky', version: null, currentVersion: null, status: 'current' },
      ]);
      // As the card warned: after a change on disk and a reload the chat reads the new files.
      app.tree.write('skills/bulky/references/big.md', 'c'.repeat(4096));
      await c.http().post('/v1/admin/skills/reload').set(c.as('root')).expect(200);
      expect(
        (await c.tool('ann', chat, 'skills.readResource', { name: 'bulky', path: 'references/big.md' })).toolCard
          .output,
      ).toBe('c'.repeat(4096));
    },
  );

  it('a small disk skill is still pinned (stored once)', async () => {
    const before = await c.counts();
    const chat = await c.newChat('ann');
    expect((await c.tool('ann', chat, 'skills.activate', { name: 'slim' })).toolCard.summary.version).toMatch(DIGEST);
    const after = await c.counts();
    expect({
      blobs: after.blobs - before.blobs,
      versions: after.versions - before.versions,
      installed: after.installed - before.installed,
    }).toEqual({ blobs: 1, versions: 1, installed: 0 });
  });

  it('an upload past the limit is 413 PAYLOAD_TOO_LARGE whatever its form, nothing stored', async () => {
    const before = await c.counts();
    const files = skillFiles('too-big', { 'references/big.md': 'x'.repeat(2048) });
    for (const archive of [await zipOf(files), await tarGzOf(files), multipartOf(files)]) {
      const answer = await c.upload('/v1/skills', 'ann', archive);
      expect({ status: answer.status, code: answer.body.code }).toEqual({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
    }
    expect(await c.counts()).toEqual(before);
  });
});

describe('the store cache folder', () => {
  let chat: string;
  let v1: string;
  let v2: string;
  const app = useStoreApp((tree) => writeSkill(tree, 'skills', 'pdf', { description: 'Works with PDF files.' }));
  const { c } = app;
  const read = async () => c.http().get('/v1/skills/cached/resources/references/guide.md').set(c.as('bob'));

  beforeAll(async () => {
    v1 = (
      await c
        .upload('/v1/admin/skills', 'root', await zipOf(skillFiles('cached', { 'references/guide.md': 'CACHE-ONE' })))
        .expect(201)
    ).body.digest;
    chat = await c.newChat('bob');
    await c.tool('bob', chat, 'skills.activate', { name: 'cached' });
    v2 = (
      await c
        .upload('/v1/admin/skills', 'root', await zipOf(skillFiles('cached', { 'references/guide.md': 'CACHE-TWO' })))
        .expect(201)
    ).body.digest;
  });

  it(
    'deleted while the server runs: a chat reading its pinned older version gets it, unpacked again from the ' +
      'database',
    async () => {
      rmSync(app.tree.path('store'), { recursive: true, force: true });
      expect(
        (await c.tool('bob', chat, 'skills.readResource', { name: 'cached', path: 'references/guide.md' })).toolCard
          .output,
      ).toBe('CACHE-ONE');
      expect(filesUnder(app.tree.path('store'))).toContain(`${v1.slice('sha256:'.length)}/cached/references/guide.md`);
    },
  );

  // BUG: the current version's folder is only unpacked when the store is read again (an install, a switch, a reload);
  // deleting the cache (documented as "a cache: deleting it costs a re-read from the database") makes every read of a
  // store skill SKILL_NOT_FOUND "no longer on disk" until then — SkillResourcesService reads skill.path without
  // SkillStoreService.versionFolder().
  it('deleted while the server runs: the current version is read again from the database', async () => {
    rmSync(app.tree.path('store'), { recursive: true, force: true });
    const answer = await read();
    expect({ status: answer.status, text: answer.text }).toEqual({ status: 200, text: 'CACHE-TWO' });
    expect((await c.http().get('/v1/skills/cached/body').set(c.as('bob'))).status).toBe(200);
  });

  it('deleted while the server runs: an admin reload unpacks the current version again', async () => {
    rmSync(app.tree.path('store'), { recursive: true, force: true });
    await c.http().post('/v1/admin/skills/reload').set(c.as('root')).expect(200);
    const answer = await read();
    expect({ status: answer.status, text: answer.text }).toEqual({ status: 200, text: 'CACHE-TWO' });
  });

  it(
    'documents: a file changed inside an unpacked version is served as changed (the cache is trusted once ' +
      'unpacked; only unpacking checks digests)',
    async () => {
      await read();
      const file = join(app.tree.path('store'), v2.slice('sha256:'.length), 'cached', 'references', 'guide.md');
      writeFileSync(file, 'TAMPERED');
      try {
        expect((await read()).text).toBe('TAMPERED');
        // A reload does not check what is unpacked either.
        await c.http().post('/v1/admin/skills/reload').set(c.as('root')).expect(200);
        expect((await read()).text).toBe('TAMPERED');
      } finally {
        writeFileSync(file, 'CACHE-TWO');
      }
    },
  );

  // BUG: a version folder left incomplete in the cache (here: its SKILL.md deleted) is never unpacked again:
  // SkillCache.materialise cannot rename over the existing <digest>/ folder and gives up, so the skill stays out of the
  // catalogue after every reload until an operator removes the folder by hand.
  it('a version folder that lost its SKILL.md is unpacked again on reload, and the skill is offered', async () => {
    rmSync(join(app.tree.path('store'), v2.slice('sha256:'.length), 'cached', 'SKILL.md'));
    await c.http().post('/v1/admin/skills/reload').set(c.as('root')).expect(200);
    expect(await c.names('bob')).toContain('cached');
    const answer = await read();
    expect({ status: answer.status, text: answer.text }).toEqual({ status: 200, text: 'CACHE-TWO' });
  });
});

describe('lenient validation: the same files under two folder names', () => {
  const { c } = useStoreApp((tree) => tree.write('skills/.keep', ''), { 'app.skills.validation': 'lenient' });

  // BUG: without a name in the frontmatter (lenient), two folder names give one digest (the name is not in the bytes);
  // the cache keeps one folder per digest, so the second install is a 500 after its install row was committed
  // (SkillCache.materialise cannot rename `<digest>/beta` into place), and skill_versions.name holds the first name
  // only, so pinned reads of 'beta' find no version either. The version digest should cover the name.
  it('each is installed and offered under its own name', async () => {
    const text = skillMd({ description: 'Unnamed in its frontmatter.', body: 'SHARED-BODY' });
    const alpha = await c.upload('/v1/admin/skills', 'root', await zipOf({ 'alpha/SKILL.md': text })).expect(201);
    const beta = await c.upload('/v1/admin/skills', 'root', await zipOf({ 'beta/SKILL.md': text })).expect(201);
    expect([alpha.body.name, beta.body.name]).toEqual(['alpha', 'beta']);
    expect(await c.names('bob')).toEqual(['alpha', 'beta']);
    expect((await c.http().get('/v1/skills/beta/body').set(c.as('bob')).expect(200)).body.body).toBe('SHARED-BODY');
  });
});

describe('the store with skills switched off', () => {
  const app = useStoreApp((tree) => writeSkill(tree, 'skills', 'pdf', { description: 'Works with PDF files.' }), {
    'app.skills.enabled': false,
  });
  const { c } = app;

  it('every store route answers 404 SKILLS_DISABLED, and an install stores nothing', async () => {
    const before = await c.counts();
    const archive = await zipOf(skillFiles('off'));
    const answers = [
      await c.upload('/v1/admin/skills', 'root', archive),
      await c.upload('/v1/skills', 'ann', multipartOf(skillFiles('off'))),
      await c.http().get('/v1/skills/off/versions').set(c.as('ann')),
      await c.http().post('/v1/admin/skills/off/rollback').set(c.as('root')).send({ version: 1 }),
      await c.http().delete('/v1/admin/skills/off').set(c.as('root')),
      await c.http().delete('/v1/skills/off').set(c.as('ann')),
      await c.http().put('/v1/admin/skills/pdf/enabled').set(c.as('root')).send({ enabled: false }),
      await c.http().get('/v1/me/skills').set(c.as('ann')),
      await c.http().put('/v1/me/skills').set(c.as('ann')).send({ include: [] }),
    ];
    expect(answers.map((answer) => [answer.status, answer.body.code])).toEqual(
      answers.map(() => [404, 'SKILLS_DISABLED']),
    );
    expect(await c.counts()).toEqual(before);
    expect(filesUnder(app.tree.path('store'))).toEqual([]);
  });

  // BUG: GET/PUT /v1/chats/:id/skills are listed with the skills routes (README "### Skills") but have no
  // RequireFeature('skills'): with skills off they answer 200 and store the filter (chat.controller.ts).
  it("a chat's skill filter routes answer 404 SKILLS_DISABLED too, and store nothing", async () => {
    const chat = await c.newChat('ann');
    const put = await c.http().put(`/v1/chats/${chat}/skills`).set(c.as('ann')).send({ include: [] });
    expect({ status: put.status, code: put.body.code }).toEqual({ status: 404, code: 'SKILLS_DISABLED' });
    const get = await c.http().get(`/v1/chats/${chat}/skills`).set(c.as('ann'));
    expect({ status: get.status, code: get.body.code }).toEqual({ status: 404, code: 'SKILLS_DISABLED' });
    expect(
      (
        await query<{ skill_filter: unknown }>(app.ctx.db.url, 'SELECT skill_filter FROM chats WHERE id = $1', [chat])
      )[0].skill_filter,
    ).toBeNull();
  });
});
