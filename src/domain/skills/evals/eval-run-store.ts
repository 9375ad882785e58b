import type { CaseResult, EvalScore } from './catalogue-eval.js';

/** A trigger eval run as kept: one per skill, version, level and model (`''` at the catalogue level). */
export interface StoredEvalRun {
  skill: string;
  digest: string;
  level: 'catalogue' | 'model';
  model: string;
  score: EvalScore;
  cases: CaseResult[];
  runAt: Date;
}

/** `skill_eval_runs` (infra's SkillEvalRunRepository implements it in PostgreSQL). */
export interface EvalRunStore {
  /** Keeps a run, replacing the last one of its skill, version, level and model. */
  save(run: Omit<StoredEvalRun, 'runAt'>): Promise<void>;
  /**
   * Keeps a run unless its skill, version, level and model already hold the same result (then nothing is written, and
   * its `runAt` stays): whether it wrote. Instances that run the same evals after the same change write once.
   */
  keep(run: Omit<StoredEvalRun, 'runAt'>): Promise<boolean>;
  /** A skill's runs, newest first. */
  runsOf(skill: string): Promise<StoredEvalRun[]>;
}

export const EVAL_RUN_STORE = Symbol('EVAL_RUN_STORE');

/** A skill's catalogue-level result of this version as kept (the catalogue level has no model: `''`). */
export function keptCatalogueRun(
  skill: string,
  digest: string,
  result: Pick<StoredEvalRun, 'score' | 'cases'>,
): Omit<StoredEvalRun, 'runAt'> {
  return { skill, digest, level: 'catalogue', model: '', score: result.score, cases: result.cases };
}
