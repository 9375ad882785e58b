import { closeSync, constants, type Dirent, fstatSync, openSync, readdirSync, readSync, realpathSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isInside } from '../resource-path.js';
import { SKIPPED_FOLDERS } from '../skill-order.js';
import { type SkillVersion, versionOf } from './skill-version.js';

export interface FolderLimits {
  /** Bytes of all files together. */
  maxBytes: number;
  maxFiles: number;
}

export type FolderFiles = { kind: 'files'; files: { path: string; bytes: Buffer }[] } | { kind: 'too-large'; reason: string } | { kind: 'unreadable'; reason: string };

const MAX_DEPTH = 16;

/**
 * Every file of a skill folder on disk, as the store keeps a version: regular files (and symbolic
 * links to files inside the folder) by path relative to the folder, what the resource routes
 * serve. Links that lead outside, FIFOs, sockets and devices are left out, as they are never
 * served; `.git` and `node_modules` are not walked. Reading stops at the limits.
 */
export function readFolderFiles(folder: string, limits: FolderLimits): FolderFiles {
  let root: string;
  try {
    root = realpathSync.native(folder);
  } catch (error) {
    return { kind: 'unreadable', reason: `the skill folder cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  const files: { path: string; bytes: Buffer }[] = [];
  let total = 0;
  const walk = (current: string, depth: number): string | undefined => {
    for (const entry of listFolder(current)) {
      if (SKIPPED_FOLDERS.has(entry.name)) continue;
      const full = join(current, entry.name);
      const target = entry.isSymbolicLink() ? linkTargetInside(root, full) : full;
      if (target === undefined) continue;
      const isFolder = entry.isDirectory() || (entry.isSymbolicLink() && isDirectory(target));
      if (isFolder) {
        if (depth >= MAX_DEPTH) continue;
        const problem = walk(full, depth + 1);
        if (problem !== undefined) return problem;
        continue;
      }
      const bytes = readRegularFile(target, limits.maxBytes - total + 1);
      if (bytes === undefined) continue;
      total += bytes.length;
      if (total > limits.maxBytes) return `its files hold more than ${limits.maxBytes} bytes`;
      if (files.length >= limits.maxFiles) return `it has more than ${limits.maxFiles} files`;
      files.push({ path: relative(root, full).split('\\').join('/'), bytes });
    }
    return undefined;
  };
  const problem = walk(root, 1);
  return problem === undefined ? { kind: 'files', files } : { kind: 'too-large', reason: problem };
}

/** The version a folder holds now, or why it has none (too large, unreadable). */
export function folderVersion(folder: string, limits: FolderLimits): SkillVersion | { problem: string } {
  const read = readFolderFiles(folder, limits);
  return read.kind === 'files' ? versionOf(read.files) : { problem: read.reason };
}

/**
 * Folder versions remembered across scans: a folder whose files all have the size, modification
 * and change times and inode they had last time has the digest it had, without reading a byte (a rescan of
 * thousands of unchanged skills costs a stat per file instead of reading and hashing each).
 * `sweep()` after a scan forgets the folders it did not see.
 */
export class FolderDigests {
  private known = new Map<string, { fingerprint: string; version: SkillVersion | { problem: string } }>();
  private seen = new Set<string>();

  versionOf(folder: string, limits: FolderLimits): SkillVersion | { problem: string } {
    const fingerprint = fingerprintOf(folder, limits);
    if (fingerprint === undefined) return folderVersion(folder, limits);
    this.seen.add(folder);
    const cached = this.known.get(folder);
    if (cached !== undefined && cached.fingerprint === fingerprint) return cached.version;
    const version = folderVersion(folder, limits);
    this.known.set(folder, { fingerprint, version });
    return version;
  }

  sweep(): void {
    for (const folder of this.known.keys()) if (!this.seen.has(folder)) this.known.delete(folder);
    this.seen = new Set();
  }
}

/** Path, size, mtime and inode of each file the version would hold (walked as readFolderFiles walks); undefined past the file limit. */
function fingerprintOf(folder: string, limits: FolderLimits): string | undefined {
  let root: string;
  try {
    root = realpathSync.native(folder);
  } catch {
    return undefined;
  }
  const parts: string[] = [];
  const walk = (current: string, depth: number): boolean => {
    for (const entry of listFolder(current)) {
      if (SKIPPED_FOLDERS.has(entry.name)) continue;
      const full = join(current, entry.name);
      const target = entry.isSymbolicLink() ? linkTargetInside(root, full) : full;
      if (target === undefined) continue;
      let info;
      try {
        info = statSync(target);
      } catch {
        continue;
      }
      if (info.isDirectory()) {
        if (depth < MAX_DEPTH && !walk(full, depth + 1)) return false;
        continue;
      }
      if (!info.isFile()) continue;
      if (parts.length >= limits.maxFiles) return false;
      parts.push(`${relative(root, full)}\0${info.size}\0${info.mtimeMs}\0${info.ctimeMs}\0${info.ino}`);
    }
    return true;
  };
  return walk(root, 1) ? parts.join('\n') : undefined;
}

function listFolder(folder: string): Dirent[] {
  try {
    return readdirSync(folder, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
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

/** A regular file's bytes, at most `limit` of them; undefined for anything else (FIFOs are never opened blocking). */
function readRegularFile(path: string, limit: number): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) return undefined;
    const wanted = Math.min(info.size, Math.max(limit, 0));
    const buffer = Buffer.allocUnsafe(wanted);
    let filled = 0;
    while (filled < wanted) {
      const read = readSync(fd, buffer, filled, wanted - filled, filled);
      if (read === 0) break;
      filled += read;
    }
    // A file larger than what is left of the limit counts as its whole size.
    return info.size > wanted ? Buffer.concat([buffer.subarray(0, filled), Buffer.alloc(1)]) : buffer.subarray(0, filled);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
