import type { SkillsConfig } from '../options/skills-config.js';
import { type DiscoveryResult, discoverSkills, discoverSkillsAsync } from '../skill/skill-discovery.js';
import { FolderDigests } from '../skill/skill-folder-files.js';
import { MAX_SKILL_FILES } from '../store/store-limits.js';
import type { SkillSource, SkillSourceLoad } from './skill-source.js';

/**
 * The configured skill folders, then the code folders (`skill.mjs`), scanned in order: an earlier
 * folder wins a name clash. Each skill gets the digest of its files, the version the store would give it.
 */
export class FolderSource implements SkillSource {
  readonly name = 'folders';
  /** Remembered between scans: an unchanged folder is not read again. */
  private readonly digests = new FolderDigests();

  constructor(private readonly config: SkillsConfig) {}

  load(when: SkillSourceLoad): DiscoveryResult | Promise<DiscoveryResult> {
    const { directories, codeDirectories, validation, maxDepth, maxSkills, maxInstallBytes } = this.config;
    const options = {
      directories,
      codeDirectories,
      mode: validation,
      maxDepth,
      maxSkills,
      versionLimits: { maxBytes: maxInstallBytes, maxFiles: MAX_SKILL_FILES },
      digests: this.digests,
    };
    return when === 'start-up' ? discoverSkills(options) : discoverSkillsAsync(options);
  }
}
