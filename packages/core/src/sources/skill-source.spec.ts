import { describe, expect, it } from '@jest/globals';
import { programmaticSkillRecord } from '../skill/programmatic-skill.js';
import type { SkillRecord, SkillScope } from '../skill/skill.types.js';
import { ProgrammaticSource } from './programmatic-source.js';
import { type MergedSources, mergeSources, type SkillSource, type SkillSourceContent } from './skill-source.js';

const folderSkill = (name: string, source = '/skills'): SkillRecord => ({
  name,
  description: `Folder ${name}.`,
  path: `${source}/${name}`,
  skillFile: `${source}/${name}/SKILL.md`,
  source,
  frontmatter: { name, description: `Folder ${name}.` },
  warnings: [],
});
const programmatic = (name: string, scope: SkillScope) =>
  programmaticSkillRecord({ name, description: `Programmatic ${name} (${scope}).`, instructions: 'Do it.' }, scope);

const folders: SkillSource = { name: 'folders', load: () => ({ skills: [] }) };
const sourceOf = (name: string, precedence?: number): SkillSource => ({
  name,
  precedence,
  load: () => ({ skills: [] }),
});
/** The registered skills as the registry reads them (lowest scope first). */
function registered(...records: SkillRecord[]): [SkillSource, SkillSourceContent] {
  const source = new ProgrammaticSource();
  for (const record of records) source.add(record);
  return [source, source.load()];
}
const winners = (merged: MergedSources) => Object.fromEntries(merged.skills.map((skill) => [skill.name, skill.source]));

describe(mergeSources.name, () => {
  it('orders a clash at equal precedence by scope: bundled < user (every folder skill) < workspace', () => {
    const sut = mergeSources([
      [folders, { skills: [folderSkill('pdf'), folderSkill('git')] }],
      registered(programmatic('pdf', 'workspace'), programmatic('git', 'bundled'), programmatic('new', 'bundled')),
    ]);
    expect(winners(sut)).toEqual({ pdf: 'programmatic:workspace', git: '/skills', new: 'programmatic:bundled' });
    expect(sut.collisions).toEqual([
      {
        name: 'git',
        winner: { path: '/skills/git', source: '/skills' },
        loser: { path: 'programmatic:bundled/git', source: 'programmatic:bundled' },
      },
      {
        name: 'pdf',
        winner: { path: 'programmatic:workspace/pdf', source: 'programmatic:workspace' },
        loser: { path: '/skills/pdf', source: '/skills' },
      },
    ]);
  });

  it('lets the later source win at the same scope, and the highest of several scopes win', () => {
    const sut = mergeSources([
      [folders, { skills: [folderSkill('pdf')] }],
      registered(programmatic('pdf', 'workspace'), programmatic('pdf', 'user'), programmatic('pdf', 'bundled')),
    ]);
    expect(winners(sut)).toEqual({ pdf: 'programmatic:workspace' });
    expect(sut.collisions.map((c) => `${c.winner.source} > ${c.loser.source}`)).toEqual([
      '/skills > programmatic:bundled',
      'programmatic:user > /skills',
      'programmatic:workspace > programmatic:user',
    ]);
  });

  it.each([
    [1, { pdf: 'store', git: 'store' }],
    [-1, { pdf: '/skills', git: 'programmatic:bundled' }],
  ])('puts a source of precedence %d above or below every scope of the others', (precedence, expected) => {
    const sut = mergeSources([
      [folders, { skills: [folderSkill('pdf')] }],
      registered(programmatic('git', 'bundled')),
      [sourceOf('store', precedence), { skills: [folderSkill('pdf', 'store'), folderSkill('git', 'store')] }],
    ]);
    expect(winners(sut)).toEqual(expected);
    expect(sut.collisions.map((c) => c.name)).toEqual(['pdf', 'git']);
  });

  it("keeps each source's reports in list order, its own collisions before the clashes it loses or wins", () => {
    const invalid = (path: string) => ({ path, source: path, errors: ['broken'], warnings: [] });
    const own = { name: 'pdf', winner: { path: '/a/pdf', source: '/a' }, loser: { path: '/b/pdf', source: '/b' } };
    const personal = { ...folderSkill('diary', 'store:personal:alice') };
    const sut = mergeSources([
      [folders, { skills: [folderSkill('pdf', '/a')], invalid: [invalid('/a/x')], collisions: [own] }],
      [
        sourceOf('database'),
        { skills: [folderSkill('pdf', 'db')], invalid: [invalid('db/y')], personal: [personal], warnings: ['slow'] },
      ],
      [sourceOf('store'), { skills: [], switches: new Map([['pdf', false]]) }],
    ]);
    expect(sut.invalid.map((entry) => entry.path)).toEqual(['/a/x', 'db/y']);
    expect(sut.collisions.map((c) => `${c.winner.source} > ${c.loser.source}`)).toEqual(['/a > /b', 'db > /a']);
    expect(sut.personal).toEqual([personal]);
    expect(sut.warnings).toEqual(['slow']);
    expect([...sut.switches]).toEqual([['pdf', false]]);
  });
});
