import { describe, expect, it } from '@jest/globals';
import { buildSnapshot, type CatalogueSnapshot, holdsGroupSkillsFor, narrowSnapshot } from './catalogue-snapshot.js';
import { NO_COMMANDS } from '../commands/command-discovery.js';
import type { SkillRecord } from '../skill/skill.types.js';

const CONFIG = { validation: 'standard' as const, includeLocation: false, catalogueFormat: 'json' as const };

function record(name: string, description: string, groups?: string[]): SkillRecord {
  return {
    name,
    description,
    path: `/store/${name}`,
    skillFile: `/store/${name}/SKILL.md`,
    source: 'store',
    frontmatter: { name, description },
    warnings: [],
    store: {
      scope: 'shared',
      ownerId: null,
      owner: null,
      version: 1,
      history: new Set(),
      ...(groups === undefined ? {} : { groups: new Set(groups) }),
    },
  };
}

function snapshotOf(skills: SkillRecord[], switches: [string, boolean][] = []): CatalogueSnapshot {
  return buildSnapshot(
    { skills, invalid: [], collisions: [], excluded: [], warnings: [], directories: [] },
    CONFIG,
    { scannedAt: new Date(0), durationMs: 0 },
    NO_COMMANDS,
    undefined,
    { personal: [], switches: new Map(switches) },
  );
}

describe('skills shared with groups', () => {
  const base = snapshotOf([
    record('team-notes', 'Notes for everyone.'),
    record('payroll-run', 'Runs the payroll for the finance group.', ['finance']),
    record('incident-drill', 'Incident drills for ops and finance.', ['ops', 'finance']),
    record('orphaned', 'Its groups were all deleted.', []),
  ]);

  it('leaves them out of the whole snapshot: its skills, its catalogue and its search', () => {
    expect([...base.skills.keys()]).toEqual(['team-notes']);
    expect(base.catalogue('json')).not.toContain('payroll');
    expect(base.index.search(base, 'payroll finance', { limit: 10 }).map((match) => match.name)).toEqual([]);
    expect(base.groupOnly.skills.map((skill) => skill.name)).toEqual(['incident-drill', 'orphaned', 'payroll-run']);
  });

  it("offers each to its groups' members only, in the catalogue and in search", () => {
    const finance = narrowSnapshot(base, 'ann', [], CONFIG, new Set(['finance']));
    expect([...finance.skills.keys()]).toEqual(['incident-drill', 'payroll-run', 'team-notes']);
    expect(finance.catalogue('json')).toContain('payroll-run');
    expect(finance.index.search(finance, 'payroll', { limit: 10 }).map((match) => match.name)).toEqual(['payroll-run']);
    const ops = narrowSnapshot(base, 'bob', [], CONFIG, new Set(['ops']));
    expect([...ops.skills.keys()]).toEqual(['incident-drill', 'team-notes']);
    expect(ops.index.search(ops, 'payroll', { limit: 10 }).map((match) => match.name)).toEqual([]);
    const nobody = narrowSnapshot(base, 'eve', [], CONFIG, new Set(['marketing']));
    expect([...nobody.skills.keys()]).toEqual(['team-notes']);
  });

  it('keeps a switched-off one out of other views entirely, so its name leaks nowhere', () => {
    const switched = snapshotOf(
      [record('team-notes', 'Notes.'), record('payroll-run', 'Payroll.', ['finance'])],
      [['payroll-run', false]],
    );
    expect(switched.disabled.has('payroll-run')).toBe(false);
    expect(narrowSnapshot(switched, 'eve', [], CONFIG, new Set(['ops'])).disabled.has('payroll-run')).toBe(false);
    const finance = narrowSnapshot(switched, 'ann', [], CONFIG, new Set(['finance']));
    expect(finance.disabled.has('payroll-run')).toBe(true);
    expect(finance.skills.has('payroll-run')).toBe(false);
  });

  it('tells whether a user needs a narrowed view at all', () => {
    expect(holdsGroupSkillsFor(base, new Set())).toBe(false);
    expect(holdsGroupSkillsFor(base, new Set(['marketing']))).toBe(false);
    expect(holdsGroupSkillsFor(base, new Set(['ops']))).toBe(true);
  });

  it('lets a personal skill of the same name stand for an outsider, and tells nobody that the name is taken', () => {
    const personal: SkillRecord = {
      ...record('payroll-run', 'My own payroll notes.'),
      path: '/store/personal/eve/payroll-run',
      source: 'store:personal:eve',
      store: { scope: 'personal', ownerId: 'eve', owner: 'eve', version: 1, history: new Set() },
    };
    const shared = record('payroll-run', 'Runs the payroll for the finance group.', ['finance']);
    const both = buildSnapshot(
      { skills: [shared], invalid: [], collisions: [], excluded: [], warnings: [], directories: [] },
      CONFIG,
      { scannedAt: new Date(0), durationMs: 0 },
      NO_COMMANDS,
      undefined,
      { personal: [personal], switches: new Map() },
    );
    expect(both.collisions).toEqual([]);
    expect(narrowSnapshot(both, 'eve', [], CONFIG, new Set(['ops'])).skills.get('payroll-run')).toBe(personal);
    // In the group, the group's skill wins, as a team skill does.
    expect(narrowSnapshot(both, 'eve', [], CONFIG, new Set(['finance'])).skills.get('payroll-run')).toBe(shared);
  });

  it("applies the user's filter to them like to any skill", () => {
    const filtered = narrowSnapshot(base, 'ann', [{ exclude: ['payroll-*'] }], CONFIG, new Set(['finance']));
    expect([...filtered.skills.keys()]).toEqual(['incident-drill', 'team-notes']);
    expect(filtered.filteredOut.has('payroll-run')).toBe(true);
  });
});
