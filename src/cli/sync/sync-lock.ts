import { randomBytes } from 'node:crypto';
import { lstatSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LOCK_FILE } from './sync-index.js';

/** What sync owns in one target folder: the skills it wrote there, as it wrote them. */
export interface SyncLock {
  version: 1;
  /** The index's ETag as of the last run that changed or refused nothing: sent as `If-None-Match`. */
  etag?: string;
  skills: Record<string, LockedSkill>;
}

export interface LockedSkill {
  /** The skill-level digest of the version on disk. */
  digest: string;
  /** The server it came from. */
  source: string;
  files: { path: string; digest: string }[];
  /** Kept at this version (`--pin NAME@DIGEST`) until `--unpin NAME`. */
  pinned?: boolean;
}

/** The lock of a target folder; an empty one when there is none yet. A lock that cannot be read stops the target. */
export function readLock(dir: string): SyncLock {
  let text: string;
  try {
    if (lstatSync(join(dir, LOCK_FILE)).isSymbolicLink())
      throw new Error(`${join(dir, LOCK_FILE)} is a symbolic link: sync reads and writes only its own lock`);
    text = readFileSync(join(dir, LOCK_FILE), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, skills: {} };
    throw new Error(`${join(dir, LOCK_FILE)} cannot be read (${(error as NodeJS.ErrnoException).code})`);
  }
  const parsed = JSON.parse(text) as Partial<SyncLock>;
  if (parsed.version !== 1 || typeof parsed.skills !== 'object' || parsed.skills === null)
    throw new Error(`${join(dir, LOCK_FILE)} is not a skillhost sync lock (version 1); move it away to start afresh`);
  return { version: 1, ...(parsed.etag === undefined ? {} : { etag: parsed.etag }), skills: parsed.skills };
}

/** Written beside and renamed over, so a reader never sees half a lock. */
export function writeLock(dir: string, lock: SyncLock): void {
  const sorted: SyncLock = {
    version: 1,
    ...(lock.etag === undefined ? {} : { etag: lock.etag }),
    skills: Object.fromEntries(Object.entries(lock.skills).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
  };
  const temp = join(dir, `.${LOCK_FILE}.${randomBytes(6).toString('hex')}`);
  writeFileSync(temp, `${JSON.stringify(sorted, null, 2)}\n`, { flag: 'wx' });
  renameSync(temp, join(dir, LOCK_FILE));
}
