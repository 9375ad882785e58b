import type { DiscoveryResult } from '../skill/skill-discovery.js';
import {
  type DirectoryReport,
  type InvalidSkill,
  type SkillCollision,
  type SkillRecord,
  scopeRank,
} from '../skill/skill.types.js';

/**
 * When a source is read: at start-up nothing is served yet, so a long read may run straight through; on a reload
 * requests are being served, so it should give the event loop a turn now and then.
 */
export type SkillSourceLoad = 'start-up' | 'reload';

/** What a source holds: its skills, and what it can tell operators about the rest (the snapshot's reports). */
export interface SkillSourceContent {
  /** Its skills; two of one name are settled as a clash between sources is (below). */
  readonly skills: readonly SkillRecord[];
  /** What looked like a skill but did not load, with every reason. */
  readonly invalid?: readonly InvalidSkill[];
  /** Name clashes it settled itself (between its folders). */
  readonly collisions?: readonly SkillCollision[];
  /** Valid skills it left out past a limit (`max_skills`). */
  readonly excluded?: readonly { readonly name: string; readonly path: string }[];
  readonly warnings?: readonly string[];
  /** The folders it read. */
  readonly directories?: readonly DirectoryReport[];
  /** Skills only their owner sees (`store.ownerId`); a team skill of the same name wins. */
  readonly personal?: readonly SkillRecord[];
  /** Persisted switches, name → enabled: `false` switches the skill off whichever source holds it. */
  readonly switches?: ReadonlyMap<string, boolean>;
}

/**
 * One input of the registry's catalogue: the skill folders, the skills an app registers, the
 * server's store, or an app's own (its database, say). The registry reads every source at start-up
 * and on each reload, in its list order, and merges what they hold into one snapshot.
 */
export interface SkillSource {
  /** Names it in logs. */
  readonly name: string;
  /**
   * Its place in a name clash between sources: the higher precedence wins; at equal precedence the
   * higher scope (bundled < user < workspace; a skill without one is `user`); then the source later
   * in the list. Default 0, as the folders and the registered skills; the store is 1 with
   * `store_precedence = "first"`, -1 with `"last"`.
   */
  readonly precedence?: number;
  /** Reads it (again): what it holds now. When it fails, the reload fails and the catalogue stays as it was. */
  load(when: SkillSourceLoad): SkillSourceContent | Promise<SkillSourceContent>;
}

/** The injection token of an app's own sources (`SkillsModule.forRoot({ sources })` provides it). */
export const SKILL_SOURCES = Symbol('SKILLHOST_SKILL_SOURCES');

/** Every source's content as one catalogue input: the winners of name clashes, and everyone's reports. */
export interface MergedSources extends DiscoveryResult {
  personal: SkillRecord[];
  switches: Map<string, boolean>;
}

/** Merges what the sources hold, in their list order; every name clash is a collision (winner, loser). */
export function mergeSources(loaded: readonly (readonly [SkillSource, SkillSourceContent])[]): MergedSources {
  const merged: MergedSources = {
    skills: [],
    invalid: [],
    collisions: [],
    excluded: [],
    warnings: [],
    directories: [],
    personal: [],
    switches: new Map(),
  };
  const held: Held = { at: new Map(), precedence: [] };
  for (const [source, content] of loaded) {
    append(merged.collisions, content.collisions);
    settleClashes(merged, held, content.skills, source.precedence ?? 0);
    append(merged.invalid, content.invalid);
    append(merged.excluded, content.excluded);
    append(merged.warnings, content.warnings);
    append(merged.directories, content.directories);
    append(merged.personal, content.personal);
    for (const [name, enabled] of content.switches ?? []) merged.switches.set(name, enabled);
  }
  return merged;
}

/** Where each name's skill sits in `merged.skills`, and the precedence of the source it came from. */
interface Held {
  at: Map<string, number>;
  precedence: number[];
}

function settleClashes(merged: MergedSources, held: Held, skills: readonly SkillRecord[], precedence: number): void {
  for (const skill of skills) {
    const index = held.at.get(skill.name);
    if (index === undefined) {
      held.at.set(skill.name, merged.skills.push(skill) - 1);
      held.precedence.push(precedence);
      continue;
    }
    const holder = merged.skills[index];
    const wins =
      precedence === held.precedence[index]
        ? scopeRank(skill.scope) >= scopeRank(holder.scope)
        : precedence > held.precedence[index];
    if (wins) {
      merged.skills[index] = skill;
      held.precedence[index] = precedence;
    }
    const [winner, loser] = wins ? [skill, holder] : [holder, skill];
    merged.collisions.push({
      name: skill.name,
      winner: { path: winner.path, source: winner.source },
      loser: { path: loser.path, source: loser.source },
    });
  }
}

/** `push(...items)` without the argument limit of a spread (a scan may report thousands of invalid folders). */
function append<T>(into: T[], items: readonly T[] | undefined): void {
  for (const item of items ?? []) into.push(item);
}
