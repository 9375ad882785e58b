import { closeSync, openSync, readSync } from 'node:fs';
import { basename } from 'node:path';
import type { ValidationMode } from '../config/app-config.js';
import { parseFrontmatterYaml, type FrontmatterData } from './frontmatter-parser.js';
import { FRONTMATTER_MESSAGES, locateFrontmatter, MAX_FRONTMATTER_BYTES } from './frontmatter-reader.js';
import { validateFrontmatter } from './skill-validator.js';
import type { InvalidSkill, SkillRecord } from './skill.types.js';

/**
 * Reads one skill folder's SKILL.md head and validates it. Synchronous on purpose: a scan opens
 * thousands of small files, and sync open/read/close costs ~8 µs each against 40–80 µs through
 * fs.promises (measured; see bench/results). Only the frontmatter is read, never the body.
 */
export type FolderInspection =
  | { kind: 'valid'; skill: SkillRecord }
  | { kind: 'invalid'; invalid: InvalidSkill };

const FIRST_READ_BYTES = 4096;
/** One buffer for every scan: reads are synchronous, so no two scans ever share it at once. */
const headBuffer = Buffer.allocUnsafe(MAX_FRONTMATTER_BYTES);
const NO_WARNINGS: readonly string[] = Object.freeze([]);

const LOWERCASE_FILE_WARNING = 'Found skill.md; the specification names the file SKILL.md';

interface Head {
  file: string;
  /** Found as skill.md (lenient mode only). */
  lowercase: boolean;
  bytes: number;
  atEof: boolean;
}

/** Returns undefined when the folder holds no SKILL.md (so it is not a skill candidate at all). */
export function inspectSkillFolder(folder: string, source: string, mode: ValidationMode, folderName = basename(folder)): FolderInspection | undefined {
  const head = readHead(folder, mode);
  if (head === undefined) return undefined;
  const invalid = (errors: string[], warnings: readonly string[] = NO_WARNINGS, name?: string): FolderInspection =>
    ({ kind: 'invalid', invalid: { path: folder, source, name, errors, warnings } });
  const location = locateFrontmatter(headBuffer, head.bytes, head.atEof);
  if (location.kind === 'missing-open') return invalid([FRONTMATTER_MESSAGES.missingOpen]);
  if (location.kind === 'unclosed') {
    return invalid([head.atEof ? FRONTMATTER_MESSAGES.notClosed : FRONTMATTER_MESSAGES.notClosedWithinCap]);
  }
  const text = headBuffer.toString('utf8', location.yamlStart, location.yamlEnd);
  const parsed = parseFrontmatterYaml(text, { lenient: mode === 'lenient' });
  if (!parsed.ok) return invalid([parsed.error]);
  const result = validateFrontmatter(parsed.data, folderName, mode);
  const warnings = joinWarnings(head.lowercase ? [LOWERCASE_FILE_WARNING] : NO_WARNINGS, parsed.warnings, result.warnings);
  if (result.frontmatter === undefined || result.catalogueDescription === undefined) {
    return invalid(result.errors, warnings, declaredName(parsed.data));
  }
  return {
    kind: 'valid',
    skill: {
      name: result.frontmatter.name,
      description: result.catalogueDescription,
      path: folder,
      skillFile: head.file,
      source,
      frontmatter: result.frontmatter,
      warnings,
    },
  };
}

function declaredName(data: FrontmatterData): string | undefined {
  return typeof data.name === 'string' ? data.name : undefined;
}

function joinWarnings(a: readonly string[], b: readonly string[], c: readonly string[]): readonly string[] {
  return a.length + b.length + c.length === 0 ? NO_WARNINGS : [...a, ...b, ...c];
}

function readHead(folder: string, mode: ValidationMode): Head | undefined {
  const names = mode === 'lenient' ? ['SKILL.md', 'skill.md'] : ['SKILL.md'];
  for (const name of names) {
    // Plain concatenation: `folder` is already absolute and normalised, and path.join costs ~1 µs a skill.
    const file = `${folder}/${name}`;
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch {
      continue;
    }
    try {
      return readFrontmatterBytes(fd, file, name !== 'SKILL.md');
    } catch {
      // EISDIR: a directory named SKILL.md is not a skill file.
      continue;
    } finally {
      closeSync(fd);
    }
  }
  return undefined;
}

/** Reads 4 KiB, and the rest of the first 64 KiB only when the closing fence was not in it. */
function readFrontmatterBytes(fd: number, file: string, lowercase: boolean): Head {
  let bytes = readSync(fd, headBuffer, 0, FIRST_READ_BYTES, 0);
  let atEof = bytes < FIRST_READ_BYTES;
  if (!atEof && locateFrontmatter(headBuffer, bytes, false).kind === 'unclosed') {
    bytes += readSync(fd, headBuffer, bytes, MAX_FRONTMATTER_BYTES - bytes, bytes);
    atEof = bytes < MAX_FRONTMATTER_BYTES || readSync(fd, Buffer.alloc(1), 0, 1, bytes) === 0;
  }
  return { file, lowercase, bytes, atEof };
}
