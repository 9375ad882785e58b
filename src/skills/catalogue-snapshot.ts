import type { CatalogueFormat, SkillsConfig, ValidationMode } from '../config/app-config.js';
import { renderCatalogue } from './catalogue-renderer.js';
import type { CommandDirectoryReport, CommandDiscoveryResult } from './commands/command-discovery.js';
import type { CommandCollision, CommandRecord, InvalidCommand } from './commands/command.types.js';
import { compareByName } from './skill-order.js';
import type { DiscoveryResult } from './skill-discovery.js';
import type { DirectoryReport, InvalidSkill, SkillCollision, SkillRecord, UnavailableSkill } from './skill.types.js';
import { checkToolsRequired, type ToolAvailability } from './tool-requirements.js';

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
  /** Valid skills switched off (`[app.skills] disabled`): in no catalogue, and the registry answers SKILL_DISABLED for them. */
  readonly disabled: ReadonlyMap<string, SkillRecord>;
  readonly warnings: readonly string[];
  readonly directories: readonly DirectoryReport[];
  /** Loaded commands, by name, iterated in name order. */
  readonly commands: ReadonlyMap<string, CommandRecord>;
  readonly commandReport: CommandReport;
  /** The catalogue in a format; the configured one is rendered with the snapshot, others on first use. */
  catalogue(format: CatalogueFormat): string;
}

/** What the scan of the commands directories saw, for operators. */
export interface CommandReport {
  readonly directories: readonly CommandDirectoryReport[];
  readonly invalid: readonly InvalidCommand[];
  /** Between command files (`kind: 'command'`), then commands named like a loaded skill (`kind: 'skill'`, the skill loses `/name`). */
  readonly collisions: readonly CommandCollision[];
  readonly warnings: readonly string[];
}

/**
 * `availability`: the tools the chats have; a skill whose `tools_required` names another is left out
 * (into `unavailable`). Without it nothing is checked (the CLI's listing of folders).
 */
export function buildSnapshot(
  result: DiscoveryResult,
  config: Pick<SkillsConfig, 'validation' | 'includeLocation' | 'catalogueFormat'> & { disabled?: readonly string[] },
  timing: { scannedAt: Date; durationMs: number },
  commands: CommandDiscoveryResult,
  availability?: ToolAvailability,
): CatalogueSnapshot {
  const { offered, unavailable } = splitByTools(result.skills, availability);
  const switchedOff = new Set(config.disabled ?? []);
  const sorted = offered.filter((skill) => !switchedOff.has(skill.name)).sort(compareByName);
  const disabled = new Map(offered.filter((skill) => switchedOff.has(skill.name)).sort(compareByName).map((skill) => [skill.name, skill]));
  const entries = sorted.map((skill) => ({ name: skill.name, description: skill.description, location: skill.skillFile }));
  const rendered = new Map<CatalogueFormat, string>();
  const catalogue = (format: CatalogueFormat) => {
    let text = rendered.get(format);
    if (text === undefined) {
      text = renderCatalogue(entries, format, config.includeLocation);
      rendered.set(format, text);
    }
    return text;
  };
  catalogue(config.catalogueFormat);
  const skills = new Map(sorted.map((skill) => [skill.name, skill]));
  return Object.freeze({
    scannedAt: timing.scannedAt.toISOString(),
    durationMs: timing.durationMs,
    mode: config.validation,
    skills,
    invalid: Object.freeze(result.invalid),
    collisions: Object.freeze(result.collisions),
    excluded: Object.freeze(result.excluded),
    unavailable: Object.freeze(unavailable),
    disabled,
    warnings: Object.freeze(result.warnings),
    directories: Object.freeze(countLoaded(result.directories, sorted)),
    commands: new Map([...commands.commands].sort(compareByName).map((command) => [command.name, command])),
    commandReport: Object.freeze({
      directories: commands.directories,
      invalid: commands.invalid,
      collisions: [...commands.collisions, ...skillCollisions(commands.commands, skills)],
      warnings: commands.warnings,
    }),
    catalogue,
  });
}

function splitByTools(skills: readonly SkillRecord[], availability: ToolAvailability | undefined): { offered: SkillRecord[]; unavailable: UnavailableSkill[] } {
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
function skillCollisions(commands: readonly CommandRecord[], skills: ReadonlyMap<string, SkillRecord>): CommandCollision[] {
  return commands.flatMap((command) => {
    const skill = skills.get(command.name);
    if (skill === undefined) return [];
    return [{ name: command.name, kind: 'skill' as const, winner: { path: command.path, source: command.source }, loser: { path: skill.path, source: skill.source } }];
  });
}
