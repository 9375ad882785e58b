import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { UsersService } from '../../src/domain/users/users.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { skillMd, tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { zipOf } from '../support/skill-archives.js';
import { runCli } from '../../src/cli/skillhost.js';
import { run } from './run-cli.js';

/** `skillhost sync` against a live Skillhost, into real temp folders. */
describe('skillhost sync', () => {
  let tree: TempTree;
  let ctx: ChatTestContext;
  let base: string;
  let env: Record<string, string>;
  let rootKey: string;

  beforeAll(async () => {
    tree = tempTree();
    writeSkill(tree, 'skills', 'pdf', { description: 'Works with PDF files.', body: 'PDF v1\n' });
    tree.write('skills/pdf/references/forms.md', 'FORMS v1\n');
    writeSkill(tree, 'skills', 'notes', { description: 'Takes notes.' });
    writeSkill(tree, 'skills', 'gone', { description: 'Will be removed from the server.' });
    ctx = await startChatApp([tree.path('skills')], { 'app.auth.mode': 'api_key' });
    const users = ctx.app.get(UsersService);
    const dev = (await users.createKey((await users.createUser('dev', 'member')).id)).key;
    rootKey = (await users.createKey((await users.createUser('root', 'admin')).id)).key;
    env = { SKILLHOST_API_KEY: dev };
    await ctx.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await ctx?.close();
    tree?.cleanup();
  });

  const target = () => tree.path('home', '.claude', 'skills');
  const syncHome = (...args: string[]) =>
    run(['sync', '--server', base, '--target', 'claude', ...args], tree.root, env, tree.path('home'));
  const lock = () => JSON.parse(readFileSync(join(target(), 'skills-lock.json'), 'utf8'));
  const reload = async () => {
    const response = await fetch(`${base}/v1/admin/skills/reload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${rootKey}` },
    });
    expect(response.status).toBe(200);
  };

  it('plans without changing anything under --dry-run', async () => {
    const result = await syncHome('--dry-run');
    expect(result.code).toBe(0);
    expect(result.out).toContain('would add pdf');
    expect(result.out).toContain('would add notes');
    expect(result.out).toContain('Dry run, nothing changed');
    expect(existsSync(target())).toBe(false);
  });

  it('mirrors the skills into the home folder with a lock, and a second run costs one 304', async () => {
    const first = await syncHome();
    expect([first.code, first.err]).toEqual([0, '']);
    expect(first.out).toMatch(/^add gone sha256:/m);
    expect(first.out).toContain('3 added, 0 updated, 0 removed');
    expect(readFileSync(join(target(), 'pdf', 'references', 'forms.md'), 'utf8')).toBe('FORMS v1\n');
    expect(readFileSync(join(target(), 'pdf', 'SKILL.md'), 'utf8')).toContain('PDF v1');
    expect(readdirSync(target()).sort()).toEqual(['gone', 'notes', 'pdf', 'skills-lock.json']);
    const written = lock();
    expect(written.etag).toMatch(/^"sha256:[0-9a-f]{64}"$/);
    expect(written.skills.pdf).toEqual({
      digest: expect.stringMatching(/^sha256:/),
      source: `${base}/`,
      files: [
        { path: 'SKILL.md', digest: sha256(readFileSync(join(target(), 'pdf', 'SKILL.md'))) },
        { path: 'references/forms.md', digest: sha256(Buffer.from('FORMS v1\n')) },
      ],
    });
    const index = await fetch(`${base}/.well-known/agent-skills/index.json`, {
      headers: { authorization: `Bearer ${env.SKILLHOST_API_KEY}`, 'if-none-match': written.etag },
    });
    expect(index.status).toBe(304);
    const second = await syncHome();
    expect(second.code).toBe(0);
    expect(second.out).toBe(`${target()}: up to date (the index has not changed since the last sync)`);
  });

  it('takes an update from the server, downloading only what changed', async () => {
    tree.write('skills/pdf/references/forms.md', 'FORMS v2\n');
    await reload();
    const result = await syncHome('--json');
    expect(result.code).toBe(0);
    const report = JSON.parse(result.out);
    expect(report.targets[0].changes).toEqual([
      { action: 'update', name: 'pdf', digest: expect.stringMatching(/^sha256:/) },
    ]);
    expect(readFileSync(join(target(), 'pdf', 'references', 'forms.md'), 'utf8')).toBe('FORMS v2\n');
    expect(lock().skills.pdf.digest).toBe(report.targets[0].changes[0].digest);
    expect(readdirSync(target()).filter((name) => name.startsWith('.'))).toEqual([]);
  });

  it('removes a skill gone from the server, and keeps one edited here with a warning naming the files', async () => {
    writeFileSync(join(target(), 'notes', 'SKILL.md'), 'my own notes\n');
    rmSync(tree.path('skills', 'gone'), { recursive: true });
    rmSync(tree.path('skills', 'notes'), { recursive: true });
    await reload();
    const result = await syncHome();
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^remove gone/m);
    expect(result.err).toMatch(/^release notes .*edited here \(SKILL\.md\)/m);
    expect(existsSync(join(target(), 'gone'))).toBe(false);
    expect(readFileSync(join(target(), 'notes', 'SKILL.md'), 'utf8')).toBe('my own notes\n');
    expect(Object.keys(lock().skills)).toEqual(['pdf']);
    // Released: the folder is the user's now, and a skill of that name on the server is not written over it.
    writeSkill(tree, 'skills', 'notes', { description: 'Takes notes again.' });
    await reload();
    const again = await syncHome();
    expect(again.out).toMatch(/^keep notes .*sync did not create it/m);
    expect(readFileSync(join(target(), 'notes', 'SKILL.md'), 'utf8')).toBe('my own notes\n');
  });

  it('takes a skill again whose folder was removed by hand, though the index did not change', async () => {
    rmSync(join(target(), 'pdf'), { recursive: true });
    const result = await syncHome();
    expect(result.out).toMatch(/^add pdf .*: its folder was gone$/m);
    expect(readFileSync(join(target(), 'pdf', 'references', 'forms.md'), 'utf8')).toBe('FORMS v2\n');
  });

  it('leaves alone a folder it owns that was replaced by a symbolic link, and never follows it', async () => {
    writeSkill(tree, 'outside', 'pdf', { description: 'Not synced.' });
    rmSync(join(target(), 'pdf'), { recursive: true });
    symlinkSync(tree.path('outside', 'pdf'), join(target(), 'pdf'));
    tree.write('skills/pdf/extra.md', 'EXTRA\n');
    await reload();
    const result = await syncHome();
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/^keep pdf .*replaced by a link or a file: left alone$/m);
    expect(readdirSync(tree.path('outside', 'pdf'))).toEqual(['SKILL.md']);
    rmSync(join(target(), 'pdf'));
    rmSync(tree.path('skills', 'pdf', 'extra.md'));
    await reload();
    expect((await syncHome()).out).toMatch(/^add pdf /m);
  });

  it('keeps a pinned version until unpinned, and says so', async () => {
    const pinned = lock().skills.pdf.digest as string;
    const pin = await syncHome('--pin', `pdf@${pinned}`);
    expect(pin.code).toBe(0);
    expect(lock().skills.pdf.pinned).toBe(true);
    // A pinned skill whose folder was removed by hand comes back at its pinned version, still pinned.
    rmSync(join(target(), 'pdf'), { recursive: true });
    expect((await syncHome()).out).toMatch(/^add pdf /m);
    expect(lock().skills.pdf).toMatchObject({ digest: pinned, pinned: true });
    tree.write('skills/pdf/references/forms.md', 'FORMS v3\n');
    await reload();
    const held = await syncHome();
    expect(held.out).toMatch(new RegExp(`^pinned pdf .*pinned at ${pinned}; the server has sha256:`, 'm'));
    expect(readFileSync(join(target(), 'pdf', 'references', 'forms.md'), 'utf8')).toBe('FORMS v2\n');
    const unpin = await syncHome('--unpin', 'pdf');
    expect(unpin.out).toMatch(/^update pdf/m);
    expect(readFileSync(join(target(), 'pdf', 'references', 'forms.md'), 'utf8')).toBe('FORMS v3\n');
    expect(lock().skills.pdf.pinned).toBeUndefined();
    const unknown = await syncHome('--pin', `pdf@sha256:${'0'.repeat(64)}`);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain('neither installed here');
  });

  it('repeats under --watch, each later run answered 304, until stopped', async () => {
    const stop = new AbortController();
    const out: string[] = [];
    const code = await runCli(['sync', '--server', base, '--dir', 'watched', '--watch', '--interval', '1'], {
      out: (line) => {
        out.push(line);
        // The second run: stop the loop there.
        if (line.endsWith('up to date (the index has not changed since the last sync)')) stop.abort();
      },
      err: (line) => out.push(line),
      cwd: tree.root,
      env,
      home: tree.path('home'),
      signal: stop.signal,
    });
    expect(code).toBe(0);
    expect(out).toEqual([
      expect.stringMatching(/^add notes /),
      expect.stringMatching(/^add pdf /),
      `${tree.path('watched')}: 2 added, 0 updated, 0 removed, 0 kept, 0 pinned, 0 refused (from ${base}/)`,
      `${tree.path('watched')}: up to date (the index has not changed since the last sync)`,
    ]);
  });

  it('writes the project-level folder with --project, and refuses a target that is a symbolic link', async () => {
    const project = await run(['sync', '--server', base, '--target', 'codex', '--project'], tree.root, env, '/nowhere');
    expect(project.code).toBe(0);
    expect(existsSync(tree.path('.codex', 'skills', 'pdf', 'SKILL.md'))).toBe(true);
    mkdirSync(tree.path('elsewhere'));
    symlinkSync(tree.path('elsewhere'), tree.path('linked'));
    const linked = await run(['sync', '--server', base, '--dir', 'linked'], tree.root, env, '/nowhere');
    expect(linked.code).toBe(1);
    expect(linked.err).toContain('symbolic link');
    expect(readdirSync(tree.path('elsewhere'))).toEqual([]);
  });

  it('says which folder it cannot write, in one line', async () => {
    writeFileSync(tree.path('plain-file'), 'not a folder\n');
    const result = await run(['sync', '--server', base, '--dir', 'plain-file/skills'], tree.root, env, '/h');
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/^\/.*plain-file\/skills: stopped: ENOTDIR: not a directory/);
  });

  it('answers usage errors with exit code 2', async () => {
    expect((await run(['sync', '--target', 'claude'], tree.root, env, '/h')).code).toBe(2);
    expect((await run(['sync', '--server', base, '--target', 'vim'], tree.root, env, '/h')).code).toBe(2);
    const unset = await run(['sync', '--server', base, '--dir', 'x', '--key-env', 'MY_KEY'], tree.root, {}, '/h');
    expect([unset.code, unset.err.split('\n')[0]]).toEqual([
      2,
      '--key-env MY_KEY: that variable is not set (or empty); it should hold an API key.',
    ]);
    // This server wants a key: without one, nothing is written and the answer says what to set.
    const noKey = await run(['sync', '--server', base, '--dir', 'x'], tree.root, {}, '/h');
    expect(noKey.code).toBe(1);
    expect(noKey.err).toContain(
      'answered 401 (set SKILLHOST_API_KEY, or --key-env NAME, to a valid API key, or store one: skillhost login)',
    );
    expect(existsSync(tree.path('x'))).toBe(false);
  });
});

describe('skillhost sync pinning a version the index no longer offers (versions.json)', () => {
  let tree: TempTree;
  let ctx: ChatTestContext;
  let base: string;
  let env: Record<string, string>;
  let rootKey: string;
  const report = (guide: string) => ({
    'SKILL.md': skillMd({ name: 'report', description: 'Writes weekly reports.' }),
    'references/guide.md': guide,
  });
  const install = async (files: Record<string, string>) => {
    const zip = await zipOf(files);
    const answer = await fetch(`${base}/v1/admin/skills`, {
      method: 'POST',
      headers: { authorization: `Bearer ${rootKey}`, 'content-type': zip.contentType },
      body: zip.body,
    });
    expect(answer.status).toBe(201);
  };
  const versions = async () => {
    const answer = await fetch(`${base}/.well-known/agent-skills/versions.json`, {
      headers: { authorization: `Bearer ${env.SKILLHOST_API_KEY}` },
    });
    const list = (await answer.json()) as {
      skills: { name: string; versions: { digest: string; version: { digest: string; number: number } }[] }[];
    };
    return list.skills.find((skill) => skill.name === 'report')!.versions;
  };
  const sync = (...args: string[]) => run(['sync', '--server', base, '--dir', 'out', ...args], tree.root, env, '/x');
  const guide = () => readFileSync(tree.path('out', 'report', 'references', 'guide.md'), 'utf8');
  const locked = () => JSON.parse(readFileSync(tree.path('out', 'skills-lock.json'), 'utf8')).skills.report;

  beforeAll(async () => {
    tree = tempTree();
    ctx = await startChatApp([], { 'app.auth.mode': 'api_key', 'app.skills.store_directory': tree.path('store') });
    const users = ctx.app.get(UsersService);
    env = { SKILLHOST_API_KEY: (await users.createKey((await users.createUser('dev', 'member')).id)).key };
    rootKey = (await users.createKey((await users.createUser('root', 'admin')).id)).key;
    await ctx.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;
    await install(report('first edition\n'));
    await install(report('second edition\n'));
  });

  afterAll(async () => {
    await ctx?.close();
    tree?.cleanup();
  });

  it('takes an earlier version by its skill digest, pinned, and brings it back when its folder goes', async () => {
    expect((await sync()).code).toBe(0);
    expect(guide()).toBe('second edition\n');
    const [, first] = await versions();
    const pin = await sync('--pin', `report@${first.digest}`);
    expect([pin.code, pin.err]).toEqual([0, '']);
    expect(pin.out).toMatch(/^update report /m);
    expect(guide()).toBe('first edition\n');
    expect(locked()).toMatchObject({ digest: first.digest, pinned: true });
    // Kept on later runs, and fetched again from versions.json when its folder goes.
    expect((await sync()).out).toContain('up to date');
    rmSync(tree.path('out', 'report'), { recursive: true });
    const back = await sync();
    expect(back.out).toMatch(/^add report /m);
    expect(guide()).toBe('first edition\n');
    expect(locked()).toMatchObject({ digest: first.digest, pinned: true });
  });

  it("takes a pin by the store's version digest (what `skillhost versions` shows) as the same version", async () => {
    const [second] = await versions();
    const pin = await sync('--pin', `report@${second.version.digest}`);
    expect([pin.code, pin.err]).toEqual([0, '']);
    expect(guide()).toBe('second edition\n');
    expect(locked()).toMatchObject({ digest: second.digest, pinned: true });
    const unknown = await sync('--pin', `report@sha256:${'1'.repeat(64)}`);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toContain("nor among the versions the server's versions.json lists");
    expect(guide()).toBe('second edition\n');
  });
});

describe('skillhost sync against a bad server', () => {
  let tree: TempTree;
  let hostile: Server;
  let elsewhere: Server;
  let base: string;
  let elsewhereHits = 0;
  /** What the hostile server answers: the index body and the files by URL path. */
  let index: string;
  let files: Map<string, Buffer>;
  const env = { SKILLHOST_API_KEY: 'skh_hostile-test-key' };

  beforeAll(async () => {
    tree = tempTree();
    hostile = await listen((req, res) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      if (path === '/.well-known/agent-skills/index.json') return res.writeHead(200).end(index);
      if (path === '/moved/.well-known/agent-skills/index.json')
        return res.writeHead(302, { location: `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/` }).end();
      const body = files.get(path);
      if (body === undefined) return res.writeHead(404).end();
      res.writeHead(200).end(body);
    });
    elsewhere = await listen((_req, res) => {
      elsewhereHits++;
      res.writeHead(200).end('stolen');
    });
    base = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((done) => hostile?.close(done));
    await new Promise((done) => elsewhere?.close(done));
    tree?.cleanup();
  });

  const sync = () => run(['sync', '--server', base, '--dir', 'out'], tree.root, env, '/nowhere');

  /** Serves skills whose files are given by path; `lie` alters one entry after its honest values are made. */
  function serve(skills: Record<string, Record<string, string>>, lie?: (entry: IndexEntry) => void): void {
    files = new Map();
    const entries = Object.entries(skills).map(([name, content]) => {
      const list = Object.entries(content).map(([path, text]) => {
        const url = `/.well-known/agent-skills/${name}/${path}`;
        files.set(url, Buffer.from(text));
        return { path, digest: sha256(Buffer.from(text)), size: Buffer.byteLength(text), url };
      });
      const entry: IndexEntry = { name, description: `${name} skill`, digest: skillLevelDigest(list), files: list };
      return entry;
    });
    for (const entry of entries) lie?.(entry);
    index = JSON.stringify({ version: '0.2.0', skills: entries });
  }

  it('takes a good version, then refuses a bad one and leaves the good one as it was', async () => {
    serve({ good: { 'SKILL.md': 'GOOD v1' }, other: { 'SKILL.md': 'OTHER v1' } });
    expect((await sync()).code).toBe(0);
    const lockBefore = readFileSync(tree.path('out', 'skills-lock.json'), 'utf8');
    serve({ good: { 'SKILL.md': 'GOOD v2' }, other: { 'SKILL.md': 'OTHER v2' } }, (entry) => {
      if (entry.name === 'good') files.set(entry.files[0].url, Buffer.from('EVIL v2'));
    });
    const result = await sync();
    expect(result.code).toBe(1);
    expect(result.err).toMatch(
      /^refused good .*nothing changed: file SKILL\.md: its bytes have digest sha256:\w+; the index says/m,
    );
    expect(readFileSync(tree.path('out', 'good', 'SKILL.md'), 'utf8')).toBe('GOOD v1');
    // Each skill is its own unit: the honest one is updated.
    expect(readFileSync(tree.path('out', 'other', 'SKILL.md'), 'utf8')).toBe('OTHER v2');
    expect(JSON.parse(readFileSync(tree.path('out', 'skills-lock.json'), 'utf8')).skills.good).toEqual(
      JSON.parse(lockBefore).skills.good,
    );
    expect(readdirSync(tree.path('out')).filter((name) => name.startsWith('.'))).toEqual([]);
  });

  it.each([
    ['a path with ..', (e: IndexEntry) => (e.files[0].path = '../escape.md'), "'.' or '..' segment"],
    ['an absolute path', (e: IndexEntry) => (e.files[0].path = '/etc/escape'), 'the path is absolute'],
    ['a backslash', (e: IndexEntry) => (e.files[0].path = 'a\\b.md'), 'backslash'],
    ['an empty segment', (e: IndexEntry) => (e.files[0].path = 'a//b.md'), 'empty segment'],
    ['a size past the cap', (e: IndexEntry) => (e.files[0].size = 17 * 1024 * 1024), 'sync takes files of at most'],
    ['a size smaller than the file', (e: IndexEntry) => (e.files[1].size = 3), 'more than the 3 bytes the index says'],
    [
      'a size larger than the file',
      (e: IndexEntry) => (e.files[0].size = 3),
      'the server sent 1 bytes; the index says 3',
    ],
  ])('refuses %s and writes nothing', async (_what, lie, reason) => {
    serve({ fresh: { 'SKILL.md': 'FRESH', 'x.md': 'x' } }, (entry) => {
      entry.files = [entry.files[1], entry.files[0]];
      lie(entry);
    });
    const result = await run(['sync', '--server', base, '--dir', 'bad'], tree.root, env, '/nowhere');
    expect(result.code).toBe(1);
    expect(result.err).toContain(reason);
    expect(existsSync(tree.path('bad', 'fresh'))).toBe(false);
    expect(existsSync(tree.path('escape.md'))).toBe(false);
  });

  it("refuses a skill whose digest is not the one its files' digests make, fetching none of it", async () => {
    serve({ fresh: { 'SKILL.md': 'FRESH', 'x.md': 'x' } }, (entry) => {
      entry.digest = sha256(Buffer.from('another version'));
    });
    const result = await run(['sync', '--server', base, '--dir', 'lying'], tree.root, env, '/nowhere');
    expect(result.code).toBe(1);
    expect(result.err).toMatch(/^refused fresh: its digest sha256:\w+ is not the one its files' digests make/m);
    expect(existsSync(tree.path('lying', 'fresh'))).toBe(false);
  });

  it('never sends the key to a file URL on another origin', async () => {
    const other = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;
    serve({ fresh: { 'SKILL.md': 'FRESH' } }, (entry) => (entry.files[0].url = `${other}/steal`));
    const result = await run(['sync', '--server', base, '--dir', 'bad'], tree.root, env, '/nowhere');
    expect(result.code).toBe(1);
    expect(result.err).toContain('not on the server');
    expect(elsewhereHits).toBe(0);
  });

  it('follows no redirect, so the key goes nowhere else', async () => {
    const result = await run(['sync', '--server', `${base}/moved`, '--dir', 'bad'], tree.root, env, '/nowhere');
    expect(result.code).toBe(1);
    expect(result.err).toContain('redirects are refused');
    expect(elsewhereHits).toBe(0);
  });

  it('changes nothing when the index is not JSON', async () => {
    index = '{"version": "0.2.0", "skills": [';
    const result = await sync();
    expect(result.code).toBe(1);
    expect(result.err).toContain('nothing changed: the index is not valid JSON');
    expect(readFileSync(tree.path('out', 'good', 'SKILL.md'), 'utf8')).toBe('GOOD v1');
  });
});

interface IndexEntry {
  name: string;
  description: string;
  digest: string;
  files: { path: string; digest: string; size: number; url: string }[];
}

/** The proposal's skill-level digest, worked out here as its text says (not with the server's code). */
function skillLevelDigest(files: { path: string; digest: string }[]): string {
  const lines = [...files]
    .sort((a, b) => Buffer.compare(Buffer.from(a.path), Buffer.from(b.path)))
    .map((file) => `${file.path}\0${file.digest.slice('sha256:'.length)}\n`);
  return sha256(Buffer.from(lines.join('')));
}

function sha256(bytes: Buffer): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> {
  return new Promise((done) => {
    const server = createServer(handler);
    server.listen(0, '127.0.0.1', () => done(server));
  });
}
