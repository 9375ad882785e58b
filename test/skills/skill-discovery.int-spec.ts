import { mkdirSync, symlinkSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { SkillDirectory, ValidationMode } from '../../src/config/app-config.js';
import { discoverSkills } from '@skillhost/core';
import { corpusPath } from '../support/files/corpus.js';
import { skillMd, tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';

const dir = (path: string, configured = path): SkillDirectory => ({ configured, path });

function discover(
  directories: SkillDirectory[],
  overrides: { mode?: ValidationMode; maxDepth?: number; maxSkills?: number } = {},
) {
  return discoverSkills({ directories, mode: 'standard', maxDepth: 1, maxSkills: 200, ...overrides });
}

describe(discoverSkills.name, () => {
  let tree: TempTree;
  beforeEach(() => {
    tree = tempTree();
  });
  afterEach(() => tree.cleanup());

  it('loads valid skills from immediate children, ignoring folders without SKILL.md and loose files', () => {
    writeSkill(tree, 'a', 'pdf');
    writeSkill(tree, 'a', 'git-commit');
    tree.write('a/notes/README.md', '# not a skill');
    tree.write('a/loose.md', 'x');
    tree.write('a/lower/skill.md', skillMd({ name: 'lower' }));
    const sut = discover([dir(tree.path('a'))]);
    expect(sut.skills.map((s) => s.name)).toEqual(['git-commit', 'pdf']);
    expect(sut.invalid).toEqual([]);
    expect(sut.skills[1]).toMatchObject({
      path: tree.path('a', 'pdf'),
      skillFile: tree.path('a', 'pdf', 'SKILL.md'),
      source: tree.path('a'),
    });
  });

  it('gives earlier directories precedence and records every collision', () => {
    writeSkill(tree, 'first', 'pdf', { description: 'First pdf.' });
    writeSkill(tree, 'second', 'pdf', { description: 'Second pdf.' });
    writeSkill(tree, 'third', 'pdf', { description: 'Third pdf.' });
    const sut = discover([
      dir(tree.path('first'), 'first'),
      dir(tree.path('second'), 'second'),
      dir(tree.path('third'), 'third'),
    ]);
    expect(sut.skills).toHaveLength(1);
    expect(sut.skills[0].description).toBe('First pdf.');
    expect(sut.collisions).toEqual([
      {
        name: 'pdf',
        winner: { path: tree.path('first', 'pdf'), source: 'first' },
        loser: { path: tree.path('second', 'pdf'), source: 'second' },
      },
      {
        name: 'pdf',
        winner: { path: tree.path('first', 'pdf'), source: 'first' },
        loser: { path: tree.path('third', 'pdf'), source: 'third' },
      },
    ]);
    expect(sut.directories.map((d) => d.skills)).toEqual([1, 0, 0]);
  });

  it('skips a missing directory with one warning and goes on', () => {
    writeSkill(tree, 'real', 'pdf');
    const sut = discover([dir(tree.path('missing'), './missing'), dir(tree.path('real'))]);
    expect(sut.skills.map((s) => s.name)).toEqual(['pdf']);
    expect(sut.warnings).toEqual([
      `Skills directory './missing' (${tree.path('missing')}) does not exist or is not a readable folder; skipped`,
    ]);
    expect(sut.directories.map((d) => d.exists)).toEqual([false, true]);
  });

  it(
    "warns when a directory is one skill's own folder (its parent was meant): it loads nothing from it, and says " +
      'so',
    () => {
      writeSkill(tree, 'real', 'pdf');
      const sut = discover([dir(tree.path('real', 'pdf'), './real/pdf')]);
      expect(sut.skills).toEqual([]);
      expect(sut.warnings).toEqual([
        `Skills directory './real/pdf' (${tree.path('real', 'pdf')}) holds a SKILL.md itself: skills are its ` +
          `subfolders, so list its parent folder to load it`,
      ]);
    },
  );

  it('reports every invalid skill with its folder and all its errors', () => {
    writeSkill(tree, 'a', 'Bad_Name', { extra: `compatibility: ${'c'.repeat(501)}` });
    tree.write('a/no-frontmatter/SKILL.md', '# Just markdown\n');
    tree.write('a/unclosed/SKILL.md', '---\nname: unclosed\ndescription: x\n');
    tree.write('a/bad-yaml/SKILL.md', '---\nname: bad-yaml\ndescription: [oops\n---\n');
    const sut = discover([dir(tree.path('a'))]);
    expect(sut.skills).toEqual([]);
    expect(sut.invalid.map((i) => [i.path, i.errors])).toEqual([
      [
        tree.path('a', 'Bad_Name'),
        [
          "Skill name 'Bad_Name' must be lowercase",
          "Skill name 'Bad_Name' contains invalid characters. Only letters, digits, and hyphens are allowed.",
          'Compatibility exceeds 500 character limit (501 chars)',
        ],
      ],
      [tree.path('a', 'bad-yaml'), [expect.stringMatching(/^Invalid YAML in frontmatter: /)]],
      [tree.path('a', 'no-frontmatter'), ['SKILL.md must start with YAML frontmatter (---)']],
      [tree.path('a', 'unclosed'), ['SKILL.md frontmatter not properly closed with ---']],
    ]);
    expect(sut.directories[0].invalid).toBe(4);
  });

  it('reads only the frontmatter: a huge body is never read, an unclosed block stops at 64 KiB', () => {
    tree.write('a/big/SKILL.md', skillMd({ name: 'big', body: 'x'.repeat(5_000_000) }));
    tree.write('a/endless/SKILL.md', `---\nname: endless\ndescription: ${'y'.repeat(100_000)}\n`);
    const sut = discover([dir(tree.path('a'))]);
    expect(sut.skills.map((s) => s.name)).toEqual(['big']);
    expect(sut.invalid[0].errors).toEqual([
      'SKILL.md frontmatter not properly closed with --- (no closing line within the first 64 KiB)',
    ]);
  });

  it('discovers symlinked skill folders and a symlinked SKILL.md', () => {
    writeSkill(tree, 'elsewhere', 'linked');
    writeSkill(tree, 'elsewhere', 'file-linked');
    mkdirSync(tree.path('a', 'file-linked'), { recursive: true });
    symlinkSync(tree.path('elsewhere', 'linked'), tree.path('a', 'linked'));
    symlinkSync(tree.path('elsewhere', 'file-linked', 'SKILL.md'), tree.path('a', 'file-linked', 'SKILL.md'));
    symlinkSync(tree.path('nowhere'), tree.path('a', 'dangling'));
    const sut = discover([dir(tree.path('a'))]);
    expect(sut.skills.map((s) => s.name)).toEqual(['file-linked', 'linked']);
  });

  it('excludes skills past max_skills deterministically, with a warning', () => {
    for (const name of ['d', 'b', 'a', 'c', 'e']) writeSkill(tree, 'x', name);
    const sut = discover([dir(tree.path('x'))], { maxSkills: 3 });
    expect(sut.skills.map((s) => s.name)).toEqual(['a', 'b', 'c']);
    expect(sut.excluded).toEqual([
      { name: 'd', path: tree.path('x', 'd') },
      { name: 'e', path: tree.path('x', 'e') },
    ]);
    expect(sut.warnings).toEqual([
      'max_skills (3) reached: 2 valid skill(s) were not loaded (first: d, e); raise app.skills.max_skills to ' +
        'load them',
    ]);
  });

  it('searches nested collections only down to max_depth, skipping .git and node_modules', () => {
    writeSkill(tree, 'c', 'top');
    writeSkill(tree, 'c/group', 'two');
    writeSkill(tree, 'c/group/sub', 'three');
    writeSkill(tree, 'c/group/node_modules', 'hidden');
    writeSkill(tree, 'c/.git', 'git-hidden');
    writeSkill(tree, 'c/top', 'inside-a-skill');
    expect(discover([dir(tree.path('c'))]).skills.map((s) => s.name)).toEqual(['top']);
    expect(discover([dir(tree.path('c'))], { maxDepth: 2 }).skills.map((s) => s.name)).toEqual(['two', 'top']);
    expect(discover([dir(tree.path('c'))], { maxDepth: 3 }).skills.map((s) => s.name)).toEqual(['three', 'two', 'top']);
  });

  it('survives a symlink loop in a nested scan', () => {
    writeSkill(tree, 'c/group', 'one');
    symlinkSync(tree.path('c'), tree.path('c', 'group', 'loop'));
    const sut = discover([dir(tree.path('c'))], { maxDepth: 6 });
    expect(sut.skills.map((s) => s.name)).toEqual(['one']);
    expect(sut.collisions).toEqual([]);
  });

  it('in lenient mode loads skill.md, mismatched names and unquoted colons, with warnings', () => {
    tree.write('a/lower/skill.md', skillMd({ name: 'lower' }));
    writeSkill(tree, 'a', 'folder', { name: 'other-name' });
    tree.write('a/colon/SKILL.md', '---\nname: colon\ndescription: Use when: you need it\n---\n');
    const sut = discover([dir(tree.path('a'))], { mode: 'lenient' });
    expect(sut.skills.map((s) => [s.name, s.warnings])).toEqual([
      [
        'colon',
        [
          'Unquoted colon in frontmatter field(s) description; read as a quoted string (quote the value to ' +
            'silence this)',
        ],
      ],
      ['other-name', ["Directory name 'folder' must match skill name 'other-name'"]],
      ['lower', ['Found skill.md; the specification names the file SKILL.md']],
    ]);
    expect(discover([dir(tree.path('a'))], { mode: 'standard' }).skills).toEqual([]);
  });

  it('accepts a BOM and CRLF line ends', () => {
    tree.write('a/crlf/SKILL.md', '\ufeff---\r\nname: crlf\r\ndescription: Windows file.\r\n---\r\nBody\r\n');
    expect(discover([dir(tree.path('a'))]).skills.map((s) => [s.name, s.description])).toEqual([
      ['crlf', 'Windows file.'],
    ]);
  });
});

describe('the anthropics-skills corpus', () => {
  const corpus = () => [dir(corpusPath('anthropics-skills'))];

  it('gives exactly the reference verdicts in strict mode', () => {
    const sut = discover(corpus(), { mode: 'strict' });
    expect(sut.skills).toHaveLength(12);
    expect(sut.invalid.map((i) => [i.path.split('/').pop(), i.errors])).toEqual([
      ['claude-api', ['Description exceeds 1024 character limit (1068 chars)']],
      ['template', ["Directory name 'template' must match skill name 'template-skill'"]],
    ]);
  });

  it('loads all 14 in lenient mode, each problem as a warning', () => {
    const sut = discover(corpus(), { mode: 'lenient' });
    expect(sut.skills).toHaveLength(14);
    expect(sut.skills.find((s) => s.name === 'claude-api')?.description).toHaveLength(1024);
    expect(sut.skills.find((s) => s.name === 'template-skill')?.warnings).toEqual([
      "Directory name 'template' must match skill name 'template-skill'",
    ]);
  });

  it('discovers the whole real-world corpus without throwing, every folder accounted for', () => {
    const sut = discover([dir(corpusPath())], { mode: 'strict', maxDepth: 3, maxSkills: 100_000 });
    const lenient = discover([dir(corpusPath())], { mode: 'lenient', maxDepth: 3, maxSkills: 100_000 });
    const accounted = (r: ReturnType<typeof discover>) =>
      r.skills.length + r.invalid.length + r.collisions.length + r.excluded.length;
    expect(accounted(sut)).toBeGreaterThan(2000);
    expect(accounted(lenient)).toBe(accounted(sut));
    expect(lenient.skills.length).toBeGreaterThan(sut.skills.length);
    expect(sut.invalid.every((i) => i.errors.length > 0)).toBe(true);
  });
});
