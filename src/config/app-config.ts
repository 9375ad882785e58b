/** The typed, validated, frozen configuration every module reads (never `process.env`). */
export type ValidationMode = 'strict' | 'standard' | 'lenient';
export type CatalogueFormat = 'json' | 'xml' | 'markdown';

export const VALIDATION_MODES: readonly ValidationMode[] = ['strict', 'standard', 'lenient'];
export const CATALOGUE_FORMATS: readonly CatalogueFormat[] = ['json', 'xml', 'markdown'];

export interface SkillDirectory {
  /** As written in the configuration. */
  configured: string;
  /** Absolute: `~` expanded, relative paths resolved from the project root. */
  path: string;
}

export interface SkillsConfig {
  enabled: boolean;
  directories: readonly SkillDirectory[];
  validation: ValidationMode;
  catalogueFormat: CatalogueFormat;
  includeLocation: boolean;
  maxSkills: number;
  maxSkillMdBytes: number;
  maxResourceBytes: number;
  maxDepth: number;
}

export interface AppConfig {
  app: {
    port: number;
    host: string;
    skills: SkillsConfig;
  };
}

export const APP_CONFIG = Symbol('APP_CONFIG');

/** Memory bounds that hold whatever the configuration says. */
export const HARD_LIMITS = {
  skillMdBytes: 8 * 1024 * 1024,
  resourceBytes: 16 * 1024 * 1024,
  maxSkills: 1_000_000,
  maxDepth: 6,
} as const;
