import type { SkillDirectory } from '../options/setting.js';
import type { SkillsConfig } from '../options/skills-config.js';
import { HOST_SKILLS_DEFAULTS } from '../options/skills-config.js';
import type { ResolvedSkillsOptions, ToolStyle } from '../options/skills-options.schema.js';

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

/**
 * The settings an app's checked options give (`parseSkillsOptions`). What the options do not cover (the store, code
 * skills, commands, scripts) keeps the server's defaults: with no store and no code skills, folders win every
 * collision and nothing is installed.
 */
export function settingsOfOptions(options: ResolvedSkillsOptions): SkillsSettings {
  const { catalogue, toolStyle, ...skills } = options;
  return {
    skills: {
      ...skills,
      enabled: true,
      catalogueFormat: catalogue.format,
      includeLocation: catalogue.includeLocation,
      catalogueBudgetTokens: catalogue.budgetTokens,
      catalogueMaxSkills: catalogue.maxSkills,
      codeDirectories: [],
      maxInstallBytes: HOST_SKILLS_DEFAULTS.maxInstallBytes,
      searchTool: HOST_SKILLS_DEFAULTS.searchTool,
      storePrecedence: HOST_SKILLS_DEFAULTS.storePrecedence,
    },
    commandDirectories: [],
    scriptsEnabled: false,
    toolStyle,
    useSkillThreshold: HOST_SKILLS_DEFAULTS.useSkillThreshold,
  };
}
