import { z } from 'zod';

/** Where a skill keeps its trigger evals, relative to its folder. */
export const TRIGGER_EVALS_FILE = 'evals/triggers.json';
/** A bigger file is refused before it is parsed. */
export const MAX_TRIGGER_EVALS_BYTES = 256 * 1024;
/** Cases a skill may have (its file's and those added through the API, each). */
export const MAX_TRIGGER_CASES = 500;
/** The longest request a case may hold. */
export const MAX_QUERY_CHARS = 4000;

/** Where a case comes from: the skill's `evals/triggers.json`, or kept by the service (added through the API). */
export type CaseSource = 'file' | 'kept';

/** One request, and whether it should lead to the skill; when not, optionally the skill it should lead to instead. */
export interface TriggerCase {
  query: string;
  shouldTrigger: boolean;
  expectSkill?: string;
  /** In a run: where the case comes from, and a kept case's id. */
  source?: CaseSource;
  caseId?: string;
}

/** Zod's message for a field: `is missing` when absent, else what it must be. */
const expected = (what: string) => (issue: { input?: unknown }) => (issue.input === undefined ? 'is missing' : what);

const query = z
  .string({ error: expected('must be a string') })
  .trim()
  .min(1, { error: 'must not be empty' })
  .max(MAX_QUERY_CHARS, { error: `must be at most ${MAX_QUERY_CHARS} characters` });
const skillName = z
  .string({ error: 'must be a skill name (a string)' })
  .min(1, { error: 'must not be empty' })
  .max(64, { error: 'must be at most 64 characters' })
  // No skill is named so, and the name is printed as it is (`skillhost eval`): a terminal escape must not get there.
  .refine((name) => !/[\p{Cc}/\\]/u.test(name) && name.trim() === name, {
    error: 'must be a skill name: no control characters, slashes or spaces around it',
  });

/** skill-creator's form: `[{ "query": "…", "should_trigger": true }, …]`, with `expect_skill` on a negative case. */
export const triggerCaseSchema = z.strictObject({
  query,
  should_trigger: z.boolean({ error: expected('must be true or false') }),
  expect_skill: skillName.optional(),
});

/** A grouped entry: the request alone, or with the skill it should lead to (on the negative side). */
const groupedEntry = z.union([query, z.strictObject({ query, expect_skill: skillName.optional() })], {
  error: 'must be a request (a string) or { "query": "…", "expect_skill"?: "…" }',
});

const groupedSchema = z.strictObject({
  should_trigger: z.array(groupedEntry, { error: 'must be a list' }).optional(),
  should_not_trigger: z.array(groupedEntry, { error: 'must be a list' }).optional(),
});

/**
 * The forms a request adding cases takes (one case, or either form of the file), for its documentation: readAddedCases
 * reads them with these same parts and the file's messages.
 */
export const addedCasesSchema = z.union([triggerCaseSchema, z.array(triggerCaseSchema), groupedSchema]);

export type TriggerEvalsParse = { cases: TriggerCase[] } | { problems: string[] };

/**
 * Reads a skill's trigger evals, in either form: a list of `{ query, should_trigger, expect_skill? }` (what
 * Anthropic's skill-creator writes for its description optimisation) or `{ should_trigger: [...],
 * should_not_trigger: [...] }`. Problems name the file, the case (number and start of its request) and why.
 */
export function parseTriggerEvals(text: string, file = TRIGGER_EVALS_FILE): TriggerEvalsParse {
  if (Buffer.byteLength(text) > MAX_TRIGGER_EVALS_BYTES)
    return {
      problems: [`${file}: larger than ${MAX_TRIGGER_EVALS_BYTES} bytes; keep at most ${MAX_TRIGGER_CASES} cases`],
    };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { problems: [`${file}: not JSON (${(error as Error).message})`] };
  }
  return readTriggerEvals(json, file);
}

/** The same, from a parsed value: either form, every case checked, each problem naming `file` (or what it was). */
export function readTriggerEvals(json: unknown, file: string): TriggerEvalsParse {
  const cases = Array.isArray(json) ? readList(json, file) : readGrouped(json, file);
  if ('problems' in cases) return cases;
  return checkCases(cases.cases, file);
}

/**
 * Cases added through the API (`body`): one case `{ "query", "should_trigger", "expect_skill"? }`, or either form of
 * the file, with the file's rules and messages.
 */
export function readAddedCases(body: unknown, label = 'body'): TriggerEvalsParse {
  const single = typeof body === 'object' && body !== null && !Array.isArray(body) && 'query' in body;
  return readTriggerEvals(single ? [body] : body, label);
}

/**
 * A negative case whose `expect_skill` is the skill itself says both "not this skill" and "this skill": it can never
 * pass. One problem per such case, in the file's words.
 */
export function selfExpectationProblems(skill: string, cases: readonly TriggerCase[], file: string): string[] {
  return cases.flatMap((entry, index) =>
    entry.expectSkill === skill
      ? [
          `${caseLabel(file, index, entry)}: expect_skill names '${skill}' itself; name the skill the request ` +
            'should lead to instead, or leave expect_skill out',
        ]
      : [],
  );
}

/** Two cases are about the same request when their texts match but for case (after trimming, as read). */
export function requestKey(queryText: string): string {
  return queryText.toLowerCase();
}

/** The problem of a request listed both ways: `label` the later case, `where` the other one when elsewhere. */
export function bothWaysProblem(label: string, other: boolean, where = ''): string {
  return `${label}: the same request is listed as should_trigger ${other} too${where}; keep one`;
}

function readList(json: unknown[], file: string): TriggerEvalsParse {
  const problems: string[] = [];
  const cases: TriggerCase[] = [];
  json.forEach((entry, index) => {
    const parsed = triggerCaseSchema.safeParse(entry);
    if (!parsed.success) {
      problems.push(
        ...keyByKey(parsed.error.issues).map((issue) => `${caseLabel(file, index, entry)}: ${issueText(issue)}`),
      );
      return;
    }
    cases.push(caseOf(parsed.data.query, parsed.data.should_trigger, parsed.data.expect_skill));
  });
  return problems.length > 0 ? { problems } : { cases };
}

function readGrouped(json: unknown, file: string): TriggerEvalsParse {
  const parsed = groupedSchema.safeParse(json);
  if (!parsed.success) {
    const problems = keyByKey(parsed.error.issues).map((issue) => {
      const [side, index] = issue.path;
      const entry =
        typeof side === 'string' && typeof index === 'number'
          ? (json as Record<string, unknown[]>)[side]?.[index]
          : undefined;
      const where =
        typeof index === 'number'
          ? `${caseLabel(file, index, entry, side as string)}`
          : `${file}${pathText(issue.path)}`;
      return `${where}: ${issueText(issue, typeof index === 'number' ? 2 : 0)}`;
    });
    return {
      problems: problems.map((problem) =>
        problem.endsWith('must be an object') || problem.includes('expected object')
          ? `${file}: must be a list of { "query", "should_trigger", "expect_skill"? } or ` +
            '{ "should_trigger": [...], "should_not_trigger": [...] }'
          : problem,
      ),
    };
  }
  const entries = (list: typeof parsed.data.should_trigger) =>
    (list ?? []).map((entry) => (typeof entry === 'string' ? { query: entry.trim() } : entry));
  return {
    cases: [
      ...entries(parsed.data.should_trigger).map((entry) => caseOf(entry.query, true, entry.expect_skill)),
      ...entries(parsed.data.should_not_trigger).map((entry) => caseOf(entry.query, false, entry.expect_skill)),
    ],
  };
}

/** What holds across cases: some, not too many, no request both ways, `expect_skill` only on negative cases. */
function checkCases(cases: TriggerCase[], file: string): TriggerEvalsParse {
  const problems: string[] = [];
  if (cases.length === 0) problems.push(`${file}: has no cases; add requests that should and should not lead here`);
  if (cases.length > MAX_TRIGGER_CASES)
    problems.push(`${file}: has ${cases.length} cases, more than ${MAX_TRIGGER_CASES}`);
  const seen = new Map<string, TriggerCase>();
  cases.forEach((entry, index) => {
    const label = caseLabel(file, index, entry);
    if (entry.shouldTrigger && entry.expectSkill !== undefined)
      problems.push(
        `${label}: expect_skill names the skill a negative case leads to; remove it or set should_trigger false`,
      );
    const key = requestKey(entry.query);
    const before = seen.get(key);
    if (before !== undefined && before.shouldTrigger !== entry.shouldTrigger)
      problems.push(bothWaysProblem(label, before.shouldTrigger));
    seen.set(key, entry);
  });
  return problems.length > 0 ? { problems } : { cases };
}

function caseOf(queryText: string, shouldTrigger: boolean, expectSkill: string | undefined): TriggerCase {
  return { query: queryText, shouldTrigger, ...(expectSkill === undefined ? {} : { expectSkill }) };
}

/** `evals/triggers.json: case 3 ("make me a slide…")`, or `… should_not_trigger[2] (…)` in the grouped form. */
export function caseLabel(file: string, index: number, entry: unknown, side?: string): string {
  const text =
    typeof entry === 'string'
      ? entry
      : typeof entry === 'object' && entry !== null && typeof (entry as { query?: unknown }).query === 'string'
        ? (entry as { query: string }).query
        : undefined;
  const where = side === undefined ? `case ${index + 1}` : `${side}[${index}]`;
  return `${file}: ${where}${text === undefined ? '' : ` (${JSON.stringify(shorten(text))})`}`;
}

function shorten(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > 40 ? `${trimmed.slice(0, 40)}…` : trimmed;
}

function pathText(path: readonly PropertyKey[]): string {
  return path.length === 0 ? '' : ` ${path.map(String).join('.')}`;
}

/**
 * The issues with one problem per unknown field, as the request DTOs list them: a body of a thousand unknown fields is
 * refused with ten named and how many more, not one line cut short.
 */
function keyByKey(issues: readonly z.core.$ZodIssue[]): z.core.$ZodIssue[] {
  return issues.flatMap((issue): z.core.$ZodIssue[] =>
    issue.code === 'unrecognized_keys' ? issue.keys.map((key) => ({ ...issue, keys: [key] })) : [issue],
  );
}

/** The issue as a reason: the field it is about, then what is wrong (`skip` leading path parts already named). */
function issueText(issue: z.core.$ZodIssue, skip = 0): string {
  const field = issue.path.slice(skip).map(String).join('.');
  const message =
    issue.code === 'unrecognized_keys'
      ? `unknown field(s) ${issue.keys.map((key) => `"${key}"`).join(', ')} (a case has query, should_trigger, ` +
        'expect_skill)'
      : issue.message;
  return field === '' ? message : `${field} ${message}`;
}
