import { type Dirent, readdirSync, realpathSync, type Stats, statSync } from 'node:fs';
import { readFileHead } from '../resources/file-head.js';
import { join, relative } from 'node:path';
import { isInside } from '../resources/resource-path.js';
import { SKIPPED_FOLDERS } from './skill-order.js';
import { type SkillVersion, versionOf } from './skill-version.js';

export interface FolderLimits {
  /** Bytes of all files together. */
  maxBytes: number;
  maxFiles: number;
}

export type FolderFiles =
  | { kind: 'files'; files: { path: string; bytes: Buffer }[] }
  | { kind: 'too-large'; reason: string }
  | { kind: 'unreadable'; reason: string };

const MAX_DEPTH = 16;

/**
 * The files a skill folder holds as the store keeps a version, and as the resource routes serve
 * them: regular files and symbolic links to files inside the folder, by path relative to it (in name
 * order); links that lead outside are left out; `.git` and `node_modules` are not walked. Nothing
 * when the folder itself cannot be resolved.
 */
function* folderEntries(folder: string): Generator<FolderEntry, void, undefined> {
  let root: string;
  try {
    root = realpathSync.native(folder);
  } catch {
    return;
  }
  function* walk(current: string, depth: number): Generator<FolderEntry, void, undefined> {
    for (const entry of listFolder(current)) {
      if (SKIPPED_FOLDERS.has(entry.name)) continue;
      const full = join(current, entry.name);
      const target = entry.isSymbolicLink() ? linkTargetInside(root, full) : full;
      if (target === undefined) continue;
      if (entry.isDirectory() || (entry.isSymbolicLink() && isDirectory(target))) {
        if (depth < MAX_DEPTH) yield* walk(full, depth + 1);
        continue;
      }
      yield { path: relative(root, full).split('\\').join('/'), target };
    }
  }
  yield* walk(root, 1);
}

interface FolderEntry {
  path: string;
  target: string;
}

/**
 * A walk that can be gone over again without walking the folder again: what the first pass read is
 * kept, and a later pass goes on from there only as far as it asks (the walk stays lazy, and a
 * folder past the limits is never listed whole).
 */
function replayable(walk: Iterator<FolderEntry>): () => Generator<FolderEntry, void, undefined> {
  const seen: FolderEntry[] = [];
  let finished = false;
  return function* () {
    for (let i = 0; ; i++) {
      if (i < seen.length) {
        yield seen[i];
        continue;
      }
      if (finished) return;
      const next = walk.next();
      if (next.done) {
        finished = true;
        return;
      }
      seen.push(next.value);
      yield next.value;
    }
  };
}

/** Why the folder itself cannot be resolved (its error code), or undefined when it can. */
function unresolvable(folder: string): string | undefined {
  try {
    realpathSync.native(folder);
    return undefined;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? 'error';
  }
}

/**
 * Every file of a skill folder on disk (see folderEntries), read. FIFOs, sockets and devices are
 * left out, as they are never served. Reading stops at the limits.
 */
export function readFolderFiles(folder: string, limits: FolderLimits): FolderFiles {
  const problem = unresolvable(folder);
  if (problem !== undefined) return { kind: 'unreadable', reason: `the skill folder cannot be read (${problem})` };
  return readEntries(folderEntries(folder), limits);
}

/** The files of a folder's entries, read until the limits. */
function readEntries(entries: Iterable<FolderEntry>, limits: FolderLimits): FolderFiles {
  const files: { path: string; bytes: Buffer }[] = [];
  let total = 0;
  for (const { path, target } of entries) {
    const head = readFileHead(target, limits.maxBytes - total + 1);
    if (head.kind !== 'file') continue;
    // A file larger than what is left of the limit counts as its whole size.
    total += head.size;
    if (total > limits.maxBytes)
      return { kind: 'too-large', reason: `its files hold more than ${limits.maxBytes} bytes` };
    if (files.length >= limits.maxFiles)
      return { kind: 'too-large', reason: `it has more than ${limits.maxFiles} files` };
    files.push({ path, bytes: head.bytes });
  }
  return { kind: 'files', files };
}

/** The version a folder holds now, or why it has none (too large, unreadable). */
export function folderVersion(folder: string, limits: FolderLimits): SkillVersion | { problem: string } {
  return versionRead(readFolderFiles(folder, limits)).version;
}

function versionRead(read: FolderFiles): {
  version: SkillVersion | { problem: string };
  files?: { path: string; bytes: Buffer }[];
} {
  return read.kind === 'files'
    ? { version: versionOf(read.files), files: read.files }
    : { version: { problem: read.reason } };
}

/**
 * Folder versions remembered across scans: a folder whose files all have the size, modification
 * and change times and inode they had last time has the digest it had, without reading a byte (a rescan of
 * thousands of unchanged skills costs a stat per file instead of reading and hashing each).
 * `sweep()` after a scan forgets the folders it did not see; without scans (`maxFolders`), the
 * memory starts again past that many folders. With `recheckMs`, a folder looked at less than that
 * long ago is not looked at again (a burst of requests costs one look a folder, not one each).
 */
export class FolderDigests {
  private known = new Map<
    string,
    { fingerprint: string; version: SkillVersion | { problem: string }; checkedAt: number }
  >();
  private seen = new Set<string>();

  constructor(private readonly options: { maxFolders?: number; recheckMs?: number } = {}) {}

  versionOf(folder: string, limits: FolderLimits): SkillVersion | { problem: string } {
    return this.read(folder, limits).version;
  }

  /** The folder's version, with its files when they had to be read for it (a changed or new folder). */
  read(
    folder: string,
    limits: FolderLimits,
  ): { version: SkillVersion | { problem: string }; files?: { path: string; bytes: Buffer }[] } {
    const now = Date.now();
    const cached = this.known.get(folder);
    if (cached !== undefined && this.options.recheckMs !== undefined && now - cached.checkedAt < this.options.recheckMs)
      return { version: cached.version };
    if (unresolvable(folder) !== undefined) return versionRead(readFolderFiles(folder, limits));
    // One walk serves both the fingerprint and, when the folder is new or changed, the read.
    const entries = replayable(folderEntries(folder));
    const fingerprint = fingerprintOf(entries(), limits);
    this.seen.add(folder);
    if (cached !== undefined && cached.fingerprint === fingerprint) {
      cached.checkedAt = now;
      return { version: cached.version };
    }
    const read = versionRead(readEntries(entries(), limits));
    if (this.options.maxFolders !== undefined && this.known.size >= this.options.maxFolders) this.known.clear();
    this.known.set(folder, { fingerprint, version: read.version, checkedAt: now });
    return read;
  }

  sweep(): void {
    for (const folder of this.known.keys()) if (!this.seen.has(folder)) this.known.delete(folder);
    this.seen = new Set();
  }
}

/**
 * Path, size, mtime, ctime and inode of each file the version would hold. Past the file limit, those
 * of the first files and a mark: enough to know the verdict (too many files) still holds without
 * reading any file again.
 */
function fingerprintOf(entries: Iterable<FolderEntry>, limits: FolderLimits): string {
  const parts: string[] = [];
  for (const { path, target } of entries) {
    let info: Stats;
    try {
      info = statSync(target);
    } catch {
      continue;
    }
    if (!info.isFile()) continue;
    if (parts.length >= limits.maxFiles) return `${parts.join('\n')}\n+more`;
    parts.push(`${path}\0${info.size}\0${info.mtimeMs}\0${info.ctimeMs}\0${info.ino}`);
  }
  return parts.join('\n');
}

function listFolder(folder: string): Dirent[] {
  try {
    return readdirSync(folder, { withFileTypes: true }).sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
    );
  } catch {
    return [];
  }
}

function linkTargetInside(root: string, path: string): string | undefined {
  try {
    const real = realpathSync.native(path);
    return isInside(root, real) ? real : undefined;
  } catch {
    return undefined;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
