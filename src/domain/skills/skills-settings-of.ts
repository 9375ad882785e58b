import type { AppConfig } from '../../config/app-config.js';
import type { SkillsSettings } from '@skillhost/core';

/** The server's: its configuration's sections. */
export function skillsSettingsOf(config: AppConfig): SkillsSettings {
  return {
    skills: config.app.skills,
    commandDirectories: config.app.commands.directories,
    scriptsEnabled: config.app.scripts.enabled,
    toolStyle: config.app.tools.style,
    useSkillThreshold: config.app.tools.useSkillThreshold,
  };
}
