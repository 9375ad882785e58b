/** What a command may touch of its process: output lines, the working folder and the environment. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  cwd: string;
  /**
   * The environment the configuration is read with; absent: the process's own environment, which only src/config reads.
   */
  env?: Record<string, string | undefined>;
  /** The user's home folder (`skillhost sync`'s user-level targets); absent: the process's own. */
  home?: string;
  /** What the user pipes or types in (`skillhost login` reads a key from it); absent: nothing to read. */
  stdin?: CliInput;
  /** Ends a command that runs until stopped (`sync --watch`): SIGINT or SIGTERM in a terminal. */
  signal?: AbortSignal;
}

/** Standard input: a terminal (which `login` reads without echo) or a pipe. */
export interface CliInput extends AsyncIterable<Buffer | string> {
  isTTY?: boolean;
  setRawMode?(raw: boolean): unknown;
  on(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
  off(event: 'data', listener: (chunk: Buffer | string) => void): unknown;
  resume(): unknown;
  pause(): unknown;
}

/** Wrong arguments: reported with the usage text, exit code 2. */
export class UsageError extends Error {}

/**
 * A command that could not do its work (database unreachable, embedded server failed): one line on stderr, exit code 1.
 */
export class CommandFailure extends Error {}
