import { Inject, Injectable, Optional } from '@nestjs/common';
import { AppError, ErrorCode, problemsText } from '@skillhost/core';
import type { AuditActor } from '../../shared/audit.js';
import { isUuid } from '../../shared/uuid.js';
import { validationFailed } from '../../shared/validation-errors.js';
import { actorOf, type Principal } from '../../users/principal.js';
import { EVAL_CASE_STORE, type EvalCaseStore, type KeptEvalCase } from './eval-case-store.js';
import { type DuplicateCase, fileRequests, planAddition } from './kept-eval-cases.js';
import { TriggerEvalService } from './trigger-eval.service.js';
import { CatalogueEvalFollowerService } from './catalogue-eval-follower.service.js';
import {
  type CaseSource,
  MAX_QUERY_CHARS,
  MAX_TRIGGER_CASES,
  readAddedCases,
  requestKey,
  TRIGGER_EVALS_FILE,
  type TriggerCase,
} from './trigger-evals.js';

/** One case of a skill as the cases route lists it: its file's (read-only), or kept (with its id and author). */
export interface EvalCaseView extends TriggerCase {
  source: CaseSource;
  id?: string;
  addedBy?: AuditActor | null;
  addedAt?: Date;
  /** A kept case whose request the file now lists too: runs use the file's case, not this one. */
  inFile?: boolean;
}

export interface EvalCaseList {
  skill: string;
  cases: EvalCaseView[];
  /** Why the skill's `evals/triggers.json` is not valid (runs then report it, and use no case); empty when it is. */
  fileProblems: string[];
  limits: { maxKeptCases: number; maxQueryChars: number };
}

export interface EvalCaseAddition {
  skill: string;
  added: EvalCaseView[];
  /** Cases the request repeats, merged: not kept twice (`of` says where each already is). */
  duplicates: DuplicateCase[];
}

/**
 * The trigger eval cases the service keeps for a skill beside its file's (docs/trigger-evals.md): listed, added (one or
 * several, read with the file's rules) and removed by whoever may run the skill's evals, each change audited.
 */
@Injectable()
export class EvalCaseService {
  constructor(
    private readonly evals: TriggerEvalService,
    @Inject(EVAL_CASE_STORE) private readonly store: EvalCaseStore,
    @Optional() private readonly follower?: CatalogueEvalFollowerService,
  ) {}

  /** The file's cases (none when the catalogue does not offer the skill) and the kept ones, which outlive it. */
  async list(name: string, principal: Principal): Promise<EvalCaseList> {
    await this.evals.assertMayEvaluate(name, principal);
    const file = this.fileOf(name, { required: false });
    const kept = (await this.store.casesOf([name])).get(name) ?? [];
    const listed = fileRequests(file.cases);
    return {
      skill: name,
      cases: [
        ...(file.cases ?? []).map((entry): EvalCaseView => ({ ...entry, source: 'file' })),
        ...kept.map((entry) => keptView(entry, listed.has(requestKey(entry.query)))),
      ],
      fileProblems: file.problems ?? [],
      limits: { maxKeptCases: MAX_TRIGGER_CASES, maxQueryChars: MAX_QUERY_CHARS },
    };
  }

  /**
   * Keeps the cases of `body` for a skill the catalogue offers: VALIDATION_FAILED (nothing kept) for a case the file
   * would refuse, a request the file or a kept case lists the other way, or too many kept cases; duplicates merged.
   */
  async add(name: string, principal: Principal, body: unknown): Promise<EvalCaseAddition> {
    await this.evals.assertMayEvaluate(name, principal);
    const file = this.fileOf(name, { required: true });
    const read = readAddedCases(body);
    if ('problems' in read) throw refused(name, read.problems);
    let duplicates: DuplicateCase[] = [];
    const outcome = await this.store.add(
      name,
      (kept) => {
        const planned = planAddition(name, read.cases, file.cases ?? [], kept);
        duplicates = planned.duplicates;
        return planned.plan;
      },
      actorOf(principal),
    );
    if ('problems' in outcome) throw refused(name, outcome.problems);
    if (outcome.added.length > 0) this.follower?.casesChanged(name);
    return { skill: name, added: outcome.added.map((entry) => keptView(entry, false)), duplicates };
  }

  /** Removes one kept case; EVAL_CASE_NOT_FOUND when the skill keeps none of that id. */
  async remove(name: string, id: string, principal: Principal): Promise<void> {
    await this.evals.assertMayEvaluate(name, principal);
    const removed = isUuid(id) ? await this.store.remove(name, id, actorOf(principal)) : null;
    if (removed === null)
      throw new AppError(
        ErrorCode.EVAL_CASE_NOT_FOUND,
        `'${name}' keeps no trigger eval case with the id ${JSON.stringify(id)}; GET /v1/admin/skills/${name}/evals/` +
          `cases lists them (a case of its ${TRIGGER_EVALS_FILE} is changed in the file).`,
        { name, id },
      );
    this.follower?.casesChanged(name);
  }

  private fileOf(name: string, { required }: { required: boolean }): { cases?: TriggerCase[]; problems?: string[] } {
    try {
      return this.evals.fileCasesOf(name);
    } catch (error) {
      if (!required && AppError.isInstance(error) && error.code === ErrorCode.SKILL_NOT_FOUND) return {};
      throw error;
    }
  }
}

function keptView(entry: KeptEvalCase, inFile: boolean): EvalCaseView {
  return {
    source: 'kept',
    id: entry.id,
    query: entry.query,
    shouldTrigger: entry.shouldTrigger,
    ...(entry.expectSkill === undefined ? {} : { expectSkill: entry.expectSkill }),
    addedBy: entry.addedBy,
    addedAt: entry.addedAt,
    inFile,
  };
}

function refused(name: string, problems: readonly string[]): AppError {
  return validationFailed(
    problems,
    `The trigger eval cases for '${name}' are not valid, so none was kept: ${problemsText(problems)}. See ` +
      'docs/trigger-evals.md for the form of a case.',
  );
}
