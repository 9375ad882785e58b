import { comparePaths } from '@skillhost/core';
import { skillDigest } from '../../domain/skills/store/index-skill-digest.js';
import type { PublishedSkill } from './published-skills.service.js';

// Defined where an index import checks it too; the index's readers (sync, the discovery service) take it from here.

/**
 * The Agent Skills discovery index (`/.well-known/agent-skills/index.json`), version 0.2.0 of the
 * proposal: https://github.com/cloudflare/agent-skills-discovery-rfc (Discovery Index, Integrity).
 */
export const INDEX_VERSION = '0.2.0';
export const INDEX_BASE_PATH = '/.well-known/agent-skills';

export interface IndexFile {
  path: string;
  digest: string;
  size: number;
  url: string;
}

export interface IndexSkill {
  name: string;
  description: string;
  digest: string;
  /**
   * The version as Skillhost names it, beside the proposal's fields: the content digest the store and the chats' pins
   * use, and a store skill's version number (null for a skill from a folder). Clients pin by the digest.
   */
  version: { digest: string | null; number: number | null };
  files: IndexFile[];
}

/** Paths the proposal allows: printable ASCII without `\`, `?`, `#`, `[` or `]`. */
const INDEX_PATH = /^[\x20-\x7e]+$/;
const UNSAFE_IN_PATH = /[\\?#[\]]/;

/** A published skill as an index entry, SKILL.md first; or why the proposal cannot describe it. */
export function indexEntry(skill: PublishedSkill): IndexSkill | { problem: string } {
  const files = [...skill.files.values()];
  const problem = unfitPath(files.map((file) => file.path));
  if (problem !== undefined) return { problem };
  const name = skill.record.name;
  return {
    name,
    description: skill.record.description,
    digest: skillDigest(files),
    version: { digest: skill.record.digest ?? null, number: skill.record.store?.version ?? null },
    files: indexFiles(files, (path) => fileUrl(name, path)),
  };
}

/** A version's files as the index lists them: SKILL.md first, then by path, each with where to fetch it. */
export function indexFiles(
  files: readonly { path: string; digest: string; size: number }[],
  urlOf: (path: string) => string,
): IndexFile[] {
  return [...files]
    .sort((a, b) => (a.path === 'SKILL.md' ? -1 : b.path === 'SKILL.md' ? 1 : comparePaths(a.path, b.path)))
    .map((file) => ({ path: file.path, digest: file.digest, size: file.size, url: urlOf(file.path) }));
}

export function fileUrl(name: string, path: string): string {
  return `${INDEX_BASE_PATH}/${encodeURIComponent(name)}/${encodedPath(path)}`;
}

/**
 * Where one file of one stored version stays: `<name>@<version digest>/<path>`. A skill name never holds `@`, so
 * these never meet the current files' URLs; what they serve never changes.
 */
export function versionedFileUrl(name: string, versionDigest: string, path: string): string {
  return `${INDEX_BASE_PATH}/${encodeURIComponent(name)}@${versionDigest}/${encodedPath(path)}`;
}

/** `NAME@sha256:HEX` as a versioned URL's first segment names it, or undefined for a plain skill name. */
export function parseVersionedName(segment: string): { name: string; digest: string } | undefined {
  const match = /^([^@]+)@(sha256:[0-9a-f]{64})$/.exec(segment);
  return match === null ? undefined : { name: match[1], digest: match[2] };
}

function encodedPath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

/** Why the proposal cannot describe a file list (a path outside printable ASCII or with `\ ? # [ ]`), if it cannot. */
export function unfitPath(paths: Iterable<string>): string | undefined {
  for (const path of paths)
    if (!INDEX_PATH.test(path) || UNSAFE_IN_PATH.test(path))
      return `the discovery index allows printable ASCII paths without \\ ? # [ ] only, and it has '${path}'`;
  return undefined;
}
