import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { type CatalogueLimits, inspectSkillFolder, type SkillRecord } from '@skillhost/core';
import { catalogueEval, evalView, regressedCases, withCandidate } from './catalogue-eval.js';
import { findCollisions } from './trigger-collisions.js';
import type { TriggerCase } from './trigger-evals.js';

/** Anthropic's public skills, as a team's catalogue. */
const CORPUS = '/work/shared/corpus/anthropics-skills';
const records: SkillRecord[] = readdirSync(CORPUS, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && entry.name !== 'template')
  .flatMap((entry) => {
    const inspection = inspectSkillFolder(join(CORPUS, entry.name), 'corpus', 'lenient');
    return inspection?.kind === 'valid' ? [inspection.skill] : [];
  });

/** Three places: the ranker decides what a turn lists. */
const limits: CatalogueLimits = { budgetTokens: 2000, maxSkills: 3, format: 'xml' };

const GIF_CASES: TriggerCase[] = [
  { query: 'make an animated GIF of our logo spinning for Slack', shouldTrigger: true },
  { query: 'I need a small looping gif emoji for a slack channel', shouldTrigger: true },
  { query: 'write the minutes of yesterday’s meeting as a status update', shouldTrigger: false },
  { query: 'build me an MCP server for the GitHub API', shouldTrigger: false, expectSkill: 'mcp-builder' },
];

describe(catalogueEval.name, () => {
  it('lists the skill for its requests and not for others, naming the skill expected instead', () => {
    expect(records.length).toBeGreaterThan(10);
    const result = catalogueEval(evalView(records, limits), limits, 'slack-gif-creator', GIF_CASES);
    expect(result.complete).toBe(false);
    expect(
      result.cases.map(({ triggered, expectedTriggered, pass }) => ({ triggered, expectedTriggered, pass })),
    ).toEqual([
      { triggered: true, pass: true },
      { triggered: true, pass: true },
      { triggered: false, pass: true },
      { triggered: false, expectedTriggered: true, pass: true },
    ]);
    expect(result.score).toEqual({
      cases: 4,
      passed: 4,
      truePositives: 2,
      falsePositives: 0,
      falseNegatives: 0,
      trueNegatives: 2,
      precision: 1,
      recall: 1,
    });
  });

  it('ranks even when the whole catalogue fits the budget (complete), so a vague description still shows', () => {
    const roomy: CatalogueLimits = { budgetTokens: 100_000, maxSkills: 100, format: 'xml' };
    const result = catalogueEval(evalView(records, roomy), roomy, 'slack-gif-creator', GIF_CASES);
    expect(result.complete).toBe(true);
    expect(result.cases.map((entry) => entry.triggered)).toEqual([true, true, false, false]);
  });

  it('finds the cases a description that lost its triggers no longer lists (recall falls)', () => {
    const docs = records.find((record) => record.name === 'doc-coauthoring')!;
    const vague = { ...docs, description: 'An internal helper of the team.' };
    const cases: TriggerCase[] = [
      { query: 'help me write a technical spec for the new billing service', shouldTrigger: true },
      { query: "let's draft a proposal for the Q3 roadmap together", shouldTrigger: true },
      { query: 'make an animated GIF of our logo for Slack', shouldTrigger: false },
    ];
    const before = catalogueEval(evalView(records, limits), limits, docs.name, cases);
    const after = catalogueEval(evalView(withCandidate(records, vague), limits), limits, docs.name, cases);
    expect(before.score).toMatchObject({ recall: 1, precision: 1 });
    expect(after.score).toMatchObject({ recall: 0, precision: null, passed: 1 });
    expect(regressedCases(before.cases, after.cases).map((entry) => entry.query)).toEqual([
      cases[0].query,
      cases[1].query,
    ]);
  });
});

describe(findCollisions.name, () => {
  it('finds the requests for which two skills compete, and not those one skill wins clearly', () => {
    const themes = records.find((record) => record.name === 'theme-factory')!;
    // A second theming skill: "apply a theme to my slides" now has two homes.
    const rival = { ...themes, name: 'slide-themes', description: 'Apply a theme with colors and fonts to slides.' };
    const view = evalView([...records, rival], limits);
    const collisions = findCollisions(view, [
      {
        skill: 'theme-factory',
        cases: [
          { query: 'apply a theme with new colors and fonts to my slides', shouldTrigger: true },
          { query: 'what is the weather', shouldTrigger: true },
        ],
      },
      { skill: 'slack-gif-creator', cases: [{ query: 'make an animated GIF for Slack', shouldTrigger: true }] },
    ]);
    expect(collisions).toEqual([
      expect.objectContaining({
        query: 'apply a theme with new colors and fonts to my slides',
        skill: 'theme-factory',
        competitor: 'slide-themes',
      }),
    ]);
  });
});
