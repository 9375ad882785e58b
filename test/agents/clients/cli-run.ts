import { spawn } from 'node:child_process';

/** How one run of an agent CLI (or of a README command in a shell) ended. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Killed at `timeoutMs`. */
  timedOut: boolean;
}

/**
 * Runs `command` with exactly `env` in `cwd`, in a process group of its own: past `timeoutMs`, and
 * again once it ends, the whole group is killed, so nothing it started (a relaunched child, an MCP
 * helper, a detached server) outlives the run. Standard input is closed: some CLIs (`opencode run`)
 * read a piped stdin to its end before they start.
 */
export function runCli(
  command: string,
  args: readonly string[],
  { cwd, env, timeoutMs }: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<CliRun> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      fail(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      killGroup(child.pid);
      done({ code, stdout, stderr, timedOut });
    });
  });
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // The group is gone already.
  }
}
