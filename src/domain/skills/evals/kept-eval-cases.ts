import type { CasePlan, KeptEvalCase } from './eval-case-store.js';
import {
  bothWaysProblem,
  caseLabel,
  MAX_TRIGGER_CASES,
  requestKey,
  selfExpectationProblems,
  TRIGGER_EVALS_FILE,
  type TriggerCase,
} from './trigger-evals.js';

/** A case an addition repeats (the same request, expectation and expected skill), and where it already is. */
export interface DuplicateCase extends TriggerCase {
  of: 'file' | 'kept' | 'body';
}

/**
 * What adding `incoming` (already read with the file's rules) to a skill's kept cases does: the new cases, and the
 * duplicates left out (merged: a case is kept once, and one the file has runs from the file). A request listed the
 * other way by the file or a kept case is refused as the file's own check refuses it, and so is going past
 * MAX_TRIGGER_CASES kept cases. Problems name `label` and the case, as the file's do.
 */
export function planAddition(
  skill: string,
  incoming: readonly TriggerCase[],
  file: readonly TriggerCase[],
  kept: readonly KeptEvalCase[],
  label = 'body',
): { plan: CasePlan; duplicates: DuplicateCase[] } {
  const problems = selfExpectationProblems(skill, incoming, label);
  const add: TriggerCase[] = [];
  const duplicates: DuplicateCase[] = [];
  const [inFile, inKept, inBody] = [byRequest(file), byRequest(kept), new Map<string, TriggerCase[]>()];
  incoming.forEach((entry, index) => {
    const key = requestKey(entry.query);
    const opposite = (cases: Map<string, readonly TriggerCase[]>) =>
      cases.get(key)?.find((other) => other.shouldTrigger !== entry.shouldTrigger);
    const [fileOther, keptOther] = [opposite(inFile), opposite(inKept)];
    if (fileOther !== undefined || keptOther !== undefined) {
      const where = fileOther !== undefined ? ` in ${TRIGGER_EVALS_FILE}` : ' among the kept cases';
      problems.push(bothWaysProblem(caseLabel(label, index, entry), !entry.shouldTrigger, where));
      return;
    }
    const same = (cases: Map<string, readonly TriggerCase[]>) =>
      cases.get(key)?.some((other) => sameCase(other, entry));
    const of = same(inFile) ? 'file' : same(inKept) ? 'kept' : same(inBody) ? 'body' : undefined;
    if (of !== undefined) {
      duplicates.push({ ...caseOf(entry), of });
      return;
    }
    add.push(caseOf(entry));
    inBody.set(key, [...(inBody.get(key) ?? []), entry]);
  });
  const total = kept.length + add.length;
  if (problems.length === 0 && total > MAX_TRIGGER_CASES)
    problems.push(
      `${label}: '${skill}' would keep ${total} cases, more than ${MAX_TRIGGER_CASES}; delete some first ` +
        `(it keeps ${kept.length})`,
    );
  return { plan: problems.length > 0 ? { problems } : { add }, duplicates };
}

/**
 * The cases a run uses: the file's, then the kept ones for requests the file does not list (the file wins: a kept case
 * it repeats, or contradicts since it changed, is left out). Each says where it comes from. Undefined: no case at all.
 */
export function casesForRun(
  file: readonly TriggerCase[] | undefined,
  kept: readonly KeptEvalCase[],
): TriggerCase[] | undefined {
  const fromFile = (file ?? []).map((entry): TriggerCase => ({ ...caseOf(entry), source: 'file' }));
  const listed = fileRequests(file);
  const fromKept = kept
    .filter((entry) => !listed.has(requestKey(entry.query)))
    .map((entry): TriggerCase => ({ ...caseOf(entry), source: 'kept', caseId: entry.id }));
  const cases = [...fromFile, ...fromKept];
  return file === undefined && fromKept.length === 0 ? undefined : cases;
}

/** The requests a file lists (a kept case for one of them is left out of runs). */
export function fileRequests(file: readonly TriggerCase[] | undefined): Set<string> {
  return new Set((file ?? []).map((entry) => requestKey(entry.query)));
}

function byRequest(cases: readonly TriggerCase[]): Map<string, TriggerCase[]> {
  const map = new Map<string, TriggerCase[]>();
  for (const entry of cases) {
    const key = requestKey(entry.query);
    map.set(key, [...(map.get(key) ?? []), entry]);
  }
  return map;
}

function sameCase(a: TriggerCase, b: TriggerCase): boolean {
  return a.shouldTrigger === b.shouldTrigger && (a.expectSkill ?? null) === (b.expectSkill ?? null);
}

/** The case alone (a kept case without its id and author, a run's case without its source). */
function caseOf(entry: TriggerCase): TriggerCase {
  return {
    query: entry.query,
    shouldTrigger: entry.shouldTrigger,
    ...(entry.expectSkill === undefined ? {} : { expectSkill: entry.expectSkill }),
  };
}
