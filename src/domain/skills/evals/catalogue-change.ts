import type { CatalogueSnapshot, SkillRecord } from '@skillhost/core';

/** Which skills' catalogue results a change may have moved: every skill's, or only these (by name). */
export type EvalRerun = 'all' | ReadonlySet<string>;

/**
 * The skills the team's catalogue offers (to everyone, or to some groups) by name: what the catalogue level ranks.
 * Personal skills are not in it: they are ranked only in their owner's view.
 */
export function offeredSkills(snapshot: CatalogueSnapshot): ReadonlyMap<string, SkillRecord> {
  const offered = new Map(snapshot.skills);
  for (const record of snapshot.groupOnly.skills) if (!offered.has(record.name)) offered.set(record.name, record);
  return offered;
}

/**
 * What a swap of the catalogue asks of the catalogue level. The ranker reads every offered skill's description and
 * triggers, and the budget counts every entry, so a skill added, removed or described differently can move any
 * skill's results: all are run again. A new version that lists the same entry (its body, its files or its trigger evals
 * changed) moves only its own: that skill is run. Nothing else changes a result. `before` undefined: all.
 */
export function evalRerunOf(before: CatalogueSnapshot | undefined, after: CatalogueSnapshot): EvalRerun | undefined {
  if (before === undefined) return 'all';
  const [was, now] = [offeredSkills(before), offeredSkills(after)];
  if (was.size !== now.size) return 'all';
  const changed = new Set<string>();
  for (const [name, record] of now) {
    const previous = was.get(name);
    if (previous === undefined || !sameEntry(previous, record)) return 'all';
    if (previous.digest !== record.digest || previous.path !== record.path) changed.add(name);
  }
  return changed.size === 0 ? undefined : changed;
}

/** Both asks at once: all when either is. */
export function mergeReruns(a: EvalRerun | undefined, b: EvalRerun | undefined): EvalRerun | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  if (a === 'all' || b === 'all') return 'all';
  return new Set([...a, ...b]);
}

/** Whether the ranker and the budget read the same of both: the description, the triggers, who may see it. */
function sameEntry(a: SkillRecord, b: SkillRecord): boolean {
  if (a === b) return true;
  if (a.description !== b.description) return false;
  if (a.frontmatter.metadata?.triggers !== b.frontmatter.metadata?.triggers) return false;
  const [was, now] = [a.store?.groups, b.store?.groups];
  if (was === undefined || now === undefined) return was === now;
  return was.size === now.size && [...was].every((group) => now.has(group));
}
