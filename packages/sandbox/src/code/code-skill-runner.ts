import { dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import {
  clampScore,
  type CodeSkillRequest,
  codeSkillResult,
  type CodeSkillResult,
  type CodeSkillToolOutcome,
  describeError,
  describeThrown,
  failedResult,
  type ServerReply,
  type WorkerMessage,
  type WorkerTask,
} from '@skillhost/core';

/**
 * Runs folder code skills (`skill.mjs`) in worker threads. A worker is the unit of isolation the
 * server can stop: a timeout terminates it, its JS heap is capped, and whatever happens inside (a
 * throw, an endless loop, running out of memory, `process.exit`) ends as `success: false` with an
 * error, never as a failure of the server. It is not a security sandbox: the code runs with the
 * server's rights, which is why code skills load only from operator-trusted folders.
 */

/** Beside this file in `src/` and in `dist/` alike (see the worker's header for why it is `.mjs`). */
const WORKER_URL = new URL('./code-skill.worker.mjs', import.meta.url);

/** The JS heap of a worker that only scores a query (canHandle). */
export const DEFAULT_SCORE_MEMORY_MB = 64;

/** What became of one worker. */
type WorkerOutcome =
  | { kind: 'done'; ok: true; value: unknown }
  | { kind: 'done'; ok: false; error: string }
  | { kind: 'timeout' }
  | { kind: 'out-of-memory' }
  | { kind: 'crashed'; error: string }
  | { kind: 'exited'; code: number };

interface WorkerOptions {
  timeoutMs: number;
  memoryMb: number;
  /** Answers the worker's `llm` and `tool` requests; a rejection goes back to the code as a thrown Error. */
  answer?: (message: Extract<WorkerMessage, { type: 'llm' | 'tool' }>) => Promise<string | CodeSkillToolOutcome>;
}

/** Runs `execute(ctx)` of a `skill.mjs` in a fresh worker; never throws. */
export async function runCodeSkill(request: CodeSkillRequest): Promise<CodeSkillResult> {
  const started = performance.now();
  const outcome = await runWorker(
    { kind: 'execute', modulePath: request.modulePath, ctx: request.ctx },
    {
      timeoutMs: request.timeoutMs,
      memoryMb: request.memoryMb,
      answer: async (message) => {
        if (message.type === 'llm')
          return String(
            await request.llm(message.prompt, message.system === undefined ? {} : { system: message.system }),
          );
        const outcome = await request.callTool(message.name, message.args);
        return { status: outcome.status === 'ok' ? 'ok' : 'error', output: String(outcome.output) };
      },
    },
  );
  const durationMs = elapsed(started);
  if (outcome.kind === 'done' && outcome.ok) return codeSkillResult(outcome.value, durationMs);
  return failedResult(
    withoutHostPath(`The code skill failed: ${describeFailure(outcome, request)}`, dirname(request.modulePath)),
    durationMs,
  );
}

/**
 * Errors reach the model and the user: the skill's folder is `.` there, as resource paths are relative to it (the host
 * path stays in the logs).
 */
function withoutHostPath(text: string, folder: string): string {
  return text.replaceAll(pathToFileURL(folder).href, '.').replaceAll(folder, '.');
}

/**
 * `canHandle(query)` of a `skill.mjs`, clamped to 0..1; undefined when it has none, throws, times out or gives no
 * number.
 */
export async function scoreCodeSkill(
  modulePath: string,
  query: string,
  timeoutMs: number,
  memoryMb = DEFAULT_SCORE_MEMORY_MB,
): Promise<number | undefined> {
  const outcome = await runWorker({ kind: 'score', modulePath, query }, { timeoutMs, memoryMb });
  return outcome.kind === 'done' && outcome.ok ? clampScore(outcome.value) : undefined;
}

function describeFailure(
  outcome: Exclude<WorkerOutcome, { kind: 'done'; ok: true }>,
  limits: { timeoutMs: number; memoryMb: number },
): string {
  switch (outcome.kind) {
    case 'done':
      return outcome.error;
    case 'timeout':
      return `it was stopped after ${limits.timeoutMs} ms (app.skills.code_timeout_ms)`;
    case 'out-of-memory':
      return `it ran out of memory (its limit is ${limits.memoryMb} MB, app.skills.code_memory_mb)`;
    case 'crashed':
      return `it crashed: ${outcome.error}`;
    case 'exited':
      return `it exited (code ${outcome.code}) before returning a result`;
  }
}

/** Starts one worker for one task and settles once: with its answer, or with why there is none. */
function runWorker(task: WorkerTask, options: WorkerOptions): Promise<WorkerOutcome> {
  return new Promise((resolve) => {
    let worker: Worker;
    try {
      worker = new Worker(WORKER_URL, {
        workerData: task,
        resourceLimits: { maxOldGenerationSizeMb: options.memoryMb },
        // Its console output is read and dropped: left to the server's stdout it would break JSON logs.
        stdout: true,
        stderr: true,
      });
    } catch (error) {
      resolve({ kind: 'crashed', error: describeThrown(error) });
      return;
    }
    worker.stdout.resume();
    worker.stderr.resume();
    let settled = false;
    const settle = (outcome: WorkerOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
      // Ends whatever the code left running (timers, pending calls); its own exit event is ignored.
      void worker.terminate().catch(() => undefined);
    };
    const timer = setTimeout(() => settle({ kind: 'timeout' }), options.timeoutMs);
    worker.on('message', (message: WorkerMessage) => {
      if (message?.type === 'done')
        settle(
          message.ok
            ? { kind: 'done', ok: true, value: message.value }
            : { kind: 'done', ok: false, error: String(message.error) },
        );
      else if ((message?.type === 'llm' || message?.type === 'tool') && options.answer !== undefined)
        relay(worker, message, options.answer, () => settled);
    });
    worker.on('error', (error: unknown) => {
      const outOfMemory = (error as { code?: unknown } | null)?.code === 'ERR_WORKER_OUT_OF_MEMORY';
      settle(outOfMemory ? { kind: 'out-of-memory' } : { kind: 'crashed', error: describeThrown(error) });
    });
    worker.on('exit', (code) => settle({ kind: 'exited', code }));
  });
}

/** Answers one request of the worker, unless the run has ended meanwhile. */
function relay(
  worker: Worker,
  message: Extract<WorkerMessage, { type: 'llm' | 'tool' }>,
  answer: NonNullable<WorkerOptions['answer']>,
  ended: () => boolean,
): void {
  const reply = (payload: ServerReply) => {
    if (ended()) return;
    try {
      worker.postMessage(payload);
    } catch (error) {
      // Most likely the worker is gone (its exit settles the run); else the code hears why rather than waiting for the
      // timeout.
      if (payload.ok)
        reply({
          type: 'reply',
          id: payload.id,
          ok: false,
          error: `The answer could not be passed to the code: ${describeError(error)}`,
        });
    }
  };
  Promise.resolve()
    .then(() => answer(message))
    .then(
      (value) => reply({ type: 'reply', id: message.id, ok: true, value }),
      (error) => reply({ type: 'reply', id: message.id, ok: false, error: describeError(error) }),
    );
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 100) / 100;
}
