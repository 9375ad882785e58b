import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, symlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { dirname } from 'node:path';

/** The uid and gid tests drop to, so that permission bits mean something even when run as root. */
export const NOBODY = 65534;

export function makeFifo(path: string): string {
  mkdirSync(dirname(path), { recursive: true });
  execFileSync('mkfifo', [path]);
  return path;
}

/** A listening Unix socket at `path` (the file exists while the server listens). */
export async function makeSocket(path: string): Promise<Server> {
  mkdirSync(dirname(path), { recursive: true });
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return server;
}

export function makeSymlink(target: string, path: string): string {
  mkdirSync(dirname(path), { recursive: true });
  symlinkSync(target, path);
  return path;
}

/**
 * Opens each FIFO for writing after `delayMs` and writes a line, again and again, from a separate
 * process group: code that (wrongly) opens a FIFO for reading and blocks is released then, instead
 * of hanging the whole test run, and reads that line. Code that never opens them leaves the
 * writers waiting; `stop()` ends them (and `timeout` does, at the latest after a minute).
 */
export function releaseFifosLater(paths: string[], delayMs: number): { stop(): void } {
  // SIGPIPE ignored: a reader that closes before the line is written must not end the loop.
  const writers = paths
    .map((p) => `(trap '' PIPE; while :; do echo 'written by the test' > '${p}'; done) 2>/dev/null &`)
    .join(' ');
  const child: ChildProcess = spawn('timeout', ['60', 'sh', '-c', `sleep ${delayMs / 1000}; ${writers} wait`], {
    stdio: 'ignore',
    detached: true,
  });
  child.unref();
  return {
    stop() {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    },
  };
}

/**
 * Runs `work` with the effective uid and gid of `nobody` when the tests run as root (root reads
 * everything, so an unreadable folder would not be unreadable), and restores root afterwards.
 * `work` must be synchronous: nothing else of this process may run as nobody.
 */
export function asNobody<T>(work: () => T): T {
  if (process.getuid?.() !== 0) return work();
  process.setegid!(NOBODY);
  process.seteuid!(NOBODY);
  try {
    return work();
  } finally {
    process.seteuid!(0);
    process.setegid!(0);
  }
}

/** The same for asynchronous work: the whole process is `nobody` until it settles (tests only). */
export async function asNobodyUntil<T>(work: () => Promise<T>): Promise<T> {
  if (process.getuid?.() !== 0) return work();
  process.setegid!(NOBODY);
  process.seteuid!(NOBODY);
  try {
    return await work();
  } finally {
    process.seteuid!(0);
    process.setegid!(0);
  }
}

/** Lets `nobody` walk into the tree (temp folders are created 0700). */
export function openToEveryone(...paths: string[]): void {
  for (const path of paths) chmodSync(path, 0o755);
}
