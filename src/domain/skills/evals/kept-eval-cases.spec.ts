import { describe, expect, it } from '@jest/globals';
import type { KeptEvalCase } from './eval-case-store.js';
import { casesForRun, planAddition } from './kept-eval-cases.js';
import { MAX_TRIGGER_CASES, readAddedCases, type TriggerCase } from './trigger-evals.js';

const kept = (query: string, shouldTrigger: boolean, overrides: Partial<KeptEvalCase> = {}): KeptEvalCase => ({
  id: `id-${query}`,
  skill: 'spec-writer',
  query,
  shouldTrigger,
  addedBy: { id: 'u1', name: 'ann' },
  addedAt: new Date('2025-01-01T00:00:00Z'),
  ...overrides,
});

const FILE: TriggerCase[] = [
  { query: 'draft an RFC', shouldTrigger: true },
  { query: 'make a GIF', shouldTrigger: false },
];

describe(planAddition.name, () => {
  it('adds new cases and merges those already in the file, already kept, or repeated in the body', () => {
    const sut = planAddition(
      'spec-writer',
      [
        { query: 'write a design doc', shouldTrigger: true },
        { query: 'Draft an RFC', shouldTrigger: true },
        { query: 'review my proposal', shouldTrigger: true },
        { query: 'WRITE A DESIGN DOC', shouldTrigger: true },
      ],
      FILE,
      [kept('review my proposal', true)],
    );
    expect(sut).toEqual({
      plan: { add: [{ query: 'write a design doc', shouldTrigger: true }] },
      duplicates: [
        { query: 'Draft an RFC', shouldTrigger: true, of: 'file' },
        { query: 'review my proposal', shouldTrigger: true, of: 'kept' },
        { query: 'WRITE A DESIGN DOC', shouldTrigger: true, of: 'body' },
      ],
    });
  });

  it('keeps a case whose expected skill differs from one already there (the file allows it too)', () => {
    const sut = planAddition(
      'spec-writer',
      [{ query: 'make a GIF', shouldTrigger: false, expectSkill: 'slack-gif-creator' }],
      FILE,
      [],
    );
    expect(sut.plan).toEqual({
      add: [{ query: 'make a GIF', shouldTrigger: false, expectSkill: 'slack-gif-creator' }],
    });
  });

  it("refuses a request listed the other way, in the file's words, naming where the other one is", () => {
    const sut = planAddition(
      'spec-writer',
      [
        { query: 'fine', shouldTrigger: true },
        { query: 'draft an rfc', shouldTrigger: false },
        { query: 'Summarise this thread', shouldTrigger: true },
      ],
      FILE,
      [kept('summarise this thread', false)],
    );
    expect(sut.plan).toEqual({
      problems: [
        'body: case 2 ("draft an rfc"): the same request is listed as should_trigger true too in ' +
          'evals/triggers.json; keep one',
        'body: case 3 ("Summarise this thread"): the same request is listed as should_trigger false too among the ' +
          'kept cases; keep one',
      ],
    });
  });

  it('refuses a negative case whose expect_skill is the skill itself, keeping none of the body', () => {
    // Regression, fixed since a hostile pass found it. Was: kept, a case that can never pass.
    const sut = planAddition(
      'spec-writer',
      [
        { query: 'review my proposal', shouldTrigger: true },
        { query: 'write me a spec', shouldTrigger: false, expectSkill: 'spec-writer' },
      ],
      FILE,
      [],
    );
    expect(sut.plan).toEqual({
      problems: [
        'body: case 2 ("write me a spec"): expect_skill names \'spec-writer\' itself; name the skill the request ' +
          'should lead to instead, or leave expect_skill out',
      ],
    });
  });

  it('refuses to keep more than MAX_TRIGGER_CASES cases for a skill, saying how many it keeps', () => {
    const many = Array.from({ length: MAX_TRIGGER_CASES - 1 }, (_, i) => kept(`request ${i}`, true));
    const fits = planAddition('spec-writer', [{ query: 'one more', shouldTrigger: true }], [], many);
    expect('add' in fits.plan).toBe(true);
    const sut = planAddition(
      'spec-writer',
      [
        { query: 'one more', shouldTrigger: true },
        { query: 'two more', shouldTrigger: true },
      ],
      [],
      many,
    );
    expect(sut.plan).toEqual({
      problems: [
        `body: 'spec-writer' would keep ${MAX_TRIGGER_CASES + 1} cases, more than ${MAX_TRIGGER_CASES}; delete ` +
          `some first (it keeps ${MAX_TRIGGER_CASES - 1})`,
      ],
    });
  });
});

describe(casesForRun.name, () => {
  it("runs the file's cases, then the kept ones the file does not list, each saying where it comes from", () => {
    expect(
      casesForRun(FILE, [kept('write a design doc', true), kept('DRAFT AN RFC', false), kept('make a gif', false)]),
    ).toEqual([
      { query: 'draft an RFC', shouldTrigger: true, source: 'file' },
      { query: 'make a GIF', shouldTrigger: false, source: 'file' },
      { query: 'write a design doc', shouldTrigger: true, source: 'kept', caseId: 'id-write a design doc' },
    ]);
  });

  it('runs kept cases alone without a file, and nothing without either', () => {
    expect(casesForRun(undefined, [kept('x', false, { expectSkill: 'pdf' })])).toEqual([
      { query: 'x', shouldTrigger: false, expectSkill: 'pdf', source: 'kept', caseId: 'id-x' },
    ]);
    expect(casesForRun(undefined, [])).toBeUndefined();
  });
});

describe(readAddedCases.name, () => {
  it('reads one case, a list, or the grouped form, with the same rules and messages as the file', () => {
    expect(readAddedCases({ query: ' draft an RFC ', should_trigger: true })).toEqual({
      cases: [{ query: 'draft an RFC', shouldTrigger: true }],
    });
    expect(readAddedCases({ should_not_trigger: [{ query: 'edit a sheet', expect_skill: 'xlsx' }] })).toEqual({
      cases: [{ query: 'edit a sheet', shouldTrigger: false, expectSkill: 'xlsx' }],
    });
    expect(readAddedCases({ query: 'draft', should_trigger: 'yes' })).toEqual({
      problems: ['body: case 1 ("draft"): should_trigger must be true or false'],
    });
    expect(readAddedCases({ query: 'draft', should_trigger: true, expect_skill: 'pdf' })).toEqual({
      problems: [
        'body: case 1 ("draft"): expect_skill names the skill a negative case leads to; remove it or set ' +
          'should_trigger false',
      ],
    });
    expect(readAddedCases([])).toEqual({
      problems: ['body: has no cases; add requests that should and should not lead here'],
    });
    expect(readAddedCases(undefined)).toEqual({
      problems: [
        'body: must be a list of { "query", "should_trigger", "expect_skill"? } or { "should_trigger": [...], ' +
          '"should_not_trigger": [...] }',
      ],
    });
  });
});
