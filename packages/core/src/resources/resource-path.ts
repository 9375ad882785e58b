import { posix } from 'node:path';
import { AppError, ErrorCode } from '../errors/app-error.js';

/**
 * First line of defence for `readResource`: a request must name a file *inside* the skill folder by
 * a relative path. Checked on the text alone, before any disk access; the real-path check after it
 * catches symlinks. Both `/` and `\` count as separators, so Windows-style tricks fail the same way.
 */
export function normalizeResourcePath(requested: string): string {
  if (requested.includes('\0')) {
    throw new AppError(ErrorCode.RESOURCE_OUTSIDE_SKILL, 'Resource path must not contain NUL bytes.');
  }
  if (requested.trim() === '') {
    throw new AppError(
      ErrorCode.VALIDATION_FAILED,
      'Resource path must not be empty; give a path relative to the skill folder, e.g. references/REFERENCE.md.',
    );
  }
  const slashed = requested.replaceAll('\\', '/');
  if (slashed.startsWith('/') || /^[A-Za-z]:/.test(slashed)) {
    throw new AppError(
      ErrorCode.RESOURCE_OUTSIDE_SKILL,
      `Resource path '${requested}' is absolute; give a path relative to the skill folder, e.g. ` +
        `references/REFERENCE.md.`,
    );
  }
  const normalized = posix.normalize(slashed).replace(/\/+$/, '');
  if (normalized === '..' || normalized.startsWith('../')) {
    throw new AppError(
      ErrorCode.RESOURCE_OUTSIDE_SKILL,
      `Resource path '${requested}' leaves the skill folder; '..' is not allowed.`,
    );
  }
  return normalized;
}

/** True when `real` is `root` or lies below it; both must already be real (symlink-free) paths. */
export function isInside(root: string, real: string): boolean {
  return real === root || real.startsWith(root.endsWith('/') ? root : `${root}/`);
}
