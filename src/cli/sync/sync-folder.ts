import { createHash, randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { LockedSkill } from './sync-lock.js';
import type { RemoteSkill } from './sync-index.js';

export type FolderState = 'absent' | 'folder' | 'other';

/** What is at `path`, never following a symbolic link: a link (or a file) is `other`. */
export function folderState(path: string): FolderState {
  try {
    return lstatSync(path).isDirectory() ? 'folder' : 'other';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'absent';
    throw error;
  }
}

export function sha256(bytes: Uint8Array): string {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/**
 * The files of a skill folder that differ from what sync wrote: changed, missing, added, or no longer a
 * plain file (a link is never followed). Empty: the folder is as sync left it.
 */
export function editedFiles(folder: string, locked: LockedSkill): string[] {
  const expected = new Map(locked.files.map((file) => [file.path, file.digest]));
  const changed: string[] = [];
  const walk = (relative: string): void => {
    for (const entry of readdirSync(join(folder, relative), { withFileTypes: true })) {
      const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (!entry.isFile() || expected.get(path) !== sha256(readFileSync(join(folder, path)))) changed.push(path);
      expected.delete(path);
    }
  };
  walk('');
  return [...changed, ...expected.keys()].sort();
}

/**
 * Replaces (or creates) `<dir>/<name>` with the verified files in one rename: they are written into a
 * fresh hidden folder beside it, the old folder is renamed aside, the new one into place, and the old
 * one removed. A reader sees the old version or the new one, never a mix.
 */
export function installSkill(dir: string, skill: RemoteSkill, bytes: ReadonlyMap<string, Buffer>): void {
  const tag = randomBytes(6).toString('hex');
  const staging = join(dir, `.skillhost-sync-${skill.name}-${tag}`);
  mkdirSync(staging);
  try {
    for (const file of skill.files) {
      const target = join(staging, file.path);
      mkdirSync(dirname(target), { recursive: true });
      // `wx`: a fresh file in a fresh folder, never through something already there.
      writeFileSync(target, bytes.get(file.path)!, { flag: 'wx' });
    }
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
  const destination = join(dir, skill.name);
  const aside = join(dir, `.skillhost-old-${skill.name}-${tag}`);
  const replacing = folderState(destination) === 'folder';
  if (replacing) renameSync(destination, aside);
  renameSync(staging, destination);
  if (replacing) rmSync(aside, { recursive: true, force: true });
}

/** Removes a skill folder sync owns and nobody edited: renamed aside first, so it goes in one step. */
export function removeSkill(dir: string, name: string): void {
  const aside = join(dir, `.skillhost-old-${name}-${randomBytes(6).toString('hex')}`);
  renameSync(join(dir, name), aside);
  rmSync(aside, { recursive: true, force: true });
}
