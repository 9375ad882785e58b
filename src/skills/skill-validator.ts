import type { ValidationMode } from '../config/app-config.js';
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

export function codePointLength(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

function cutToCodePoints(text: string, max: number): string {
  return [...text].slice(0, max).join('');
}

/** Python's repr of the sorted allowed-field list, as the reference prints it. */
const ALLOWED_LIST_TEXT = `[${ALLOWED_FIELDS.map((f) => `'${f}'`).join(', ')}]`;

export function validateFrontmatter(data: FrontmatterData, directoryName: string, mode: ValidationMode): ValidationResult {
  const errors: string[] = [];
  const warnings: string[] = [];
  const lenient = mode === 'lenient';
  /** A rule the specification makes an error, which lenient mode downgrades to a warning. */
  const report = (message: string, lenientDowngrades: boolean) => (lenient && lenientDowngrades ? warnings : errors).push(message);

  const unexpected = Object.keys(data).filter((field) => !ALLOWED.has(field)).sort();
  if (unexpected.length > 0) {
    const message = `Unexpected fields in frontmatter: ${unexpected.join(', ')}. Only ${ALLOWED_LIST_TEXT} are allowed.`;
    (mode === 'strict' ? errors : warnings).push(message);
  }

  let name: string | undefined;
  if (!('name' in data)) {
    report('Missing required field in frontmatter: name', true);
  } else {
    const nameErrors = nameProblems(data.name, directoryName);
    for (const message of nameErrors.problems) report(message, true);
    name = nameErrors.normalized;
  }
  if (lenient && (name === undefined || name === '')) {
    name = directoryName.normalize('NFKC');
    warnings.push(`Using the directory name '${name}' as the skill name`);
  }

  let description: string | undefined;
  let catalogueDescription: string | undefined;
  if (!('description' in data)) {
    errors.push('Missing required field in frontmatter: description');
  } else if (typeof data.description !== 'string' || data.description.trim() === '') {
    errors.push("Field 'description' must be a non-empty string");
  } else {
    description = data.description;
    catalogueDescription = description;
    const length = codePointLength(description);
    if (length > MAX_DESCRIPTION_LENGTH) {
      report(`Description exceeds ${MAX_DESCRIPTION_LENGTH} character limit (${length} chars)`, true);
      catalogueDescription = cutToCodePoints(description, MAX_DESCRIPTION_LENGTH);
    }
  }

  let compatibility: string | undefined;
  if ('compatibility' in data) {
    if (typeof data.compatibility !== 'string') {
      report("Field 'compatibility' must be a string", true);
    } else {
      compatibility = data.compatibility;
      const length = codePointLength(compatibility);
      if (length > MAX_COMPATIBILITY_LENGTH) report(`Compatibility exceeds ${MAX_COMPATIBILITY_LENGTH} character limit (${length} chars)`, true);
    }
  }

  if (errors.length > 0 || name === undefined || description === undefined) return { errors, warnings };

  const frontmatter: SkillFrontmatter = { ...data, name, description };
  if (compatibility === undefined) delete frontmatter.compatibility;
  if ('metadata' in data) setOrDelete(frontmatter, 'metadata', normalizeMetadata(data.metadata, warnings));
  for (const field of ['license', 'allowed-tools'] as const) {
    if (field in data) setOrDelete(frontmatter, field, normalizeStringField(field, data[field], warnings));
  }
  return { errors, warnings, frontmatter, catalogueDescription };
}

function nameProblems(value: unknown, directoryName: string): { problems: string[]; normalized?: string } {
  if (typeof value !== 'string' || value.trim() === '') return { problems: ["Field 'name' must be a non-empty string"] };
  const name = value.trim().normalize('NFKC');
  const problems: string[] = [];
  const length = codePointLength(name);
  if (length > MAX_NAME_LENGTH) problems.push(`Skill name '${name}' exceeds ${MAX_NAME_LENGTH} character limit (${length} chars)`);
  if (name !== name.toLowerCase()) problems.push(`Skill name '${name}' must be lowercase`);
  if (name.startsWith('-') || name.endsWith('-')) problems.push('Skill name cannot start or end with a hyphen');
  if (name.includes('--')) problems.push('Skill name cannot contain consecutive hyphens');
  if (!NAME_CHARACTERS.test(name)) problems.push(`Skill name '${name}' contains invalid characters. Only letters, digits, and hyphens are allowed.`);
  if (directoryName.normalize('NFKC') !== name) problems.push(`Directory name '${directoryName}' must match skill name '${name}'`);
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
  const result: Record<string, string> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (typeof inner === 'string') {
      result[key] = inner;
    } else {
      result[key] = JSON.stringify(inner);
      warnings.push(`metadata.${key} is not a string; stored as its JSON text`);
    }
  }
  return result;
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
