import type { StandardSchemaV1 } from '@modelcontextprotocol/server';
import { problemDetails } from '@skillhost/core';

/**
 * `schema` as the MCP SDK's params check sees it, reporting at most ten issues (each cut as a
 * listed problem is) and one that counts the rest. The SDK writes every issue into its -32602
 * message, so `arguments` holding a thousand wrongly typed values would make a message of tens of
 * kilobytes; REST and GraphQL refusals are bounded the same way (see problem-list.ts).
 */
export function withBoundedIssues<S extends StandardSchemaV1>(
  schema: S,
): StandardSchemaV1<StandardSchemaV1.InferInput<S>, StandardSchemaV1.InferOutput<S>> {
  const standard = schema['~standard'];
  return {
    '~standard': {
      ...standard,
      validate: (value) => {
        const result = standard.validate(value);
        return result instanceof Promise ? result.then(bounded) : bounded(result);
      },
    },
  } as StandardSchemaV1<StandardSchemaV1.InferInput<S>, StandardSchemaV1.InferOutput<S>>;
}

function bounded(result: StandardSchemaV1.Result<unknown>): StandardSchemaV1.Result<unknown> {
  if (result.issues === undefined || result.issues.length === 0) return result;
  const { problems, moreProblems } = problemDetails(result.issues.map(describeIssue));
  const issues = problems.map((message) => ({ message }));
  if (moreProblems !== undefined) issues.push({ message: `… and ${moreProblems} more` });
  return { issues };
}

/** As the SDK words an issue: its path, then its message. */
function describeIssue(issue: StandardSchemaV1.Issue): string {
  const path = (issue.path ?? [])
    .map((segment) => String(typeof segment === 'object' ? segment.key : segment))
    .join('.');
  return path === '' ? issue.message : `${path}: ${issue.message}`;
}
