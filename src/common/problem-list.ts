/**
 * How many problems one refusal lists; the rest are counted. A request with a hundred thousand
 * unknown fields has a hundred thousand problems: the answer names the first few and how many
 * more there are, so refusing it costs about as little as refusing one.
 */
export const MAX_LISTED_PROBLEMS = 10;

/** A listed problem is cut here: problems quote field names and values, which a client may make a megabyte long. */
export const MAX_PROBLEM_CHARS = 300;

/** A refusal's `details`: the first problems, and `moreProblems` when some were left out. */
export interface ProblemDetails {
  problems: string[];
  moreProblems?: number;
}

/** The problems a refusal lists, each cut to MAX_PROBLEM_CHARS, and how many it leaves out. */
export function problemDetails(problems: readonly string[]): ProblemDetails {
  const listed = problems.slice(0, MAX_LISTED_PROBLEMS).map(cutProblem);
  const more = problems.length - listed.length;
  return more > 0 ? { problems: listed, moreProblems: more } : { problems: listed };
}

/** The problems as one sentence's tail: `a; b; c`, or `a; …; j … and 990 more`. */
export function problemsText(problems: readonly string[]): string {
  const { problems: listed, moreProblems } = problemDetails(problems);
  return moreProblems === undefined ? listed.join('; ') : `${listed.join('; ')} … and ${moreProblems} more`;
}

/** Names as a comma-separated list of at most MAX_LISTED_PROBLEMS (each cut like a problem), then how many more. */
export function namesText(names: readonly string[]): string {
  const listed = names.slice(0, MAX_LISTED_PROBLEMS).map(cutProblem);
  const more = names.length - listed.length;
  return more > 0 ? `${listed.join(', ')} … and ${more} more` : listed.join(', ');
}

function cutProblem(problem: string): string {
  if (problem.length <= MAX_PROBLEM_CHARS) return problem;
  let end = MAX_PROBLEM_CHARS - 1;
  // Never between the two halves of a surrogate pair: the answer would hold half a character.
  if (/[\ud800-\udbff]/.test(problem[end - 1])) end--;
  return `${problem.slice(0, end)}…`;
}
