import type { AuditActor } from '../../shared/audit.js';
import type { TriggerCase } from './trigger-evals.js';

/** A trigger eval case kept by the service for a skill (by name), beside its file's: who added it, and when. */
export interface KeptEvalCase {
  id: string;
  skill: string;
  query: string;
  shouldTrigger: boolean;
  expectSkill?: string;
  /** Who added it (the id is null once the user is deleted, the name stays); null: the server itself. */
  addedBy: AuditActor | null;
  addedAt: Date;
}

/** What to add to a skill's kept cases, decided from those it has; `problems` adds nothing. */
export type CasePlan = { add: readonly TriggerCase[] } | { problems: string[] };

/** `skill_eval_cases` (infra's SkillEvalCaseRepository implements it in PostgreSQL). */
export interface EvalCaseStore {
  /** These skills' kept cases, each skill's oldest first (a skill with none is absent). */
  casesOf(skills: readonly string[]): Promise<Map<string, KeptEvalCase[]>>;
  /**
   * In one transaction, under the skill's lock (so a limit or a duplicate check holds across instances): reads its
   * kept cases, asks `plan` what to add, adds that with its audit entry, and answers the cases added or the problems.
   */
  add(
    skill: string,
    plan: (kept: readonly KeptEvalCase[]) => CasePlan,
    actor: AuditActor,
  ): Promise<{ added: KeptEvalCase[] } | { problems: string[] }>;
  /** Removes one kept case of the skill with its audit entry; null when the skill has no case of that id. */
  remove(skill: string, id: string, actor: AuditActor): Promise<KeptEvalCase | null>;
}

export const EVAL_CASE_STORE = Symbol('EVAL_CASE_STORE');
