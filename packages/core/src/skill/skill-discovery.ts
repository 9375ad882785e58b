import { type Dirent, readdirSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_SKILL_DIRECTORIES } from '../options/skills-config.js';
import type { ValidationMode } from '../options/skills-options.schema.js';
import type { SkillDirectory } from '../options/setting.js';
import { inspectCodeModule } from './code-module.reader.js';
import { type FolderInspection, inspectSkillFolder } from './skill-folder.reader.js';
import { runInSlices, runThrough } from '../util/sliced-work.js';
import { compareByName, SKIPPED_FOLDERS } from './skill-order.js';
import { type FolderDigests, type FolderLimits, folderVersion } from './skill-folder-files.js';
import type { DirectoryReport, InvalidSkill, SkillCollision, SkillRecord } from './skill.types.js';

export interface DiscoveryOptions {
  directories: readonly SkillDirectory[];
  /**
   * Operator-trusted folders scanned after `directories` (which win a name collision): there, and
   * only there, a `skill.mjs` beside SKILL.md makes the skill a code skill.
   */
  codeDirectories?: readonly SkillDirectory[];
  mode: ValidationMode;
  /** 1 = immediate children of each directory; deeper levels are searched only below non-skill folders. */
  maxDepth: number;
  maxSkills: number;
  /**
   * When given, each loaded skill gets the digest of its files (the version the store would give
   * it), read within these limits; a larger skill gets none. Reloads use it to say what changed.
   */
  versionLimits?: FolderLimits;
  /** Digests remembered from earlier scans (unchanged folders are not read again). */
  digests?: FolderDigests;
}

export interface DiscoveryResult {
  /** Loaded skills in discovery order (directory precedence, then name). */
  skills: SkillRecord[];
  invalid: InvalidSkill[];
  collisions: SkillCollision[];
  /** Valid skills left out because max_skills was reached. */
  excluded: { name: string; path: string }[];
  warnings: string[];
  directories: DirectoryReport[];
}

/** Scans the directories in order, then the code directories; earlier directories win name collisions. */
export function discoverSkills(options: DiscoveryOptions): DiscoveryResult {
  return runThrough(discoverySteps(options));
}

/**
 * The same scan, giving the event loop a turn whenever it has worked for `sliceMs`: a reload of
 * thousands of skills (all synchronous file system calls) must not stall the requests served
 * meanwhile. The result is the one `discoverSkills` gives.
 */
export function discoverSkillsAsync(options: DiscoveryOptions, sliceMs = 4): Promise<DiscoveryResult> {
  return runInSlices(discoverySteps(options), sliceMs);
}

/** What one scan collects as it goes. */
interface ScanState {
  options: DiscoveryOptions;
  warnings: string[];
  found: SkillRecord[];
  invalid: InvalidSkill[];
  /** Only nested scans can revisit a folder through a symlink; immediate children need no guard. */
  visited: Set<string> | undefined;
}

/** The scan, one folder a step: the caller decides whether to run it through or pause between steps. */
function* discoverySteps(options: DiscoveryOptions): Generator<void, DiscoveryResult> {
  const state: ScanState = {
    options,
    warnings: [],
    found: [],
    invalid: [],
    visited: options.maxDepth > 1 ? new Set() : undefined,
  };
  const exists: boolean[] = [];
  const scanned = [
    ...options.directories.map((directory) => ({ directory, code: false })),
    ...(options.codeDirectories ?? []).map((directory) => ({ directory, code: true })),
  ];
  for (const { directory, code } of scanned) {
    const entries = readFolder(directory.path);
    exists.push(Array.isArray(entries));
    if (!Array.isArray(entries)) {
      const defaults = code ? [] : DEFAULT_SKILL_DIRECTORIES;
      const warning = unreadableFolderWarning(code ? 'Code skills' : 'Skills', directory, entries, defaults);
      if (warning !== undefined) state.warnings.push(warning);
      continue;
    }
    warnIfSkillFolder(state.warnings, directory, entries, code);
    const root = directory.path.endsWith('/') ? directory.path.slice(0, -1) : directory.path;
    yield* scanFolder(state, { directory, code }, root, entries, 1);
  }
  options.digests?.sweep();
  return summarise(state, scanned, exists);
}

/** An easy mistake: the folder of one skill given where the folder of skills was meant. */
function warnIfSkillFolder(warnings: string[], directory: SkillDirectory, entries: Dirent[], code: boolean): void {
  if (!entries.some((entry) => entry.name === 'SKILL.md')) return;
  warnings.push(
    `${code ? 'Code skills' : 'Skills'} directory '${directory.configured}' ` +
      `(${directory.path}) holds a SKILL.md itself: skills are its subfolders, so list its parent folder ` +
      `to load it`,
  );
}

/** One folder's children: each a skill, an invalid skill, or (within `maxDepth`) a folder to look into. */
function* scanFolder(
  state: ScanState,
  where: { directory: SkillDirectory; code: boolean },
  folder: string,
  children: Dirent[],
  depth: number,
): Generator<void> {
  const { options, found, invalid, visited } = state;
  const { directory, code } = where;
  for (const entry of sortByName(children)) {
    yield;
    if (SKIPPED_FOLDERS.has(entry.name) || !isFolder(folder, entry)) continue;
    const path = `${folder}/${entry.name}`;
    if (visited !== undefined && !firstVisit(visited, path)) continue;
    const folderInspection = inspectSkillFolder(path, directory.configured, options.mode, entry.name);
    const inspection =
      code && folderInspection?.kind === 'valid' ? withCodeModule(folderInspection.skill) : folderInspection;
    if (inspection?.kind === 'valid')
      found.push(
        options.versionLimits === undefined
          ? inspection.skill
          : withDigest(inspection.skill, options.versionLimits, options.digests),
      );
    else if (inspection?.kind === 'invalid') invalid.push(inspection.invalid);
    else if (depth < options.maxDepth) {
      const nested = readFolder(path);
      if (Array.isArray(nested)) yield* scanFolder(state, where, path, nested, depth + 1);
      // A folder that may hold skills but cannot be listed is reported, not passed over.
      else if (isPermissionError(nested))
        invalid.push({
          path,
          source: directory.configured,
          errors: [`The folder cannot be listed to look for skills in it: ${folderProblem(nested)}`],
          warnings: [],
        });
    }
  }
}

/** The scan's result: precedence applied, the skills over `maxSkills` left out, and a line per folder. */
function summarise(
  state: ScanState,
  scanned: { directory: SkillDirectory; code: boolean }[],
  exists: boolean[],
): DiscoveryResult {
  const { options, warnings, found, invalid } = state;
  const { skills, collisions, excluded } = applyPrecedence(found, options.maxSkills);
  if (excluded.length > 0) {
    const first = excluded
      .slice(0, 5)
      .map((e) => e.name)
      .join(', ');
    warnings.push(
      `max_skills (${options.maxSkills}) reached: ${excluded.length} valid skill(s) were not loaded (first: ` +
        `${first}); raise app.skills.max_skills to load them`,
    );
  }
  const directories = scanned.map(({ directory, code }, index) => ({
    configured: directory.configured,
    path: directory.path,
    exists: exists[index],
    ...(code ? { code } : {}),
    skills: skills.filter((skill) => skill.source === directory.configured).length,
    invalid: invalid.filter((entry) => entry.source === directory.configured).length,
  }));
  return { skills, invalid, collisions, excluded, warnings, directories };
}

/** The skill with the digest of the files it holds now (none when they are past the limits). */
function withDigest(skill: SkillRecord, limits: FolderLimits, digests: FolderDigests | undefined): SkillRecord {
  const version = digests === undefined ? folderVersion(skill.path, limits) : digests.versionOf(skill.path, limits);
  return 'digest' in version ? { ...skill, digest: version.digest, files: version.files } : skill;
}

/**
 * A valid skill of a code directory, with its `skill.mjs` when it has one; a `skill.mjs` that is not a file makes it
 * invalid.
 */
function withCodeModule(skill: SkillRecord): FolderInspection {
  const module = inspectCodeModule(skill.path);
  switch (module.kind) {
    case 'none':
      return { kind: 'valid', skill };
    case 'module':
      return { kind: 'valid', skill: { ...skill, code: { module: module.module } } };
    case 'invalid':
      return {
        kind: 'invalid',
        invalid: {
          path: skill.path,
          source: skill.source,
          name: skill.name,
          errors: [module.problem],
          warnings: skill.warnings,
        },
      };
  }
}

/** First occurrence of a name wins; then the first `maxSkills` winners load, the rest are excluded. */
export function applyPrecedence(found: readonly SkillRecord[], maxSkills: number) {
  const byName = new Map<string, SkillRecord>();
  const skills: SkillRecord[] = [];
  const collisions: SkillCollision[] = [];
  const excluded: { name: string; path: string }[] = [];
  for (const skill of found) {
    const winner = byName.get(skill.name);
    if (winner !== undefined) {
      collisions.push({
        name: skill.name,
        winner: { path: winner.path, source: winner.source },
        loser: { path: skill.path, source: skill.source },
      });
      continue;
    }
    byName.set(skill.name, skill);
    if (skills.length < maxSkills) skills.push(skill);
    else excluded.push({ name: skill.name, path: skill.path });
  }
  return { skills, collisions, excluded };
}

/** The folder's entries, or why they cannot be read. */
export function readFolder(path: string): Dirent[] | NodeJS.ErrnoException {
  try {
    return readdirSync(path, { withFileTypes: true });
  } catch (error) {
    return error as NodeJS.ErrnoException;
  }
}

function isPermissionError(error: NodeJS.ErrnoException): boolean {
  return error.code === 'EACCES' || error.code === 'EPERM';
}

/**
 * The warning for a directory that cannot be listed. A default one that does not exist is none:
 * the defaults name the usual places, most of which a server does not have.
 */
export function unreadableFolderWarning(
  kind: string,
  directory: SkillDirectory,
  error: NodeJS.ErrnoException,
  defaults: readonly string[],
): string | undefined {
  const missing = error.code === 'ENOENT' || error.code === 'ENOTDIR';
  if (missing && defaults.includes(directory.configured)) return undefined;
  return `${kind} directory '${directory.configured}' (${directory.path}) ${folderProblem(error)}; skipped`;
}

/** Why a directory to scan cannot be listed, for a warning: `<directory> ${folderProblem(error)}`. */
export function folderProblem(error: NodeJS.ErrnoException): string {
  switch (error.code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return 'does not exist or is not a readable folder';
    case 'EACCES':
    case 'EPERM':
      return (
        `cannot be read: permission denied (${error.code}); the server's user needs read and search (r-x) access ` +
        `to it`
      );
    default:
      return `cannot be read (${error.code ?? error.message})`;
  }
}

function sortByName(entries: Dirent[]): Dirent[] {
  return entries.sort(compareByName);
}

/** Real folders, and symlinks that lead to one (users link skills in from elsewhere). */
function isFolder(parent: string, entry: Dirent): boolean {
  if (entry.isDirectory()) return true;
  if (!entry.isSymbolicLink()) return false;
  try {
    return statSync(join(parent, entry.name)).isDirectory();
  } catch (error) {
    // A link into a place the server may not look is reported when its SKILL.md cannot be read.
    return isPermissionError(error as NodeJS.ErrnoException);
  }
}

function firstVisit(visited: Set<string>, path: string): boolean {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return false;
  }
  if (visited.has(real)) return false;
  visited.add(real);
  return true;
}
