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
  return listedText(problems, '; ');
}

/** Names as a comma-separated list of at most MAX_LISTED_PROBLEMS (each cut like a problem), then how many more. */
export function namesText(names: readonly string[]): string {
  return listedText(names, ', ');
}

function listedText(items: readonly string[], separator: string): string {
  const { problems: listed, moreProblems } = problemDetails(items);
  return moreProblems === undefined ? listed.join(separator) : `${listed.join(separator)} … and ${moreProblems} more`;
}

/**
 * `problem` itself when it is short enough, else its start and its end around an ellipsis,
 * MAX_PROBLEM_CHARS in all: what was wrong is said at the start ("x: …") or at the end ("…; must be
 * a string"), and the value quoted in the middle is what grows.
 */
export function cutProblem(problem: string): string {
  if (problem.length <= MAX_PROBLEM_CHARS) return problem;
  const half = (MAX_PROBLEM_CHARS - 1) / 2;
  let head = Math.ceil(half);
  let tail = problem.length - Math.floor(half);
  // Never between the two halves of a surrogate pair: the answer would hold half a character.
  if (isHighSurrogate(problem.charCodeAt(head - 1))) head--;
  if (isHighSurrogate(problem.charCodeAt(tail - 1))) tail++;
  return `${problem.slice(0, head)}…${problem.slice(tail)}`;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
