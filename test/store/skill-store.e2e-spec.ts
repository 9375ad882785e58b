import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { UsersService } from '../../src/domain/users/users.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { query } from '../support/database.js';
import { multipartOf, tarGzOf, type UploadBody, zipOf } from '../support/skill-archives.js';
import { skillMd, tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';

const DIGEST = /^sha256:[0-9a-f]{64}$/;

const report = (guide: string, body = '# Report\n\nWrite the report as the guide says.\n') => ({
  'report/SKILL.md': skillMd({
    name: 'report',
    description: 'Writes weekly reports. Use when asked for a report.',
    body,
  }),
  'report/references/guide.md': guide,
});

describe('the skill store: install, versions, pinning, rollback, uninstall, personal skills, switches, filters', () => {
  let tree: TempTree;
  let ctx: ChatTestContext;
  const http = () => request(ctx.app.getHttpServer());
  const keys: Record<string, string> = {};
  const as = (user: string) => ({ authorization: `Bearer ${keys[user]}` });
  const upload = (path: string, user: string, archive: UploadBody) =>
    http().post(path).set(as(user)).set('content-type', archive.contentType).send(archive.body);
  const newChat = async (user: string) =>
    (await http().post('/v1/chats').set(as(user)).send({}).expect(201)).body.id as string;
  const tool = (user: string, chat: string, name: string, args: Record<string, unknown>) =>
    http().post(`/v1/chats/${chat}/tools/${name}`).set(as(user)).send(args).expect(200);
  const readGuide = async (user: string, chat: string) =>
    (await tool(user, chat, 'skills.readResource', { name: 'report', path: 'references/guide.md' })).body.toolCard
      .output as string;
  const storeRows = async () =>
    (
      await query<{ n: number }>(
        ctx.db.url,
        'SELECT (SELECT count(*) FROM skill_blobs)::int + (SELECT count(*) FROM skill_versions)::int + (SELECT ' +
          'count(*) FROM installed_skills)::int AS n',
      )
    )[0].n;

  beforeAll(async () => {
    tree = tempTree();
    writeSkill(tree, 'skills', 'pdf', { description: 'Works with PDF files.', body: 'Use the PDF tools.' });
    tree.write('skills/pdf/references/forms.md', 'forms, first edition');
    ctx = await startChatApp([tree.path('skills')], {
      'app.auth.mode': 'api_key',
      'app.skills.store_directory': tree.path('store'),
    });
    const users = ctx.app.get(UsersService);
    for (const [name, role] of [
      ['root', 'admin'],
      ['ann', 'member'],
      ['bob', 'member'],
    ] as const) {
      keys[name] = (await users.createKey((await users.createUser(name, role)).id)).key;
    }
  });
  afterAll(async () => {
    await ctx?.close();
    tree?.cleanup();
  });

  let v1: string;
  let v2: string;
  let chatA: string;
  let chatB: string;

  it(
    'installs a shared skill from a zip (201), and the same content again as a form is the same ' + 'version (200)',
    async () => {
      const first = await upload('/v1/admin/skills', 'root', await zipOf(report('guide, version one'))).expect(201);
      expect(first.body).toMatchObject({
        name: 'report',
        scope: 'shared',
        owner: null,
        version: 1,
        digest: expect.stringMatching(DIGEST),
      });
      expect(first.body.files).toEqual([
        { path: 'SKILL.md', size: expect.any(Number), digest: expect.stringMatching(DIGEST) },
        { path: 'references/guide.md', size: 18, digest: expect.stringMatching(DIGEST) },
      ]);
      v1 = first.body.digest;
      const again = await upload('/v1/admin/skills', 'root', multipartOf(report('guide, version one'))).expect(200);
      expect(again.body).toMatchObject({ name: 'report', version: 1, digest: v1 });
      const listed = await http().get('/v1/skills').set(as('bob')).expect(200);
      expect(listed.body.skills.map((s: { name: string }) => s.name)).toEqual(['pdf', 'report']);
    },
  );

  it(
    'a chat that activated v1 keeps reading v1 after v2 is installed; a new chat gets v2; activating again moves ' +
      'the first chat',
    async () => {
      chatA = await newChat('ann');
      const activated = await tool('ann', chatA, 'skills.activate', { name: 'report' });
      expect(activated.body.toolCard.summary).toMatchObject({ skill: 'report', version: v1 });
      expect(activated.body.activatedSkills).toEqual([expect.objectContaining({ name: 'report', version: v1 })]);
      expect(await readGuide('ann', chatA)).toBe('guide, version one');

      const second = await upload(
        '/v1/admin/skills',
        'root',
        await tarGzOf(report('guide, version two', '# Report\n\nVersion two.\n')),
      ).expect(201);
      expect(second.body).toMatchObject({ name: 'report', version: 2 });
      v2 = second.body.digest;
      expect(v2).not.toBe(v1);

      expect(await readGuide('ann', chatA)).toBe('guide, version one');
      const context = await http().get(`/v1/chats/${chatA}/context`).set(as('ann')).expect(200);
      expect(context.body.activatedVersions).toEqual([
        { name: 'report', version: v1, currentVersion: v2, status: 'newer-available' },
      ]);

      chatB = await newChat('ann');
      const fresh = await tool('ann', chatB, 'skills.activate', { name: 'report' });
      expect(fresh.body.toolCard.output).toContain('Version two.');
      expect(fresh.body.toolCard.summary.version).toBe(v2);
      expect(await readGuide('ann', chatB)).toBe('guide, version two');

      const again = await tool('ann', chatA, 'skills.activate', { name: 'report' });
      expect(again.body.activatedSkills).toEqual([expect.objectContaining({ name: 'report', version: v2, count: 2 })]);
      expect(await readGuide('ann', chatA)).toBe('guide, version two');
    },
  );

  it('lists versions, rolls back to v1 (new activations get v1), and refuses an unknown version', async () => {
    const versions = await http().get('/v1/skills/report/versions').set(as('bob')).expect(200);
    expect(versions.body).toMatchObject({ name: 'report', scope: 'shared', current: 2 });
    expect(
      versions.body.versions.map((v: { version: number; digest: string; installedBy: string }) => [
        v.version,
        v.digest,
        v.installedBy,
      ]),
    ).toEqual([
      [1, v1, 'root'],
      [2, v2, 'root'],
    ]);
    const missing = await http()
      .post('/v1/admin/skills/report/rollback')
      .set(as('root'))
      .send({ version: 7 })
      .expect(404);
    expect(missing.body).toMatchObject({ code: 'SKILL_VERSION_NOT_FOUND', details: { versions: [1, 2] } });
    await http().post('/v1/admin/skills/report/rollback').set(as('ann')).send({ version: 1 }).expect(403);
    const rolled = await http()
      .post('/v1/admin/skills/report/rollback')
      .set(as('root'))
      .send({ version: 1 })
      .expect(200);
    expect(rolled.body).toEqual({ name: 'report', version: 1, digest: v1, changed: true });
    const chatC = await newChat('bob');
    expect((await tool('bob', chatC, 'skills.activate', { name: 'report' })).body.toolCard.summary.version).toBe(v1);
    expect(await readGuide('bob', chatC)).toBe('guide, version one');
    expect(await readGuide('ann', chatB)).toBe('guide, version two');
  });

  it('uninstall takes the skill out of every catalogue; chats that activated it answer SKILL_NOT_FOUND', async () => {
    await http().delete('/v1/admin/skills/report').set(as('root')).expect(204);
    expect(
      (await http().get('/v1/skills').set(as('ann')).expect(200)).body.skills.map((s: { name: string }) => s.name),
    ).toEqual(['pdf']);
    const read = await tool('ann', chatA, 'skills.readResource', { name: 'report', path: 'references/guide.md' });
    expect(read.body.toolCard).toMatchObject({ status: 'error', output: expect.stringContaining('SKILL_NOT_FOUND') });
    const activate = await tool('ann', chatB, 'skills.activate', { name: 'report' });
    expect(activate.body.toolCard.output).toContain('SKILL_NOT_FOUND');
    expect((await http().delete('/v1/admin/skills/report').set(as('root')).expect(404)).body.code).toBe(
      'SKILL_NOT_FOUND',
    );
  });

  it(
    'installed again after an uninstall (fixed), the skill is read as it is now, even by chats that pinned the ' +
      'pulled version',
    async () => {
      expect(
        (await upload('/v1/admin/skills', 'root', await zipOf(report('guide, fixed'))).expect(201)).body,
      ).toMatchObject({ version: 1 });
      expect(await readGuide('ann', chatA)).toBe('guide, fixed');
      await http().delete('/v1/admin/skills/report').set(as('root')).expect(204);
    },
  );

  it("a personal skill is in its owner's catalogue and chats only", async () => {
    const files = {
      'SKILL.md': skillMd({ name: 'notes', description: "Keeps Ann's notes. Use for notes." }),
      'assets/template.txt': 'template',
    };
    const installed = await upload('/v1/skills', 'ann', await zipOf(files)).expect(201);
    expect(installed.body).toMatchObject({ name: 'notes', scope: 'personal', owner: 'ann', version: 1 });
    expect(
      (await http().get('/v1/skills').set(as('ann')).expect(200)).body.skills.map((s: { name: string }) => s.name),
    ).toEqual(['notes', 'pdf']);
    expect(
      (await http().get('/v1/skills').set(as('bob')).expect(200)).body.skills.map((s: { name: string }) => s.name),
    ).toEqual(['pdf']);
    expect((await http().get('/v1/skills/notes').set(as('bob')).expect(404)).body.code).toBe('SKILL_NOT_FOUND');
    await http().get('/v1/skills/notes/resources/assets/template.txt').set(as('ann')).expect(200, 'template');
    const bobChat = await newChat('bob');
    expect((await tool('bob', bobChat, 'skills.activate', { name: 'notes' })).body.toolCard.output).toContain(
      'SKILL_NOT_FOUND',
    );
    const annChat = await newChat('ann');
    expect((await http().get(`/v1/chats/${annChat}/context`).set(as('ann')).expect(200)).body.systemPrompt).toContain(
      'notes',
    );
    expect(
      (await http().get(`/v1/chats/${bobChat}/context`).set(as('bob')).expect(200)).body.systemPrompt,
    ).not.toContain('notes');
    expect((await http().get('/v1/skills/notes/versions').set(as('bob')).expect(404)).body.code).toBe(
      'SKILL_NOT_FOUND',
    );
    const admin = await http().get('/v1/admin/skills').set(as('root')).expect(200);
    expect(admin.body.personal).toEqual([
      expect.objectContaining({
        name: 'notes',
        source: 'store:personal:ann',
        store: { scope: 'personal', owner: 'ann', version: 1 },
      }),
    ]);
    await http().delete('/v1/skills/notes').set(as('bob')).expect(404);
    await http().delete('/v1/skills/notes').set(as('ann')).expect(204);
    expect(
      (await http().get('/v1/skills').set(as('ann')).expect(200)).body.skills.map((s: { name: string }) => s.name),
    ).toEqual(['pdf']);
  });

  it(
    'a personal skill named like a team skill is installed but not offered, and the answer and admin ' + 'view say why',
    async () => {
      const installed = await upload(
        '/v1/skills',
        'bob',
        multipartOf({ 'pdf/SKILL.md': skillMd({ name: 'pdf', description: "Bob's own PDF skill." }) }),
      ).expect(201);
      expect(installed.body.warnings).toEqual([expect.stringContaining("A skill named 'pdf' from")]);
      const admin = await http().get('/v1/admin/skills').set(as('root')).expect(200);
      expect(admin.body.collisions).toContainEqual(
        expect.objectContaining({ name: 'pdf', loser: expect.objectContaining({ source: 'store:personal:bob' }) }),
      );
      await http().delete('/v1/skills/pdf').set(as('bob')).expect(204);
    },
  );

  describe('refuses each unsafe upload with nothing stored', () => {
    const cases: [string, () => Promise<UploadBody>, number, string][] = [
      [
        'zip slip (../)',
        () => tarGzOf({ 'x/SKILL.md': skillMd({ name: 'x' }), 'x/../../evil.txt': 'boom' }),
        400,
        'INVALID_ARCHIVE',
      ],
      [
        'an absolute path',
        () => tarGzOf({ 'SKILL.md': skillMd({ name: 'x' }), '/etc/evil.txt': 'boom' }),
        400,
        'INVALID_ARCHIVE',
      ],
      [
        'a symlink entry',
        () =>
          tarGzOf({ 'x/SKILL.md': skillMd({ name: 'x' }) }, [
            { name: 'x/link', type: 'symlink', linkname: '/etc/passwd' },
          ]),
        400,
        'INVALID_ARCHIVE',
      ],
      [
        'a hard link entry',
        () =>
          tarGzOf({ 'x/SKILL.md': skillMd({ name: 'x' }) }, [{ name: 'x/hard', type: 'link', linkname: 'x/SKILL.md' }]),
        400,
        'INVALID_ARCHIVE',
      ],
      [
        'a bomb (20 MiB of zeros)',
        () => tarGzOf({ 'x/SKILL.md': skillMd({ name: 'x' }), 'x/zeros.bin': Buffer.alloc(20 * 1024 * 1024) }),
        413,
        'PAYLOAD_TOO_LARGE',
      ],
      [
        '2,000 files',
        () =>
          zipOf(
            Object.fromEntries([
              ['x/SKILL.md', skillMd({ name: 'x' })],
              ...Array.from({ length: 2000 }, (_, i) => [`x/f${i}.txt`, 'f']),
            ]),
          ),
        413,
        'PAYLOAD_TOO_LARGE',
      ],
      [
        'a duplicate path',
        async () => multipartOf({ 'x/SKILL.md': skillMd({ name: 'x' }), 'x//SKILL.md': skillMd({ name: 'x' }) }),
        400,
        'INVALID_ARCHIVE',
      ],
      ['no SKILL.md', () => zipOf({ 'x/readme.md': 'hi' }), 400, 'INVALID_ARCHIVE'],
      [
        'a corrupt zip',
        async () => ({ body: Buffer.from('PK\u0003\u0004 this is not a zip'), contentType: 'application/zip' }),
        400,
        'INVALID_ARCHIVE',
      ],
    ];
    it.each(cases)('%s', async (_name, archive, status, code) => {
      const before = await storeRows();
      const answer = await upload('/v1/admin/skills', 'root', await archive()).expect(status);
      expect(answer.body.code).toBe(code);
      expect(await storeRows()).toBe(before);
    });

    it("an invalid skill is VALIDATION_FAILED with the validator's messages", async () => {
      const before = await storeRows();
      const answer = await upload(
        '/v1/admin/skills',
        'root',
        await zipOf({ 'Bad_Name/SKILL.md': skillMd({ name: 'Bad_Name' }) }),
      ).expect(400);
      expect(answer.body.code).toBe('VALIDATION_FAILED');
      expect(answer.body.details.problems.join(' ')).toMatch(/name/);
      expect(await storeRows()).toBe(before);
    });

    it('a JSON body on the install route is 415, and an archive on another route is 415', async () => {
      expect((await http().post('/v1/admin/skills').set(as('root')).send({ name: 'x' }).expect(415)).body.code).toBe(
        'UNSUPPORTED_MEDIA_TYPE',
      );
      const archive = await zipOf({ 'SKILL.md': skillMd({ name: 'x' }) });
      expect(
        (
          await http()
            .post('/v1/chats')
            .set(as('root'))
            .set('content-type', archive.contentType)
            .send(archive.body)
            .expect(415)
        ).body.code,
      ).toBe('UNSUPPORTED_MEDIA_TYPE');
    });

    it('members cannot install shared skills', async () => {
      expect((await upload('/v1/admin/skills', 'ann', await zipOf(report('x'))).expect(403)).body.code).toBe(
        'FORBIDDEN',
      );
    });
  });

  it('switches a skill off and on, persisted; a member may not', async () => {
    await http().put('/v1/admin/skills/pdf/enabled').set(as('ann')).send({ enabled: false }).expect(403);
    expect(
      (await http().put('/v1/admin/skills/pdf/enabled').set(as('root')).send({ enabled: false }).expect(200)).body,
    ).toEqual({ name: 'pdf', enabled: false });
    expect((await http().get('/v1/skills/pdf').set(as('ann')).expect(403)).body.code).toBe('SKILL_DISABLED');
    expect((await http().get('/v1/skills').set(as('ann')).expect(200)).body.skills).toEqual([]);
    expect(
      (await query<{ enabled: boolean }>(ctx.db.url, "SELECT enabled FROM skill_switches WHERE name = 'pdf'"))[0]
        .enabled,
    ).toBe(false);
    await ctx.closeApp();
    await ctx.restartApp();
    expect((await http().get('/v1/skills/pdf').set(as('ann')).expect(403)).body.code).toBe('SKILL_DISABLED');
    await http().put('/v1/admin/skills/pdf/enabled').set(as('root')).send({ enabled: true }).expect(200);
    await http().get('/v1/skills/pdf').set(as('ann')).expect(200);
    expect(
      (await http().put('/v1/admin/skills/nope/enabled').set(as('root')).send({ enabled: false }).expect(404)).body
        .code,
    ).toBe('SKILL_NOT_FOUND');
    expect(
      (await http().put('/v1/admin/skills/pdf/enabled').set(as('root')).send({ enabled: 'no' }).expect(400)).body.code,
    ).toBe('VALIDATION_FAILED');
  });

  it(
    "narrows a user's and a chat's catalogue with include/exclude patterns; the context shows the " + 'result',
    async () => {
      await upload('/v1/admin/skills', 'root', await zipOf(report('guide'))).expect(201);
      await upload(
        '/v1/admin/skills',
        'root',
        await zipOf({ 'report-pdf/SKILL.md': skillMd({ name: 'report-pdf', description: 'Reports as PDF.' }) }),
      ).expect(201);
      const mine = await http()
        .put('/v1/me/skills')
        .set(as('ann'))
        .send({ exclude: ['pdf'] })
        .expect(200);
      expect(mine.body).toEqual({ include: null, exclude: ['pdf'], offered: ['report', 'report-pdf'] });
      const chat = await newChat('ann');
      const narrowed = await http()
        .put(`/v1/chats/${chat}/skills`)
        .set(as('ann'))
        .send({ include: ['report-*'] })
        .expect(200);
      expect(narrowed.body).toEqual({ include: ['report-*'], exclude: null, offered: ['report-pdf'] });
      const context = await http().get(`/v1/chats/${chat}/context`).set(as('ann')).expect(200);
      expect(context.body.skills).toEqual({
        offered: ['report-pdf'],
        filteredOut: ['pdf', 'report'],
        userFilter: { exclude: ['pdf'] },
        chatFilter: { include: ['report-*'] },
      });
      expect(context.body.systemPrompt).toContain('report-pdf');
      expect(context.body.systemPrompt).not.toContain('"report"');
      const refused = await tool('ann', chat, 'skills.activate', { name: 'report' });
      expect(refused.body.toolCard.output).toMatch(/SKILL_NOT_FOUND.*filter/);
      expect((await http().put(`/v1/chats/${chat}/skills`).set(as('bob')).send({}).expect(404)).body.code).toBe(
        'CHAT_NOT_FOUND',
      );
      expect(
        (
          await http()
            .put('/v1/me/skills')
            .set(as('ann'))
            .send({ include: ['has space'] })
            .expect(400)
        ).body.code,
      ).toBe('VALIDATION_FAILED');
      expect((await http().put('/v1/me/skills').set(as('ann')).send({}).expect(200)).body).toEqual({
        include: null,
        exclude: null,
        offered: ['pdf', 'report', 'report-pdf'],
      });
    },
  );

  it(
    'pins disk skills too: after an edit and a reload a chat reads what it activated; the reload ' + 'answers the diff',
    async () => {
      const chat = await newChat('ann');
      const activated = await tool('ann', chat, 'skills.activate', { name: 'pdf' });
      const before = activated.body.toolCard.summary.version;
      expect(before).toMatch(DIGEST);
      tree.write('skills/pdf/references/forms.md', 'forms, second edition');
      const reload = await http().post('/v1/admin/skills/reload').set(as('root')).expect(200);
      expect(reload.body.diff).toEqual({
        added: [],
        removed: [],
        changed: [
          { name: 'pdf', oldDigest: before, newDigest: expect.stringMatching(DIGEST), source: tree.path('skills') },
        ],
        unchanged: 2,
      });
      const read = await tool('ann', chat, 'skills.readResource', { name: 'pdf', path: 'references/forms.md' });
      expect(read.body.toolCard.output).toBe('forms, first edition');
      const other = await newChat('ann');
      await tool('ann', other, 'skills.activate', { name: 'pdf' });
      expect(
        (await tool('ann', other, 'skills.readResource', { name: 'pdf', path: 'references/forms.md' })).body.toolCard
          .output,
      ).toBe('forms, second edition');
    },
  );
});

describe('[app.skills] max_personal_skills', () => {
  let tree: TempTree;
  let ctx: ChatTestContext;
  const keys: Record<string, string> = {};
  const upload = async (user: string, name: string, body = 'One.') => {
    const archive = await zipOf({
      [`${name}/SKILL.md`]: skillMd({ name, description: `${name} of ${user}'s.`, body }),
    });
    return request(ctx.app.getHttpServer())
      .post('/v1/skills')
      .set({ authorization: `Bearer ${keys[user]}` })
      .set('content-type', archive.contentType)
      .send(archive.body);
  };
  const storeRows = async () =>
    (
      await query<{ n: number }>(
        ctx.db.url,
        'SELECT (SELECT count(*) FROM skill_blobs)::int + (SELECT count(*) FROM skill_versions)::int + (SELECT ' +
          'count(*) FROM installed_skills)::int AS n',
      )
    )[0].n;
  beforeAll(async () => {
    tree = tempTree();
    ctx = await startChatApp([tree.path('skills')], {
      'app.auth.mode': 'api_key',
      'app.skills.store_directory': tree.path('store'),
      'app.skills.max_personal_skills': 2,
    });
    const users = ctx.app.get(UsersService);
    for (const name of ['ann', 'bob'])
      keys[name] = (await users.createKey((await users.createUser(name, 'member')).id)).key;
  });
  afterAll(async () => {
    await ctx?.close();
    tree?.cleanup();
  });

  it(
    'caps how many personal skills one user may have (a new version of one is not another skill), with nothing ' +
      'stored past it',
    async () => {
      expect((await upload('bob', 'bob-one')).status).toBe(201);
      expect((await upload('bob', 'bob-two')).status).toBe(201);
      expect((await upload('bob', 'bob-two', 'Two.')).status).toBe(201);
      const before = await storeRows();
      const refused = await upload('bob', 'bob-three');
      expect(refused.status).toBe(403);
      expect(refused.body).toMatchObject({ code: 'SKILL_QUOTA_EXCEEDED', details: { name: 'bob-three', limit: 2 } });
      expect(await storeRows()).toBe(before);
      expect((await upload('ann', 'ann-one')).status).toBe(201);
    },
  );
});

describe("commands and the caller's personal skills", () => {
  let tree: TempTree;
  let ctx: ChatTestContext;
  const keys: Record<string, string> = {};
  const commands = async (user: string) =>
    (
      await request(ctx.app.getHttpServer())
        .get('/v1/commands')
        .set({ authorization: `Bearer ${keys[user]}` })
        .expect(200)
    ).body.commands;
  beforeAll(async () => {
    tree = tempTree();
    tree.write('commands/jot.md', '---\ndescription: Jots a note.\nrequires-skills: notebook\n---\nJot $ARGUMENTS.\n');
    ctx = await startChatApp([tree.path('skills')], {
      'app.auth.mode': 'api_key',
      'app.skills.store_directory': tree.path('store'),
      'app.commands.directories': [tree.path('commands')],
    });
    const users = ctx.app.get(UsersService);
    for (const name of ['ann', 'bob'])
      keys[name] = (await users.createKey((await users.createUser(name, 'member')).id)).key;
    const archive = await zipOf({ 'notebook/SKILL.md': skillMd({ name: 'notebook', description: "Ann's notebook." }) });
    await request(ctx.app.getHttpServer())
      .post('/v1/skills')
      .set({ authorization: `Bearer ${keys.ann}` })
      .set('content-type', archive.contentType)
      .send(archive.body)
      .expect(201);
  });
  afterAll(async () => {
    await ctx?.close();
    tree?.cleanup();
  });

  it('a command that needs a personal skill misses it for everyone but its owner', async () => {
    expect(await commands('ann')).toEqual([
      expect.objectContaining({ name: 'jot', requiredSkills: ['notebook'], missingSkills: [] }),
    ]);
    expect(await commands('bob')).toEqual([
      expect.objectContaining({ name: 'jot', requiredSkills: ['notebook'], missingSkills: ['notebook'] }),
    ]);
  });
});
