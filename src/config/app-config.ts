import type { ResolvedOf, ValuesOf } from '@skillhost/core';
import type { CONFIG_SETTINGS, MODEL_SETTINGS } from './config-schema.js';

/**
 * The typed, validated, frozen configuration every module reads (never `process.env`): derived
 * from the settings tree (config-schema.ts), keys in camelCase, folders resolved, plus what the
 * loader adds (the models, the default model, each skill's own settings).
 */
export {
  AUTH_MODES,
  type AuthMode,
  LOG_FORMATS,
  LOG_LEVELS,
  type LogFormat,
  type LogLevel,
  type ModelProvider,
} from './config-schema.js';
export {
  CATALOGUE_FORMATS,
  type CatalogueFormat,
  HARD_LIMITS,
  TOOL_STYLES,
  type ToolStyle,
  VALIDATION_MODES,
  type ValidationMode,
} from '@skillhost/core';
export type { SkillDirectory } from '@skillhost/core';

type Settings = ResolvedOf<typeof CONFIG_SETTINGS>['app'];

export type SkillsConfig = Settings['skills'] & {
  /** `[app.skills.settings.NAME]`: each skill's own settings, handed to its code as `ctx.config`. */
  settings: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  /** `[app.skills.mirrors.NAME]`: sources imported again every interval, by name. */
  mirrors: Readonly<Record<string, MirrorConfig>>;
};

/** One `[app.skills.mirrors.NAME]` table. */
export interface MirrorConfig {
  name: string;
  source: string;
  /** As written (`15m`). */
  interval: string;
  intervalMs: number;
}
export type ScriptsConfig = Settings['scripts'];
export type DatabaseConfig = Settings['database'];
/**
 * `[app.mcp]`: the skills served over MCP and the discovery index; a catalogue budget or count of 0 is `[app.skills]`'
 * own.
 */
export type McpConfig = Settings['mcp'];
/** `[app.gateway]`: OpenAI's API at `/openai/v1`, with the team's skills. */
export type GatewayConfig = Settings['gateway'];

export type ModelConfig = ResolvedOf<typeof MODEL_SETTINGS> & {
  /** The section name under [app.models]; what requests pass as `model`. */
  name: string;
  /** Resolved from `api_key_env` at start-up; never logged. */
  apiKey: string | undefined;
};

/** `[app.telemetry]`: OpenTelemetry's exports, off while `endpoint` is empty. */
export type TelemetryConfig = Settings['telemetry'] & {
  /** `headers` and `headers_env`'s, the latter with the values their variables held at start-up; never logged. */
  exportHeaders: Readonly<Record<string, string>>;
};

export interface AppConfig {
  app: Omit<Settings, 'defaultModel' | 'skills' | 'telemetry'> & {
    telemetry: TelemetryConfig;
    /** `[app] default_model`, else the first model: undefined with none configured. */
    defaultModel: string | undefined;
    skills: SkillsConfig;
    models: Readonly<Record<string, ModelConfig>>;
  };
}

/** The file-and-environment tree once valid: TOML keys, defaults filled in. */
export type ConfigValues = ValuesOf<typeof CONFIG_SETTINGS>;

export const APP_CONFIG = Symbol('APP_CONFIG');
