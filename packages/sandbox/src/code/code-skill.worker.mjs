// @ts-check
/**
 * The worker thread a folder code skill runs in: one worker per call, terminated after it, so
 * every call imports `skill.mjs` (and what it imports) afresh and nothing leaks between calls.
 *
 * Plain JavaScript on purpose: a worker thread is a new Node.js isolate that Jest's transform never
 * sees, and Node 20 cannot load TypeScript, so a `.ts` worker would run from `dist/` only. As an
 * `.mjs` file it runs the same from `src/` (tests) and from `dist/` (`allowJs` makes tsc emit it
 * beside the compiled runner), and `@ts-check` holds it to the message types.
 *
 * The worker only runs the code and relays `ctx.llm.complete` / `ctx.tools.call` to the server;
 * checking what `execute` returned, caps and limits are the server's (code-skill-runner.ts).
 */
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';

/** @typedef {import('@skillhost/core').WorkerTask} WorkerTask */
/** @typedef {import('@skillhost/core').WorkerMessage} WorkerMessage */
/** @typedef {import('@skillhost/core').ServerReply} ServerReply */
/** @typedef {import('@skillhost/core').CodeSkillContext} CodeSkillContext */
/** @typedef {import('@skillhost/core').CodeSkillToolOutcome} CodeSkillToolOutcome */

if (parentPort === null) throw new Error('code-skill.worker.mjs runs only as a worker thread');

// A worker shares the server's process: a signal it sends to its own pid would stop the server.
process.kill = () => {
  throw new Error("process.kill is not available to code skills: they share the server's process");
};
const port = parentPort;
const task = /** @type {WorkerTask} */ (workerData);

/** @type {Map<number, { resolve: (value: any) => void; reject: (error: Error) => void }>} */
const pending = new Map();
let nextId = 1;

port.on('message', (/** @type {ServerReply} */ reply) => {
  const waiting = pending.get(reply.id);
  if (reply.type !== 'reply' || waiting === undefined) return;
  pending.delete(reply.id);
  if (reply.ok) waiting.resolve(reply.value);
  else waiting.reject(new Error(reply.error));
});

/**
 * Asks the server and waits for its reply.
 * @param {{ type: 'llm'; prompt: string; system?: string } | { type: 'tool'; name: string; args: unknown }} message
 * @returns {Promise<any>}
 */
function ask(message) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    pending.set(id, { resolve, reject });
    try {
      send({ ...message, id });
    } catch (error) {
      pending.delete(id);
      reject(new Error(`The arguments cannot be passed to the server: ${describe(error)}`));
    }
  });
}

/** @param {WorkerMessage} message */
function send(message) {
  port.postMessage(message);
}

/** @param {unknown} error */
function describe(error) {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

/**
 * @param {Extract<WorkerTask, { kind: 'execute' }>['ctx']} input
 * @returns {CodeSkillContext}
 */
function buildContext(input) {
  return {
    ...input,
    llm: {
      complete(prompt, options = {}) {
        const system = typeof options?.system === 'string' ? options.system : undefined;
        return ask({ type: 'llm', prompt: String(prompt), ...(system === undefined ? {} : { system }) });
      },
    },
    tools: {
      call: (name, args = {}) =>
        /** @type {Promise<CodeSkillToolOutcome>} */ (ask({ type: 'tool', name: String(name), args })),
    },
  };
}

/**
 * Imports the module and runs the task; every way it can go wrong is one `done` message saying which.
 * @param {WorkerTask} work
 */
async function run(work) {
  let module;
  try {
    module = await import(pathToFileURL(work.modulePath).href);
  } catch (error) {
    if (!existsSync(work.modulePath))
      return fail('skill.mjs is no longer there (moved or deleted since the last scan); reload the skills');
    return fail(`skill.mjs could not be loaded: ${describe(error)}`);
  }
  const name = work.kind === 'score' ? 'canHandle' : 'execute';
  if (typeof module[name] !== 'function') {
    if (work.kind === 'score') return finish(undefined);
    return fail('skill.mjs does not export a function execute(ctx); add `export async function execute(ctx) { … }`');
  }
  let value;
  try {
    value = await (work.kind === 'score' ? module.canHandle(work.query) : module.execute(buildContext(work.ctx)));
  } catch (error) {
    return fail(`${name}() threw ${describe(error)}`);
  }
  finish(value);
}

/** @param {unknown} value */
function finish(value) {
  try {
    send({ type: 'done', ok: true, value });
  } catch (error) {
    fail(
      `it returned a value that cannot be passed back (functions and symbols cannot; return plain data): ` +
        `${describe(error)}`,
    );
  }
}

/** @param {string} error */
function fail(error) {
  send({ type: 'done', ok: false, error });
}

void run(task);
