import { closeSync, type Dirent, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_COMMAND_DIRECTORIES } from '../options/skills-config.js';
import type { SkillDirectory } from '../options/setting.js';
import { readFolder, unreadableFolderWarning } from '../skill/skill-discovery.js';
import { describeSpecialFile, OPEN_FLAGS, openProblem } from '../skill/skill-folder.reader.js';
import { compareByName } from '../skill/skill-order.js';
import { parseCommandFile } from './command-file.js';
import type { CommandCollision, CommandRecord, InvalidCommand } from './command.types.js';

/** A command file is read whole (it is the prompt), so it is capped. */
export const MAX_COMMAND_FILE_BYTES = 256 * 1024;

export interface CommandDirectoryReport {
  readonly configured: string;
  readonly path: string;
  readonly exists: boolean;
  /** Commands loaded from this directory (after collisions). */
  readonly commands: number;
  readonly invalid: number;
}

export interface CommandDiscoveryResult {
  /** Loaded commands in name order. */
  readonly commands: readonly CommandRecord[];
  readonly invalid: readonly InvalidCommand[];
  /** Command files of one name in several directories (`kind: 'command'`); the earlier directory wins. */
  readonly collisions: readonly CommandCollision[];
  readonly warnings: readonly string[];
  readonly directories: readonly CommandDirectoryReport[];
}

/** For a scan that looks at no commands directory (benchmarks, tools that only want skills). */
export const NO_COMMANDS: CommandDiscoveryResult = Object.freeze({
  commands: [],
  invalid: [],
  collisions: [],
  warnings: [],
  directories: [],
});

type FileInspection = { kind: 'valid'; command: CommandRecord } | { kind: 'invalid'; invalid: InvalidCommand };

/**
 * Scans each directory's `*.md` files (not subfolders, not dotfiles) in order. Synchronous and
 * non-blocking like the skill scan: only regular files are read, so a FIFO, socket or device
 * named `x.md` is reported, never waited on.
 */
export function discoverCommands(directories: readonly SkillDirectory[]): CommandDiscoveryResult {
  const warnings: string[] = [];
  const found: CommandRecord[] = [];
  const invalid: InvalidCommand[] = [];
  const exists: boolean[] = [];
  for (const directory of directories) {
    const entries = readFolder(directory.path);
    exists.push(Array.isArray(entries));
    if (!Array.isArray(entries)) {
      const warning = unreadableFolderWarning('Commands', directory, entries, DEFAULT_COMMAND_DIRECTORIES);
      if (warning !== undefined) warnings.push(warning);
      continue;
    }
    for (const entry of entries.filter(isCommandFileName).sort(compareByName)) {
      const inspection = inspectCommandFile(directory, entry);
      if (inspection?.kind === 'valid') found.push(inspection.command);
      else if (inspection?.kind === 'invalid') invalid.push(inspection.invalid);
    }
  }
  const { commands, collisions } = applyCommandPrecedence(found);
  const report = directories.map((directory, index) => ({
    configured: directory.configured,
    path: directory.path,
    exists: exists[index],
    commands: commands.filter((command) => command.source === directory.configured).length,
    invalid: invalid.filter((entry) => entry.source === directory.configured).length,
  }));
  return { commands: commands.sort(compareByName), invalid, collisions, warnings, directories: report };
}

function isCommandFileName(entry: Dirent): boolean {
  return entry.name.endsWith('.md') && !entry.name.startsWith('.');
}

/** First occurrence of a name wins; each later one is a collision. */
function applyCommandPrecedence(found: readonly CommandRecord[]): {
  commands: CommandRecord[];
  collisions: CommandCollision[];
} {
  const byName = new Map<string, CommandRecord>();
  const collisions: CommandCollision[] = [];
  for (const command of found) {
    const winner = byName.get(command.name);
    if (winner === undefined) byName.set(command.name, command);
    else {
      collisions.push({
        name: command.name,
        kind: 'command',
        winner: { path: winner.path, source: winner.source },
        loser: { path: command.path, source: command.source },
      });
    }
  }
  return { commands: [...byName.values()], collisions };
}

/** Undefined when the entry is not a command file after all (a folder named `x.md`, a file gone since the listing). */
function inspectCommandFile(directory: SkillDirectory, entry: Dirent): FileInspection | undefined {
  const path = join(directory.path, entry.name);
  const name = entry.name.slice(0, -'.md'.length);
  const invalid = (errors: string[]): FileInspection => ({
    kind: 'invalid',
    invalid: { path, source: directory.configured, name, errors },
  });
  const read = readCommandText(path, entry);
  if (read === undefined) return undefined;
  if ('problem' in read) return invalid([read.problem]);
  const verdict = parseCommandFile(name, read.text);
  if (!verdict.ok) return invalid(verdict.errors);
  return { kind: 'valid', command: { name, ...verdict.command, path, source: directory.configured } };
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Opens with O_NONBLOCK and checks the descriptor, so only a regular file is ever read. */
function readCommandText(path: string, entry: Dirent): { text: string } | { problem: string } | undefined {
  const file = entry.name;
  let fd: number;
  try {
    fd = openSync(path, OPEN_FLAGS);
  } catch (error) {
    const problem = openProblem(file, error as NodeJS.ErrnoException);
    if (problem !== undefined) return { problem };
    return entry.isSymbolicLink()
      ? { problem: `${file} is a symbolic link to a file that does not exist; point it at a command file or remove it` }
      : undefined;
  }
  try {
    const info = fstatSync(fd);
    if (info.isDirectory()) return undefined;
    if (!info.isFile())
      return { problem: `${file} is ${describeSpecialFile(info)}, not a regular file; replace it with a text file` };
    const bytes = info.size > MAX_COMMAND_FILE_BYTES ? undefined : readAtMost(fd, info.size, MAX_COMMAND_FILE_BYTES);
    if (bytes === undefined) return { problem: tooLargeProblem(file, info.size) };
    return decodeUtf8(file, bytes);
  } catch (error) {
    return { problem: `${file} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` };
  } finally {
    closeSync(fd);
  }
}

function decodeUtf8(file: string, bytes: Buffer): { text: string } | { problem: string } {
  try {
    return { text: utf8.decode(bytes) };
  } catch {
    return { problem: `${file} is not valid UTF-8 text; save it as UTF-8` };
  }
}

/** The file's bytes, or undefined when it holds more than `limit` (it may have grown since fstat said `expected`). */
function readAtMost(fd: number, expected: number, limit: number): Buffer | undefined {
  let buffer = Buffer.allocUnsafe(Math.min(expected, limit) + 1);
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      if (length > limit) return undefined;
      const grown = Buffer.allocUnsafe(Math.min(buffer.length * 2, limit + 1));
      buffer.copy(grown, 0, 0, length);
      buffer = grown;
    }
    const read = readSync(fd, buffer, length, buffer.length - length, length);
    if (read === 0) return buffer.subarray(0, length);
    length += read;
  }
}

function tooLargeProblem(file: string, size: number): string {
  const shown = size > MAX_COMMAND_FILE_BYTES ? `${size} bytes` : `more than ${MAX_COMMAND_FILE_BYTES} bytes`;
  return (
    `${file} is ${shown}; a command file may be at most ${MAX_COMMAND_FILE_BYTES / 1024} KiB ` +
    `(${MAX_COMMAND_FILE_BYTES} bytes): shorten the prompt, or move long material into a skill the command requires`
  );
}
