import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { basename } from 'node:path';
import type { ValidationMode } from '../options/skills-options.schema.js';
import { FRONTMATTER_MESSAGES, locateFrontmatter, MAX_FRONTMATTER_BYTES } from './frontmatter-reader.js';
import { checkFrontmatter } from './skill-md.js';
import type { InvalidSkill, SkillRecord } from './skill.types.js';

/**
 * Reads one skill folder's SKILL.md head and validates it. Synchronous on purpose: a scan opens
 * thousands of small files, and sync open/read/close costs ~8 µs each against 40–80 µs through
 * fs.promises (measured; see bench/results). Only the frontmatter is read, never the body.
 */
export type FolderInspection = { kind: 'valid'; skill: SkillRecord } | { kind: 'invalid'; invalid: InvalidSkill };

const FIRST_READ_BYTES = 4096;
/** One buffer for every scan: reads are synchronous, so no two scans ever share it at once. */
const headBuffer = Buffer.allocUnsafe(MAX_FRONTMATTER_BYTES);
const NO_WARNINGS: readonly string[] = Object.freeze([]);

const LOWERCASE_FILE_WARNING = 'Found skill.md; the specification names the file SKILL.md';

interface Head {
  file: string;
  /** Found as skill.md (lenient mode only). */
  lowercase: boolean;
  bytes: number;
  atEof: boolean;
}

/** Returns undefined when the folder holds no SKILL.md (so it is not a skill candidate at all). */
export function inspectSkillFolder(
  folder: string,
  source: string,
  mode: ValidationMode,
  folderName = basename(folder),
): FolderInspection | undefined {
  const head = readHead(folder, mode);
  if (head === undefined) return undefined;
  const invalid = (errors: string[], warnings: readonly string[] = NO_WARNINGS, name?: string): FolderInspection => ({
    kind: 'invalid',
    invalid: { path: folder, source, name, errors, warnings },
  });
  if ('unreadable' in head) return invalid([head.unreadable]);
  const location = locateFrontmatter(headBuffer, head.bytes, head.atEof);
  if (location.kind === 'missing-open') return invalid([FRONTMATTER_MESSAGES.missingOpen]);
  if (location.kind === 'unclosed') {
    return invalid([head.atEof ? FRONTMATTER_MESSAGES.notClosed : FRONTMATTER_MESSAGES.notClosedWithinCap]);
  }
  const checked = checkFrontmatter(headBuffer.toString('utf8', location.yamlStart, location.yamlEnd), folderName, mode);
  const warnings = head.lowercase ? [LOWERCASE_FILE_WARNING, ...checked.warnings] : checked.warnings;
  if (!checked.ok) return invalid(checked.errors, warnings, checked.name);
  return {
    kind: 'valid',
    skill: {
      name: checked.frontmatter.name,
      description: checked.description,
      path: folder,
      skillFile: head.file,
      source,
      frontmatter: checked.frontmatter,
      warnings,
      ...(checked.toolsRequired === undefined ? {} : { toolsRequired: checked.toolsRequired }),
    },
  };
}

/**
 * Opens the folder's SKILL.md without ever blocking: O_NONBLOCK, so a FIFO (or a symlink to one)
 * opens at once instead of waiting for a writer, then fstat on the descriptor, so only a regular
 * file is read. Anything else named SKILL.md, or a SKILL.md that cannot be opened, is reported
 * (`unreadable`) rather than skipped; a folder without one is not a candidate (undefined).
 */
function readHead(folder: string, mode: ValidationMode): Head | { unreadable: string } | undefined {
  const names = mode === 'lenient' ? ['SKILL.md', 'skill.md'] : ['SKILL.md'];
  for (const name of names) {
    // Plain concatenation: `folder` is already absolute and normalised, and path.join costs ~1 µs a skill.
    const file = `${folder}/${name}`;
    let fd: number;
    try {
      fd = openSync(file, OPEN_FLAGS);
    } catch (error) {
      const problem = openProblem(name, error as NodeJS.ErrnoException);
      if (problem === undefined) continue;
      return { unreadable: problem };
    }
    try {
      const info = fstatSync(fd);
      // A directory named SKILL.md is not a skill file.
      if (info.isDirectory()) continue;
      if (!info.isFile())
        return {
          unreadable: `${name} is ${describeSpecialFile(info)}, not a regular file; replace it with a text file`,
        };
      return readFrontmatterBytes(fd, file, name !== 'SKILL.md');
    } catch (error) {
      return {
        unreadable: `${name} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      };
    } finally {
      closeSync(fd);
    }
  }
  return undefined;
}

/** Read-only and non-blocking: a FIFO opens at once instead of waiting for a writer. */
export const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK;

/** Why an existing SKILL.md could not be opened; undefined when there is none to open. */
export function openProblem(name: string, error: NodeJS.ErrnoException): string | undefined {
  switch (error.code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return undefined;
    case 'EACCES':
    case 'EPERM':
      return (
        `${name} cannot be read: permission denied ` +
        `(${error.code}); the server's user needs read access to it and search (x) access to its folder`
      );
    case 'ENXIO':
      // What open() answers for a Unix socket.
      return `${name} is a socket, not a regular file; replace it with a text file`;
    case 'ELOOP':
      return `${name} is a symbolic link loop`;
    default:
      return `${name} cannot be opened (${error.code ?? error.message})`;
  }
}

export function describeSpecialFile(info: Stats): string {
  if (info.isFIFO()) return 'a FIFO (named pipe)';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice()) return 'a character device';
  if (info.isBlockDevice()) return 'a block device';
  return 'a special file';
}

/** Reads 4 KiB, and the rest of the first 64 KiB only when the closing fence was not in it. */
function readFrontmatterBytes(fd: number, file: string, lowercase: boolean): Head {
  let bytes = readSync(fd, headBuffer, 0, FIRST_READ_BYTES, 0);
  let atEof = bytes < FIRST_READ_BYTES;
  if (!atEof && locateFrontmatter(headBuffer, bytes, false).kind === 'unclosed') {
    bytes += readSync(fd, headBuffer, bytes, MAX_FRONTMATTER_BYTES - bytes, bytes);
    atEof = bytes < MAX_FRONTMATTER_BYTES || readSync(fd, Buffer.alloc(1), 0, 1, bytes) === 0;
  }
  return { file, lowercase, bytes, atEof };
}
