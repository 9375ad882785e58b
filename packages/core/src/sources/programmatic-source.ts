import { type SkillRecord, type SkillScope, scopeRank } from '../skill/skill.types.js';
import type { SkillSource, SkillSourceContent } from './skill-source.js';

/**
 * The skills the embedding application registers at run time (`SkillRegistry.register`), in memory:
 * one per name and scope.
 */
export class ProgrammaticSource implements SkillSource {
  readonly name = 'programmatic';
  private readonly byScope = new Map<SkillScope, Map<string, SkillRecord>>();

  /** Adds a record (`programmaticSkillRecord`), replacing one of the same name and scope; true when it replaced one. */
  add(record: SkillRecord): boolean {
    const scope = record.scope ?? 'user';
    let byName = this.byScope.get(scope);
    if (byName === undefined) this.byScope.set(scope, (byName = new Map()));
    const replaced = byName.has(record.name);
    byName.set(record.name, record);
    return replaced;
  }

  /** Removes the skill of that (normalised) name, of one scope or of every scope; false when there was none. */
  remove(name: string, scope?: SkillScope): boolean {
    let removed = false;
    for (const [skillScope, byName] of this.byScope) {
      if (scope !== undefined && skillScope !== scope) continue;
      removed = byName.delete(name) || removed;
    }
    return removed;
  }

  /** Lowest scope first, so that of one name registered at several scopes the highest wins the merge. */
  load(): SkillSourceContent {
    const skills = [...this.byScope.values()].flatMap((byName) => [...byName.values()]);
    return { skills: skills.sort((a, b) => scopeRank(a.scope) - scopeRank(b.scope)) };
  }
}
