import type { SkillDirectory } from './setting.js';
import type { ResolvedSkillsOptions } from './skills-options.schema.js';

/** Where skills are looked for when no folder is configured (the server's `[app.skills] directories` default). */
export const DEFAULT_SKILL_DIRECTORIES = ['./.skills', './.agents/skills', '~/.agents/skills', '~/.skillhost/skills'];
/** Where command files are looked for when no folder is configured. */
export const DEFAULT_COMMAND_DIRECTORIES = ['./.skillhost/commands', './commands'];

/**
 * The defaults of what a host adds to the library's options: the server's `[app.skills]` and
 * `[app.tools]` take them, and an app's `SkillsModule` runs with them.
 */
export const HOST_SKILLS_DEFAULTS = {
  /** The most a skill may hold to be installed or pinned. */
  maxInstallBytes: 10 * 1024 * 1024,
  searchTool: 'auto',
  storePrecedence: 'last',
  /** `use_skill` without a name: the best match must cover this share of the request's words, in percent. */
  useSkillThreshold: 50,
} as const;

/**
 * What the skills services read: the library's options, resolved (the catalogue's flattened), plus
 * the switches a host adds. The server's `[app.skills]` section is a superset of it.
 */
export interface SkillsConfig extends Omit<ResolvedSkillsOptions, 'catalogue' | 'toolStyle' | 'directories'> {
  readonly directories: readonly SkillDirectory[];
  /** Off: no folder is read and every skills service answers `SKILLS_DISABLED`. */
  readonly enabled: boolean;
  readonly catalogueFormat: ResolvedSkillsOptions['catalogue']['format'];
  readonly includeLocation: boolean;
  readonly catalogueBudgetTokens: number;
  readonly catalogueMaxSkills: number;
  /** `auto`: the search tool is offered when the catalogue is partial; `always`: whenever tools are. */
  readonly searchTool: 'auto' | 'always';
  /** `last`: a skill in the folders wins a name collision with a store skill; `first`: the store wins. */
  readonly storePrecedence: 'first' | 'last';
  /** Folders of code skills (`skill.mjs`), trusted by whoever configures them; none in an app's options. */
  readonly codeDirectories: readonly SkillDirectory[];
  /** The most a skill may hold to be kept (pinned) when a chat activates it. */
  readonly maxInstallBytes: number;
}
