import { comparePaths } from '@skillhost/core';
import { skillDigest } from '../../domain/skills/store/index-skill-digest.js';
import type { PublishedSkill } from './published-skills.service.js';

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
  const unfit = files.find((file) => !INDEX_PATH.test(file.path) || UNSAFE_IN_PATH.test(file.path));
  if (unfit !== undefined)
    return {
      problem: `the discovery index allows printable ASCII paths without \\ ? # [ ] only, and it has '${unfit.path}'`,
    };
  const name = skill.record.name;
  const ordered = [...files].sort((a, b) =>
    a.path === 'SKILL.md' ? -1 : b.path === 'SKILL.md' ? 1 : comparePaths(a.path, b.path),
  );
  return {
    name,
    description: skill.record.description,
    digest: skillDigest(files),
    version: { digest: skill.record.digest ?? null, number: skill.record.store?.version ?? null },
    files: ordered.map((file) => ({
      path: file.path,
      digest: file.digest,
      size: file.size,
      url: fileUrl(name, file.path),
    })),
  };
}

export function fileUrl(name: string, path: string): string {
  return `${INDEX_BASE_PATH}/${encodeURIComponent(name)}/${path.split('/').map(encodeURIComponent).join('/')}`;
}
