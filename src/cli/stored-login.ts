import { closeSync, openSync, rmSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ClientEnvironment } from '../config/client-environment.js';
import { CommandFailure } from './cli-io.js';
import { credentialsPath, readCredentials, writeCredentials } from './credentials-file.js';
import { refreshLogin } from './oauth-login.js';

/** An access token is refreshed when less than this is left of it, so a request started now does not outlive it. */
const REFRESH_MARGIN_MS = 120_000;
/** How long a refresh may wait for another process's; a lock older than this was left by one that died. */
const LOCK_WAIT_MS = 20_000;
const STALE_LOCK_MS = 30_000;

/**
 * The bearer credential `skillhost login` stored for the server's origin: its API key, or its OAuth access token,
 * refreshed first when it is about to expire (the rotated refresh token is stored at once). Undefined when nothing is
 * stored. An unsafe credentials file, or a login that has ended, is refused saying what to do.
 */
export async function storedBearer(server: URL, environment: ClientEnvironment): Promise<string | undefined> {
  const path = credentialsPath(environment);
  const entry = readCredentials(path).servers[server.origin];
  if (entry?.oauth === undefined)
    return typeof entry?.apiKey === 'string' && entry.apiKey !== '' ? entry.apiKey : undefined;
  if (isFresh(entry.oauth.expiresAt)) return entry.oauth.accessToken;
  // The server rotates refresh tokens and takes a used one as a stolen one (revoking the grant): two processes
  // refreshing at once would end the login. One refreshes under the lock; the other then reads what it stored.
  return withLock(`${path}.lock`, async () => {
    const file = readCredentials(path);
    const current = file.servers[server.origin]?.oauth;
    if (current === undefined)
      throw new CommandFailure(`The login for ${server.origin} was removed meanwhile (skillhost logout?).`);
    if (isFresh(current.expiresAt)) return current.accessToken;
    const refreshed = await refreshLogin(server, current);
    file.servers[server.origin] = { ...file.servers[server.origin], oauth: refreshed };
    writeCredentials(path, file);
    return refreshed.accessToken;
  });
}

function isFresh(expiresAt: string): boolean {
  return Date.parse(expiresAt) - Date.now() > REFRESH_MARGIN_MS;
}

async function withLock<T>(lockPath: string, work: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  let fd: number | undefined;
  while (fd === undefined) {
    try {
      fd = openSync(lockPath, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const age = Date.now() - (statSync(lockPath, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > STALE_LOCK_MS) rmSync(lockPath, { force: true });
      else if (Date.now() > deadline)
        throw new CommandFailure(
          `Another skillhost has been refreshing the stored login for ${LOCK_WAIT_MS / 1000} s (${lockPath}); try ` +
            'again, or remove that file if no skillhost is running.',
        );
      else await sleep(100);
    }
  }
  try {
    return await work();
  } finally {
    closeSync(fd);
    rmSync(lockPath, { force: true });
  }
}
