import { NOT_A_MAPPING, parseFrontmatterYaml, type FrontmatterData } from '../skill/frontmatter-parser.js';
import { locateFrontmatter } from '../skill/frontmatter-reader.js';

/**
 * A command file (`<name>.md`, the aloop design): YAML frontmatter with `description`, optional
 * `requires-skills` and `argument-hint`, then a prompt template. Pure: text in, verdict out.
 */
export interface ParsedCommand {
  readonly description: string;
  readonly argumentHint: string | null;
  readonly requiredSkills: readonly string[];
  readonly template: string;
  readonly warnings: readonly string[];
}

export type CommandFileVerdict = { ok: true; command: ParsedCommand } | { ok: false; errors: string[] };

export const COMMAND_NAME_PATTERN = /^[a-z0-9]+(?:[-_][a-z0-9]+)*$/;
export const COMMAND_LIMITS = {
  nameChars: 64,
  descriptionChars: 1024,
  argumentHintChars: 200,
  requiredSkills: 20,
} as const;

const KNOWN_FIELDS = ['description', 'requires-skills', 'argument-hint'] as const;
const EXAMPLE_SKILLS = '`requires-skills: [pdf, git-commit]`';
const EMPTY_FRONTMATTER = { ok: true, data: {}, warnings: [] } as const;
const NOT_A_MAPPING_MESSAGE =
  'The frontmatter must be a YAML mapping of fields, e.g. `description: Reviews a pull request`';

/**
 * Checks a command file's text; `name` is its file name without `.md`. Every problem is reported, not just the first.
 */
export function parseCommandFile(name: string, text: string): CommandFileVerdict {
  const errors = [...nameErrors(name), ...textErrors(text)];
  const split = splitFrontmatter(text);
  if ('error' in split) return { ok: false, errors: [...errors, split.error] };
  // An empty block is an empty mapping here, so the message is the missing description, not the YAML type.
  const parsed = isBlankYaml(split.yaml) ? EMPTY_FRONTMATTER : parseFrontmatterYaml(split.yaml);
  if (!parsed.ok)
    return { ok: false, errors: [...errors, parsed.error === NOT_A_MAPPING ? NOT_A_MAPPING_MESSAGE : parsed.error] };
  const fields = readFields(parsed.data, name);
  errors.push(...fields.errors);
  if (split.body === '')
    errors.push('The file has no prompt template after its frontmatter; write the prompt below the closing ---');
  if (errors.length > 0) return { ok: false, errors };
  return {
    ok: true,
    command: {
      description: fields.description!,
      argumentHint: fields.argumentHint,
      requiredSkills: fields.requiredSkills,
      template: split.body,
      warnings: [...parsed.warnings, ...fields.warnings],
    },
  };
}

/**
 * Fills a template in one pass, so text from `args` is never expanded again: `$ARGUMENTS` is `args`
 * trimmed, `$1`…`$9` its whitespace-separated words (empty when missing; `$10` is `$1` then `0`),
 * `$$` is a literal `$`; any other `$` stays as written. Undefined when the result would be longer
 * than `maxChars`: a template repeating `$ARGUMENTS` could otherwise turn one long message into
 * gigabytes, so the expansion stops as soon as it passes the bound.
 */
export function expandTemplate(
  template: string,
  args: string,
  maxChars = Number.POSITIVE_INFINITY,
): string | undefined {
  const all = args.trim();
  const words = all === '' ? [] : all.split(/\s+/);
  let length = template.length;
  try {
    return template.replace(/\$(\$|ARGUMENTS|[1-9])/g, (match: string, token: string) => {
      const value = token === '$' ? '$' : token === 'ARGUMENTS' ? all : (words[Number(token) - 1] ?? '');
      length += value.length - match.length;
      if (length > maxChars) throw TOO_LONG;
      return value;
    });
  } catch (error) {
    if (error === TOO_LONG) return undefined;
    throw error;
  }
}

const TOO_LONG = Symbol('expansion too long');

function nameErrors(name: string): string[] {
  const errors: string[] = [];
  const length = [...name].length;
  if (length > COMMAND_LIMITS.nameChars) {
    errors.push(
      `Command name '${name}' is ${length} characters; at most ` +
        `${COMMAND_LIMITS.nameChars} are allowed: rename the file to a shorter name`,
    );
  }
  if (!COMMAND_NAME_PATTERN.test(name)) {
    errors.push(
      `Command name '${name}' (the file name without .md) may hold only lowercase letters a-z and digits, with ` +
        `single '-' or '_' between them: rename the file, e.g. to review-pr.md`,
    );
  }
  return errors;
}

function textErrors(text: string): string[] {
  const errors: string[] = [];
  const nul = text.indexOf('\0');
  if (nul >= 0)
    errors.push(`The file contains a NUL byte (at character ${nul}); a command file must be plain UTF-8 text`);
  // With the u flag a paired surrogate is one code point, so this matches only unpaired halves.
  if (/[\uD800-\uDFFF]/u.test(text))
    errors.push('The file contains an unpaired UTF-16 surrogate; a command file must be valid UTF-8 text');
  return errors;
}

function splitFrontmatter(text: string): { yaml: string; body: string } | { error: string } {
  const bytes = Buffer.from(text, 'utf8');
  const location = locateFrontmatter(bytes, bytes.length, true);
  if (location.kind === 'missing-open') {
    return {
      error:
        'A command file must start with YAML frontmatter: a first line ---, fields such as `description: …`, ' +
        'then a line ---',
    };
  }
  if (location.kind === 'unclosed')
    return { error: 'The frontmatter is not closed: add a line that is exactly --- after its last field' };
  return {
    yaml: bytes.toString('utf8', location.yamlStart, location.yamlEnd),
    body: bytes.toString('utf8', location.bodyStart).trim(),
  };
}

function isBlankYaml(yaml: string): boolean {
  return yaml.split('\n').every((line) => /^\s*(?:#.*)?$/.test(line));
}

interface Fields {
  description: string | undefined;
  argumentHint: string | null;
  requiredSkills: string[];
  errors: string[];
  warnings: string[];
}

function readFields(data: FrontmatterData, name: string): Fields {
  const fields: Fields = { description: undefined, argumentHint: null, requiredSkills: [], errors: [], warnings: [] };
  const description = readDescription(data.description);
  if ('error' in description) fields.errors.push(description.error);
  else fields.description = description.value;
  const hint = readArgumentHint(data['argument-hint']);
  if ('error' in hint) fields.errors.push(hint.error);
  else fields.argumentHint = hint.value;
  const skills = readRequiredSkills(data['requires-skills']);
  if ('errors' in skills) fields.errors.push(...skills.errors);
  else fields.requiredSkills = skills.value;
  fields.warnings.push(...unknownFieldWarnings(data, name));
  return fields;
}

function readDescription(value: unknown): { value: string } | { error: string } {
  if (value === undefined || value === null)
    return {
      error: "Missing required field 'description': add `description: <what the command does>` to the frontmatter",
    };
  if (typeof value !== 'string')
    return {
      error: "Field 'description' must be text, not a list or mapping: write `description: <what the command does>`",
    };
  const trimmed = value.trim();
  if (trimmed === '')
    return {
      error: "Field 'description' is empty: say what the command does, e.g. `description: Reviews a pull request`",
    };
  const length = [...trimmed].length;
  if (length > COMMAND_LIMITS.descriptionChars) {
    return {
      error:
        `Field 'description' is ${length} characters; at most ` +
        `${COMMAND_LIMITS.descriptionChars} are allowed: shorten it, and move details into the template`,
    };
  }
  return { value: trimmed };
}

function readArgumentHint(value: unknown): { value: string | null } | { error: string } {
  if (value === undefined || value === null) return { value: null };
  if (Array.isArray(value)) {
    return {
      error:
        "Field 'argument-hint' must be text, but YAML reads [ ] as a list: quote it, e.g. `argument-hint: " +
        '"[pr-number] [focus]"`',
    };
  }
  if (typeof value !== 'string')
    return {
      error: 'Field \'argument-hint\' must be text, not a mapping: write e.g. `argument-hint: "<pr-number> [focus]"`',
    };
  const trimmed = value.trim();
  const length = [...trimmed].length;
  if (length > COMMAND_LIMITS.argumentHintChars) {
    return {
      error:
        `Field 'argument-hint' is ${length} characters; at most ` +
        `${COMMAND_LIMITS.argumentHintChars} are allowed: shorten it`,
    };
  }
  return { value: trimmed === '' ? null : trimmed };
}

/** A YAML list of names, or one string of names separated by spaces or commas; duplicates dropped, order kept. */
function readRequiredSkills(value: unknown): { value: string[] } | { errors: string[] } {
  if (value === undefined || value === null) return { value: [] };
  let names: string[];
  if (typeof value === 'string') {
    names = value.split(/[\s,]+/).filter((part) => part !== '');
  } else if (Array.isArray(value)) {
    const errors: string[] = [];
    names = [];
    value.forEach((item, index) => {
      if (typeof item === 'string' && item.trim() !== '') names.push(item.trim());
      else
        errors.push(
          `Field 'requires-skills' item ${index + 1} must be a non-empty skill name, not ` +
            `${describeValue(item)}: write e.g. ${EXAMPLE_SKILLS}`,
        );
    });
    if (errors.length > 0) return { errors };
  } else {
    return {
      errors: [
        `Field 'requires-skills' must be a list of skill names: write e.g. ${EXAMPLE_SKILLS} or ` +
          `\`requires-skills: pdf git-commit\``,
      ],
    };
  }
  const unique = [...new Set(names)];
  if (unique.length > COMMAND_LIMITS.requiredSkills) {
    return {
      errors: [
        `Field 'requires-skills' names ${unique.length} skills; at most ` +
          `${COMMAND_LIMITS.requiredSkills} are allowed: trim the list or split the command`,
      ],
    };
  }
  return { value: unique };
}

function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'an empty entry';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return 'an empty string';
}

function unknownFieldWarnings(data: FrontmatterData, name: string): string[] {
  const warnings: string[] = [];
  for (const key of Object.keys(data)) {
    if ((KNOWN_FIELDS as readonly string[]).includes(key)) continue;
    if (key === 'name') {
      if (data.name !== name)
        warnings.push(
          `Field 'name' is ignored: a command is named by its file, so this one is /${name}; rename the file to ` +
            `change it`,
        );
      continue;
    }
    const hyphenated = key.toLowerCase().replaceAll('_', '-');
    const suggestion = (KNOWN_FIELDS as readonly string[]).includes(hyphenated)
      ? ` (did you mean '${hyphenated}'?)`
      : '';
    warnings.push(`Unknown field '${key}' is ignored${suggestion}; command files know ${KNOWN_FIELDS.join(', ')}`);
  }
  return warnings;
}
