import type { ValidationMode } from '../options/skills-options.schema.js';
import { type FrontmatterData, parseFrontmatterYaml } from './frontmatter-parser.js';
import { FRONTMATTER_MESSAGES, locateFrontmatter, MAX_FRONTMATTER_BYTES } from './frontmatter-reader.js';
import { type SkillFrontmatter, validateFrontmatter } from './skill-validator.js';
import { readToolsRequired, TOOLS_REQUIRED_FIELD } from './tool-requirements.js';

const NO_WARNINGS: readonly string[] = Object.freeze([]);

/** A frontmatter's verdict: the skill it describes, or why it does not load. */
export type CheckedFrontmatter =
  | {
      ok: true;
      frontmatter: SkillFrontmatter;
      description: string;
      warnings: readonly string[];
      toolsRequired?: readonly string[];
    }
  | { ok: false; errors: string[]; warnings: readonly string[]; name?: string };

/**
 * The YAML between a SKILL.md's `---` lines, parsed with the bounded YAML parser and validated
 * against the specification in `mode` (with `tools_required`); `directoryName` is the folder it
 * lives in. Discovery and `parseSkillMd` both decide with it.
 */
export function checkFrontmatter(yaml: string, directoryName: string, mode: ValidationMode): CheckedFrontmatter {
  const parsed = parseFrontmatterYaml(yaml, { lenient: mode === 'lenient' });
  if (!parsed.ok) return { ok: false, errors: [parsed.error], warnings: NO_WARNINGS };
  const result = validateFrontmatter(parsed.data, directoryName, mode);
  const required = declaresToolsRequired(result.frontmatter) ? readToolsRequired(result.frontmatter) : undefined;
  const warnings = joinWarnings(
    parsed.warnings,
    required === undefined ? result.warnings : [...result.warnings, ...required.warnings],
  );
  if (result.frontmatter === undefined || result.catalogueDescription === undefined) {
    return {
      ok: false,
      errors: result.errors,
      warnings,
      ...(typeof parsed.data.name === 'string'
        ? { name: (parsed.data as FrontmatterData & { name: string }).name }
        : {}),
    };
  }
  return {
    ok: true,
    frontmatter: result.frontmatter,
    description: result.catalogueDescription,
    warnings,
    ...(required?.tools === undefined ? {} : { toolsRequired: required.tools }),
  };
}

/** A cheap test first: almost no skill declares tools_required, and a scan reads thousands. */
function declaresToolsRequired(frontmatter: SkillFrontmatter | undefined): frontmatter is SkillFrontmatter {
  return (
    frontmatter !== undefined &&
    (TOOLS_REQUIRED_FIELD in frontmatter ||
      (frontmatter.metadata !== undefined && TOOLS_REQUIRED_FIELD in frontmatter.metadata))
  );
}

function joinWarnings(a: readonly string[], b: readonly string[]): readonly string[] {
  return a.length + b.length === 0 ? NO_WARNINGS : [...a, ...b];
}

/** A SKILL.md read by the rules discovery applies: its frontmatter checked, its body, and every problem. */
export type ParsedSkillMd =
  | {
      ok: true;
      frontmatter: SkillFrontmatter;
      description: string;
      body: string;
      warnings: readonly string[];
      toolsRequired?: readonly string[];
    }
  | { ok: false; errors: string[]; warnings: readonly string[] };

/**
 * Reads the text of a SKILL.md as discovery reads one on disk: the frontmatter between `---` lines
 * (closed within the first 64 KiB), checked by `checkFrontmatter` in `mode`; `directoryName` is the
 * folder it would live in (the name must match it outside lenient mode). Pure: no file is read.
 */
export function parseSkillMd(text: string, directoryName: string, mode: ValidationMode = 'standard'): ParsedSkillMd {
  const bytes = Buffer.from(text, 'utf8');
  const head = Math.min(bytes.length, MAX_FRONTMATTER_BYTES);
  const location = locateFrontmatter(bytes, head, head === bytes.length);
  if (location.kind === 'missing-open')
    return { ok: false, errors: [FRONTMATTER_MESSAGES.missingOpen], warnings: NO_WARNINGS };
  if (location.kind === 'unclosed')
    return {
      ok: false,
      errors: [head === bytes.length ? FRONTMATTER_MESSAGES.notClosed : FRONTMATTER_MESSAGES.notClosedWithinCap],
      warnings: NO_WARNINGS,
    };
  const checked = checkFrontmatter(bytes.toString('utf8', location.yamlStart, location.yamlEnd), directoryName, mode);
  if (!checked.ok) return { ok: false, errors: checked.errors, warnings: checked.warnings };
  return { ...checked, body: bytes.toString('utf8', location.bodyStart) };
}
