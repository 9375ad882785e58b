import type { ValidationMode } from '../options/skills-options.schema.js';
import type { FrontmatterData } from './frontmatter-parser.js';

/**
 * The Agent Skills frontmatter rules, with the reference validator's (skills-ref) messages so users
 * recognise them. Lengths are counted in code points, as Python's len() does.
 * https://agentskills.io/specification#frontmatter
 */
export const ALLOWED_FIELDS = ['allowed-tools', 'compatibility', 'description', 'license', 'metadata', 'name'] as const;
export const MAX_NAME_LENGTH = 64;
export const MAX_DESCRIPTION_LENGTH = 1024;
export const MAX_COMPATIBILITY_LENGTH = 500;

const ALLOWED = new Set<string>(ALLOWED_FIELDS);
const NAME_CHARACTERS = /^[\p{L}\p{N}-]+$/u;

export interface SkillFrontmatter {
  name: string;
  description: string;
  license?: string;
  compatibility?: string;
  metadata?: Readonly<Record<string, string>>;
  'allowed-tools'?: string;
  /** Fields outside the specification, kept as written (only outside strict mode). */
  [field: string]: unknown;
}

export interface ValidationResult {
  errors: string[];
  warnings: string[];
  /** Present when the skill loads (no errors). */
  frontmatter?: SkillFrontmatter;
  /** The description shown in the catalogue (cut to 1024 code points in lenient mode). */
  catalogueDescription?: string;
}

/** Code points, as Python's len() counts; a string never has more code points than UTF-16 units. */
export function codePointLength(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

function exceeds(text: string, max: number): number | undefined {
  if (text.length <= max) return undefined;
  const length = codePointLength(text);
  return length > max ? length : undefined;
}

/** NFKC leaves ASCII unchanged; skipping ICU for it is most of the cost of checking a name. */
function nfkc(text: string): string {
  return ASCII.test(text) ? text : text.normalize('NFKC');
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII starts at U+0000
const ASCII = /^[\x00-\x7f]*$/;
/** A name that passes every character rule at once (the common case). */
const SIMPLE_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

function cutToCodePoints(text: string, max: number): string {
  return [...text].slice(0, max).join('');
}

/** Python's repr of the sorted allowed-field list, as the reference prints it. */
const ALLOWED_LIST_TEXT = `[${ALLOWED_FIELDS.map((f) => `'${f}'`).join(', ')}]`;

export function validateFrontmatter(
  data: FrontmatterData,
  directoryName: string,
  mode: ValidationMode,
): ValidationResult {
  const findings = newFindings(mode);
  checkFieldNames(data, mode, findings);
  const name = readName(data, directoryName, mode, findings);
  const catalogueDescription = readDescription(data, findings);
  const compatibility = readCompatibility(data, findings);
  const { errors, warnings } = findings;
  if (errors.length > 0 || name === undefined || catalogueDescription === undefined) return { errors, warnings };
  return {
    errors,
    warnings,
    frontmatter: normalizeFrontmatter(data, name, compatibility, warnings),
    catalogueDescription,
  };
}

/** One validation's messages, in the order its rules run. */
interface Findings {
  errors: string[];
  warnings: string[];
  /** A rule the specification makes an error, which lenient mode downgrades to a warning. */
  report(message: string): void;
}

function newFindings(mode: ValidationMode): Findings {
  const errors: string[] = [];
  const warnings: string[] = [];
  const lenient = mode === 'lenient';
  return { errors, warnings, report: (message) => (lenient ? warnings : errors).push(message) };
}

/** Fields outside the specification: an error in strict mode, else a warning. */
function checkFieldNames(data: FrontmatterData, mode: ValidationMode, findings: Findings): void {
  let unexpected: string[] | undefined;
  for (const field in data) {
    if (!ALLOWED.has(field)) (unexpected ??= []).push(field);
  }
  if (unexpected !== undefined) {
    unexpected.sort();
    const message =
      `Unexpected fields in frontmatter: ${unexpected.join(', ')}. Only ` + `${ALLOWED_LIST_TEXT} are allowed.`;
    (mode === 'strict' ? findings.errors : findings.warnings).push(message);
  }
}

/** The skill's name, NFKC-normalised; in lenient mode the directory's name when it has none. */
function readName(
  data: FrontmatterData,
  directoryName: string,
  mode: ValidationMode,
  findings: Findings,
): string | undefined {
  let name: string | undefined;
  if (!('name' in data)) {
    findings.report('Missing required field in frontmatter: name');
  } else {
    const nameErrors = nameProblems(data.name, directoryName);
    for (const message of nameErrors.problems) findings.report(message);
    name = nameErrors.normalized;
  }
  if (mode === 'lenient' && (name === undefined || name === '')) {
    name = nfkc(directoryName);
    findings.warnings.push(`Using the directory name '${name}' as the skill name`);
  }
  return name;
}

/**
 * The description as the catalogue shows it (cut to the limit when lenient mode lets a longer one load), or undefined
 * when there is none.
 */
function readDescription(data: FrontmatterData, findings: Findings): string | undefined {
  if (!('description' in data)) {
    findings.errors.push('Missing required field in frontmatter: description');
    return undefined;
  }
  if (typeof data.description !== 'string' || data.description.trim() === '') {
    findings.errors.push("Field 'description' must be a non-empty string");
    return undefined;
  }
  const description = data.description;
  const length = exceeds(description, MAX_DESCRIPTION_LENGTH);
  if (length === undefined) return description;
  findings.report(`Description exceeds ${MAX_DESCRIPTION_LENGTH} character limit (${length} chars)`);
  return cutToCodePoints(description, MAX_DESCRIPTION_LENGTH);
}

/** The compatibility field when it is a string (kept, even over the limit in lenient mode). */
function readCompatibility(data: FrontmatterData, findings: Findings): string | undefined {
  if (!('compatibility' in data)) return undefined;
  if (typeof data.compatibility !== 'string') {
    findings.report("Field 'compatibility' must be a string");
    return undefined;
  }
  const length = exceeds(data.compatibility, MAX_COMPATIBILITY_LENGTH);
  if (length !== undefined)
    findings.report(`Compatibility exceeds ${MAX_COMPATIBILITY_LENGTH} character limit (${length} chars)`);
  return data.compatibility;
}

/** The frontmatter of a skill that loads, its optional fields normalised (warnings for those dropped). */
function normalizeFrontmatter(
  data: FrontmatterData,
  name: string,
  compatibility: string | undefined,
  warnings: string[],
): SkillFrontmatter {
  // `data` is the parser's fresh object, owned by this call: normalise it in place, not by copying.
  const frontmatter = data as SkillFrontmatter;
  frontmatter.name = name;
  if (compatibility === undefined) delete frontmatter.compatibility;
  if ('metadata' in data) setOrDelete(frontmatter, 'metadata', normalizeMetadata(data.metadata, warnings));
  for (const field of ['license', 'allowed-tools'] as const) {
    if (field in data) setOrDelete(frontmatter, field, normalizeStringField(field, data[field], warnings));
  }
  return frontmatter;
}

function nameProblems(value: unknown, directoryName: string): { problems: string[]; normalized?: string } {
  if (typeof value !== 'string' || value.trim() === '')
    return { problems: ["Field 'name' must be a non-empty string"] };
  const name = nfkc(value.trim());
  const directory = nfkc(directoryName);
  if (SIMPLE_NAME.test(name) && name.length <= MAX_NAME_LENGTH && name === directory)
    return { problems: [], normalized: name };
  const problems: string[] = [];
  const length = exceeds(name, MAX_NAME_LENGTH);
  if (length !== undefined)
    problems.push(`Skill name '${name}' exceeds ${MAX_NAME_LENGTH} character limit (${length} chars)`);
  if (name !== name.toLowerCase()) problems.push(`Skill name '${name}' must be lowercase`);
  if (name.startsWith('-') || name.endsWith('-')) problems.push('Skill name cannot start or end with a hyphen');
  if (name.includes('--')) problems.push('Skill name cannot contain consecutive hyphens');
  if (!NAME_CHARACTERS.test(name))
    problems.push(`Skill name '${name}' contains invalid characters. Only letters, digits, and hyphens are allowed.`);
  if (directory !== name) problems.push(`Directory name '${directoryName}' must match skill name '${name}'`);
  return { problems, normalized: name };
}

function setOrDelete(target: SkillFrontmatter, field: string, value: unknown): void {
  if (value === undefined) delete target[field];
  else target[field] = value;
}

/** `metadata` maps strings to strings; other values become their JSON text, with a warning. */
function normalizeMetadata(value: unknown, warnings: string[]): Record<string, string> | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    warnings.push("Field 'metadata' must be a mapping of strings to strings; it was ignored");
    return undefined;
  }
  const result = value as Record<string, unknown>;
  for (const key in result) {
    if (typeof result[key] !== 'string') {
      result[key] = JSON.stringify(result[key]);
      warnings.push(`metadata.${key} is not a string; stored as its JSON text`);
    }
  }
  return result as Record<string, string>;
}

function normalizeStringField(field: string, value: unknown, warnings: string[]): string | undefined {
  if (typeof value === 'string') return value;
  if (value === null) {
    warnings.push(`Field '${field}' is empty; it was ignored`);
    return undefined;
  }
  if (field === 'allowed-tools' && Array.isArray(value) && value.every((v) => typeof v === 'string')) {
    warnings.push("Field 'allowed-tools' should be a space-separated string; the list was joined with spaces");
    return value.join(' ');
  }
  warnings.push(`Field '${field}' must be a string; stored as its JSON text`);
  return JSON.stringify(value);
}
