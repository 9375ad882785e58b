import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { keysFor } from '../support/api-keys.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { skillMd, tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { type UploadFiles, zipOf } from '../support/skill-archives.js';
import { collectText } from '../support/sse.js';

const sha256 = (bytes: string | Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
const VERSIONED_URL = /^\/\.well-known\/agent-skills\/report@sha256:[0-9a-f]{64}\//;

interface Listed {
  digest: string;
  version: { digest: string | null; number: number | null };
  current: boolean;
  installedAt: string | null;
  source: unknown;
  files: { path: string; digest: string; size: number; url: string }[];
}

/** `/.well-known/agent-skills/versions.json` and the versioned file URLs it lists, on real PostgreSQL. */
describe('the discovery index versions list', () => {
  let tree: TempTree;
  let ctx: ChatTestContext;
  const keys: Record<string, string> = {};
  const http = () => request(ctx.app.getHttpServer());
  const as = (user: string) => ({ authorization: `Bearer ${keys[user]}` });
  const report = (guide: string): UploadFiles => ({
    'SKILL.md': skillMd({ name: 'report', description: 'Writes weekly reports.' }),
    'references/guide.md': guide,
  });
  const install = async (user: string, path: string, files: UploadFiles) => {
    const zip = await zipOf(files);
    const answer = await http().post(path).set(as(user)).set('content-type', zip.contentType).send(zip.body);
    expect(answer.status).toBeLessThan(300);
    return answer.body as { version: number; digest: string };
  };
  const versionsOf = async (user: string) => {
    const answer = await http().get('/.well-known/agent-skills/versions.json').set(as(user)).expect(200);
    return answer.body as { version: string; skills: { name: string; current: string; versions: Listed[] }[] };
  };
  const fileAt = (user: string, url: string) => http().get(url).set(as(user)).buffer(true).parse(collectText);

  beforeAll(async () => {
    tree = tempTree('skillhost-versions-');
    writeSkill(tree, 'skills', 'notes', { description: 'Takes notes.', body: 'NOTES\n' });
    ctx = await startChatApp([tree.path('skills')], {
      'app.auth.mode': 'api_key',
      'app.skills.store_directory': tree.path('store'),
    });
    Object.assign(keys, await keysFor(ctx.app, { root: 'admin', dev: 'member', eve: 'member' }));
    await install('root', '/v1/admin/skills', report('guide, first edition\n'));
    await install('root', '/v1/admin/skills', report('guide, second edition\n'));
    await install('dev', '/v1/skills', {
      'SKILL.md': skillMd({ name: 'diary', description: "Dev's own diary." }),
    });
  });

  afterAll(async () => {
    await ctx?.close();
    tree?.cleanup();
  });

  it('lists every version of a store skill, newest first, the current one named by the index digest', async () => {
    const list = await versionsOf('dev');
    expect(list.version).toBe('0.2.0');
    const index = (await http().get('/.well-known/agent-skills/index.json').set(as('dev')).expect(200)).body as {
      skills: { name: string; digest: string }[];
    };
    const entry = list.skills.find((skill) => skill.name === 'report')!;
    expect(entry.versions.map((version) => [version.version.number, version.current])).toEqual([
      [2, true],
      [1, false],
    ]);
    expect(entry.current).toBe(index.skills.find((skill) => skill.name === 'report')!.digest);
    expect(entry.versions[0].digest).toBe(entry.current);
    expect(entry.versions[1].digest).not.toBe(entry.current);
    expect(entry.versions[1]).toMatchObject({
      version: { digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/), number: 1 },
      installedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      source: null,
    });
    expect(entry.versions[1].files.map((file) => file.path)).toEqual(['SKILL.md', 'references/guide.md']);
    for (const file of entry.versions[1].files) expect(file.url).toMatch(VERSIONED_URL);
  });

  it("serves an earlier version's files at its URLs, immutable, each matching its listed digest and size", async () => {
    const entry = (await versionsOf('dev')).skills.find((skill) => skill.name === 'report')!;
    const guide = entry.versions[1].files.find((file) => file.path === 'references/guide.md')!;
    const answer = await fileAt('dev', guide.url).expect(200);
    expect(answer.body as string).toBe('guide, first edition\n');
    expect(sha256(answer.body as string)).toBe(guide.digest);
    expect(Buffer.byteLength(answer.body as string)).toBe(guide.size);
    expect(answer.headers['cache-control']).toBe('private, max-age=31536000, immutable');
    expect(answer.headers['content-disposition']).toBe('attachment');
    expect(answer.headers.etag).toBe(`"${guide.digest}"`);
    // The skill-level digest is the proposal's, over the files listed: a client can check what it fetched.
    const manifest = entry.versions[1].files
      .map((file) => `${file.path}\0${file.digest.slice('sha256:'.length)}\n`)
      .sort()
      .join('');
    expect(sha256(manifest)).toBe(entry.versions[1].digest);
  });

  it('lists a skill from a folder once, at the index URLs, with no number', async () => {
    const notes = (await versionsOf('dev')).skills.find((skill) => skill.name === 'notes')!;
    expect(notes.versions).toHaveLength(1);
    expect(notes.versions[0]).toMatchObject({ current: true, installedAt: null, version: { number: null } });
    expect(notes.versions[0].files[0].url).toBe('/.well-known/agent-skills/notes/SKILL.md');
  });

  it("keeps a personal skill's versions to its owner", async () => {
    const devList = await versionsOf('dev');
    const diary = devList.skills.find((skill) => skill.name === 'diary')!;
    expect(diary.versions[0].version.number).toBe(1);
    expect((await versionsOf('eve')).skills.map((skill) => skill.name)).not.toContain('diary');
    const url = diary.versions[0].files[0].url;
    expect((await fileAt('dev', url).expect(200)).body as string).toContain("Dev's own diary.");
    const refused = await http().get(url).set(as('eve'));
    expect([refused.status, refused.body.code]).toEqual([404, 'SKILL_NOT_FOUND']);
  });

  it("refuses a version digest that is not one of this skill's, a path not in it, and a way out", async () => {
    const list = await versionsOf('dev');
    const diaryDigest = list.skills.find((skill) => skill.name === 'diary')!.versions[0].version.digest!;
    const other = await http().get(`/.well-known/agent-skills/report@${diaryDigest}/SKILL.md`).set(as('dev'));
    expect([other.status, other.body.code]).toEqual([404, 'RESOURCE_NOT_FOUND']);
    expect(other.body.message).toContain('versions.json');
    const v1 = list.skills.find((skill) => skill.name === 'report')!.versions[1].version.digest!;
    const missing = await http().get(`/.well-known/agent-skills/report@${v1}/references/other.md`).set(as('dev'));
    expect([missing.status, missing.body.code]).toEqual([404, 'RESOURCE_NOT_FOUND']);
    const wayOut = await http()
      .get(`/.well-known/agent-skills/report@${v1}/references/%2e%2e/%2e%2e/notes/SKILL.md`)
      .set(as('dev'));
    expect(wayOut.status).toBeGreaterThanOrEqual(400);
    expect(wayOut.status).toBeLessThan(500);
    const malformed = await http().get('/.well-known/agent-skills/report@sha256:abc/SKILL.md').set(as('dev'));
    expect(malformed.status).toBe(404);
  });

  it('answers 304 to its own ETag, and a new one after a rollback names the older version current', async () => {
    const first = await http().get('/.well-known/agent-skills/versions.json').set(as('dev')).expect(200);
    await http()
      .get('/.well-known/agent-skills/versions.json')
      .set({ ...as('dev'), 'if-none-match': first.headers.etag })
      .expect(304);
    await http().post('/v1/admin/skills/report/rollback').set(as('root')).send({ version: 1 }).expect(200);
    const after = await http()
      .get('/.well-known/agent-skills/versions.json')
      .set({ ...as('dev'), 'if-none-match': first.headers.etag })
      .expect(200);
    const entry = (after.body as Awaited<ReturnType<typeof versionsOf>>).skills.find((s) => s.name === 'report')!;
    expect(entry.versions.map((version) => [version.version.number, version.current])).toEqual([
      [2, false],
      [1, true],
    ]);
    expect(entry.current).toBe(entry.versions[1].digest);
  });

  it('leaves out a switched-off skill, and its versions are not served', async () => {
    const v1 = (await versionsOf('dev')).skills.find((skill) => skill.name === 'report')!.versions[1];
    await http().put('/v1/admin/skills/report/enabled').set(as('root')).send({ enabled: false }).expect(200);
    try {
      expect((await versionsOf('dev')).skills.map((skill) => skill.name)).not.toContain('report');
      const refused = await http().get(v1.files[0].url).set(as('dev'));
      expect(refused.status).toBeGreaterThanOrEqual(400);
      expect(refused.status).toBeLessThan(500);
    } finally {
      await http().put('/v1/admin/skills/report/enabled').set(as('root')).send({ enabled: true }).expect(200);
    }
  });

  it('needs a key, as the index does', async () => {
    await http().get('/.well-known/agent-skills/versions.json').expect(401);
  });
});
