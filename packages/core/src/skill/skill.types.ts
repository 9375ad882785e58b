import type { CodeSkillCanHandle, CodeSkillExecute } from '../code/code-skill.types.js';
import type { SkillFrontmatter } from './skill-validator.js';
import type { ManifestEntry } from './skill-version.js';

/**
 * Where a skill stands when two share a name (the Rumi design's order): a higher scope wins.
 * Folder skills count as `user`; programmatic skills are registered at the scope their application chooses.
 */
export const SKILL_SCOPES = ['bundled', 'user', 'workspace'] as const;
export type SkillScope = (typeof SKILL_SCOPES)[number];

/** Where a scope stands in SKILL_SCOPES (absent: `user`, as every folder skill). */
export function scopeRank(scope: SkillScope | undefined): number {
  return SKILL_SCOPES.indexOf(scope ?? 'user');
}

export type SkillOrigin = 'folder' | 'programmatic';

/** A skill that loaded. Paths are absolute host paths: for the server's own use and the admin listing. */
export interface SkillRecord {
  readonly name: string;
  /** As shown in the catalogue (lenient mode may cut it to 1024 code points). */
  readonly description: string;
  /** The skill folder as discovered (it may be a symlink). */
  readonly path: string;
  /** Its SKILL.md (or skill.md in lenient mode). */
  readonly skillFile: string;
  /** The configured skills directory it came from, as written in the configuration. */
  readonly source: string;
  readonly frontmatter: Readonly<SkillFrontmatter>;
  readonly warnings: readonly string[];
  /** Absent: `folder`. */
  readonly origin?: SkillOrigin;
  /** Absent: `user` (every folder skill). */
  readonly scope?: SkillScope;
  /**
   * A folder code skill: its `skill.mjs` (real path), found beside SKILL.md in an `app.skills.code_directories` folder.
   */
  readonly code?: { readonly module: string };
  /** `tools_required`: tools the skill needs from the chat; without them it is not offered. */
  readonly toolsRequired?: readonly string[];
  /** A programmatic skill's content, kept in memory (it has no folder). */
  readonly programmatic?: ProgrammaticContent;
  /**
   * The content version it was loaded at (`sha256:<hex>` over its files, as the store names
   * versions). Absent for programmatic skills and for folders past `max_install_bytes`.
   */
  readonly digest?: string;
  /** The files of that version (path, size, digest), SKILL.md included, in path order; absent when `digest` is. */
  readonly files?: readonly ManifestEntry[];
  /** A skill installed through the store. */
  readonly store?: StoreOrigin;
}

/** Where a store skill comes from. */
export interface StoreOrigin {
  readonly scope: 'shared' | 'personal';
  /** The owner of a personal skill (user id and name); null for shared. */
  readonly ownerId: string | null;
  readonly owner: string | null;
  readonly version: number;
  /** The digests of every version of this install: a chat's pin counts only if it is one of them. */
  readonly history: ReadonlySet<string>;
  /** A shared skill offered only to members of these groups (ids); absent when the whole team has it. */
  readonly groups?: ReadonlySet<string>;
}

/** What a programmatic skill brings instead of files. */
export interface ProgrammaticContent {
  /** The instructions activation returns (a SKILL.md body). */
  readonly instructions?: string;
  readonly execute?: CodeSkillExecute;
  readonly canHandle?: CodeSkillCanHandle;
  /** Its files by relative path (normalised), served by readResource and listResources. */
  readonly resources: ReadonlyMap<string, string>;
}

/** A skill that runs code when invoked: a folder `skill.mjs` or a programmatic `execute`. */
export function isCodeSkill(skill: SkillRecord): boolean {
  return skill.code !== undefined || skill.programmatic?.execute !== undefined;
}

/** A valid skill left out because it needs tools this server's chats do not have. */
export interface UnavailableSkill {
  readonly name: string;
  readonly path: string;
  readonly source: string;
  /** As the skill wrote them. */
  readonly missingTools: readonly string[];
  readonly reason: string;
}

/** A folder that looked like a skill but did not load, with every reason. */
export interface InvalidSkill {
  readonly path: string;
  readonly source: string;
  /** The name it declared, when it declared a string. */
  readonly name?: string;
  readonly errors: readonly string[];
  readonly warnings: readonly string[];
}

export interface SkillCollision {
  readonly name: string;
  readonly winner: { readonly path: string; readonly source: string };
  readonly loser: { readonly path: string; readonly source: string };
}

export interface DirectoryReport {
  readonly configured: string;
  readonly path: string;
  readonly exists: boolean;
  /** True for an `app.skills.code_directories` folder. */
  readonly code?: boolean;
  /** Skills loaded from this directory (after collisions, max_skills and tools_required). */
  readonly skills: number;
  readonly invalid: number;
}
