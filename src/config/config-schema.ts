import { CATALOGUE_FORMATS, HARD_LIMITS, VALIDATION_MODES } from './app-config.js';

/**
 * Every configuration key in one table: its TOML path, environment override, default and rule.
 * The loader, the validation messages and the README's reference are all read from here.
 */
export type SettingKind =
  | { type: 'integer'; min: number; max: number }
  | { type: 'boolean' }
  | { type: 'string'; nonEmpty?: boolean }
  | { type: 'enum'; values: readonly string[] }
  | { type: 'string-list' };

export interface Setting {
  /** Dotted TOML path, e.g. `app.skills.enabled`. */
  key: string;
  env: string;
  default: unknown;
  kind: SettingKind;
  description: string;
}

export const DEFAULT_SKILL_DIRECTORIES = ['./.skills', './.agents/skills', '~/.agents/skills', '~/.skillhost/skills'];

export const SETTINGS: readonly Setting[] = [
  { key: 'app.port', env: 'SKILLHOST_PORT', default: 3000, kind: { type: 'integer', min: 0, max: 65535 }, description: 'HTTP port (0 picks a free one).' },
  { key: 'app.host', env: 'SKILLHOST_HOST', default: '127.0.0.1', kind: { type: 'string', nonEmpty: true }, description: 'Interface to listen on; `0.0.0.0` for all.' },
  { key: 'app.skills.enabled', env: 'SKILLHOST_SKILLS_ENABLED', default: false, kind: { type: 'boolean' }, description: 'Master switch. Off: no discovery runs and every skills route answers 404 `SKILLS_DISABLED`.' },
  { key: 'app.skills.directories', env: 'SKILLHOST_SKILLS_DIRECTORIES', default: DEFAULT_SKILL_DIRECTORIES, kind: { type: 'string-list' }, description: 'Skill folders to scan, in precedence order (earlier wins a name collision). `~` is the home folder; relative paths resolve from the project root (the working directory).' },
  { key: 'app.skills.validation', env: 'SKILLHOST_SKILLS_VALIDATION', default: 'standard', kind: { type: 'enum', values: VALIDATION_MODES }, description: '`strict` (the reference validator: unknown fields are errors), `standard` (unknown fields are warnings) or `lenient` (also loads name mismatches and over-long fields with warnings).' },
  { key: 'app.skills.catalogue_format', env: 'SKILLHOST_SKILLS_CATALOGUE_FORMAT', default: 'json', kind: { type: 'enum', values: CATALOGUE_FORMATS }, description: 'How the catalogue is rendered for the model: `json`, `xml` or `markdown`.' },
  { key: 'app.skills.include_location', env: 'SKILLHOST_SKILLS_INCLUDE_LOCATION', default: false, kind: { type: 'boolean' }, description: "Add each skill's `SKILL.md` path to the json and xml catalogues (for hosts whose model reads files itself)." },
  { key: 'app.skills.max_skills', env: 'SKILLHOST_SKILLS_MAX_SKILLS', default: 200, kind: { type: 'integer', min: 1, max: HARD_LIMITS.maxSkills }, description: 'Valid skills past this count (in discovery order) are excluded with a warning.' },
  { key: 'app.skills.max_skill_md_bytes', env: 'SKILLHOST_SKILLS_MAX_SKILL_MD_BYTES', default: 200_000, kind: { type: 'integer', min: 1024, max: HARD_LIMITS.skillMdBytes }, description: 'A `SKILL.md` body past this many bytes is cut on activation, with a notice.' },
  { key: 'app.skills.max_resource_bytes', env: 'SKILLHOST_SKILLS_MAX_RESOURCE_BYTES', default: 2_000_000, kind: { type: 'integer', min: 1024, max: HARD_LIMITS.resourceBytes }, description: 'A resource past this many bytes is cut, with a notice; only the shown part is read.' },
  { key: 'app.skills.max_depth', env: 'SKILLHOST_SKILLS_MAX_DEPTH', default: 1, kind: { type: 'integer', min: 1, max: HARD_LIMITS.maxDepth }, description: '1 = immediate children of each directory hold skills; up to 6 for nested collections (deeper levels skip `.git` and `node_modules`).' },
];

/** The configuration reference table in the README; a test keeps the README equal to this. */
export function renderConfigReference(): string {
  const kindText = (kind: SettingKind): string => {
    switch (kind.type) {
      case 'integer':
        return `integer ${kind.min}–${kind.max}`;
      case 'boolean':
        return 'boolean';
      case 'string':
        return 'string';
      case 'enum':
        return kind.values.map((v) => `\`${v}\``).join(' \\| ');
      case 'string-list':
        return 'list of strings';
    }
  };
  const rows = SETTINGS.map((s) => {
    const [section, key] = [s.key.split('.').slice(0, -1).join('.'), s.key.split('.').pop()];
    return `| \`[${section}]\` \`${key}\` | \`${s.env}\` | ${kindText(s.kind)} | \`${JSON.stringify(s.default)}\` | ${s.description} |`;
  });
  return ['| key | environment | type | default | meaning |', '|---|---|---|---|---|', ...rows].join('\n');
}
