/**
 * Runs a skill's script in a bubblewrap sandbox, the way Codex's linux-sandbox does: every
 * namespace unshared, read-only binds, a private tmpfs, no network.
 *
 * bwrap flags (see `sandboxArgs`):
 * - `--unshare-all --unshare-user --disable-userns`: new user, mount, PID, network, IPC, UTS and
 *   cgroup namespaces. The empty network namespace has only a down loopback: no TCP to
 *   127.0.0.1 (PostgreSQL, the server itself) or anywhere else, no abstract Unix sockets of the
 *   host. A fresh PID namespace: the script sees and signals only its own processes. No nested
 *   user namespaces (less kernel attack surface).
 * - `--uid 65534 --gid 65534`: the script is `nobody` inside. When the server runs as root, bwrap
 *   itself is started as uid/gid 65534 too (spawn's `uid`/`gid`, which also drops supplementary
 *   groups), so the script is unprivileged outside as well; that is also what makes the process
 *   limit work (RLIMIT_NPROC does not apply to tasks whose real uid is root on the host).
 * - `--ro-bind /usr /usr`, `/bin`, `/lib*` (symlinks recreated, real folders bound read-only),
 *   `/etc/ld.so.cache`, `/etc/alternatives`: the system's runtime, enough for sh, bash, python3 and
 *   node to start. Nothing else of the host: no other skills, no config, no `/root`, no
 *   `/etc/passwd` or `/etc/shadow`, no `/run` (so no database or D-Bus sockets), no `/home`.
 * - `--proc /proc`: a procfs of the new PID namespace: PID 1 is bwrap's own init and every other
 *   process is the script's; no host process is visible. `--dev /dev` then `--remount-ro /dev`:
 *   the usual device nodes (null, zero, urandom, tty) without host devices, and no writable
 *   `/dev/shm` (it would be an unbounded tmpfs).
 * - `--size <memoryBytes> --tmpfs /tmp`: the only writable place, private and bounded; `HOME` and
 *   `TMPDIR` point at it. It disappears with the sandbox.
 * - `--ro-bind <skill folder> /skill --chdir /skill`: the skill folder, read-only, as the working
 *   directory; the script runs as `./<path>` from there.
 * - `--remount-ro /`: the sandbox's root (bwrap's own tmpfs) read-only, so `/x` cannot be written.
 * - `--clearenv` and `--setenv`: only PATH, HOME, LANG, TMPDIR (and the caller's explicit extras;
 *   the shell that starts the script adds PWD=/skill); no secret of the server's environment
 *   reaches the script.
 * - What the script can read of its init (bwrap): bwrap starts with an empty environment and reads
 *   these options from a pipe (`--args 3`), so `/proc/1/environ` is empty and `/proc/1/cmdline` is
 *   `bwrap --args 3 --` and the command (prlimit, sh, the interpreter, the script and its
 *   arguments, all as the sandbox names them): no host path, nothing of the server's environment.
 *   The one host path left in /proc is the skill folder's, as the source of /skill in
 *   `/proc/self/mountinfo`: the kernel shows every bind mount's source there, and bwrap cannot hide
 *   it (https://github.com/containers/bubblewrap/issues/631).
 * - `--hostname sandbox`: the host's name is not revealed.
 * - `--new-session`: no controlling terminal to inject keystrokes into (CVE-2017-5226).
 * - `--die-with-parent`: the sandbox is SIGKILLed when bwrap or the server dies.
 *
 * Limits:
 * - `timeoutMs`: then SIGKILL to bwrap's process group (`spawn` with `detached`); bwrap is the PID
 *   namespace's parent and `--die-with-parent` kills its init, and the kernel kills everything in
 *   a PID namespace whose init dies, so a script that ignores SIGTERM, double-forks or calls
 *   `setsid` dies too.
 * - `maxOutputBytes`: stdout and stderr share one pipe (`2>&1` inside the sandbox, so they stay in
 *   the order written); past the cap the output is cut with a notice and the script is killed.
 * - Set with prlimit inside the sandbox, so they are counted per sandbox, not per host user:
 *   - RLIMIT_NPROC = `maxProcesses` + 1 (the sandbox's init): processes *and threads* (node
 *     alone starts 11), so a fork bomb stops at the limit ("Cannot fork") and the timeout ends it.
 *   - RLIMIT_DATA = `memoryBytes` per process: heap, malloc and V8 allocations beyond it fail.
 *     RLIMIT_AS = `memoryBytes` + 1 GiB: shared mappings (Python's `mmap(-1, n)`) are not data;
 *     the headroom is for node, which reserves ~0.75 GiB of address space it never touches and
 *     does not start below ~0.8 GiB.
 *   - RLIMIT_FSIZE = `memoryBytes`: no single file (in /tmp, or a memfd) grows past it.
 *   - RLIMIT_NOFILE = 1024, RLIMIT_CORE = 0.
 *   These are per-process bounds: the worst case is about `maxProcesses` × `memoryBytes` (more
 *   with memfds, each up to RLIMIT_FSIZE) plus the /tmp tmpfs. A hard bound on the sandbox's total memory needs a
 *   memory cgroup (run the server in a container with a memory limit); bubblewrap does not create cgroups.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { lstatSync, readlinkSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { Writable } from 'node:stream';
import { AppError, ErrorCode, type ScriptRun, unstorableCharacter } from '@skillhost/core';
import { CappedOutput } from './capped-output.js';
import { formatCommandLine, invocationForms, type ScriptInvocation } from './command-line.js';
import { chooseInterpreter, findSandboxProgram, interpreterDirsText, isExecutableFile } from './interpreter.js';
import { resolveScriptFile } from './script-file.js';

export interface SandboxRequest {
  /** The skill folder (an absolute real path), bound read-only as the working directory. */
  skillDir: string;
  /** Relative to the skill folder, e.g. `scripts/echo.sh`. */
  scriptPath: string;
  args: string[];
  stdin?: string;
  timeoutMs: number;
  maxOutputBytes: number;
  memoryBytes: number;
  maxProcesses: number;
  /** Extra variables for the script; PATH, HOME, LANG and TMPDIR are fixed. */
  env?: Record<string, string>;
  /** Aborting kills the sandbox at once (the server shutting down); the result then reports SIGKILL. */
  signal?: AbortSignal;
  /**
   * Asked once the script and its interpreter are known, before anything runs: throws to refuse (allowed-tools, no free
   * sandbox slot).
   */
  authorize?: (invocation: ScriptInvocation) => void;
}

/** What a run gave, as its card shows it (core's `ScriptRun`, the port the server's scripts service answers with). */
export type SandboxResult = ScriptRun;

export const SANDBOX_UID = 65534;
export const SKILL_MOUNT = '/skill';
export const SANDBOX_ENV: Readonly<Record<string, string>> = {
  PATH: '/usr/local/bin:/usr/bin:/bin',
  HOME: '/tmp',
  LANG: 'C.UTF-8',
  TMPDIR: '/tmp',
};
/** Address space on top of `memoryBytes`; see the header (node needs it to start). */
export const ADDRESS_SPACE_HEADROOM_BYTES = 1024 ** 3;
const MAX_OPEN_FILES = 1024;
const MAX_ARGS_BYTES = 64 * 1024;
const MIN_MEMORY_BYTES = 16 * 1024 * 1024;
/** The host paths the runtime needs; each is bound read-only, or recreated when it is a symlink. */
export const RUNTIME_PATHS = [
  '/usr',
  '/bin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/etc/ld.so.cache',
  '/etc/alternatives',
] as const;
/** After a kill, how long to wait for the pipes to close before giving up on them. */
const KILL_GRACE_MS = 2000;
/** How much of bwrap's own stderr is kept to explain a failed start. */
const SETUP_MESSAGE_BYTES = 4096;

/** bwrap's options (read from a pipe) and the command it runs (on its command line). */
export interface SandboxInvocation {
  options: string[];
  command: string[];
}

export type HostPath = { path: string; kind: 'bind' } | { path: string; kind: 'symlink'; target: string };

export interface SandboxSpec {
  /** Host folder bound at /skill; null for an empty /skill (the self-check). */
  skillDir: string | null;
  /** Absolute program and its arguments, run from /skill. */
  command: readonly string[];
  env: Readonly<Record<string, string>>;
  memoryBytes: number;
  maxProcesses: number;
  /** Absolute paths of prlimit and sh on the host (both under the bound runtime). */
  prlimit: string;
  sh: string;
}

/**
 * bwrap's arguments for `spec`, in two parts: `options` (every mount, the host paths among them)
 * reach bwrap through a pipe (`--args 3`), so its command line, which the script can read as
 * `/proc/1/cmdline` (bwrap is the sandbox's init), holds only `bwrap --args 3 --` and `command`:
 * programs and paths as the sandbox sees them, and the script's own arguments. Pure, so each flag
 * is asserted by a unit test.
 */
export function sandboxArgs(spec: SandboxSpec, runtime: readonly HostPath[]): SandboxInvocation {
  const mounts = runtime.flatMap((entry) =>
    entry.kind === 'symlink' ? ['--symlink', entry.target, entry.path] : ['--ro-bind', entry.path, entry.path],
  );
  const skill = spec.skillDir === null ? ['--dir', SKILL_MOUNT] : ['--ro-bind', spec.skillDir, SKILL_MOUNT];
  const env = Object.entries(spec.env).flatMap(([name, value]) => ['--setenv', name, value]);
  const limits = [
    `--nproc=${spec.maxProcesses + 1}`,
    `--data=${spec.memoryBytes}`,
    `--as=${spec.memoryBytes + ADDRESS_SPACE_HEADROOM_BYTES}`,
    `--fsize=${spec.memoryBytes}`,
    `--nofile=${MAX_OPEN_FILES}`,
    '--core=0',
  ];
  const options = [
    '--unshare-all',
    '--unshare-user',
    '--disable-userns',
    '--uid',
    String(SANDBOX_UID),
    '--gid',
    String(SANDBOX_UID),
    '--hostname',
    'sandbox',
    '--new-session',
    '--die-with-parent',
    ...mounts,
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    '--remount-ro',
    '/dev',
    '--size',
    String(spec.memoryBytes),
    '--tmpfs',
    '/tmp',
    ...skill,
    '--chdir',
    SKILL_MOUNT,
    '--remount-ro',
    '/',
    '--clearenv',
    ...env,
  ];
  const command = [
    spec.prlimit,
    ...limits,
    '--',
    // One pipe for stdout and stderr keeps them in the order the script wrote them; bwrap's and
    // prlimit's own messages stay on the real stderr, which is how a failed start is told apart.
    spec.sh,
    '-c',
    'exec "$@" 2>&1',
    'sh',
    ...spec.command,
  ];
  return { options, command };
}

/** How this host lays out the runtime folders (merged /usr or not), read once. */
export function describeRuntime(paths: readonly string[] = RUNTIME_PATHS): HostPath[] {
  const found: HostPath[] = [];
  for (const path of paths) {
    try {
      const info = lstatSync(path);
      found.push(
        info.isSymbolicLink() ? { path, kind: 'symlink', target: readlinkSync(path) } : { path, kind: 'bind' },
      );
    } catch {
      // Absent on this host (e.g. /lib32): nothing to bind.
    }
  }
  return found;
}

/**
 * Throws one line saying what is missing when scripts cannot run here: bwrap not installed,
 * prlimit not installed, or namespaces not permitted. Runs a real (empty) sandbox to find out.
 */
export async function checkSandbox(bwrapPath = 'bwrap', hostPath = STANDARD_PATH): Promise<void> {
  const tools = findTools();
  const spec: SandboxSpec = {
    skillDir: null,
    command: [tools.sh, '-c', 'exit 0'],
    env: SANDBOX_ENV,
    memoryBytes: 64 * 1024 * 1024,
    maxProcesses: 4,
    ...tools,
  };
  const run = await execute(locateBwrap(bwrapPath, hostPath), sandboxArgs(spec, runtime()), {
    timeoutMs: 10_000,
    maxOutputBytes: 4096,
  });
  if (run.setupFailure !== undefined || run.exitCode !== 0) {
    const detail =
      run.setupFailure ?? (run.output.trim().split('\n')[0] || `exit code ${run.exitCode}, signal ${run.signal}`);
    if (/Unknown option/.test(detail)) {
      throw new Error(
        `bubblewrap is too old for the script sandbox (${detail}); install bubblewrap 0.8.0 or later (Debian 12 ` +
          `and later ship it).`,
      );
    }
    throw new Error(
      `bubblewrap cannot create the script sandbox here (${detail}); allow unprivileged user namespaces (sysctl ` +
        `user.max_user_namespaces > 0, kernel.apparmor_restrict_unprivileged_userns = 0, or a container profile ` +
        `that permits unshare), or disable script running.`,
    );
  }
}

/**
 * Runs one script. Throws only when it cannot start (a path outside the skill, not a file, no
 * interpreter, bwrap missing or refused); a failing, crashing, hanging or flooding script is a
 * result.
 */
export async function runSandboxed(
  request: SandboxRequest,
  bwrapPath = 'bwrap',
  hostPath = STANDARD_PATH,
): Promise<SandboxResult> {
  assertLimits(request);
  const env = sandboxEnv(request.env);
  assertArgs(request.args, request.stdin);
  const script = resolveScriptFile(request.skillDir, request.scriptPath);
  const interpreter = chooseInterpreter(script.relativePath, script.head);
  if ('error' in interpreter)
    throw new AppError(
      ErrorCode.VALIDATION_FAILED,
      `Script '${script.relativePath}' cannot be run: ${interpreter.error}`,
      { path: script.relativePath },
    );
  request.authorize?.({ interpreter: interpreter.name, scriptPath: script.relativePath, args: request.args });
  const spec: SandboxSpec = {
    skillDir: script.skillDir,
    command: [interpreter.command, ...interpreter.args, `./${script.relativePath}`, ...request.args],
    env,
    memoryBytes: request.memoryBytes,
    maxProcesses: request.maxProcesses,
    ...findTools(),
  };
  const run = await execute(locateBwrap(bwrapPath, hostPath), sandboxArgs(spec, runtime()), request);
  if (run.setupFailure !== undefined)
    throw new Error(`The script sandbox could not start: ${run.setupFailure}${setupHint(run.setupFailure)}`);
  const command = formatCommandLine(
    invocationForms({ interpreter: interpreter.name, scriptPath: script.relativePath, args: request.args })
      .viaInterpreter,
  );
  return {
    path: script.relativePath,
    command,
    exitCode: run.exitCode,
    signal: run.signal,
    durationMs: run.durationMs,
    timedOut: run.timedOut,
    truncated: run.truncated,
    output: run.output,
  };
}

let cachedRuntime: HostPath[] | undefined;
function runtime(): HostPath[] {
  return (cachedRuntime ??= describeRuntime());
}

function findTools(): { prlimit: string; sh: string } {
  const prlimit = findSandboxProgram('prlimit');
  if (!prlimit)
    throw new Error(
      `prlimit is not installed (looked in ${interpreterDirsText()}); install the Debian package util-linux.`,
    );
  const sh = findSandboxProgram('sh');
  if (!sh)
    throw new Error(`sh is not installed (looked in ${interpreterDirsText()}); install the Debian package dash.`);
  return { prlimit, sh };
}

function assertLimits(request: SandboxRequest): void {
  const positive = (name: string, value: number, min = 1) => {
    if (!Number.isSafeInteger(value) || value < min)
      throw new RangeError(`runSandboxed: ${name} must be an integer ≥ ${min}, got ${value}.`);
  };
  positive('timeoutMs', request.timeoutMs);
  positive('maxOutputBytes', request.maxOutputBytes);
  positive('memoryBytes', request.memoryBytes, MIN_MEMORY_BYTES);
  positive('maxProcesses', request.maxProcesses);
}

/** The fixed environment plus the caller's extras; the fixed four cannot be overridden. */
function sandboxEnv(extra: Record<string, string> = {}): Record<string, string> {
  for (const [name, value] of Object.entries(extra)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new AppError(
        ErrorCode.VALIDATION_FAILED,
        `Environment variable name '${name}' is not valid; use letters, digits and '_'.`,
      );
    if (name in SANDBOX_ENV)
      throw new AppError(
        ErrorCode.VALIDATION_FAILED,
        `Environment variable ${name} is fixed by the sandbox (${SANDBOX_ENV[name]}); choose another name.`,
      );
    if (typeof value !== 'string' || value.includes('\0'))
      throw new AppError(
        ErrorCode.VALIDATION_FAILED,
        `Environment variable ${name} must be a string without NUL bytes.`,
      );
  }
  return { ...SANDBOX_ENV, ...extra };
}

function assertArgs(args: readonly string[], stdin: string | undefined): void {
  let bytes = 0;
  args.forEach((arg, index) => {
    if (typeof arg !== 'string')
      throw new AppError(ErrorCode.VALIDATION_FAILED, `Script argument ${index + 1} must be a string.`);
    const bad = unstorableCharacter(arg);
    if (bad) {
      const what = bad === 'NUL' ? 'a NUL byte' : 'an unpaired UTF-16 surrogate';
      throw new AppError(
        ErrorCode.VALIDATION_FAILED,
        `Script argument ${index + 1} holds ` +
          `${what}, which cannot reach a program's argument list; remove it or pass the data on stdin.`,
      );
    }
    bytes += Buffer.byteLength(arg) + 1;
  });
  if (bytes > MAX_ARGS_BYTES)
    throw new AppError(
      ErrorCode.VALIDATION_FAILED,
      `Script arguments total ${bytes} bytes, over the ` +
        `${MAX_ARGS_BYTES}-byte limit; pass large input on stdin instead.`,
    );
  if (stdin !== undefined && unstorableCharacter(stdin, { allowNul: true })) {
    throw new AppError(
      ErrorCode.VALIDATION_FAILED,
      'Script stdin holds an unpaired UTF-16 surrogate, which has no UTF-8 form; send well-formed text.',
    );
  }
}

function setupHint(message: string): string {
  if (process.getuid?.() === 0 && /Permission denied/.test(message)) {
    return (
      `; the server runs as root, so the sandbox starts as uid ${SANDBOX_UID}, which must be able to read the ` +
      `skill folder and enter every folder above it (chmod o+rx), or run the server as another user.`
    );
  }
  return '.';
}

interface Execution extends Omit<SandboxResult, 'command' | 'path'> {
  /** bwrap's or prlimit's message when the sandbox never ran the script. */
  setupFailure?: string;
}

type ExecuteOptions = Pick<SandboxRequest, 'timeoutMs' | 'maxOutputBytes' | 'stdin' | 'signal'>;

/** The fd bwrap reads its options from (`--args`); the pipe is the child's fourth stdio entry. */
const OPTIONS_FD = 3;

/**
 * Spawns bwrap, feeds it its options and stdin, enforces the timeout and the output cap, and waits
 * for the end.
 */
function execute(bwrapPath: string, invocation: SandboxInvocation, options: ExecuteOptions): Promise<Execution> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    // Thrown here (bwrap not found on PATH), an error rejects the promise.
    const child = startBwrap(bwrapPath, invocation, options.stdin !== undefined);
    const output = new CappedOutput(options.maxOutputBytes);
    const setupMessage = new CappedOutput(SETUP_MESSAGE_BYTES);
    const limits = enforceLimits(child, options);
    const stdout = readOutput(child, output, setupMessage, limits.kill);
    if (child.stdin) {
      child.stdin.on('error', () => {
        // The script exited or closed stdin without reading it all: not an error of the run.
      });
      child.stdin.end(options.stdin);
    }
    child.on('error', (error: NodeJS.ErrnoException) => {
      limits.settle();
      reject(
        error.code === 'ENOENT'
          ? bwrapMissing(bwrapPath)
          : new Error(`bubblewrap ('${bwrapPath}') could not be started: ${error.message}.`),
      );
    });
    child.on('close', (code, signal) => {
      limits.settle();
      const message = setupMessage.text().trim();
      const failedToStart = code === 1 && stdout.bytes === 0 && !limits.killed && /^(bwrap|prlimit): /.test(message);
      resolve({
        exitCode: code,
        signal: signal ?? null,
        durationMs: Math.round(performance.now() - started),
        timedOut: limits.timedOut,
        truncated: output.truncated,
        output: output.text(),
        ...(failedToStart ? { setupFailure: message.split('\n')[0] } : {}),
      });
    });
  });
}

/**
 * Spawns bwrap and writes it its options. bwrap starts with an empty environment (it needs none:
 * every program it runs is named by its absolute path), so the sandbox's init shows none of the
 * server's in `/proc/1/environ`.
 */
function startBwrap(bwrapPath: string, invocation: SandboxInvocation, withStdin: boolean): ChildProcess {
  const dropRoot = process.getuid?.() === 0;
  const child = spawn(bwrapPath, ['--args', String(OPTIONS_FD), '--', ...invocation.command], {
    // The name alone: where bwrap is installed on the host is none of the script's business.
    argv0: 'bwrap',
    detached: true,
    env: {},
    stdio: [withStdin ? 'pipe' : 'ignore', 'pipe', 'pipe', 'pipe'],
    ...(dropRoot ? { uid: SANDBOX_UID, gid: SANDBOX_UID } : {}),
  });
  const optionsPipe = child.stdio[OPTIONS_FD] as Writable;
  // bwrap reads the options to the end before anything else; should it fail first, its exit says why.
  optionsPipe.on('error', () => {});
  optionsPipe.end(invocation.options.map((option) => `${option}\0`).join(''));
  return child;
}

/** A run's kill switch: pulled at the timeout, on abort, or by the caller (output over the cap). */
interface RunLimits {
  kill(): void;
  /** Clears the timers and the abort listener once the run has ended. */
  settle(): void;
  readonly timedOut: boolean;
  readonly killed: boolean;
}

function enforceLimits(child: ChildProcess, options: ExecuteOptions): RunLimits {
  let graceTimer: NodeJS.Timeout | undefined;
  const limits = {
    timedOut: false,
    killed: false,
    kill: () => {
      if (limits.killed) return;
      limits.killed = true;
      killGroup(child);
      // Should a process outlive the kill while holding the pipes, stop waiting for them.
      graceTimer = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, KILL_GRACE_MS);
    },
    settle: () => {
      clearTimeout(timer);
      clearTimeout(graceTimer);
      options.signal?.removeEventListener('abort', abort);
    },
  };
  const timer = setTimeout(() => {
    limits.timedOut = true;
    limits.kill();
  }, options.timeoutMs);
  const abort = () => limits.kill();
  if (options.signal?.aborted) limits.kill();
  options.signal?.addEventListener('abort', abort, { once: true });
  return limits;
}

/**
 * Reads the script's output (stdout and stderr share one pipe inside the sandbox; bwrap's and
 * prlimit's own messages come on stderr) up to the cap, then kills it. Returns how many bytes came
 * on stdout, so far.
 */
function readOutput(
  child: ChildProcess,
  output: CappedOutput,
  setupMessage: CappedOutput,
  kill: () => void,
): { readonly bytes: number } {
  const stdout = { bytes: 0 };
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout.bytes += chunk.length;
    if (!output.add(chunk)) kill();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    setupMessage.add(chunk);
    if (!output.add(chunk)) kill();
  });
  return stdout;
}

/** Where `bwrap` is looked for when the host gives no PATH of its own (Debian installs it in /usr/bin). */
const STANDARD_PATH = '/usr/local/bin:/usr/bin:/bin';

/**
 * `bwrap` as an absolute path: a bare name is looked up in the host's PATH (`hostPath`; the server
 * passes its own) here, since bwrap starts with an empty environment (which spawn would search instead).
 */
function locateBwrap(name: string, hostPath: string): string {
  if (name.includes('/')) return name;
  const found = hostPath
    .split(':')
    .filter((dir) => dir.startsWith('/'))
    .map((dir) => `${dir}/${name}`)
    .find(isExecutableFile);
  if (found === undefined) throw bwrapMissing(name);
  return found;
}

function bwrapMissing(name: string): Error {
  return new Error(`bubblewrap is not installed ('${name}' was not found); install the Debian package bubblewrap.`);
}

/** SIGKILL to bwrap's whole process group; bwrap's death then takes the PID namespace with it. */
function killGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}
