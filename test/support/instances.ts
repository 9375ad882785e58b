import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync } from 'node:fs';
import { stringify } from 'smol-toml';
import { isBuildCurrent } from '../../tools/build-stamp.mjs';
import { createTestDatabase, type TestDatabase } from './database.js';
import { tempTree } from './files/skill-tree.js';

/**
 * Several Skillhost server processes on one database, as a load balancer would have them: each
 * is the built `dist/src/main.js` (as `npm start` runs it) with a config file of its own, so they
 * share nothing but PostgreSQL (and whatever folders the configuration names).
 */

/** One running server process. */
export interface AppInstance {
  /** `http://127.0.0.1:<port>`. */
  baseUrl: string;
  /** `ws://127.0.0.1:<port>/graphql`. */
  graphqlWsUrl: string;
  pid: number;
  /** Everything it wrote to stdout and stderr so far (JSON log lines). */
  output(): string;
  /** SIGTERM, then waits for the exit (SIGKILL after 30 s). */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface Instances {
  instances: AppInstance[];
  baseUrls: string[];
  /** The database they share. */
  db: TestDatabase;
  /** Stops every instance, drops the database when it was created here, removes the config files. */
  close(): Promise<void>;
}

export interface StartInstancesOptions {
  /**
   * TOML-shaped overrides for every instance, keyed like `configWith`'s: `{'app.skills.enabled': true, 'app.models':
   * {…}}`.
   */
  overrides?: Record<string, unknown>;
  /** Overrides for instance `index` only, over the shared ones. */
  overridesFor?: (index: number) => Record<string, unknown>;
  /** A database to share (left in place by `close()`); by default a fresh one, dropped by `close()`. */
  database?: TestDatabase;
  /** Extra environment of the processes (for `api_key_env`, SKILLHOST_* variables). */
  env?: Record<string, string>;
}

/**
 * What every instance gets unless overridden: a free port on the loopback address (so auth is off), JSON logs, no rate
 * limits in the way.
 */
const BASE_OVERRIDES: Record<string, unknown> = {
  'app.port': 0,
  'app.host': '127.0.0.1',
  'app.logging.format': 'json',
  'app.limits.turns_per_minute': 100_000,
  'app.limits.requests_per_minute': 100_000,
};

/** The server's first line (src/startup-summary.ts `listeningLine`): its address, and the port in it. */
export const LISTENING_LINE = /listening at (http:\/\/127\.0\.0\.1:(\d+))/;

const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 30_000;

/**
 * Builds `dist/` (`npm run build`: the server and the web page) unless it is a build of the
 * sources as they are (tools/build-stamp.mjs). Under Jest the global set-up has built it before any
 * file ran (test/support/global-setup.mjs), so this only checks; outside Jest it builds.
 */
export function buildServer(): void {
  if (isBuildCurrent()) return;
  if (process.env.JEST_WORKER_ID !== undefined)
    throw new Error(
      'dist/ is not a build of the sources as they are: the build before the run failed (its errors are above the ' +
        'results), or a source changed during the run. A build now would empty dist/ under the other test files.',
    );
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'pipe' });
}

/**
 * Starts `count` instances on one database at once (each runs the migrations at start, in turn).
 * Call `buildServer()` first.
 */
export async function startInstances(count: number, options: StartInstancesOptions = {}): Promise<Instances> {
  const db = options.database ?? (await createTestDatabase());
  const tree = tempTree('skillhost-instances-');
  // As root an embedded PostgreSQL would run as `postgres`; harmless otherwise.
  chmodSync(tree.root, 0o755);
  const instances: AppInstance[] = [];
  const close = async () => {
    await Promise.all(instances.map((instance) => instance.stop()));
    if (options.database === undefined) await db.drop();
    tree.cleanup();
  };
  try {
    // All at once, as a deployment starts them: the migrations take turns under their advisory lock.
    const started = await Promise.allSettled(
      Array.from({ length: count }, (_, index) => {
        const overrides = {
          ...BASE_OVERRIDES,
          'app.database.url': db.url,
          ...options.overrides,
          ...options.overridesFor?.(index),
        };
        const config = tree.write(`instance-${index}.toml`, stringify(nest(overrides)));
        return startInstance(config, tree.root, options.env ?? {});
      }),
    );
    for (const result of started) if (result.status === 'fulfilled') instances.push(result.value);
    const failed = started.find((result) => result.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  } catch (error) {
    await close();
    throw error;
  }
  return { instances, baseUrls: instances.map((i) => i.baseUrl), db, close };
}

function startInstance(configFile: string, cwd: string, env: Record<string, string>): Promise<AppInstance> {
  return startServerProcess([process.execPath, `${process.cwd()}/dist/src/main.js`], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env, SKILLHOST_CONFIG: configFile },
  });
}

/**
 * A Skillhost server started as `command` (`[program, ...args]`) in `cwd` with exactly `env`
 * (and as user and group `uid` when given: the tests' process must be root then), answered once it
 * logs that it listens on 127.0.0.1; it throws with the output if it exits first.
 */
export async function startServerProcess(
  command: string[],
  options: { cwd: string; env: Record<string, string>; uid?: number },
): Promise<AppInstance> {
  const [program, ...args] = command;
  const user = options.uid === undefined ? {} : { uid: options.uid, gid: options.uid };
  const child = spawn(program === 'node' ? process.execPath : program, args, {
    cwd: options.cwd,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...user,
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const listening = LISTENING_LINE;
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!listening.test(output)) {
    if (hasExited(child)) throw new Error(`a Skillhost instance exited before listening:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`a Skillhost instance did not listen within ${START_TIMEOUT_MS / 1000} s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const port = listening.exec(output)![2];
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    graphqlWsUrl: `ws://127.0.0.1:${port}/graphql`,
    pid: child.pid!,
    output: () => output,
    stop: () => stop(child, exit),
  };
}

async function stop(child: ChildProcess, exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>) {
  if (!hasExited(child)) child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const killLater = new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_TIMEOUT_MS)));
  const stopped = await Promise.race([exit, killLater.then(() => undefined)]);
  clearTimeout(timer);
  if (stopped !== undefined) return stopped;
  child.kill('SIGKILL');
  return exit;
}

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** `{'app.skills.enabled': true}` → `{app: {skills: {enabled: true}}}`, as a config file has it. */
function nest(overrides: Record<string, unknown>): Record<string, unknown> {
  const tree: Record<string, unknown> = {};
  for (const [dotted, value] of Object.entries(overrides)) {
    const parts = dotted.split('.');
    let node = tree;
    for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
    node[parts[parts.length - 1]] = value;
  }
  return tree;
}
