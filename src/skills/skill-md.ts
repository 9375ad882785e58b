import type { ValidationMode } from '../config/app-config.js';
import { parseFrontmatterYaml } from './frontmatter-parser.js';
import { FRONTMATTER_MESSAGES, locateFrontmatter, MAX_FRONTMATTER_BYTES } from './frontmatter-reader.js';
import { type SkillFrontmatter, validateFrontmatter } from './skill-validator.js';

/** A SKILL.md read by the rules discovery applies: its frontmatter checked, its body, and every problem. */
export type ParsedSkillMd =
  | { ok: true; frontmatter: SkillFrontmatter; description: string; body: string; warnings: string[] }
  | { ok: false; errors: string[]; warnings: string[] };

/**
 * Reads the text of a SKILL.md the way discovery reads one on disk: the frontmatter between `---`
 * lines (within the first 64 KiB), parsed with the bounded YAML parser and validated against the
 * specification in `mode`; `directoryName` is the folder it would live in (the name must match it
 * outside lenient mode). Pure: no file is read.
 */
export function parseSkillMd(text: string, directoryName: string, mode: ValidationMode = 'standard'): ParsedSkillMd {
  const bytes = Buffer.from(text, 'utf8');
  const head = Math.min(bytes.length, MAX_FRONTMATTER_BYTES);
  const location = locateFrontmatter(bytes, head, head === bytes.length);
  if (location.kind === 'missing-open') return { ok: false, errors: [FRONTMATTER_MESSAGES.missingOpen], warnings: [] };
  if (location.kind === 'unclosed') return { ok: false, errors: [head === bytes.length ? FRONTMATTER_MESSAGES.notClosed : FRONTMATTER_MESSAGES.notClosedWithinCap], warnings: [] };
  const parsed = parseFrontmatterYaml(bytes.toString('utf8', location.yamlStart, location.yamlEnd), { lenient: mode === 'lenient' });
  if (!parsed.ok) return { ok: false, errors: [parsed.error], warnings: [] };
  const result = validateFrontmatter(parsed.data, directoryName, mode);
  const warnings = [...parsed.warnings, ...result.warnings];
  if (result.frontmatter === undefined || result.catalogueDescription === undefined) return { ok: false, errors: result.errors, warnings };
  return { ok: true, frontmatter: result.frontmatter, description: result.catalogueDescription, body: bytes.toString('utf8', location.bodyStart), warnings };
}
