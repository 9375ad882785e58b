import { realpathSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { SkillRegistryService } from '@skillhost/nest';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';

const WEATHER_MODULE = 'export async function execute(ctx) { return { success: true, output: ctx.input }; }\n';

/**
 * Skills: `pdf` (regular), `shell-helper` (needs bash); code directory: `weather` (skill.mjs), `pdf` (loses to the
 * regular one).
 */
function populate(tree: TempTree): void {
  writeSkill(tree, 'skills', 'pdf', { description: 'Works with PDF files.' });
  writeSkill(tree, 'skills', 'shell-helper', {
    description: 'Runs shell commands.',
    extra: 'metadata:\n  tools_required: bash',
  });
  writeSkill(tree, 'code', 'weather', { description: 'Tells the weather.' });
  tree.write('code/weather/skill.mjs', WEATHER_MODULE);
  writeSkill(tree, 'code', 'pdf', { description: 'A code pdf that loses.' });
  tree.write('code/pdf/skill.mjs', WEATHER_MODULE);
}

describe('code skills through the HTTP API', () => {
  let tree: TempTree;
  let ctx: ChatTestContext;
  const http = () => request(ctx.app.getHttpServer());

  beforeAll(async () => {
    tree = tempTree();
    populate(tree);
    ctx = await startChatApp([tree.path('skills')], { 'app.skills.code_directories': [tree.path('code')] });
  });
  afterAll(async () => {
    await ctx?.close();
    tree.cleanup();
  });

  it(
    'GET /v1/admin/skills shows code skills, the code directory, and a skill left out for a tool the ' + 'chats lack',
    async () => {
      const res = await http().get('/v1/admin/skills').expect(200);
      expect(res.body).toMatchObject({
        directories: [
          { configured: tree.path('skills'), path: tree.path('skills'), exists: true, skills: 1, invalid: 0 },
          { configured: tree.path('code'), path: tree.path('code'), exists: true, code: true, skills: 1, invalid: 0 },
        ],
        valid: [
          { name: 'pdf', source: tree.path('skills'), kind: 'instructions', origin: 'folder', scope: 'user' },
          { name: 'weather', source: tree.path('code'), kind: 'code', origin: 'folder', scope: 'user' },
        ],
        collisions: [
          { name: 'pdf', winner: { path: tree.path('skills/pdf') }, loser: { path: tree.path('code/pdf') } },
        ],
        unavailable: [
          {
            name: 'shell-helper',
            path: tree.path('skills/shell-helper'),
            source: tree.path('skills'),
            missingTools: ['bash'],
            reason:
              "It needs tools the chats of this server do not have: 'bash' (offered only while scripts are on: " +
              'app.scripts.enabled = true); it is left out of the catalogue until they are offered.',
          },
        ],
      });
      expect(res.body.directories[0]).not.toHaveProperty('code');
      expect(ctx.app.get(SkillRegistryService).get('weather').code).toEqual({
        module: realpathSync(tree.path('code/weather/skill.mjs')),
      });
    },
  );

  it('keeps the left-out skill out of the catalogue and the skill routes', async () => {
    expect((await http().get('/v1/skills-catalogue?format=markdown').expect(200)).text).toBe(
      '- pdf: Works with PDF files.\n- weather: Tells the weather.',
    );
    expect((await http().get('/v1/skills/shell-helper').expect(404)).body).toMatchObject({
      code: 'SKILL_NOT_FOUND',
      message: expect.stringMatching(/^Skill 'shell-helper' not offered: It needs tools .* Available: pdf, weather$/),
    });
  });

  it('serves a programmatic skill registered at run time from memory, and drops it when unregistered', async () => {
    const registry = ctx.app.get(SkillRegistryService);
    registry.register({
      name: 'release-notes',
      description: 'Writes release notes.',
      instructions: 'STEP-ONE',
      resources: { 'references/style.md': 'STYLE' },
    });
    try {
      expect(
        (await http().get('/v1/skills').expect(200)).body.skills.map((skill: { name: string }) => skill.name),
      ).toEqual(['pdf', 'release-notes', 'weather']);
      expect((await http().get('/v1/skills/release-notes/body').expect(200)).body).toMatchObject({ body: 'STEP-ONE' });
      expect((await http().get('/v1/skills/release-notes').expect(200)).body).toMatchObject({
        source: 'programmatic:workspace',
        resources: { files: [{ path: 'references/style.md', size: 5 }] },
      });
      expect((await http().get('/v1/skills/release-notes/resources/references/style.md').expect(200)).text).toBe(
        'STYLE',
      );
      const report = (await http().get('/v1/admin/skills').expect(200)).body;
      expect(report.valid).toContainEqual({
        name: 'release-notes',
        path: 'programmatic:workspace/release-notes',
        source: 'programmatic:workspace',
        warnings: [],
        kind: 'instructions',
        origin: 'programmatic',
        scope: 'workspace',
        digest: null,
        store: null,
      });
    } finally {
      registry.unregister('release-notes');
    }
    await http().get('/v1/skills/release-notes').expect(404);
  });
});

describe('code skills with scripts on', () => {
  let tree: TempTree;
  let ctx: ChatTestContext;

  beforeAll(async () => {
    tree = tempTree();
    populate(tree);
    ctx = await startChatApp([tree.path('skills')], {
      'app.skills.code_directories': [tree.path('code')],
      'app.scripts.enabled': true,
    });
  });
  afterAll(async () => {
    await ctx?.close();
    tree.cleanup();
  });

  it('offers a skill that needs bash', async () => {
    const res = await request(ctx.app.getHttpServer()).get('/v1/admin/skills').expect(200);
    expect(res.body.valid.map((skill: { name: string }) => skill.name)).toEqual(['pdf', 'shell-helper', 'weather']);
    expect(res.body.unavailable).toEqual([]);
  });
});
