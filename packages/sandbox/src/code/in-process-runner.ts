import {
  clampScore,
  type CodeSkillCanHandle,
  type CodeSkillContext,
  type CodeSkillExecute,
  type CodeSkillRequest,
  codeSkillResult,
  type CodeSkillResult,
  describeThrown,
  failedResult,
} from '@skillhost/core';

/**
 * Runs a programmatic code skill: the embedding application's own function, trusted, so called
 * in-process with no worker. It gets the same ctx as a `skill.mjs` and its result is checked the
 * same way. The timeout bounds how long the turn waits; code that ignores it cannot be stopped
 * (and a synchronous endless loop would block the server, as any code of the application would).
 */
export async function runInProcess(
  execute: CodeSkillExecute,
  request: Omit<CodeSkillRequest, 'modulePath' | 'memoryMb'>,
): Promise<CodeSkillResult> {
  const started = performance.now();
  const outcome = await settleWithin(() => execute(contextFor(request)), request.timeoutMs);
  const durationMs = Math.round((performance.now() - started) * 100) / 100;
  switch (outcome.kind) {
    case 'value':
      return codeSkillResult(outcome.value, durationMs);
    case 'threw':
      return failedResult(`The code skill failed: execute() threw ${outcome.error}`, durationMs);
    case 'timeout':
      return failedResult(
        `The code skill failed: it did not finish within ${request.timeoutMs} ms (app.skills.code_timeout_ms)`,
        durationMs,
      );
  }
}

/** canHandle(query) clamped to 0..1; undefined when it throws, is late or gives no number. */
export async function scoreInProcess(
  canHandle: CodeSkillCanHandle,
  query: string,
  timeoutMs: number,
): Promise<number | undefined> {
  const outcome = await settleWithin(() => canHandle(query), timeoutMs);
  return outcome.kind === 'value' ? clampScore(outcome.value) : undefined;
}

function contextFor(request: Omit<CodeSkillRequest, 'modulePath' | 'memoryMb'>): CodeSkillContext {
  return {
    // A copy, as a worker gets: the skill may change its ctx without touching the server's configuration.
    ...structuredClone(request.ctx),
    llm: {
      complete: (prompt, options = {}) =>
        request.llm(String(prompt), typeof options?.system === 'string' ? { system: options.system } : {}),
    },
    tools: { call: (name, args = {}) => request.callTool(String(name), args) },
  };
}

type Settled = { kind: 'value'; value: unknown } | { kind: 'threw'; error: string } | { kind: 'timeout' };

function settleWithin(work: () => unknown, timeoutMs: number): Promise<Settled> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve({ kind: 'timeout' }), timeoutMs);
    const done = (outcome: Settled) => {
      clearTimeout(timer);
      resolve(outcome);
    };
    Promise.resolve()
      .then(work)
      .then(
        (value) => done({ kind: 'value', value }),
        (error: unknown) => done({ kind: 'threw', error: describeThrown(error) }),
      );
  });
}
