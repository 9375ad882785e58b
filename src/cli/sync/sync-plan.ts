import { join } from 'node:path';
import { editedFiles, folderState } from './sync-folder.js';
import type { RefusedEntry, RemoteSkill } from './sync-index.js';
import type { SyncLock } from './sync-lock.js';

/**
 * What one run does to one target folder, skill by skill. `add`/`update` download; `remove` deletes a
 * folder sync owns and nobody edited; `release` keeps an edited folder the server no longer offers and
 * gives it up (sync never touches it again); `forget` drops a lock entry whose folder is gone; `keep`
 * leaves a folder as it is, saying why; `pinned` is a pinned skill the server has another version of;
 * `refused` is a skill the server offered wrongly.
 */
export type SyncAction = 'add' | 'update' | 'remove' | 'release' | 'forget' | 'keep' | 'pinned' | 'refused';

export interface PlannedChange {
  action: SyncAction;
  name: string;
  digest?: string;
  reason?: string;
  /** Files edited on disk since sync wrote them. */
  edited?: string[];
  /** The remote version to download, for add and update. */
  remote?: RemoteSkill;
}

/** Pure apart from reading the target's skill folders (never following a link). */
export function planTarget(
  dir: string,
  lock: SyncLock,
  remote: readonly RemoteSkill[],
  refused: readonly RefusedEntry[],
): PlannedChange[] {
  const changes: PlannedChange[] = refused.map((entry) => ({
    action: 'refused',
    name: entry.name,
    reason: entry.reason,
  }));
  const offered = new Set(remote.map((skill) => skill.name));
  for (const skill of remote) {
    const change = planOffered(dir, lock, skill);
    if (change !== undefined) changes.push(change);
  }
  const refusedNames = new Set(refused.map((entry) => entry.name));
  for (const name of Object.keys(lock.skills)) {
    // A refused entry is still offered: its folder stays as it is.
    if (offered.has(name) || refusedNames.has(name)) continue;
    changes.push(planGone(dir, lock, name));
  }
  return changes.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

function planOffered(dir: string, lock: SyncLock, skill: RemoteSkill): PlannedChange | undefined {
  const locked = lock.skills[skill.name];
  const state = folderState(join(dir, skill.name));
  const base = { name: skill.name, digest: skill.digest };
  if (locked === undefined)
    return state === 'absent'
      ? { ...base, action: 'add', remote: skill }
      : { ...base, action: 'keep', reason: `${join(dir, skill.name)} is there and sync did not create it: left alone` };
  if (state === 'other')
    return { ...base, action: 'keep', reason: 'its folder was replaced by a link or a file: left alone' };
  if (state === 'absent')
    return locked.pinned && locked.digest !== skill.digest
      ? {
          ...base,
          action: 'pinned',
          reason: `pinned at ${locked.digest}, whose folder is gone; unpin it to take ${skill.digest}`,
        }
      : { ...base, action: 'add', remote: skill, reason: 'its folder was gone' };
  if (locked.digest === skill.digest) return undefined;
  if (locked.pinned)
    return {
      ...base,
      action: 'pinned',
      reason: `pinned at ${locked.digest}; the server has ${skill.digest} (not taken)`,
    };
  const edited = editedFiles(join(dir, skill.name), locked);
  if (edited.length > 0)
    return {
      ...base,
      action: 'keep',
      edited,
      reason: `edited here (${edited.join(', ')}): the update is not taken; remove the folder to take it`,
    };
  return { ...base, action: 'update', remote: skill };
}

function planGone(dir: string, lock: SyncLock, name: string): PlannedChange {
  const locked = lock.skills[name];
  const state = folderState(join(dir, name));
  const base = { name, digest: locked.digest };
  if (state === 'absent')
    return { ...base, action: 'forget', reason: 'the server no longer offers it and its folder is gone' };
  if (state === 'other')
    return { ...base, action: 'release', reason: 'its folder was replaced by a link or a file: left alone' };
  if (locked.pinned) return { ...base, action: 'keep', reason: 'pinned: kept, though the server no longer offers it' };
  const edited = editedFiles(join(dir, name), locked);
  if (edited.length > 0)
    return {
      ...base,
      action: 'release',
      edited,
      reason:
        `the server no longer offers it, but it was edited here (${edited.join(', ')}): kept, and no longer ` +
        `synced`,
    };
  return { ...base, action: 'remove' };
}
