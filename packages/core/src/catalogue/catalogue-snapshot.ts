import type { SkillsConfig } from '../options/skills-config.js';
import type { CatalogueFormat, ValidationMode } from '../options/skills-options.schema.js';
import { runInSlices, runThrough } from '../util/sliced-work.js';
import { renderCatalogue } from './catalogue-renderer.js';
import { CatalogueIndex } from './catalogue-index.js';
import type { CommandDirectoryReport, CommandDiscoveryResult } from '../commands/command-discovery.js';
import type { CommandCollision, CommandRecord, InvalidCommand } from '../commands/command.types.js';
import { compareByName } from '../skill/skill-order.js';
import type { DiscoveryResult } from '../skill/skill-discovery.js';
import type {
  DirectoryReport,
  InvalidSkill,
  SkillCollision,
  SkillRecord,
  UnavailableSkill,
} from '../skill/skill.types.js';
import { checkToolsRequired, type ToolAvailability } from '../skill/tool-requirements.js';

/**
 * Everything one scan found, frozen. The registry swaps whole snapshots, so a request sees one
 * scan or the next, never half of one; catalogues are rendered here once, not per request.
 */
export interface CatalogueSnapshot {
  readonly scannedAt: string;
  readonly durationMs: number;
  readonly mode: ValidationMode;
  /** Loaded skills, by name, iterated in name order. */
  readonly skills: ReadonlyMap<string, SkillRecord>;
  readonly invalid: readonly InvalidSkill[];
  readonly collisions: readonly SkillCollision[];
  readonly excluded: readonly { readonly name: string; readonly path: string }[];
  /** Valid skills left out because they need tools the chats do not have (`tools_required`). */
  readonly unavailable: readonly UnavailableSkill[];
  /**
   * Valid skills switched off (`[app.skills] disabled`): in no catalogue, and the registry answers SKILL_DISABLED for
   * them.
   */
  readonly disabled: ReadonlyMap<string, SkillRecord>;
  /** Personal store skills by owner id: only in their owner's view (`narrowSnapshot`). */
  readonly personal: ReadonlyMap<string, PersonalSkills>;
  /**
   * Store skills shared with groups rather than the whole team: only in the views of their groups' members
   * (`narrowSnapshot`), never in `skills`, `disabled` or `unavailable`, so a view without them cannot even tell that
   * they exist.
   */
  readonly groupOnly: GroupSkills;
  /** Names a view left out by its skill filters (a user's or a chat's); empty in the whole snapshot. */
  readonly filteredOut: ReadonlySet<string>;
  readonly warnings: readonly string[];
  readonly directories: readonly DirectoryReport[];
  /** Loaded commands, by name, iterated in name order. */
  readonly commands: ReadonlyMap<string, CommandRecord>;
  readonly commandReport: CommandReport;
  /** The catalogue in a format, each rendered on first use, not as part of the swap. */
  catalogue(format: CatalogueFormat): string;
  /** Every offered skill (team and personal) indexed for ranking, with its entry's size in tokens; views share it. */
  readonly index: CatalogueIndex;
}

/** One user's personal skills: offered (no team skill has the name), and switched off. */
export interface PersonalSkills {
  readonly skills: ReadonlyMap<string, SkillRecord>;
  readonly disabled: ReadonlyMap<string, SkillRecord>;
  /** Left out for tools_required: told to their owner only. */
  readonly unavailable: readonly UnavailableSkill[];
}

/** Skills shared with groups: offered, switched off, and left out for tools_required (told to the groups only). */
export interface GroupSkills {
  readonly skills: readonly SkillRecord[];
  readonly disabled: readonly SkillRecord[];
  readonly unavailable: readonly { readonly entry: UnavailableSkill; readonly groups: ReadonlySet<string> }[];
}

/** Whether a skill is offered to some groups only (a store skill shared with groups). */
export function isGroupOnly(skill: SkillRecord): boolean {
  return skill.store?.groups !== undefined;
}

/** Whether a group-only skill is for someone in `groups`. */
function sharedWith(skill: SkillRecord, groups: ReadonlySet<string>): boolean {
  for (const group of skill.store?.groups ?? []) if (groups.has(group)) return true;
  return false;
}

/** What a user or chat narrows its catalogue to: names or `prefix-*` patterns; an absent list does not narrow. */
export interface SkillFilter {
  readonly include?: readonly string[];
  readonly exclude?: readonly string[];
}

/** What the scan of the commands directories saw, for operators. */
export interface CommandReport {
  readonly directories: readonly CommandDirectoryReport[];
  readonly invalid: readonly InvalidCommand[];
  /**
   * Between command files (`kind: 'command'`), then commands named like a loaded skill (`kind: 'skill'`, the skill
   * loses `/name`).
   */
  readonly collisions: readonly CommandCollision[];
  readonly warnings: readonly string[];
}

/**
 * `availability`: the tools the chats have; a skill whose `tools_required` names another is left out
 * (into `unavailable`). Without it nothing is checked (the CLI's listing of folders).
 */
type SnapshotConfig = Pick<SkillsConfig, 'validation' | 'includeLocation' | 'catalogueFormat'> & {
  disabled?: readonly string[];
};

/**
 * `store`: the store's personal skills (kept per owner; a team skill of the same name wins, as a
 * collision) and its persisted switches (`false` switches a skill off; the configured `disabled`
 * list holds whatever the switches say).
 */
export function buildSnapshot(...inputs: SnapshotInputs): CatalogueSnapshot {
  return runThrough(snapshotSteps(...inputs));
}

/**
 * The same snapshot, built with a turn of the event loop between its steps (a reload of thousands of skills while
 * requests are served).
 */
export function buildSnapshotAsync(...inputs: SnapshotInputs): Promise<CatalogueSnapshot> {
  return runInSlices(snapshotSteps(...inputs));
}

export type SnapshotInputs = [
  result: DiscoveryResult,
  config: SnapshotConfig,
  timing: { scannedAt: Date; durationMs: number },
  commands: CommandDiscoveryResult,
  availability?: ToolAvailability,
  store?: { personal: readonly SkillRecord[]; switches: ReadonlyMap<string, boolean> },
];

function* snapshotSteps(
  ...[result, config, timing, commands, availability, store]: SnapshotInputs
): Generator<void, CatalogueSnapshot> {
  const teamSkills = result.skills.filter((skill) => !isGroupOnly(skill));
  const { offered, unavailable } = splitByTools(teamSkills, availability);
  yield;
  const { switchedOff, sorted, disabled } = applySwitches(offered, config, store?.switches);
  const groupOnly = groupSkillsOf(result.skills, availability, switchedOff);
  yield;
  // Rendered on first use (the next turn, or the metrics when scraped), not as part of the swap.
  const catalogue = catalogueOf(sorted, config);
  const skills = new Map(sorted.map((skill) => [skill.name, skill]));
  yield;
  const personalSplit = splitByTools(store?.personal ?? [], availability);
  const personal =
    personalSplit.offered.length === 0 && personalSplit.unavailable.length === 0
      ? NO_PERSONAL
      : personalByOwner(
          personalSplit.offered,
          personalSplit.unavailable,
          store?.personal ?? [],
          new Map(result.skills.map((skill) => [skill.name, skill])),
          switchedOff,
        );
  const directories = countLoaded(result.directories, sorted);
  yield;
  const index = yield* CatalogueIndex.building(
    [...sorted, ...groupOnly.skills, ...personalRecords(personal.byOwner)],
    config.catalogueFormat,
    config.includeLocation,
  );
  return Object.freeze({
    scannedAt: timing.scannedAt.toISOString(),
    durationMs: timing.durationMs,
    mode: config.validation,
    skills,
    invalid: Object.freeze(result.invalid),
    collisions: Object.freeze([...result.collisions, ...personal.collisions]),
    excluded: Object.freeze(result.excluded),
    unavailable: Object.freeze(unavailable),
    disabled,
    personal: personal.byOwner,
    groupOnly,
    filteredOut: NOTHING_FILTERED,
    warnings: Object.freeze(result.warnings),
    directories: Object.freeze(directories),
    ...commandsOf(commands, skills),
    catalogue,
    index,
  });
}

/** The skills switched off (by the options or the store's switches), and the rest in name order. */
function applySwitches(
  offered: SkillRecord[],
  config: SnapshotConfig,
  switches: ReadonlyMap<string, boolean> | undefined,
): { switchedOff: Set<string>; sorted: SkillRecord[]; disabled: Map<string, SkillRecord> } {
  const switchedOff = new Set(config.disabled ?? []);
  for (const [name, enabled] of switches ?? []) if (!enabled) switchedOff.add(name);
  const sorted = inNameOrder(
    switchedOff.size === 0 ? offered : offered.filter((skill) => !switchedOff.has(skill.name)),
  );
  const disabled = new Map(
    switchedOff.size === 0
      ? []
      : inNameOrder(offered.filter((skill) => switchedOff.has(skill.name))).map((skill) => [skill.name, skill]),
  );
  return { switchedOff, sorted, disabled };
}

/** The commands in name order, and their report with the names they share with skills. */
function commandsOf(commands: CommandDiscoveryResult, skills: ReadonlyMap<string, SkillRecord>) {
  return {
    commands: new Map([...commands.commands].sort(compareByName).map((command) => [command.name, command])),
    commandReport: Object.freeze({
      directories: commands.directories,
      invalid: commands.invalid,
      collisions: [...commands.collisions, ...skillCollisions(commands.commands, skills)],
      warnings: commands.warnings,
    }),
  };
}

/** The skills shared with groups, split as the team's are: offered (name order), switched off, unavailable. */
function groupSkillsOf(
  skills: readonly SkillRecord[],
  availability: ToolAvailability | undefined,
  switchedOff: ReadonlySet<string>,
): GroupSkills {
  const shared = skills.filter(isGroupOnly);
  if (shared.length === 0) return NO_GROUP_SKILLS;
  const { offered, unavailable } = splitByTools(shared, availability);
  const groupsOfPath = new Map(shared.map((skill) => [skill.path, skill.store?.groups ?? new Set<string>()]));
  return Object.freeze({
    skills: inNameOrder(offered.filter((skill) => !switchedOff.has(skill.name))),
    disabled: inNameOrder(offered.filter((skill) => switchedOff.has(skill.name))),
    unavailable: unavailable.map((entry) => ({ entry, groups: groupsOfPath.get(entry.path) ?? new Set<string>() })),
  });
}

const NO_GROUP_SKILLS: GroupSkills = Object.freeze({ skills: [], disabled: [], unavailable: [] });

/** Whether any skill shared with groups is for someone in `groups` (else their view needs no narrowing for it). */
export function holdsGroupSkillsFor(base: CatalogueSnapshot, groups: ReadonlySet<string>): boolean {
  if (groups.size === 0) return false;
  const { skills, disabled, unavailable } = base.groupOnly;
  return (
    skills.some((skill) => sharedWith(skill, groups)) ||
    disabled.some((skill) => sharedWith(skill, groups)) ||
    unavailable.some(({ groups: of }) => [...of].some((group) => groups.has(group)))
  );
}

/** Personal skills of every owner, offered or switched off (a view holds the offered ones). */
function personalRecords(byOwner: ReadonlyMap<string, PersonalSkills>): SkillRecord[] {
  return [...byOwner.values()].flatMap((own) => [...own.skills.values()]);
}

const NOTHING_FILTERED: ReadonlySet<string> = new Set();
const NO_PERSONAL = { byOwner: new Map() as ReadonlyMap<string, PersonalSkills>, collisions: [] as SkillCollision[] };

/** Sorted by name; a scan's skills usually are already, and checking costs less than sorting thousands again. */
function inNameOrder(skills: SkillRecord[]): SkillRecord[] {
  for (let i = 1; i < skills.length; i++)
    if (compareByName(skills[i - 1], skills[i]) > 0) return skills.sort(compareByName);
  return skills;
}

/** The catalogue of some skills in any format, each rendered once, on first use. */
function catalogueOf(sorted: readonly SkillRecord[], config: SnapshotConfig): (format: CatalogueFormat) => string {
  const rendered = new Map<CatalogueFormat, string>();
  return (format) => {
    let text = rendered.get(format);
    if (text === undefined) {
      const entries = sorted.map((skill) => ({
        name: skill.name,
        description: skill.description,
        location: skill.skillFile,
      }));
      text = renderCatalogue(entries, format, config.includeLocation);
      rendered.set(format, text);
    }
    return text;
  };
}

/**
 * Personal skills by owner; one named like a team skill is not offered (a collision says so), one named like a skill
 * shared with groups is offered to its owner unless they are in one of those groups.
 */
function personalByOwner(
  records: readonly SkillRecord[],
  unavailable: readonly UnavailableSkill[],
  all: readonly SkillRecord[],
  team: ReadonlyMap<string, SkillRecord>,
  switchedOff: ReadonlySet<string>,
) {
  const byOwner = new Map<
    string,
    { skills: Map<string, SkillRecord>; disabled: Map<string, SkillRecord>; unavailable: UnavailableSkill[] }
  >();
  const entryOf = (owner: string) => {
    let entry = byOwner.get(owner);
    if (entry === undefined) byOwner.set(owner, (entry = { skills: new Map(), disabled: new Map(), unavailable: [] }));
    return entry;
  };
  const collisions: SkillCollision[] = [];
  for (const record of [...records].sort(compareByName)) {
    const owner = record.store?.ownerId;
    if (owner === undefined || owner === null) continue;
    const teamSkill = team.get(record.name);
    // A skill shared with groups wins in its members' views only (withGroupSkills): reporting it here would tell
    // the owner, in or out of those groups, that a skill of that name exists.
    if (teamSkill !== undefined && !isGroupOnly(teamSkill)) {
      collisions.push({
        name: record.name,
        winner: { path: teamSkill.path, source: teamSkill.source },
        loser: { path: record.path, source: record.source },
      });
      continue;
    }
    const entry = entryOf(owner);
    (switchedOff.has(record.name) ? entry.disabled : entry.skills).set(record.name, record);
  }
  const ownerOfPath = new Map(all.map((record) => [record.path, record.store?.ownerId]));
  for (const entry of unavailable) {
    const owner = ownerOfPath.get(entry.path);
    if (owner !== undefined && owner !== null) entryOf(owner).unavailable.push(entry);
  }
  return { byOwner: byOwner as ReadonlyMap<string, PersonalSkills>, collisions };
}

/** Whether a name matches a filter entry: the name itself, or `prefix*`. */
export function matchesFilterEntry(name: string, entry: string): boolean {
  return entry.endsWith('*') ? name.startsWith(entry.slice(0, -1)) : name === entry;
}

function passes(name: string, filter: SkillFilter): boolean {
  if (filter.include !== undefined && !filter.include.some((entry) => matchesFilterEntry(name, entry))) return false;
  return filter.exclude === undefined || !filter.exclude.some((entry) => matchesFilterEntry(name, entry));
}

/**
 * What one user sees in one chat: the team's skills, the ones shared with the user's `groups` (ids) and the user's
 * personal ones, narrowed by the user's and the chat's filters. Everything else (the scan's reports, commands) is the
 * snapshot's.
 */
export function narrowSnapshot(
  base: CatalogueSnapshot,
  ownerId: string | undefined,
  filters: readonly SkillFilter[],
  config: SnapshotConfig,
  groups: ReadonlySet<string> = NO_GROUPS,
): CatalogueSnapshot {
  const personal = ownerId === undefined ? undefined : base.personal.get(ownerId);
  const own = withGroupSkills(personal, base.groupOnly, groups);
  const candidates =
    own === undefined ? [...base.skills.values()] : inNameOrder([...base.skills.values(), ...own.skills.values()]);
  const filteredOut = new Set<string>();
  const kept = candidates.filter((skill) => {
    const keep = filters.every((filter) => passes(skill.name, filter));
    if (!keep) filteredOut.add(skill.name);
    return keep;
  });
  const disabled =
    own === undefined || own.disabled.size === 0
      ? base.disabled
      : new Map([...base.disabled, ...own.disabled].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const catalogue = catalogueOf(kept, config);
  const unavailable =
    own === undefined || own.unavailable.length === 0 ? base.unavailable : [...base.unavailable, ...own.unavailable];
  return Object.freeze({
    ...base,
    skills: new Map(kept.map((skill) => [skill.name, skill])),
    disabled,
    unavailable,
    filteredOut,
    catalogue,
  });
}

const NO_GROUPS: ReadonlySet<string> = new Set();

/** The user's personal skills with the ones shared with their groups added (undefined when there are neither). */
function withGroupSkills(
  personal: PersonalSkills | undefined,
  groupOnly: GroupSkills,
  groups: ReadonlySet<string>,
): PersonalSkills | undefined {
  if (groups.size === 0) return personal;
  const skills = groupOnly.skills.filter((skill) => sharedWith(skill, groups));
  const disabled = groupOnly.disabled.filter((skill) => sharedWith(skill, groups));
  const unavailable = groupOnly.unavailable
    .filter(({ groups: of }) => [...of].some((group) => groups.has(group)))
    .map(({ entry }) => entry);
  if (skills.length === 0 && disabled.length === 0 && unavailable.length === 0) return personal;
  return {
    skills: new Map([...(personal?.skills ?? []), ...skills.map((skill) => [skill.name, skill] as const)]),
    disabled: new Map([...(personal?.disabled ?? []), ...disabled.map((skill) => [skill.name, skill] as const)]),
    unavailable: [...(personal?.unavailable ?? []), ...unavailable],
  };
}

function splitByTools(
  skills: readonly SkillRecord[],
  availability: ToolAvailability | undefined,
): { offered: SkillRecord[]; unavailable: UnavailableSkill[] } {
  if (availability === undefined) return { offered: [...skills], unavailable: [] };
  const offered: SkillRecord[] = [];
  const unavailable: UnavailableSkill[] = [];
  for (const skill of skills) {
    const missing = skill.toolsRequired === undefined ? undefined : checkToolsRequired(skill, availability);
    if (missing === undefined) offered.push(skill);
    else unavailable.push(missing);
  }
  return { offered, unavailable: unavailable.sort(compareByName) };
}

/** Each directory's count of skills in the catalogue, after tools_required and programmatic skills took their share. */
function countLoaded(directories: readonly DirectoryReport[], skills: readonly SkillRecord[]): DirectoryReport[] {
  const counts = new Map<string, number>();
  for (const skill of skills) counts.set(skill.source, (counts.get(skill.source) ?? 0) + 1);
  return directories.map((directory) => ({ ...directory, skills: counts.get(directory.configured) ?? 0 }));
}

/** A skill by the name a user or model gave, exact or NFKC-normalised (how names are compared everywhere). */
export function findSkill(skills: ReadonlyMap<string, SkillRecord>, name: string): SkillRecord | undefined {
  return skills.get(name) ?? skills.get(name.trim().normalize('NFKC'));
}

/** A command named like a loaded skill takes `/name`; the skill stays reachable as `$name` and through the tools. */
function skillCollisions(
  commands: readonly CommandRecord[],
  skills: ReadonlyMap<string, SkillRecord>,
): CommandCollision[] {
  return commands.flatMap((command) => {
    const skill = skills.get(command.name);
    if (skill === undefined) return [];
    return [
      {
        name: command.name,
        kind: 'skill' as const,
        winner: { path: command.path, source: command.source },
        loser: { path: skill.path, source: skill.source },
      },
    ];
  });
}
