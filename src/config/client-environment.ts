import { homedir } from 'node:os';

/** What a client command (`skillhost sync`) takes from its process: its environment and the user's home folder. */
export interface ClientEnvironment {
  env: Record<string, string | undefined>;
  home: string;
}

/**
 * The environment and home folder given (a test's), else the process's own: read here because only the
 * configuration reads `process.env`.
 */
export function clientEnvironment(given: {
  env?: Record<string, string | undefined>;
  home?: string;
}): ClientEnvironment {
  return { env: given.env ?? process.env, home: given.home ?? homedir() };
}
