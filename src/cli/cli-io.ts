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

/**
 * Why a request did not reach its server, in a few words: fetch's cause (`ECONNREFUSED`, a TLS error) when it has one,
 * else the error's own message.
 */
export function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  return cause?.code ?? cause?.message ?? (error as Error | undefined)?.message ?? String(error);
}

/**
 * The API key a command takes from its environment: the variable `--key-env` names (UsageError when it is unset or
 * empty), else SKILLHOST_API_KEY, else none.
 */
export function environmentKey(
  env: Record<string, string | undefined>,
  keyEnv: string | undefined,
): string | undefined {
  const key = env[keyEnv ?? 'SKILLHOST_API_KEY']?.trim() || undefined;
  if (keyEnv !== undefined && key === undefined)
    throw new UsageError(`--key-env ${keyEnv}: that variable is not set (or empty); it should hold an API key.`);
  return key;
}
