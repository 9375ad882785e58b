import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { skillDigest } from '../../src/domain/skills/store/index-skill-digest.js';
import { UsersService } from '../../src/domain/users/users.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { query } from '../support/database.js';
import { serveGitOverHttp } from '../support/git-http-server.js';
import { type GitRepo, gitRepo, markerHook } from '../support/files/git-repo.js';
import { skillMd, tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { tarGzOf } from '../support/skill-archives.js';

const DIGEST = /^sha256:[0-9a-f]{64}$/;
const sha256 = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

const report = (guide: string) => ({
  'skills/report/SKILL.md': skillMd({ name: 'report', description: 'Writes weekly reports.' }),
  'skills/report/references/guide.md': guide,
});

describe('importing skills into the store: git repositories and other servers', () => {
  let tree: TempTree;
  let repo: GitRepo;
  let ctx: ChatTestContext;
  let other: ChatTestContext;
  let otherBase: string;
  let hostile: Server;
  let hostileBase: string;
  let first: string;
  let second: string;
  const savedGlobal = process.env.GIT_CONFIG_GLOBAL;
  const keys: Record<string, string> = {};
  const http = () => request(ctx.app.getHttpServer());
  const importAs = (user: string, source: string, path = '/v1/admin/skills/import') =>
    http()
      .post(path)
      .set({ authorization: `Bearer ${keys[user]}` })
      .send({ source });
  const installedCount = async () =>
    (await query<{ n: number }>(ctx.db.url, 'SELECT count(*)::int AS n FROM installed_skills'))[0].n;

  beforeAll(async () => {
    tree = tempTree('skillhost-import-');
    repo = gitRepo(tree.path('repo'));
    first = repo.commit(
      {
        ...report('guide, first edition'),
        'skills/pdf/SKILL.md': skillMd({ name: 'pdf', description: 'Works with PDF files.' }),
        'README.md': 'not a skill',
      },
      'first',
    );
    repo.tag('v1');
    second = repo.commit(report('guide, second edition'), 'second');
    repo.link('linked/escape/data.txt', '/etc/hostname');
    repo.link('linked/self/SKILL.md', '../escape/SKILL.md');
    repo.commit({ 'linked/escape/SKILL.md': skillMd({ name: 'escape' }), ...marketplaces() }, 'links and marketplaces');
    // Hooks a fetch or checkout could run, here and in the importing user's own git configuration.
    markerHook(tree.path('repo', 'bare.git', 'hooks'), 'post-checkout', tree.path('marker'));
    markerHook(tree.path('global-hooks'), 'post-checkout', tree.path('marker'));
    tree.write('gitconfig', `[core]\n\thooksPath = ${tree.path('global-hooks')}\n`);
    process.env.GIT_CONFIG_GLOBAL = tree.path('gitconfig');
    repo.push();

    ctx = await startChatApp([], {
      'app.auth.mode': 'api_key',
      'app.skills.store_directory': tree.path('store'),
      // The member's imports here read servers on 127.0.0.1, a loopback address members may not reach unless listed.
      'app.skills.import.member_hosts': ['127.0.0.1'],
    });
    const users = ctx.app.get(UsersService);
    for (const [name, role] of [
      ['root', 'admin'],
      ['ann', 'member'],
    ] as const)
      keys[name] = (await users.createKey((await users.createUser(name, role)).id)).key;

    writeSkill(tree, 'other-skills', 'glossary', { description: 'Explains team words.' });
    tree.write('other-skills/glossary/terms/a.md', 'A: a letter');
    writeSkill(tree, 'other-skills', 'onboarding', { description: 'Onboards a new hire.' });
    other = await startChatApp([tree.path('other-skills')], { 'app.auth.mode': 'none' });
    await other.app.listen(0, '127.0.0.1');
    otherBase = `http://127.0.0.1:${(other.app.getHttpServer().address() as AddressInfo).port}`;

    hostile = await startHostileIndex(
      (
        await tarGzOf({
          'packed/SKILL.md': skillMd({ name: 'packed', description: 'Comes as an archive.' }),
          'packed/notes.md': 'packed notes',
        })
      ).body,
    );
    hostileBase = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    if (savedGlobal === undefined) delete process.env.GIT_CONFIG_GLOBAL;
    else process.env.GIT_CONFIG_GLOBAL = savedGlobal;
    await ctx?.close();
    await other?.close();
    await new Promise((resolve) => hostile?.close(resolve));
    tree?.cleanup();
  });

  it(
    'imports one skill folder at a tag from a bare repository over file://, recording URL, ref and ' + 'commit',
    async () => {
      const source = `git+file://${repo.bare}#v1:skills/report`;
      const answer = await importAs('root', source).expect(201);
      expect(answer.body.skills).toEqual([
        expect.objectContaining({ name: 'report', scope: 'shared', version: 1, created: true }),
      ]);
      expect(answer.body.skills[0].files.map((file: { path: string }) => file.path)).toEqual([
        'SKILL.md',
        'references/guide.md',
      ]);
      const versions = await http()
        .get('/v1/skills/report/versions')
        .set({ authorization: `Bearer ${keys.root}` })
        .expect(200);
      expect(versions.body.versions[0].source).toEqual({
        url: `file://${repo.bare}`,
        ref: 'v1',
        path: 'skills/report',
        commit: first,
      });
      const guide = await http()
        .get('/v1/skills/report/resources/references/guide.md')
        .set({ authorization: `Bearer ${keys.root}` });
      expect(guide.text).toContain('first edition');
    },
  );

  it('imports every skill under a path at the default branch: the new commit becomes a new version', async () => {
    const answer = await importAs('root', `git+file://${repo.bare}#:skills`).expect(201);
    expect(answer.body.skills.map((skill: { name: string; version: number }) => [skill.name, skill.version])).toEqual([
      ['pdf', 1],
      ['report', 2],
    ]);
    const versions = await http()
      .get('/v1/skills/report/versions')
      .set({ authorization: `Bearer ${keys.root}` })
      .expect(200);
    expect(versions.body.versions[1].source).toMatchObject({ path: 'skills/report', commit: expect.any(String) });
    expect(versions.body.versions[1].source.commit).not.toBe(first);
    expect(versions.body.versions[1].source.ref).toBeUndefined();
    // A ref by its commit id gives the same content: the same version, nothing new (200).
    const again = await importAs('root', `git+file://${repo.bare}#${second}:skills/report`).expect(200);
    expect(again.body.skills[0]).toMatchObject({ name: 'report', version: 2, created: false });
  });

  it('never runs a hook: neither the repository’s nor one the user’s git configuration names', () => {
    expect(existsSync(tree.path('marker'))).toBe(false);
  });

  it('refuses a skill holding a symbolic link (the archive rules), installing nothing', async () => {
    const before = await installedCount();
    const answer = await importAs('root', `git+file://${repo.bare}#:linked/escape`).expect(400);
    expect(answer.body).toMatchObject({ code: 'INVALID_ARCHIVE' });
    expect(answer.body.message).toContain("'data.txt' is a symbolic link");
    const linkedSkill = await importAs('root', `git+file://${repo.bare}#:linked/self`).expect(400);
    expect(linkedSkill.body.message).toContain("'SKILL.md' is a symbolic link");
    expect(await installedCount()).toBe(before);
  });

  it(
    "imports a plugin marketplace's skills from a repository; plugins from elsewhere are named in " + 'warnings',
    async () => {
      const answer = await importAs('root', `git+file://${repo.bare}#:market`).expect(201);
      expect(answer.body.skills.map((skill: { name: string }) => skill.name)).toEqual([
        'lint-rules',
        'style-guide',
        'changelog',
      ]);
      expect(answer.body.warnings).toEqual([
        "Plugin 'remote' comes from elsewhere (github acme/remote-plugin): import it from its own source.",
        "Plugin 'hooks-only' has no skills.",
      ]);
      const versions = await http()
        .get('/v1/skills/changelog/versions')
        .set({ authorization: `Bearer ${keys.root}` })
        .expect(200);
      expect(versions.body.versions[0].source).toMatchObject({ path: 'market/plugins/release/extra/changelog' });
      const before = await installedCount();
      const evil = await importAs('root', `git+file://${repo.bare}#:market-evil`).expect(400);
      expect(evil.body.message).toContain("plugin 'escape' points outside the marketplace's folder");
      expect(await installedCount()).toBe(before);
    },
  );

  it.each([
    ['git+ssh://host/repo.git', 'git sources are git+https://, git+http:// or git+file://'],
    ['git+file:///x.git#main:../etc', "without '..'"],
    ['git+file:///x.git#--upload-pack=touch', 'is not a git branch, tag or commit'],
    ['ftp://host/index.json', "'ftp:' is no source kind"],
    ['not a url', 'a space or a control character'],
  ])('answers 400 VALIDATION_FAILED for the bad source %s', async (source, problem) => {
    const answer = await importAs('root', source).expect(400);
    expect(answer.body.code).toBe('VALIDATION_FAILED');
    expect(answer.body.message).toContain(problem);
  });

  it('answers 400 for a path without skills and 422 for a ref or repository that is not there', async () => {
    const empty = await importAs('root', `git+file://${repo.bare}#:README.md`).expect(400);
    expect(empty.body.message).toContain("Nothing to import at 'README.md'");
    const noRef = await importAs('root', `git+file://${repo.bare}#no-such-tag`).expect(422);
    expect(noRef.body).toMatchObject({ code: 'IMPORT_SOURCE_UNREACHABLE' });
    expect(noRef.body.message).toContain('no-such-tag');
    const noRepo = await importAs('root', `git+file://${tree.path('nowhere.git')}`).expect(422);
    expect(noRepo.body.code).toBe('IMPORT_SOURCE_UNREACHABLE');
  });

  it('imports over HTTP from git http-backend on 127.0.0.1: a member installs a personal skill at a tag', async () => {
    const server = await serveGitOverHttp(repo.bare);
    try {
      const source = `git+${server.url}/bare.git#v1:skills/pdf`;
      const answer = await importAs('ann', source, '/v1/skills/import').expect(201);
      expect(answer.body.skills).toEqual([
        expect.objectContaining({ name: 'pdf', scope: 'personal', owner: 'ann', version: 1, created: true }),
      ]);
      const versions = await http()
        .get('/v1/skills/pdf/versions?scope=personal')
        .set({ authorization: `Bearer ${keys.ann}` })
        .expect(200);
      expect(versions.body.versions[0].source).toEqual({
        url: `${server.url}/bare.git`,
        ref: 'v1',
        path: 'skills/pdf',
        commit: first,
      });
      const missing = await importAs('ann', `git+${server.url}/nothing.git`, '/v1/skills/import').expect(422);
      expect(missing.body.code).toBe('IMPORT_SOURCE_UNREACHABLE');
    } finally {
      await server.close();
    }
  });

  it("lets a member import from git only over the network: git+file:// reads the server's disk (400)", async () => {
    const answer = await importAs('ann', `git+file://${repo.bare}#:skills/pdf`, '/v1/skills/import').expect(400);
    expect(answer.body.code).toBe('VALIDATION_FAILED');
    expect(answer.body.message).toContain("it reads this server's own disk, which only admins may");
    await importAs('ann', `git+file://${repo.bare}#:skills/pdf`, '/v1/admin/skills/import').expect(403);
  });

  it("imports a second Skillhost's discovery index, and one skill of it by #name as a personal skill", async () => {
    const index = `${otherBase}/.well-known/agent-skills/index.json`;
    const all = await importAs('root', index).expect(201);
    expect(all.body.skills.map((skill: { name: string }) => skill.name)).toEqual(['glossary', 'onboarding']);
    const glossary = all.body.skills[0];
    expect(glossary.files.map((file: { path: string }) => file.path)).toEqual(['SKILL.md', 'terms/a.md']);
    const versions = await http()
      .get('/v1/skills/glossary/versions')
      .set({ authorization: `Bearer ${keys.root}` })
      .expect(200);
    expect(versions.body.versions[0].source).toEqual({ url: index, digest: expect.stringMatching(DIGEST) });
    // This server's own index names the imported version, by the digest clients pin and its number.
    let listed: { name: string; version: unknown } | undefined;
    for (let tries = 0; listed === undefined && tries < 50; tries++) {
      const own = await http()
        .get('/.well-known/agent-skills/index.json')
        .set({ authorization: `Bearer ${keys.root}` });
      listed = own.body.skills?.find((skill: { name: string }) => skill.name === 'glossary');
      if (listed === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(listed?.version).toEqual({ digest: expect.stringMatching(DIGEST), number: 1 });
    const mine = await importAs('ann', `${index}#onboarding`, '/v1/skills/import').expect(201);
    expect(mine.body.skills).toEqual([
      expect.objectContaining({ name: 'onboarding', scope: 'personal', owner: 'ann' }),
    ]);
    const missing = await importAs('root', `${index}#nope`).expect(400);
    expect(missing.body.message).toContain('it has: glossary, onboarding');
  });

  it("imports an index's skill-md and archive entries, each checked against its digest", async () => {
    const answer = await importAs('root', `${hostileBase}/kinds/index.json`).expect(201);
    expect(
      answer.body.skills.map((skill: { name: string; files: { path: string }[] }) => [
        skill.name,
        skill.files.map((file) => file.path),
      ]),
    ).toEqual([
      ['single', ['SKILL.md']],
      ['packed', ['SKILL.md', 'notes.md']],
    ]);
    const lying = await importAs('root', `${hostileBase}/bad-archive/index.json`).expect(422);
    expect(lying.body.message).toContain("skill 'packed' (");
    expect(lying.body.message).toContain('does not match its digest');
  });

  it.each([
    ['mismatch', 'IMPORT_VERIFICATION_FAILED', 'does not match its digest'],
    ['size-lie', 'IMPORT_VERIFICATION_FAILED', 'declared or allowed'],
    ['short', 'IMPORT_VERIFICATION_FAILED', 'smaller than the'],
    ['other-origin', 'IMPORT_VERIFICATION_FAILED', 'is on another origin'],
    ['traversal', 'INVALID_ARCHIVE', "has a '..' segment"],
    ['absolute', 'INVALID_ARCHIVE', 'is an absolute path'],
    ['duplicate', 'INVALID_ARCHIVE', 'appears more than once'],
    ['file-and-folder', 'INVALID_ARCHIVE', 'is both a file and a folder'],
    ['not-an-index', 'IMPORT_VERIFICATION_FAILED', 'is not a discovery index'],
    ['redirect', 'IMPORT_SOURCE_UNREACHABLE', 'a redirect, not followed'],
  ])('installs nothing from a hostile index (%s): %s', async (kind, code, message) => {
    const before = await installedCount();
    const answer = await importAs('root', `${hostileBase}/${kind}/index.json`);
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.status).toBeLessThan(500);
    expect(answer.body.code).toBe(code);
    expect(answer.body.message).toContain(message);
    expect(await installedCount()).toBe(before);
  });

  it('answers 422 IMPORT_SOURCE_UNREACHABLE for an index nobody serves', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const answer = await importAs('root', `http://127.0.0.1:${port}/.well-known/agent-skills/index.json`).expect(422);
    expect(answer.body).toMatchObject({ code: 'IMPORT_SOURCE_UNREACHABLE' });
    expect(answer.body.message).toContain('ECONNREFUSED');
  });
});

/**
 * An index server that lies in one way per path prefix. The good skill comes first in each, so a
 * lie in the second skill proves that nothing is installed until everything is checked.
 */
async function startHostileIndex(archive: Buffer): Promise<Server> {
  const good = skillMd({ name: 'fine', description: 'A fine skill.' });
  const evil = skillMd({ name: 'evil', description: 'An evil skill.' });
  const fine = {
    name: 'fine',
    description: 'A fine skill.',
    digest: skillDigest([{ path: 'SKILL.md', digest: sha256(good) }]),
  };
  const file = (path: string, content: string, url: string, size = Buffer.byteLength(content)) => ({
    path,
    digest: sha256(content),
    size,
    url,
  });
  const indexes: Record<string, ReturnType<typeof file>[]> = {
    mismatch: [{ ...file('SKILL.md', evil, '/files/evil'), digest: sha256('something else') }],
    'size-lie': [file('SKILL.md', evil, '/files/evil', 10)],
    short: [file('SKILL.md', evil, '/files/evil', Buffer.byteLength(evil) + 5)],
    'other-origin': [file('SKILL.md', evil, 'http://localhost:1/files/evil')],
    traversal: [file('../../SKILL.md', evil, '/files/evil')],
    absolute: [file('/etc/SKILL.md', evil, '/files/evil')],
    duplicate: [file('SKILL.md', evil, '/files/evil'), file('./SKILL.md', evil, '/files/evil')],
    'file-and-folder': [
      file('SKILL.md', evil, '/files/evil'),
      file('notes', evil, '/files/evil'),
      file('notes/a.md', evil, '/files/evil'),
    ],
  };
  const single = skillMd({ name: 'single', description: 'A SKILL.md alone.' });
  const archiveDigest = `sha256:${createHash('sha256').update(archive).digest('hex')}`;
  const kinds = (digest: string) => ({
    version: '0.2.0',
    skills: [
      {
        name: 'single',
        description: 'A SKILL.md alone.',
        type: 'skill-md',
        url: '/files/single',
        digest: sha256(single),
      },
      { name: 'packed', description: 'Comes as an archive.', type: 'archive', url: '/files/packed.tar.gz', digest },
    ],
  });
  const server = createServer((req, res) => {
    const [, kind, rest] = (req.url ?? '').split('/');
    if (kind === 'files' && rest === 'single') return res.end(single);
    if (kind === 'files' && rest === 'packed.tar.gz') return res.end(archive);
    if (kind === 'kinds') return res.end(JSON.stringify(kinds(archiveDigest)));
    if (kind === 'bad-archive') return res.end(JSON.stringify(kinds(sha256('another archive'))));
    if (kind === 'files') return res.end(rest === 'good' ? good : evil);
    if (kind === 'redirect') return res.writeHead(302, { location: '/elsewhere' }).end();
    if (kind === 'not-an-index') return res.end(JSON.stringify({ hello: 'world' }));
    const files = indexes[kind];
    if (files === undefined) return res.writeHead(404).end();
    res.setHeader('content-type', 'application/json');
    res.end(
      JSON.stringify({
        version: '0.2.0',
        skills: [
          { ...fine, files: [file('SKILL.md', good, '/files/good')] },
          { name: 'evil', description: 'An evil skill.', digest: skillDigest(files), files },
        ],
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/**
 * A marketplace with local plugins (a `./` path, a bare name under `pluginRoot`, extra skill paths), and a hostile one.
 */
function marketplaces(): Record<string, string> {
  const skill = (name: string) => skillMd({ name, description: `The ${name} skill.` });
  return {
    'market/.claude-plugin/marketplace.json': JSON.stringify({
      name: 'team',
      owner: { name: 'Team' },
      metadata: { pluginRoot: './plugins' },
      plugins: [
        { name: 'code', source: './plugins/code' },
        { name: 'remote', source: { source: 'github', repo: 'acme/remote-plugin' } },
        { name: 'release', source: 'release', skills: ['./extra'] },
        { name: 'hooks-only', source: './plugins/hooks-only' },
      ],
    }),
    'market/plugins/code/skills/lint-rules/SKILL.md': skill('lint-rules'),
    'market/plugins/code/skills/style-guide/SKILL.md': skill('style-guide'),
    'market/plugins/release/extra/changelog/SKILL.md': skill('changelog'),
    'market/plugins/hooks-only/hooks/hooks.json': '{}',
    'market-evil/.claude-plugin/marketplace.json': JSON.stringify({
      name: 'evil',
      plugins: [{ name: 'escape', source: './../skills' }],
    }),
  };
}
