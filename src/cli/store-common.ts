import type { InstallResult } from '../domain/skills/store/skill-store.service.js';
import { FILTER_ENTRY_PATTERN } from '../domain/shared/skill-filter.js';
import { type CliIo, UsageError } from './cli-io.js';
import { formatInstant, formatTable } from './text-table.js';

/** What the store commands share, whether they work on the database or through a server (`--server`). */

/** Archives by file name, as the upload routes take them by content type. */
export const ARCHIVE_TYPES: [RegExp, string][] = [
  [/\.zip$/i, 'application/zip'],
  [/\.(tar\.gz|tgz)$/i, 'application/gzip'],
  [/\.tar$/i, 'application/x-tar'],
];

/** A git repository or a discovery index URL, rather than a path on disk. */
export function isImportSource(target: string): boolean {
  return /^(git\+[a-z]+:|https?:\/\/)/i.test(target);
}

/** One installed skill, as both the database and the `--server` commands print it. */
export function installedText(
  whose: string,
  result: Pick<InstallResult, 'created' | 'name' | 'version' | 'digest'> & { files: readonly unknown[] },
): string {
  return (
    `${result.created ? 'Installed' : 'Already installed:'} ${whose} skill '${result.name}' version ` +
    `${result.version} (${result.digest}, ${result.files.length} file(s)).`
  );
}

/** A skill's versions as a table (the current one starred), or as JSON. */
export function printVersions(
  history: {
    name: string;
    scope: string;
    current: number;
    versions: {
      version: number;
      digest: string;
      installedAt: Date | string;
      installedBy: string | null;
      fileCount: number;
      totalBytes: number;
    }[];
  },
  json: boolean,
  io: CliIo,
): void {
  if (json) {
    io.out(JSON.stringify(history, null, 2));
    return;
  }
  const rows = history.versions.map((v) => [
    `${v.version}${v.version === history.current ? ' *' : ''}`,
    v.digest,
    formatInstant(new Date(v.installedAt)),
    v.installedBy ?? '-',
    String(v.fileCount),
    String(v.totalBytes),
  ]);
  for (const line of formatTable(['VERSION', 'DIGEST', 'INSTALLED', 'BY', 'FILES', 'BYTES'], rows)) io.out(line);
}

/** A name `enable`/`disable` may switch: a skill's, not a filter pattern. */
export function checkSkillName(name: string): void {
  if (!FILTER_ENTRY_PATTERN.test(name) || name.endsWith('*'))
    throw new UsageError(
      `'${name}' is not a skill name: give the name as the skill's SKILL.md declares it (no spaces, at most 64 ` +
        `characters).`,
    );
}
