import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { skillDigest } from '../../src/domain/skills/store/index-skill-digest.js';
import { keysFor } from '../support/api-keys.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { query } from '../support/database.js';
import { serveGitOverHttp } from '../support/git-http-server.js';
import { type GitRepo, GIT_TEST_IDENTITY, gitRepo } from '../support/files/git-repo.js';
import { skillMd, tempTree, type TempTree } from '../support/files/skill-tree.js';

const sha256 = (content: string | Buffer) => `sha256:${createHash('sha256').update(content).digest('hex')}`;
const GIT_ENV = { ...process.env, ...GIT_TEST_IDENTITY };

describe('what an import may reach and take: destinations, clone size, submodules, concurrency, digests', () => {
  let tree: TempTree;
  let ctx: ChatTestContext;
  let index: IndexServer;
  let listed: IndexServer;
  let big: GitRepo;
  let main: GitRepo;
  let mainOverHttp: { url: string; close: () => Promise<void> };
  let redirecting: Server;
  let pointing: { url: string; close: () => Promise<void> };
  const keys: Record<string, string> = {};
  const http = () => request(ctx.app.getHttpServer());
  const importAs = (user: 'root' | 'ann', body: Record<string, unknown>) =>
    http()
      .post(user === 'root' ? '/v1/admin/skills/import' : '/v1/skills/import')
      .set({ authorization: `Bearer ${keys[user]}` })
      .send(body);
  const installedCount = async () =>
    (await query<{ n: number }>(ctx.db.url, 'SELECT count(*)::int AS n FROM installed_skills'))[0].n;

  beforeAll(async () => {
    tree = tempTree('skillhost-import-guards-');
    index = await startIndexServer();
    listed = await startIndexServer();

    big = gitRepo(tree.path('big'));
    big.commit(
      {
        'SKILL.md': skillMd({ name: 'big', description: 'Carries a large file.' }),
        // Random bytes do not compress: the pack is as large as the file.
        'assets/blob.bin': randomBytes(3 * 1024 * 1024).toString('base64'),
      },
      'big',
    );
    big.push();

    const vendored = gitRepo(tree.path('vendored'));
    vendored.commit({ 'SKILL.md': skillMd({ name: 'vendored', description: 'Lives in a submodule.' }) }, 'vendored');
    vendored.push();
    main = gitRepo(tree.path('main'));
    main.commit({ 'skills/own/SKILL.md': skillMd({ name: 'own', description: 'Lives in the repository.' }) }, 'own');
    execFileSync(
      'git',
      ['-c', 'protocol.file.allow=always', 'submodule', 'add', '--quiet', `file://${vendored.bare}`, 'skills/vendored'],
      { cwd: tree.path('main', 'work'), env: GIT_ENV },
    );
    main.commit({}, 'vendored as a submodule');
    main.push();
    mainOverHttp = await serveGitOverHttp(main.bare);
    // On a listed host, a repository whose submodule is on an unlisted loopback one (written by hand: git would
    // fetch it to add it).
    const inward = gitRepo(tree.path('inward'));
    const vendoredCommit = execFileSync('git', ['-C', tree.path('vendored', 'work'), 'rev-parse', 'HEAD'], {
      encoding: 'utf8',
    }).trim();
    mkdirSync(tree.path('inward', 'work', 'skills', 'inner'), { recursive: true });
    execFileSync('git', ['update-index', '--add', '--cacheinfo', `160000,${vendoredCommit},skills/inner`], {
      cwd: tree.path('inward', 'work'),
      env: GIT_ENV,
    });
    inward.commit(
      {
        '.gitmodules': `[submodule "inner"]\n\tpath = skills/inner\n\turl = ${index.base}/inner.git\n`,
        'skills/own/SKILL.md': skillMd({ name: 'own', description: 'Lives in the repository.' }),
      },
      'a submodule on an unlisted host',
    );
    inward.push();
    pointing = await serveGitOverHttp(inward.bare);
    // A listed host that sends every request on to an unlisted one.
    redirecting = createServer((req, res) => res.writeHead(302, { location: `${index.base}${req.url}` }).end());
    await new Promise<void>((resolve) => redirecting.listen(0, '127.0.0.1', resolve));
    const redirectingPort = (redirecting.address() as AddressInfo).port;

    ctx = await startChatApp([], {
      'app.auth.mode': 'api_key',
      'app.skills.store_directory': tree.path('store'),
      'app.skills.import.member_hosts': [
        `127.0.0.1:${listed.port}`,
        `127.0.0.1:${new URL(mainOverHttp.url).port}`,
        `127.0.0.1:${redirectingPort}`,
        `127.0.0.1:${new URL(pointing.url).port}`,
      ],
      'app.skills.import.max_clone_bytes': 1024 * 1024,
      'app.skills.import.max_concurrent': 1,
    });
    Object.assign(keys, await keysFor(ctx.app, { root: 'admin', ann: 'member' }));
  });
  afterAll(async () => {
    await ctx?.close();
    await index?.close();
    await listed?.close();
    await mainOverHttp?.close();
    await pointing?.close();
    await new Promise((resolve) => redirecting?.close(resolve));
    tree?.cleanup();
  });

  describe("a member's destinations", () => {
    it('refuses an index on 127.0.0.1 (422 IMPORT_SOURCE_FORBIDDEN, loopback), fetching nothing', async () => {
      const before = index.requests.length;
      const answer = await importAs('ann', { source: `${index.base}/good/index.json` }).expect(422);
      expect(answer.body).toMatchObject({
        code: 'IMPORT_SOURCE_FORBIDDEN',
        details: { host: '127.0.0.1', reason: 'loopback' },
      });
      expect(answer.body.message).toContain('[app.skills.import] member_hosts');
      // Which address a name resolves to inside the network is for admins.
      expect(answer.body.details.address).toBeUndefined();
      expect(index.requests.length).toBe(before);
    });

    it('refuses a name that resolves to a loopback address (localhost)', async () => {
      const answer = await importAs('ann', { source: `http://localhost:${index.port}/good/index.json` }).expect(422);
      expect(answer.body).toMatchObject({
        code: 'IMPORT_SOURCE_FORBIDDEN',
        details: { host: 'localhost', reason: 'loopback' },
      });
    });

    it('refuses a git repository on 127.0.0.1, and over a name resolving there', async () => {
      const server = await serveGitOverHttp(big.bare);
      try {
        for (const host of ['127.0.0.1', 'localhost']) {
          const source = `git+${server.url.replace('127.0.0.1', host)}/bare.git`;
          const answer = await importAs('ann', { source }).expect(422);
          expect(answer.body).toMatchObject({ code: 'IMPORT_SOURCE_FORBIDDEN', details: { host, reason: 'loopback' } });
        }
      } finally {
        await server.close();
      }
    });

    it('lets a member import from a host:port listed in member_hosts', async () => {
      const answer = await importAs('ann', { source: `${listed.base}/good/index.json` }).expect(201);
      expect(answer.body.skills).toEqual([expect.objectContaining({ name: 'fine', scope: 'personal', owner: 'ann' })]);
    });

    it('follows no redirect from a listed host to an unlisted one, for git or an index', async () => {
      const before = index.requests.length;
      const redirector = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}`;
      const viaGit = await importAs('ann', { source: `git+${redirector}/bare.git` }).expect(422);
      expect(viaGit.body.code).toBe('IMPORT_SOURCE_UNREACHABLE');
      const viaIndex = await importAs('ann', { source: `${redirector}/good/index.json` }).expect(422);
      expect(viaIndex.body).toMatchObject({ code: 'IMPORT_SOURCE_UNREACHABLE' });
      expect(viaIndex.body.message).toContain('a redirect, not followed');
      expect(index.requests.length).toBe(before);
    });

    it("does not restrict an admin's import: 127.0.0.1 is read", async () => {
      const answer = await importAs('root', { source: `${index.base}/good/index.json` }).expect(201);
      expect(answer.body.skills).toEqual([expect.objectContaining({ name: 'fine', scope: 'shared' })]);
    });
  });

  it('stops a clone that grows past max_clone_bytes (422 IMPORT_TOO_LARGE), installing nothing', async () => {
    const before = await installedCount();
    const answer = await importAs('root', { source: `git+file://${big.bare}` }).expect(422);
    expect(answer.body).toMatchObject({ code: 'IMPORT_TOO_LARGE', details: { maxBytes: 1024 * 1024 } });
    expect(answer.body.message).toContain('[app.skills.import] max_clone_bytes');
    expect(await installedCount()).toBe(before);
  });

  describe('submodules', () => {
    it('are not followed by default, and are checked out with submodules: true (git+file://, an admin)', async () => {
      const source = `git+file://${main.bare}#:skills`;
      const without = await importAs('root', { source }).expect(201);
      expect(without.body.skills.map((skill: { name: string }) => skill.name)).toEqual(['own']);
      const withSubmodules = await importAs('root', { source, submodules: true }).expect(201);
      expect(withSubmodules.body.skills.map((skill: { name: string; created: boolean }) => skill.name)).toEqual([
        'own',
        'vendored',
      ]);
      const versions = await http()
        .get('/v1/skills/vendored/versions')
        .set({ authorization: `Bearer ${keys.root}` })
        .expect(200);
      expect(versions.body.versions[0].source).toMatchObject({ url: `file://${main.bare}`, path: 'skills/vendored' });
    });

    it("refuse a member's submodule on file:// (this server's disk), even from a listed host", async () => {
      const before = await installedCount();
      const answer = await importAs('ann', {
        source: `git+${mainOverHttp.url}/bare.git#:skills`,
        submodules: true,
      }).expect(422);
      expect(answer.body.code).toBe('IMPORT_SOURCE_FORBIDDEN');
      expect(answer.body.message).toContain("reads this server's own disk");
      expect(await installedCount()).toBe(before);
      // Without submodules the same member's import of the listed host works.
      await importAs('ann', { source: `git+${mainOverHttp.url}/bare.git#:skills` }).expect(201);
    });

    it("refuse a member's submodule on an unlisted loopback host, fetching nothing from it", async () => {
      const before = index.requests.length;
      const source = `git+${pointing.url}/bare.git#:skills`;
      const answer = await importAs('ann', { source, submodules: true }).expect(422);
      expect(answer.body).toMatchObject({
        code: 'IMPORT_SOURCE_FORBIDDEN',
        details: { host: '127.0.0.1', reason: 'loopback' },
      });
      expect(index.requests.length).toBe(before);
    });

    it('are for git sources only (400)', async () => {
      const answer = await importAs('root', { source: `${index.base}/good/index.json`, submodules: true }).expect(400);
      expect(answer.body.message).toContain('a discovery index has none');
    });
  });

  it('refuses a second import beyond max_concurrent (503 IMPORT_BUSY, Retry-After), then takes it', async () => {
    const held = index.hold();
    const first = importAs('root', { source: `${index.base}/slow/index.json` }).then((answer) => answer);
    await held.arrived;
    const busy = await importAs('root', { source: `${index.base}/good/index.json` }).expect(503);
    expect(busy.body).toMatchObject({ code: 'IMPORT_BUSY', details: { maxConcurrent: 1 } });
    expect(busy.headers['retry-after']).toBe('10');
    held.release();
    expect((await first).status).toBe(200);
    await importAs('root', { source: `${index.base}/good/index.json` }).expect(200);
  });

  it(
    "refuses an index whose skill digest lies while each file's digest is right " + '(IMPORT_VERIFICATION_FAILED)',
    async () => {
      const before = await installedCount();
      const answer = await importAs('root', { source: `${index.base}/lying/index.json` }).expect(422);
      expect(answer.body.code).toBe('IMPORT_VERIFICATION_FAILED');
      expect(answer.body.message).toContain("skill 'fine''s files do not match the skill's digest");
      expect(await installedCount()).toBe(before);
    },
  );
});

interface IndexServer {
  base: string;
  port: number;
  /** Paths asked for, in order. */
  requests: string[];
  /** Holds the next `/slow/` index until released; `arrived` once it is asked for. */
  hold(): { arrived: Promise<void>; release: () => void };
  close(): Promise<void>;
}

/**
 * An index of one skill `fine` (SKILL.md and a note): `/good/` tells the truth, `/lying/` gives a skill digest that
 * is not its files' (each file's digest still right), `/slow/` is `/good/` once released.
 */
async function startIndexServer(): Promise<IndexServer> {
  const files = {
    'SKILL.md': skillMd({ name: 'fine', description: 'A fine skill.' }),
    'notes.md': 'notes',
  };
  const entries = Object.entries(files).map(([path, content]) => ({
    path,
    digest: sha256(content),
    size: Buffer.byteLength(content),
    url: `/files/${path}`,
  }));
  const indexOf = (digest: string) =>
    JSON.stringify({
      version: '0.2.0',
      skills: [{ name: 'fine', description: 'A fine skill.', digest, files: entries }],
    });
  const requests: string[] = [];
  let gate: { arrived: () => void; released: Promise<void> } | undefined;
  const server: Server = createServer(async (req, res) => {
    const path = req.url ?? '/';
    requests.push(path);
    const [, kind, rest] = path.split('/');
    if (kind === 'files') return res.end(files[rest as keyof typeof files]);
    if (kind === 'slow' && gate !== undefined) {
      const { arrived, released } = gate;
      gate = undefined;
      arrived();
      await released;
    }
    if (kind === 'good' || kind === 'slow') return res.end(indexOf(skillDigest(entries)));
    if (kind === 'lying') return res.end(indexOf(skillDigest([entries[0]])));
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    port,
    requests,
    hold() {
      let release!: () => void;
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      let arrived!: () => void;
      const arrivedPromise = new Promise<void>((resolve) => {
        arrived = resolve;
      });
      gate = { arrived, released };
      return { arrived: arrivedPromise, release };
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
