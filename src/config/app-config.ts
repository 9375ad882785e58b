/** The typed, validated, frozen configuration every module reads (never `process.env`). */
export type ValidationMode = 'strict' | 'standard' | 'lenient';
export type CatalogueFormat = 'json' | 'xml' | 'markdown';

export type AuthMode = 'auto' | 'api_key' | 'none';
export const AUTH_MODES: readonly AuthMode[] = ['auto', 'api_key', 'none'];

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
export const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'];
export type LogFormat = 'auto' | 'json' | 'pretty';
export const LOG_FORMATS: readonly LogFormat[] = ['auto', 'json', 'pretty'];

export const VALIDATION_MODES: readonly ValidationMode[] = ['strict', 'standard', 'lenient'];
export const CATALOGUE_FORMATS: readonly CatalogueFormat[] = ['json', 'xml', 'markdown'];

/** How the model is offered skills (see README "Tool styles"); catalogue, cards and persistence stay the same. */
export type ToolStyle = 'skillhost' | 'activate_skill' | 'load_skill' | 'use_skill';
export const TOOL_STYLES: readonly ToolStyle[] = ['skillhost', 'activate_skill', 'load_skill', 'use_skill'];

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
  /** The most tokens (o200k) and skills the catalogue in a prompt may take; past either, each turn lists a ranked subset. */
  catalogueBudgetTokens: number;
  catalogueMaxSkills: number;
  /** When the model is offered skills.search: with a partial catalogue, or always. */
  searchTool: 'auto' | 'always';
  maxSkillMdBytes: number;
  maxResourceBytes: number;
  maxDepth: number;
  explicitPrefixes: readonly string[];
  /** Skills switched off by name. */
  disabled: readonly string[];
  /** Reload on a change in the directories. */
  watch: boolean;
  /** Unpacked bytes a skill may hold to be installed or pinned. */
  maxInstallBytes: number;
  /** Personal skills one user may have installed. */
  maxPersonalSkills: number;
  /** Where store versions are unpacked (absolute). */
  storeDirectory: string;
  /** Whether shared store skills win name collisions with the skills directories. */
  storePrecedence: 'first' | 'last';
  syncIntervalMs: number;
  /** Operator-trusted folders of code skills (`skill.mjs`). */
  codeDirectories: readonly SkillDirectory[];
  codeTimeoutMs: number;
  codeMemoryMb: number;
  /** `[app.skills.settings.NAME]`: each skill's own settings, handed to its code as `ctx.config`. */
  settings: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

export interface ScriptsConfig {
  enabled: boolean;
  requireAllowedTools: boolean;
  /** Whether scripts of personal store skills may run. */
  personalSkills: boolean;
  timeoutMs: number;
  maxOutputBytes: number;
  memoryMb: number;
  maxProcesses: number;
  /** Sandboxes at once on this instance. */
  maxConcurrent: number;
  /** Per user, per turn; 0: no cap of their own. */
  maxConcurrentPerUser: number;
  maxConcurrentPerTurn: number;
}

export type ModelProvider = 'openai-compatible' | 'anthropic';

export interface ModelConfig {
  /** The section name under [app.models]; what requests pass as `model`. */
  name: string;
  provider: ModelProvider;
  model: string;
  baseUrl: string;
  /** Resolved from `api_key_env` at start-up; never logged. */
  apiKey: string | undefined;
  apiKeyEnv: string;
  tools: boolean;
  timeoutMs: number;
  maxRetries: number;
}

export interface DatabaseConfig {
  /** Empty: run the embedded PostgreSQL. */
  url: string;
  poolSize: number;
  embeddedDir: string;
  embeddedPort: number;
  /** Statement and connection-wait limit; past it the query fails as DATABASE_UNAVAILABLE. */
  statementTimeoutMs: number;
}

export interface AppConfig {
  app: {
    port: number;
    host: string;
    basePrompt: string;
    defaultModel: string | undefined;
    historyMessages: number;
    shutdownGraceMs: number;
    skills: SkillsConfig;
    tools: { enabled: boolean; style: ToolStyle; useSkillThreshold: number; maxSteps: number; maxAnswerBytes: number };
    commands: { directories: readonly SkillDirectory[] };
    mcp: McpConfig;
    scripts: ScriptsConfig;
    models: Readonly<Record<string, ModelConfig>>;
    database: DatabaseConfig;
    /** `bootstrapAdminKey`: a well-formed key or empty; a secret, never logged. */
    auth: { mode: AuthMode; bootstrapAdminKey: string };
    http: { allowedHosts: readonly string[]; corsOrigins: readonly string[]; bodyTimeoutMs: number; uploadTimeoutMs: number; bodyMinBytesPerSecond: number };
    logging: { level: LogLevel; format: LogFormat };
    metrics: { public: boolean };
    limits: { requestsPerMinute: number; turnsPerMinute: number; maxConcurrentTurns: number };
  };
}

/** `[app.mcp]`: the skills served over MCP and the discovery index. */
export interface McpConfig {
  enabled: boolean;
  pageSize: number;
  maxSessions: number;
  maxSessionsPerUser: number;
  sessionIdleSeconds: number;
  cacheTtlMs: number;
  /** The catalogue listed to MCP clients: `[app.mcp]`'s settings, or `[app.skills]`' where those are 0. */
  catalogueBudgetTokens: number;
  catalogueMaxSkills: number;
  instructionsMaxChars: number;
}

export const APP_CONFIG = Symbol('APP_CONFIG');

/** Memory bounds that hold whatever the configuration says. */
export const HARD_LIMITS = {
  skillMdBytes: 8 * 1024 * 1024,
  resourceBytes: 16 * 1024 * 1024,
  maxSkills: 1_000_000,
  maxDepth: 6,
} as const;
