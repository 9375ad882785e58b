import type { SkillDirectory } from '../options/setting.js';
import type { SkillsConfig } from '../options/skills-config.js';
import type { ToolStyle } from '../options/skills-options.schema.js';

/**
 * What the skills services read: the `[app.skills]` section, the command folders and whether
 * scripts run. The server takes it from its configuration; an app embedding Skillhost gets it from
 * `SkillsModule.forRoot(options)` (@skillhost/nest), checked by the same rules as the server's file.
 */
export interface SkillsSettings {
  readonly skills: SkillsConfig;
  readonly commandDirectories: readonly SkillDirectory[];
  readonly scriptsEnabled: boolean;
  /** The tool style the model is offered (`skillhost/ai-sdk` uses it unless told another). */
  readonly toolStyle: ToolStyle;
  /** `use_skill` without a name: the least share of the request's words the best match must cover, in percent. */
  readonly useSkillThreshold: number;
}

/** The injection token of the skills services' settings. */
export const SKILLS_SETTINGS = Symbol('SKILLHOST_SKILLS_SETTINGS');
