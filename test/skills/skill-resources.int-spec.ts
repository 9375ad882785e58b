import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { AppError, ErrorCode } from '@skillhost/core';
import { configWith } from '../../src/config/config-loader.js';
import { SkillRegistryService, SkillResourcesService } from '@skillhost/nest';
import { skillMd, tempTree, type TempTree } from '../support/files/skill-tree.js';
import { skillsSettingsOf } from '../../src/domain/skills/skills-settings-of.js';

async function failure(promise: Promise<unknown>): Promise<{ code: ErrorCode; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (AppError.isInstance(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected an AppError');
}

describe(SkillResourcesService.name, () => {
  let tree: TempTree;
  let sut: SkillResourcesService;

  function build(overrides: Record<string, unknown> = {}) {
    const config = configWith({
      'app.skills.enabled': true,
      'app.skills.directories': [tree.path('skills')],
      ...overrides,
    });
    const registry = new SkillRegistryService(skillsSettingsOf(config));
    void registry.onModuleInit(); // no store: the first scan is done before it returns
    sut = new SkillResourcesService(registry, skillsSettingsOf(config));
  }

  beforeEach(() => {
    tree = tempTree();
    tree.write(
      'skills/demo/SKILL.md',
      skillMd({ name: 'demo', extra: 'license: MIT', body: '# Demo\n\nRead references/REFERENCE.md.\n' }),
    );
    tree.write('skills/demo/references/REFERENCE.md', 'MARKER-REF\n');
    tree.write('skills/demo/assets/data.json', '{"marker":"MARKER-ASSET"}');
    tree.write(
      'skills/demo/assets/image.png',
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00]),
    );
    tree.write('skills/demo/assets/latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    tree.write('skills/demo/notes/utf8.txt', 'naïve café ✓\n');
    tree.write('secret.txt', 'TOP-SECRET');
    tree.write('skills/sibling.txt', 'TOP-SECRET');
    symlinkSync(tree.path('secret.txt'), tree.path('skills/demo/escape.txt'));
    symlinkSync(tree.path('skills'), tree.path('skills/demo/up'));
    symlinkSync('references/REFERENCE.md', tree.path('skills/demo/inside-link.md'));
    symlinkSync('loop-b', tree.path('skills/demo/loop-a'));
    symlinkSync('loop-a', tree.path('skills/demo/loop-b'));
    build();
  });
  afterEach(() => tree.cleanup());

  describe('activate', () => {
    it('returns the frontmatter and the body without the frontmatter', async () => {
      expect(await sut.activate('demo')).toEqual({
        name: 'demo',
        frontmatter: {
          name: 'demo',
          description: 'Does a useful thing. Use when a test needs a skill.',
          license: 'MIT',
        },
        body: '# Demo\n\nRead references/REFERENCE.md.',
        truncated: false,
      });
    });

    it('cuts a body past max_skill_md_bytes and says how much was shown', async () => {
      tree.write('skills/long/SKILL.md', skillMd({ name: 'long', body: 'é'.repeat(3000) }));
      build({ 'app.skills.max_skill_md_bytes': 2049 });
      const result = await sut.activate('long');
      expect(result.truncated).toBe(true);
      // 2049 bytes end inside a two-byte character, which is dropped rather than garbled.
      expect(result.body).toBe(`${'é'.repeat(1024)}\n\n[Truncated: showing the first 2049 of 6001 bytes of SKILL.md.]`);
    });

    it('names the available skills when the skill does not exist', async () => {
      expect(await failure(sut.activate('nope'))).toEqual({
        code: ErrorCode.SKILL_NOT_FOUND,
        message: "Skill 'nope' not found. Available: demo",
      });
    });
  });

  describe('readResource', () => {
    it('reads a text resource', async () => {
      expect(await sut.readResource('demo', 'references/REFERENCE.md')).toEqual({
        name: 'demo',
        path: 'references/REFERENCE.md',
        content: 'MARKER-REF\n',
        truncated: false,
      });
      expect((await sut.readResource('demo', 'notes/utf8.txt')).content).toBe('naïve café ✓\n');
    });

    it('follows a symlink that stays inside the skill', async () => {
      expect((await sut.readResource('demo', 'inside-link.md')).content).toBe('MARKER-REF\n');
      expect((await sut.readResource('demo', 'up/demo/references/REFERENCE.md')).content).toBe('MARKER-REF\n');
    });

    it.each([
      ['../secret.txt', ErrorCode.RESOURCE_OUTSIDE_SKILL],
      ['references/../../../secret.txt', ErrorCode.RESOURCE_OUTSIDE_SKILL],
      ['/etc/passwd', ErrorCode.RESOURCE_OUTSIDE_SKILL],
      ['C:\\Windows\\win.ini', ErrorCode.RESOURCE_OUTSIDE_SKILL],
      ['refs\0.md', ErrorCode.RESOURCE_OUTSIDE_SKILL],
      ['escape.txt', ErrorCode.RESOURCE_OUTSIDE_SKILL],
      ['up/sibling.txt', ErrorCode.RESOURCE_OUTSIDE_SKILL],
      ['loop-a', ErrorCode.RESOURCE_NOT_FOUND],
      ['references', ErrorCode.RESOURCE_IS_DIRECTORY],
      ['.', ErrorCode.RESOURCE_IS_DIRECTORY],
      ['assets/image.png', ErrorCode.RESOURCE_BINARY],
      ['assets/latin1.txt', ErrorCode.RESOURCE_BINARY],
      ['missing.md', ErrorCode.RESOURCE_NOT_FOUND],
      ['', ErrorCode.VALIDATION_FAILED],
    ])('refuses %j with %s, never showing a host path', async (path, code) => {
      const result = await failure(sut.readResource('demo', path));
      expect(result.code).toBe(code);
      expect(result.message).not.toContain(tree.root);
      expect(result.message).not.toContain('TOP-SECRET');
    });

    it('names the files that do exist when one is missing', async () => {
      expect((await failure(sut.readResource('demo', 'references/MISSING.md'))).message).toBe(
        "Resource 'references/MISSING.md' not found in skill 'demo'. Available: assets/data.json, " +
          'assets/image.png, assets/latin1.txt, inside-link.md, notes/utf8.txt, references/REFERENCE.md',
      );
    });

    it('refuses a named pipe without ever blocking on it, and leaves it out of the listing', async () => {
      // Reads are synchronous: opening a FIFO that no one writes to must not wait for a writer.
      execFileSync('mkfifo', [tree.path('skills/demo/references/pipe')]);
      const result = await failure(sut.readResource('demo', 'references/pipe'));
      expect(result.code).toBe(ErrorCode.RESOURCE_NOT_FOUND);
      expect(result.message).toMatch(/^Resource 'references\/pipe' not found in skill 'demo'\. Available: /);
      expect((await sut.listResources('demo')).files.map((f) => f.path)).not.toContain('references/pipe');
    });

    it('reads only what it shows past max_resource_bytes and adds a notice', async () => {
      tree.write('skills/demo/references/big.md', 'a'.repeat(5000));
      build({ 'app.skills.max_resource_bytes': 1024 });
      const result = await sut.readResource('demo', 'references/big.md');
      expect(result.truncated).toBe(true);
      expect(result.content).toBe(
        `${'a'.repeat(1024)}\n\n[Truncated: showing the first 1024 of 5000 bytes of references/big.md.]`,
      );
    });
  });

  describe('listResources', () => {
    it('lists every file inside the skill with its size, skipping links that leave it', async () => {
      expect(await sut.listResources('demo')).toEqual({
        files: [
          { path: 'assets/data.json', size: 25 },
          { path: 'assets/image.png', size: 10 },
          { path: 'assets/latin1.txt', size: 5 },
          { path: 'inside-link.md', size: 11 },
          { path: 'notes/utf8.txt', size: 17 },
          { path: 'references/REFERENCE.md', size: 11 },
        ],
        truncated: false,
      });
    });

    it('stops at its bounds and says so', async () => {
      mkdirSync(tree.path('skills/demo/many'));
      for (let i = 0; i < 510; i++) tree.write(`skills/demo/many/f${String(i).padStart(3, '0')}.txt`, 'x');
      const listing = await sut.listResources('demo');
      expect(listing.files).toHaveLength(500);
      expect(listing.truncated).toBe(true);
    });
  });
});
