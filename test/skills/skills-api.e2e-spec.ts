import { symlinkSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { createTestApp } from '../support/app.js';
import { skillMd, tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';

describe('Skills HTTP API', () => {
  let tree: TempTree;
  let app: NestFastifyApplication;
  const http = () => request(app.getHttpServer());

  beforeAll(async () => {
    tree = tempTree();
    tree.write(
      'skills/demo/SKILL.md',
      skillMd({
        name: 'demo',
        description: 'Demo <skill> & co.',
        extra: 'metadata:\n  owner: team',
        body: '# Demo\n\nSteps.\n',
      }),
    );
    tree.write('skills/demo/references/REFERENCE.md', 'MARKER-REF\n');
    tree.write('skills/demo/references/big.md', 'b'.repeat(3000));
    tree.write('skills/demo/assets/bin.dat', Buffer.from([1, 0, 2]));
    tree.write('secret.txt', 'TOP-SECRET');
    symlinkSync(tree.path('secret.txt'), tree.path('skills/demo/escape.txt'));
    writeSkill(tree, 'skills', 'zeta', { description: 'Last.' });
    writeSkill(tree, 'skills', 'Broken');
    writeSkill(tree, 'more', 'zeta', { description: 'Shadowed.' });
    app = await createTestApp({
      'app.skills.enabled': true,
      'app.skills.directories': [tree.path('skills'), tree.path('more'), tree.path('missing')],
      'app.skills.max_resource_bytes': 2048,
    });
  });

  afterAll(async () => {
    await app?.close();
    tree.cleanup();
  });

  it('GET /v1/skills lists the loaded skills in name order', async () => {
    const res = await http().get('/v1/skills').expect(200);
    expect(res.body).toEqual({
      count: 2,
      scannedAt: expect.any(String),
      explicitPrefixes: ['/'],
      skills: [
        {
          name: 'demo',
          description: 'Demo <skill> & co.',
          frontmatter: { name: 'demo', description: 'Demo <skill> & co.', metadata: { owner: 'team' } },
        },
        { name: 'zeta', description: 'Last.', frontmatter: { name: 'zeta', description: 'Last.' } },
      ],
    });
  });

  it('GET /v1/skills/:name gives metadata, where it comes from (never a host path) and the resource list', async () => {
    const res = await http().get('/v1/skills/demo').expect(200);
    expect(res.body).toMatchObject({
      name: 'demo',
      source: 'shared folder 1',
      warnings: [],
      resources: {
        files: [
          { path: 'assets/bin.dat', size: 3 },
          { path: 'references/REFERENCE.md', size: 11 },
          { path: 'references/big.md', size: 3000 },
        ],
        truncated: false,
      },
    });
  });

  it(
    'GET /v1/skills/:name/resources lists the files, of one kind with ?type=, never following a link out of the ' +
      'skill',
    async () => {
      const all = await http().get('/v1/skills/demo/resources').expect(200);
      expect(all.body).toEqual({
        files: [
          { path: 'assets/bin.dat', size: 3 },
          { path: 'references/REFERENCE.md', size: 11 },
          { path: 'references/big.md', size: 3000 },
        ],
        truncated: false,
      });
      expect(
        (await http().get('/v1/skills/demo/resources?type=references').expect(200)).body.files.map(
          (f: { path: string }) => f.path,
        ),
      ).toEqual(['references/REFERENCE.md', 'references/big.md']);
      expect((await http().get('/v1/skills/demo/resources?type=assets').expect(200)).body.files).toEqual([
        { path: 'assets/bin.dat', size: 3 },
      ]);
      expect((await http().get('/v1/skills/demo/resources?type=scripts').expect(200)).body).toEqual({
        files: [],
        truncated: false,
      });
      expect((await http().get('/v1/skills/demo/resources?type=other').expect(200)).body).toEqual({
        files: [],
        truncated: false,
      });
      const bad = await http().get('/v1/skills/demo/resources?type=secrets').expect(400);
      expect(bad.body.details.problems).toEqual(['type: type must be one of scripts, references, assets, other']);
      expect((await http().get('/v1/skills/nope/resources').expect(404)).body.code).toBe('SKILL_NOT_FOUND');
    },
  );

  it('GET /v1/skills/:name/body gives level 2', async () => {
    const res = await http().get('/v1/skills/demo/body').expect(200);
    expect(res.body).toEqual({
      name: 'demo',
      frontmatter: { name: 'demo', description: 'Demo <skill> & co.', metadata: { owner: 'team' } },
      body: '# Demo\n\nSteps.',
      truncated: false,
    });
  });

  it('GET /v1/skills/:name/resources/<path> gives level 3 as text, with a truncation header', async () => {
    const small = await http().get('/v1/skills/demo/resources/references/REFERENCE.md').expect(200);
    expect(small.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(small.headers['x-skillhost-truncated']).toBe('false');
    expect(small.text).toBe('MARKER-REF\n');
    const big = await http().get('/v1/skills/demo/resources/references/big.md').expect(200);
    expect(big.headers['x-skillhost-truncated']).toBe('true');
    expect(big.text).toBe(
      `${'b'.repeat(2048)}\n\n[Truncated: showing the first 2048 of 3000 bytes of references/big.md.]`,
    );
  });

  it.each([
    ['/v1/skills/nope', 404, 'SKILL_NOT_FOUND', "Skill 'nope' not found. Available: demo, zeta"],
    ['/v1/skills/nope/body', 404, 'SKILL_NOT_FOUND', "Skill 'nope' not found. Available: demo, zeta"],
    [
      '/v1/skills/demo/resources/missing.md',
      404,
      'RESOURCE_NOT_FOUND',
      "Resource 'missing.md' not found in skill 'demo'. Available: assets/bin.dat, references/REFERENCE.md, " +
        'references/big.md',
    ],
    [
      '/v1/skills/demo/resources/..%2F..%2Fsecret.txt',
      400,
      'RESOURCE_OUTSIDE_SKILL',
      "Resource path '../../secret.txt' leaves the skill folder; '..' is not allowed.",
    ],
    [
      '/v1/skills/demo/resources/%2Fetc%2Fpasswd',
      400,
      'RESOURCE_OUTSIDE_SKILL',
      "Resource path '/etc/passwd' is absolute; give a path relative to the skill folder, e.g. " +
        'references/REFERENCE.md.',
    ],
    [
      '/v1/skills/demo/resources/escape.txt',
      400,
      'RESOURCE_OUTSIDE_SKILL',
      "Resource 'escape.txt' of skill 'demo' leads outside the skill folder (through a symbolic link); it " +
        'cannot be read.',
    ],
    [
      '/v1/skills/demo/resources/references',
      400,
      'RESOURCE_IS_DIRECTORY',
      "Resource 'references' of skill 'demo' is a directory; name a file inside it.",
    ],
    [
      '/v1/skills/demo/resources/assets/bin.dat',
      415,
      'RESOURCE_BINARY',
      "Resource 'assets/bin.dat' of skill 'demo' is a binary file; only UTF-8 text can be read.",
    ],
    [
      '/v1/skills/demo/resources/',
      400,
      'VALIDATION_FAILED',
      'Resource path must not be empty; give a path relative to the skill folder, e.g. references/REFERENCE.md.',
    ],
    [
      '/v1/skills-catalogue?format=yaml',
      400,
      'VALIDATION_FAILED',
      'Invalid request: format: format must be one of json, xml, markdown',
    ],
    ['/v1/no-such-route', 404, 'ROUTE_NOT_FOUND', 'Cannot GET /v1/no-such-route'],
    ['/v1/skills/demo/resources/a%00b', 400, 'RESOURCE_OUTSIDE_SKILL', 'Resource path must not contain NUL bytes.'],
    [
      '/v1/skills/%E0%A4%A',
      400,
      'VALIDATION_FAILED',
      "Invalid request: '/v1/skills/%E0%A4%A' is not a valid url component",
    ],
  ])('GET %s → %i %s', async (url, status, code, message) => {
    const res = await http().get(url).expect(status);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toMatchObject({ code, message });
    expect(JSON.stringify(res.body)).not.toContain(tree.root);
  });

  it('GET /v1/skills-catalogue renders each format', async () => {
    const json = await http().get('/v1/skills-catalogue').expect(200);
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(json.text).toBe(
      '{"available_skills":[{"name":"demo","description":"Demo <skill> & co."},{"name":"zeta","description":"Last."}]}',
    );
    const xml = await http().get('/v1/skills-catalogue?format=xml').expect(200);
    expect(xml.text).toContain('<description>Demo &lt;skill&gt; &amp; co.</description>');
    const markdown = await http().get('/v1/skills-catalogue?format=markdown').expect(200);
    expect(markdown.text).toBe('- demo: Demo <skill> & co.\n- zeta: Last.');
  });

  it('GET /v1/admin/skills reports valid, invalid, collisions, warnings and directories', async () => {
    const res = await http().get('/v1/admin/skills').expect(200);
    expect(res.body).toMatchObject({
      mode: 'standard',
      durationMs: expect.any(Number),
      valid: [{ name: 'demo' }, { name: 'zeta' }],
      invalid: [{ path: tree.path('skills', 'Broken'), errors: ["Skill name 'Broken' must be lowercase"] }],
      collisions: [
        { name: 'zeta', winner: { path: tree.path('skills', 'zeta') }, loser: { path: tree.path('more', 'zeta') } },
      ],
      warnings: [expect.stringContaining('does not exist')],
      directories: [
        { path: tree.path('skills'), exists: true, skills: 2, invalid: 1 },
        { path: tree.path('more'), exists: true, skills: 0, invalid: 0 },
        { path: tree.path('missing'), exists: false, skills: 0, invalid: 0 },
      ],
    });
  });

  it('POST /v1/admin/skills/reload picks up new skills in a fresh snapshot', async () => {
    writeSkill(tree, 'skills', 'added');
    const before = await http().get('/v1/skills').expect(200);
    expect(before.body.count).toBe(2);
    const res = await http().post('/v1/admin/skills/reload').expect(200);
    expect(res.body.valid.map((s: { name: string }) => s.name)).toEqual(['added', 'demo', 'zeta']);
    expect((await http().get('/v1/skills').expect(200)).body.count).toBe(3);
  });
});

describe('Skills HTTP API with skills disabled', () => {
  let tree: TempTree;
  let app: NestFastifyApplication;
  const logs: string[] = [];

  beforeAll(async () => {
    tree = tempTree();
    writeSkill(tree, 'skills', 'demo');
    const capture = (message: unknown) => void logs.push(String(message));
    app = await createTestApp(
      { 'app.skills.directories': [tree.path('skills')] },
      { log: capture, warn: capture, error: capture },
    );
  });

  it('runs no discovery at start-up (while the same app with skills on logs its scan)', async () => {
    expect(logs.filter((line) => /Loaded \d+ skill/.test(line))).toEqual([]);
    const enabledLogs: string[] = [];
    const capture = (message: unknown) => void enabledLogs.push(String(message));
    const enabled = await createTestApp(
      { 'app.skills.enabled': true, 'app.skills.directories': [tree.path('skills')] },
      { log: capture, warn: capture, error: capture, debug: capture },
    );
    await enabled.close();
    expect(enabledLogs.filter((line) => /Loaded \d+ skill/.test(line))).toEqual([
      expect.stringContaining('Loaded 1 skill(s)'),
    ]);
  });

  afterAll(async () => {
    await app?.close();
    tree.cleanup();
  });

  it.each([
    '/v1/skills',
    '/v1/skills/demo',
    '/v1/skills/demo/body',
    '/v1/skills/demo/resources/SKILL.md',
    '/v1/skills-catalogue',
    '/v1/admin/skills',
  ])('GET %s → 404 SKILLS_DISABLED', async (url) => {
    const res = await request(app.getHttpServer()).get(url).expect(404);
    expect(res.body).toEqual({
      code: 'SKILLS_DISABLED',
      message: 'Skills are disabled on this server (app.skills.enabled = false).',
    });
  });

  it('POST /v1/admin/skills/reload → 404 SKILLS_DISABLED', async () => {
    expect((await request(app.getHttpServer()).post('/v1/admin/skills/reload').expect(404)).body.code).toBe(
      'SKILLS_DISABLED',
    );
  });

  it('still answers health', async () => {
    expect((await request(app.getHttpServer()).get('/health').expect(200)).body).toEqual({
      status: 'ok',
      skills: 'disabled',
    });
  });
});
