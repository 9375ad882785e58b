import { closeSync, constants, fstatSync, openSync, readSync, realpathSync } from 'node:fs';
import { join, relative } from 'node:path';
import { AppError, ErrorCode, isInside, normalizeResourcePath } from '@skillhost/core';
import { SHEBANG_BYTES } from './interpreter.js';

export interface ScriptFile {
  /** The skill folder's real path: what the sandbox mounts. */
  skillDir: string;
  /** Relative to the skill folder's real path, e.g. `scripts/echo.sh`. */
  relativePath: string;
  /** The file's first bytes, enough for its shebang line. */
  head: Buffer;
}

/**
 * Finds the script a run names, refusing anything that is not a regular file inside the skill
 * folder: the path is checked as text first, then by real paths on both sides (a symlink out of
 * the folder is refused here with a clear error; inside the sandbox it would dangle anyway, as
 * nothing else of the host is mounted).
 */
export function resolveScriptFile(skillDir: string, requestedPath: string): ScriptFile {
  const normalized = normalizeResourcePath(requestedPath);
  let root: string;
  let real: string;
  try {
    root = realpathSync.native(skillDir);
  } catch {
    // No host path in the message: it reaches users (a card); the caller names the skill.
    throw new AppError(ErrorCode.SKILL_NOT_FOUND, 'The skill folder no longer exists; reload the skills.');
  }
  try {
    real = realpathSync.native(join(root, normalized));
  } catch (error) {
    const loop = (error as NodeJS.ErrnoException).code === 'ELOOP';
    throw new AppError(
      ErrorCode.RESOURCE_NOT_FOUND,
      loop
        ? `Script '${normalized}' cannot be resolved: its symbolic links form a loop.`
        : `Script '${normalized}' not found in the skill folder.`,
      {
        path: normalized,
      },
    );
  }
  if (!isInside(root, real)) {
    throw new AppError(
      ErrorCode.RESOURCE_OUTSIDE_SKILL,
      `Script '${normalized}' leads outside the skill folder (through a symbolic link); only files inside the ` +
        `skill can be run.`,
      {
        path: normalized,
      },
    );
  }
  return { skillDir: root, relativePath: relative(root, real), head: readHead(real, normalized) };
}

/** O_NONBLOCK: opening a FIFO must not hang; fstat on the descriptor then refuses anything but a file. */
function readHead(file: string, shownPath: string): Buffer {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EISDIR') throw directoryError(shownPath);
    throw new AppError(
      ErrorCode.RESOURCE_NOT_FOUND,
      `Script '${shownPath}' cannot be opened (${(error as NodeJS.ErrnoException).code ?? 'error'}).`,
      { path: shownPath },
    );
  }
  try {
    const info = fstatSync(fd);
    if (info.isDirectory()) throw directoryError(shownPath);
    if (!info.isFile()) {
      throw new AppError(
        ErrorCode.VALIDATION_FAILED,
        `Script '${shownPath}' is not a regular file (a FIFO, socket or device); only files can be run.`,
        { path: shownPath },
      );
    }
    const head = Buffer.alloc(Math.min(SHEBANG_BYTES, info.size));
    const read = head.length === 0 ? 0 : readSync(fd, head, 0, head.length, 0);
    return head.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}

function directoryError(path: string): AppError {
  return new AppError(
    ErrorCode.RESOURCE_IS_DIRECTORY,
    `Script '${path}' is a directory; name a file inside it, e.g. '${path}/run.sh'.`,
    { path },
  );
}
