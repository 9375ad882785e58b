import { describe, expect, it } from '@jest/globals';
import { parseSkillMd } from './skill-md.js';

const skillMd = (frontmatter: string, body = '# PDF\n') => `---\n${frontmatter}\n---\n${body}`;

describe(parseSkillMd.name, () => {
  it(
    'reads a valid SKILL.md: the checked frontmatter, the catalogue description and the body after the closing ' +
      'line',
    () => {
      const sut = parseSkillMd(skillMd('name: pdf\ndescription: Works with PDF files.\nlicense: MIT'), 'pdf');
      expect(sut).toEqual({
        ok: true,
        frontmatter: { name: 'pdf', description: 'Works with PDF files.', license: 'MIT' },
        description: 'Works with PDF files.',
        body: '# PDF\n',
        warnings: [],
      });
    },
  );

  it('tolerates a BOM and CRLF fences, as discovery does', () => {
    expect(parseSkillMd('\ufeff---\r\nname: pdf\r\ndescription: d\r\n---\r\nBody', 'pdf')).toMatchObject({
      ok: true,
      body: 'Body',
    });
  });

  it.each([
    ['no frontmatter', '# just text', 'SKILL.md must start with YAML frontmatter (---)'],
    ['an unclosed block', '---\nname: pdf\ndescription: d\n', 'SKILL.md frontmatter not properly closed with ---'],
    [
      'no closing line within 64 KiB',
      `---\nname: pdf\ndescription: ${'x'.repeat(70_000)}\n---\n`,
      'SKILL.md frontmatter not properly closed with --- (no closing line within the first 64 KiB)',
    ],
    ['YAML that is not a mapping', '---\n- a\n- b\n---\n', 'SKILL.md frontmatter must be a YAML mapping'],
  ])('refuses %s', (_, text, error) => {
    expect(parseSkillMd(text, 'pdf')).toEqual({ ok: false, errors: [error], warnings: [] });
  });

  it('checks the name against the folder by the mode: an error in standard and strict, a warning in lenient', () => {
    expect(parseSkillMd(skillMd('name: pdf\ndescription: d'), 'other')).toMatchObject({
      ok: false,
      errors: [expect.stringContaining('must match')],
    });
    expect(parseSkillMd(skillMd('name: pdf\ndescription: d'), 'other', 'lenient')).toMatchObject({
      ok: true,
      warnings: [expect.stringContaining('must match')],
    });
  });

  it('unknown fields: a warning in standard, an error in strict', () => {
    expect(parseSkillMd(skillMd('name: pdf\ndescription: d\nauthor: me'), 'pdf')).toMatchObject({
      ok: true,
      warnings: [expect.stringContaining('author')],
    });
    expect(parseSkillMd(skillMd('name: pdf\ndescription: d\nauthor: me'), 'pdf', 'strict')).toMatchObject({
      ok: false,
      errors: [expect.stringContaining('author')],
    });
  });

  it('reads tools_required as discovery does', () => {
    expect(parseSkillMd(skillMd('name: pdf\ndescription: d\nmetadata:\n  tools_required: bash'), 'pdf')).toMatchObject({
      ok: true,
      toolsRequired: ['bash'],
    });
  });
});
