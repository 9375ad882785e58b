import { existsSync, mkdirSync, realpathSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { AppError, discoverSkills, ErrorCode } from '@skillhost/core';
import { configWith } from '../../src/config/config-loader.js';
import { CodeSkillService, type CodeSkillInvocation } from '../../src/domain/skills/code/code-skill.service.js';
import { SkillRegistryService, SkillResourcesService } from '@skillhost/nest';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { makeFifo, makeSymlink } from './special-files.js';
import { skillsSettingsOf } from '../../src/domain/skills/skills-settings-of.js';

/** A skill.mjs that leaves a file behind when it is ever imported: proof that it ran. */
const markerModule = (marker: string) =>
  `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'ran');\nexport async ` +
  `function execute() { return { success: true, output: 'ran' }; }\n`;

const ECHO_MODULE = `export async function execute(ctx) {
  return { success: true, output: ctx.input + ' in ' + ctx.config.units, metadata: { chatId: ctx.chatId } };
}
export function canHandle(query) { return query.includes('weather') ? 0.75 : 0; }
`;

const invocation = (overrides: Partial<CodeSkillInvocation> = {}): CodeSkillInvocation => ({
  input: 'Oslo',
  userMessage: 'weather in Oslo?',
  chatId: 'chat-1',
  llm: async () => 'unused',
  callTool: async () => ({ status: 'ok', output: 'unused' }),
  ...overrides,
});

function failure(work: () => unknown): { code: ErrorCode; message: string } {
  try {
    work();
  } catch (error) {
    if (AppError.isInstance(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected an AppError');
}

describe('code skills', () => {
  let tree: TempTree;
  beforeEach(() => {
    tree = tempTree();
  });
  afterEach(() => tree.cleanup());

  const discover = () =>
    discoverSkills({
      directories: [{ configured: 'skills', path: tree.path('skills') }],
      codeDirectories: [{ configured: 'code', path: tree.path('code') }],
      mode: 'standard',
      maxDepth: 1,
      maxSkills: 100,
    });

  describe('discovery', () => {
    it('makes a skill of a code directory a code skill when skill.mjs is beside SKILL.md, by its real path', () => {
      writeSkill(tree, 'code', 'weather');
      tree.write('code/weather/skill.mjs', ECHO_MODULE);
      writeSkill(tree, 'code', 'plain');
      writeSkill(tree, 'code', 'linked');
      tree.write('elsewhere/linked.mjs', ECHO_MODULE);
      makeSymlink(tree.path('elsewhere/linked.mjs'), tree.path('code/linked/skill.mjs'));
      const sut = discover();
      const byName = Object.fromEntries(sut.skills.map((skill) => [skill.name, skill]));
      expect(byName.weather.code).toEqual({ module: realpathSync(tree.path('code/weather/skill.mjs')) });
      expect(byName.linked.code).toEqual({ module: realpathSync(tree.path('elsewhere/linked.mjs')) });
      expect(byName.plain.code).toBeUndefined();
      expect(sut.directories).toEqual([
        { configured: 'skills', path: tree.path('skills'), exists: false, skills: 0, invalid: 0 },
        { configured: 'code', path: tree.path('code'), exists: true, code: true, skills: 3, invalid: 0 },
      ]);
      expect(sut.warnings).toEqual([
        `Skills directory 'skills' (${tree.path('skills')}) does not exist or is not a readable folder; skipped`,
      ]);
    });

    it('ignores skill.mjs in a regular skills directory: just a file', () => {
      writeSkill(tree, 'skills', 'weather');
      tree.write('skills/weather/skill.mjs', ECHO_MODULE);
      expect(discover().skills[0]).toMatchObject({ name: 'weather', source: 'skills' });
      expect(discover().skills[0].code).toBeUndefined();
    });

    it('lets a regular directory win a name clash with a code directory, recorded as a collision', () => {
      writeSkill(tree, 'skills', 'weather', { description: 'Instructions only.' });
      writeSkill(tree, 'code', 'weather', { description: 'Runs code.' });
      tree.write('code/weather/skill.mjs', ECHO_MODULE);
      const sut = discover();
      expect(sut.skills).toEqual([expect.objectContaining({ name: 'weather', description: 'Instructions only.' })]);
      expect(sut.skills[0].code).toBeUndefined();
      expect(sut.collisions).toEqual([
        {
          name: 'weather',
          winner: { path: tree.path('skills/weather'), source: 'skills' },
          loser: { path: tree.path('code/weather'), source: 'code' },
        },
      ]);
    });

    it('reports a skill.mjs that is a FIFO, a folder or a link to nothing as invalid, without blocking', () => {
      for (const name of ['fifo', 'folder', 'dangling']) writeSkill(tree, 'code', name);
      makeFifo(tree.path('code/fifo/skill.mjs'));
      mkdirSync(tree.path('code/folder/skill.mjs'));
      makeSymlink(tree.path('code/dangling/missing.mjs'), tree.path('code/dangling/skill.mjs'));
      const sut = discover();
      expect(sut.skills).toEqual([]);
      expect(sut.invalid.map((entry) => [entry.name, entry.errors])).toEqual([
        [
          'dangling',
          ['skill.mjs is a symbolic link to a file that does not exist; point it at the module or remove it'],
        ],
        [
          'fifo',
          [
            'skill.mjs is a FIFO (named pipe), not a regular file; replace it with a JavaScript module ' +
              'exporting execute(ctx)',
          ],
        ],
        [
          'folder',
          ['skill.mjs is a folder, not a regular file; replace it with a JavaScript module exporting execute(ctx)'],
        ],
      ]);
      expect(sut.directories[1]).toMatchObject({ skills: 0, invalid: 3 });
    });
  });

  describe(CodeSkillService.name, () => {
    function build(overrides: Record<string, unknown> = {}) {
      const config = configWith({
        'app.skills.enabled': true,
        'app.skills.directories': [tree.path('skills')],
        'app.skills.code_directories': [tree.path('code')],
        'app.skills.settings.weather': { units: 'metric' },
        ...overrides,
      });
      const registry = new SkillRegistryService(skillsSettingsOf(config));
      void registry.onModuleInit(); // no store: the first scan is done before it returns
      return {
        registry,
        resources: new SkillResourcesService(registry, skillsSettingsOf(config)),
        sut: new CodeSkillService(config),
      };
    }

    it(
      'runs a folder code skill in a worker with its [app.skills.settings.NAME] as ctx.config, and asks its ' +
        'canHandle',
      async () => {
        writeSkill(tree, 'code', 'weather');
        tree.write('code/weather/skill.mjs', ECHO_MODULE);
        const { registry, sut } = build();
        const skill = registry.get('weather');
        expect(await sut.run(skill, invocation())).toEqual({
          success: true,
          output: 'Oslo in metric',
          metadata: { chatId: 'chat-1' },
          durationMs: expect.any(Number),
        });
        expect(await sut.score(skill, 'weather tomorrow')).toBe(0.75);
        expect(await sut.score(skill, 'a poem')).toBe(0);
      },
    );

    it(
      'never runs a skill.mjs of a regular skills directory: the skill has no code, and the file is ' + 'a resource',
      async () => {
        const marker = tree.path('marker.txt');
        writeSkill(tree, 'skills', 'weather');
        tree.write('skills/weather/skill.mjs', markerModule(marker));
        const { registry, resources, sut } = build();
        const skill = registry.get('weather');
        expect(await sut.run(skill, invocation())).toEqual({
          success: false,
          output: '',
          error: "Skill 'weather' has no code to run; activate it to read its instructions.",
          durationMs: 0,
        });
        expect(await sut.score(skill, 'weather')).toBeUndefined();
        expect((await resources.listResources('weather')).files.map((file) => file.path)).toEqual(['skill.mjs']);
        expect(existsSync(marker)).toBe(false);
      },
    );

    it('gives a skill without settings an empty ctx.config, even one named like an Object property', async () => {
      writeSkill(tree, 'code', 'constructor');
      tree.write(
        'code/constructor/skill.mjs',
        'export async function execute(ctx) { return { success: true, output: JSON.stringify(ctx.config) }; }',
      );
      const { registry, sut } = build();
      expect(await sut.run(registry.get('constructor'), invocation())).toMatchObject({ success: true, output: '{}' });
    });

    it('stops a skill that runs past app.skills.code_timeout_ms', async () => {
      writeSkill(tree, 'code', 'slow');
      tree.write('code/slow/skill.mjs', 'export async function execute() { for (;;) {} }');
      const { registry, sut } = build({ 'app.skills.code_timeout_ms': 200 });
      expect(await sut.run(registry.get('slow'), invocation())).toMatchObject({
        success: false,
        error: 'The code skill failed: it was stopped after 200 ms (app.skills.code_timeout_ms)',
      });
    });
  });

  describe('tools_required', () => {
    function build(overrides: Record<string, unknown> = {}) {
      const registry = new SkillRegistryService(
        skillsSettingsOf(
          configWith({ 'app.skills.enabled': true, 'app.skills.directories': [tree.path('skills')], ...overrides }),
        ),
      );
      void registry.onModuleInit(); // no store: the first scan is done before it returns
      return registry;
    }

    beforeEach(() => {
      writeSkill(tree, 'skills', 'shell-helper', {
        description: 'Runs shell commands.',
        extra: 'tools_required: [bash]',
      });
      writeSkill(tree, 'skills', 'meta-helper', {
        description: 'Reads files.',
        extra: 'metadata:\n  tools_required: skills.readResource, use_skill',
      });
      writeSkill(tree, 'skills', 'plain');
    });

    it('leaves a skill that needs a tool the chats lack out of the catalogue, with the reason in the report', () => {
      const sut = build();
      expect([...sut.snapshot.skills.keys()]).toEqual(['meta-helper', 'plain']);
      expect(sut.snapshot.catalogue('markdown')).not.toContain('shell-helper');
      expect(sut.snapshot.unavailable).toEqual([
        {
          name: 'shell-helper',
          path: tree.path('skills/shell-helper'),
          source: tree.path('skills'),
          missingTools: ['bash'],
          reason:
            "It needs tools the chats of this server do not have: 'bash' (offered only while scripts are on: " +
            'app.scripts.enabled = true); it is left out of the catalogue until they are offered.',
        },
      ]);
      expect(sut.snapshot.directories[0]).toMatchObject({ skills: 2 });
      expect(failure(() => sut.get('shell-helper'))).toEqual({
        code: ErrorCode.SKILL_NOT_FOUND,
        message:
          "Skill 'shell-helper' not offered: It needs tools the chats of this server do not have: 'bash' " +
          '(offered only while scripts are on: app.scripts.enabled = true); it is left out of the catalogue ' +
          'until they are offered. Available: meta-helper, plain',
      });
    });

    it('offers it while scripts are on', () => {
      const sut = build({ 'app.scripts.enabled': true });
      expect([...sut.snapshot.skills.keys()]).toEqual(['meta-helper', 'plain', 'shell-helper']);
      expect(sut.snapshot.unavailable).toEqual([]);
    });

    it('follows the tools the application sets, swapping in a new snapshot', () => {
      const sut = build();
      const before = sut.snapshot;
      sut.setAvailableTools(['skills.activate', 'bash']);
      expect(sut.snapshot).not.toBe(before);
      expect([...before.skills.keys()]).toEqual(['meta-helper', 'plain']);
      expect([...sut.snapshot.skills.keys()]).toEqual(['plain', 'shell-helper']);
      expect(sut.snapshot.unavailable.map((entry) => [entry.name, entry.missingTools])).toEqual([
        ['meta-helper', ['skills.readResource', 'use_skill']],
      ]);
      expect(sut.snapshot.scannedAt).toBe(before.scannedAt);
    });
  });
});
