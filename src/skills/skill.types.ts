import type { SkillFrontmatter } from './skill-validator.js';

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
  /** Skills loaded from this directory (after collisions and max_skills). */
  readonly skills: number;
  readonly invalid: number;
}
