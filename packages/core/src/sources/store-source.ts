import type { SkillsConfig } from '../options/skills-config.js';
import type { SkillStoreReader } from '../store/skill-store-reader.js';
import { readStoreSkills } from '../store/store-skills.js';
import type { SkillSource, SkillSourceContent } from './skill-source.js';

/**
 * The server's store: its shared skills (in everyone's catalogue), the personal ones (in their
 * owner's view) and its switches. `store_precedence` places it above every other source or below.
 */
export class StoreSource implements SkillSource {
  readonly name = 'store';
  readonly precedence: number;

  constructor(
    private readonly store: SkillStoreReader,
    private readonly config: Pick<SkillsConfig, 'validation' | 'storePrecedence'>,
  ) {
    this.precedence = config.storePrecedence === 'first' ? 1 : -1;
  }

  async load(): Promise<SkillSourceContent> {
    const { shared, ...rest } = readStoreSkills(await this.store.contents(), this.config.validation);
    return { skills: shared, ...rest };
  }
}
