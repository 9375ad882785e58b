import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

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

/**
 * The user's configuration folder: `$XDG_CONFIG_HOME` when it is an absolute path (the XDG Base Directory
 * specification says to ignore a relative one), else `~/.config`.
 */
export function userConfigHome(environment: ClientEnvironment): string {
  const given = environment.env.XDG_CONFIG_HOME;
  return given !== undefined && isAbsolute(given) ? given : join(environment.home, '.config');
}
