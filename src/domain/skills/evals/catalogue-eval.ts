import {
  CatalogueIndex,
  catalogueIsComplete,
  type CatalogueLimits,
  type CatalogueSnapshot,
  chooseCatalogue,
  runThrough,
  type SkillRecord,
} from '@skillhost/core';
import type { TriggerCase } from './trigger-evals.js';

/** How one case went: whether the skill (and the one expected instead) was listed for the request. */
export interface CaseResult extends TriggerCase {
  /** The skill was listed (catalogue level) or activated (model level). */
  triggered: boolean;
  /** The skill the case expects instead was listed or activated; absent without `expectSkill`. */
  expectedTriggered?: boolean;
  /** At the model level, the skills the model activated. */
  activated?: readonly string[];
  pass: boolean;
}

/** Counts over a skill's cases, and what they make: null where nothing was counted. */
export interface EvalScore {
  cases: number;
  passed: number;
  truePositives: number;
  falsePositives: number;
  falseNegatives: number;
  trueNegatives: number;
  precision: number | null;
  recall: number | null;
}

export interface CatalogueEvalResult {
  skill: string;
  /** Every skill fits the budget today: every turn lists them all, so the ranking matters once the team grows. */
  complete: boolean;
  score: EvalScore;
  cases: CaseResult[];
}

/** The skills a view offers, indexed as a snapshot indexes them (what chooseCatalogue reads of a snapshot). */
export interface EvalView {
  readonly skills: ReadonlyMap<string, SkillRecord>;
  readonly index: CatalogueIndex;
  catalogue(): string;
}

/** A view of these skills, indexed for ranking (built once per run: thousands of skills take a while). */
export function evalView(records: readonly SkillRecord[], limits: CatalogueLimits): EvalView {
  return runThrough(evalViewSteps(records, limits));
}

/** The same, built a step at a time (`runInSlices`: requests are served while it is built). */
export function* evalViewSteps(records: readonly SkillRecord[], limits: CatalogueLimits): Generator<void, EvalView> {
  const index = yield* CatalogueIndex.building(records, limits.format, false);
  const skills = new Map([...records].sort((a, b) => a.name.localeCompare(b.name)).map((r) => [r.name, r]));
  return { skills, index, catalogue: () => '' };
}

/** The records with `candidate` in place of the skill of its name (a new version evaluated before it serves). */
export function withCandidate(records: readonly SkillRecord[], candidate: SkillRecord): SkillRecord[] {
  return [...records.filter((record) => record.name !== candidate.name), candidate];
}

/**
 * The catalogue level: for each case, whether the turn's chooser lists `skill` for the request under the budget, as
 * a turn in a new chat would (no history, no popularity: the same answer every run). It ranks even when the whole
 * catalogue fits (`complete` says so): what a description earns is measured whatever the team's size.
 */
export function catalogueEval(
  view: EvalView,
  limits: CatalogueLimits,
  skill: string,
  cases: readonly TriggerCase[],
): CatalogueEvalResult {
  return runThrough(catalogueEvalSteps(view, limits, skill, cases));
}

/** The same, a case at a time (a case ranks the whole catalogue: milliseconds with thousands of skills). */
export function* catalogueEvalSteps(
  view: EvalView,
  limits: CatalogueLimits,
  skill: string,
  cases: readonly TriggerCase[],
): Generator<void, CatalogueEvalResult> {
  // Only skills, index and catalogue are read; a snapshot's other fields are for the registry.
  const snapshot = view as unknown as CatalogueSnapshot;
  const complete = catalogueIsComplete(snapshot, limits);
  const results: CaseResult[] = [];
  for (const entry of cases) {
    const listed = new Set(
      chooseCatalogue(snapshot, limits, { message: entry.query, searchable: true, ranked: true, hideLocations: true })
        .listed,
    );
    results.push(
      caseResult(entry, listed.has(skill), entry.expectSkill === undefined ? undefined : listed.has(entry.expectSkill)),
    );
    yield;
  }
  return { skill, complete, score: scoreOf(results), cases: results };
}

/** A case's outcome: a positive passes when triggered; a negative when not, and its expected skill triggered. */
export function caseResult(entry: TriggerCase, triggered: boolean, expectedTriggered?: boolean): CaseResult {
  const pass = entry.shouldTrigger ? triggered : !triggered && expectedTriggered !== false;
  return { ...entry, triggered, ...(expectedTriggered === undefined ? {} : { expectedTriggered }), pass };
}

export function scoreOf(results: readonly Pick<CaseResult, 'shouldTrigger' | 'triggered' | 'pass'>[]): EvalScore {
  const count = (want: boolean, got: boolean) =>
    results.filter((result) => result.shouldTrigger === want && result.triggered === got).length;
  const truePositives = count(true, true);
  const falsePositives = count(false, true);
  const falseNegatives = count(true, false);
  const ratio = (part: number, whole: number) => (whole === 0 ? null : part / whole);
  return {
    cases: results.length,
    passed: results.filter((result) => result.pass).length,
    truePositives,
    falsePositives,
    falseNegatives,
    trueNegatives: count(false, false),
    precision: ratio(truePositives, truePositives + falsePositives),
    recall: ratio(truePositives, truePositives + falseNegatives),
  };
}

/** The cases that passed before and fail now (the same request, the same expectation). */
export function regressedCases(before: readonly CaseResult[], after: readonly CaseResult[]): CaseResult[] {
  const passed = new Set(before.filter((result) => result.pass).map(caseKey));
  return after.filter((result) => !result.pass && passed.has(caseKey(result)));
}

function caseKey(result: TriggerCase): string {
  return `${result.shouldTrigger}\u0000${result.expectSkill ?? ''}\u0000${result.query}`;
}
