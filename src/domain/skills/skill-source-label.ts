import { join } from 'node:path';
import { type DirectoryReport, programmaticSource, SKILL_SCOPES, storeSource } from '@skillhost/core';
import { packageRoot } from '../../config/package-version.js';

/**
 * Where a skill comes from, in words anyone may read: `bundled` (Skillhost's own skills folder),
 * `shared folder N` (the Nth of `[app.skills] directories`), `code folder N` (of
 * `code_directories`), `store` (a shared store skill), `personal` (a user's own store skill), or
 * `programmatic:<scope>`. Never the folder itself: host paths are for the admin report.
 */
export function skillSourceLabel(source: string, directories: readonly DirectoryReport[]): string {
  if (source === storeSource('shared', null)) return 'store';
  if (source.startsWith(storeSource('personal', ''))) return 'personal';
  if (SKILL_SCOPES.some((scope) => source === programmaticSource(scope))) return source;
  const directory = directories.find((candidate) => candidate.configured === source);
  if (directory === undefined) return 'unknown';
  if (directory.path === bundledSkillsFolder()) return 'bundled';
  const siblings = directories.filter((candidate) => (candidate.code ?? false) === (directory.code ?? false));
  return `${directory.code ? 'code' : 'shared'} folder ${siblings.indexOf(directory) + 1}`;
}

let bundled: string | null | undefined;

/** The `skills/` folder Skillhost's package ships (null when the package is not found). */
function bundledSkillsFolder(): string | null {
  if (bundled === undefined) {
    const root = packageRoot();
    bundled = root === undefined ? null : join(root, 'skills');
  }
  return bundled;
}
