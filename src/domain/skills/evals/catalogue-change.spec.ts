import { describe, expect, it } from '@jest/globals';
import type { CatalogueSnapshot, SkillRecord } from '@skillhost/core';
import { evalRerunOf, mergeReruns } from './catalogue-change.js';

/** A skill as the catalogue level reads it; the rest of a record does not matter here. */
function skill(name: string, overrides: Partial<Record<string, unknown>> = {}): SkillRecord {
  return {
    name,
    description: `Does ${name} things.`,
    digest: `sha256:${name}-1`,
    path: `/skills/${name}`,
    frontmatter: { name, description: `Does ${name} things.` },
    ...overrides,
  } as unknown as SkillRecord;
}

/** What evalRerunOf reads of a snapshot: the team's skills and those shared with groups only. */
function catalogue(team: SkillRecord[], groupOnly: SkillRecord[] = []): CatalogueSnapshot {
  return {
    skills: new Map(team.map((record) => [record.name, record])),
    groupOnly: { skills: groupOnly },
  } as unknown as CatalogueSnapshot;
}

describe(evalRerunOf.name, () => {
  const before = catalogue(
    [skill('pdf'), skill('git-commit')],
    [skill('finance', { store: { groups: new Set(['a']) } })],
  );

  it('runs every skill the first time, and nothing when the catalogue is the same', () => {
    expect(evalRerunOf(undefined, before)).toBe('all');
    expect(evalRerunOf(before, catalogue([skill('git-commit'), skill('pdf')], [...before.groupOnly.skills]))).toBe(
      undefined,
    );
  });

  it('runs only a skill whose new version lists the same entry (its body, files or evals changed)', () => {
    const after = catalogue(
      [skill('pdf', { digest: 'sha256:pdf-2' }), skill('git-commit')],
      [...before.groupOnly.skills],
    );
    expect(evalRerunOf(before, after)).toEqual(new Set(['pdf']));
  });

  it('runs every skill when an entry the ranker reads changes, or a skill comes or goes', () => {
    const described = skill('pdf', { description: 'Fills PDF forms.', digest: 'sha256:pdf-2' });
    const triggers = skill('pdf', { frontmatter: { name: 'pdf', metadata: { triggers: 'forms, invoices' } } });
    const regrouped = skill('finance', { store: { groups: new Set(['a', 'b']) } });
    for (const after of [
      catalogue([described, skill('git-commit')], [...before.groupOnly.skills]),
      catalogue([triggers, skill('git-commit')], [...before.groupOnly.skills]),
      catalogue([skill('pdf'), skill('git-commit')], [regrouped]),
      catalogue([skill('pdf')], [...before.groupOnly.skills]),
      catalogue([skill('pdf'), skill('git-commit'), skill('docx')], [...before.groupOnly.skills]),
      catalogue([skill('pdf'), skill('docx')], [...before.groupOnly.skills]),
    ])
      expect(evalRerunOf(before, after)).toBe('all');
  });
});

describe(mergeReruns.name, () => {
  it('asks for all when either does, else for the skills of both', () => {
    expect(mergeReruns(undefined, undefined)).toBeUndefined();
    expect(mergeReruns(new Set(['pdf']), undefined)).toEqual(new Set(['pdf']));
    expect(mergeReruns(new Set(['pdf']), 'all')).toBe('all');
    expect(mergeReruns(new Set(['pdf']), new Set(['docx']))).toEqual(new Set(['pdf', 'docx']));
  });
});
