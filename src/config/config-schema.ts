import { AUTH_MODES, CATALOGUE_FORMATS, HARD_LIMITS, LOG_FORMATS, LOG_LEVELS, TOOL_STYLES, VALIDATION_MODES } from './app-config.js';

/**
 * Every configuration key in one table: its TOML path, environment override, default and rule.
 * The loader, the validation messages and the README's reference are all read from here.
 */
export type SettingKind =
  | { type: 'integer'; min: number; max: number }
  | { type: 'boolean' }
  | { type: 'string'; nonEmpty?: boolean }
  | { type: 'enum'; values: readonly string[] }
  | { type: 'string-list'; values?: readonly string[] }
  | { type: 'database-url' }
  /** A secret Skillhost API key (`skh_…`), or empty: checked like a key a request presents, never shown. */
  | { type: 'api-key' };

export interface Setting {
  /** Dotted TOML path, e.g. `app.skills.enabled`. */
  key: string;
  env: string;
  /** A platform convention read when `env` is not set (`PORT`). */
  fallbackEnv?: string;
  default: unknown;
  kind: SettingKind;
  description: string;
}

/**
 * An API key's shape: `skh_` and 32 random bytes in base64url (43 characters). Here, at the bottom
 * of the imports, because the configuration checks a key it is given (`bootstrap_admin_key`) as
 * auth does (src/auth/api-key.ts).
 */
export const API_KEY_PATTERN = /^skh_[A-Za-z0-9_-]{43}$/;

export const EXPLICIT_PREFIXES = ['/', '$'] as const;
export const DEFAULT_BASE_PROMPT = 'You are a helpful assistant.';
/**
 * How long a request body may come at any pace before `body_min_bytes_per_second` applies: a
 * connection's slow start and a phone's short stall (Kestrel's minimum body rate has the same grace).
 */
export const BODY_RATE_GRACE_MS = 5000;

export const DEFAULT_SKILL_DIRECTORIES = ['./.skills', './.agents/skills', '~/.agents/skills', '~/.skillhost/skills'];
export const DEFAULT_COMMAND_DIRECTORIES = ['./.skillhost/commands', './commands'];

export const SETTINGS: readonly Setting[] = [
  { key: 'app.port', env: 'SKILLHOST_PORT', fallbackEnv: 'PORT', default: 3000, kind: { type: 'integer', min: 0, max: 65535 }, description: 'HTTP port (0 picks a free one).' },
  { key: 'app.host', env: 'SKILLHOST_HOST', default: '127.0.0.1', kind: { type: 'string', nonEmpty: true }, description: 'Interface to listen on; `0.0.0.0` for all.' },
  { key: 'app.base_prompt', env: 'SKILLHOST_BASE_PROMPT', default: DEFAULT_BASE_PROMPT, kind: { type: 'string' }, description: 'The start of every system prompt.' },
  { key: 'app.default_model', env: 'SKILLHOST_DEFAULT_MODEL', default: '', kind: { type: 'string' }, description: 'Model used when a message names none: a name under `[app.models]`. Empty: `default` when the quick-start variables define it, else the first model in the file.' },
  { key: 'app.shutdown_grace_ms', env: 'SKILLHOST_SHUTDOWN_GRACE_MS', default: 30_000, kind: { type: 'integer', min: 0, max: 600_000 }, description: 'On SIGTERM/SIGINT: how long turns in flight may take to finish and be stored before the server stops anyway.' },
  { key: 'app.history_messages', env: 'SKILLHOST_HISTORY_MESSAGES', default: 20, kind: { type: 'integer', min: 0, max: 1000 }, description: "How many of the chat's earlier messages go to the model with each turn." },
  { key: 'app.skills.enabled', env: 'SKILLHOST_SKILLS_ENABLED', default: false, kind: { type: 'boolean' }, description: 'Master switch. Off: no discovery runs and every skills route answers 404 `SKILLS_DISABLED`.' },
  { key: 'app.skills.directories', env: 'SKILLHOST_SKILLS_DIRECTORIES', default: DEFAULT_SKILL_DIRECTORIES, kind: { type: 'string-list' }, description: 'Skill folders to scan, in precedence order (earlier wins a name collision). `~` is the home folder; relative paths resolve from the project root (the working directory).' },
  { key: 'app.skills.validation', env: 'SKILLHOST_SKILLS_VALIDATION', default: 'standard', kind: { type: 'enum', values: VALIDATION_MODES }, description: '`strict` (the reference validator: unknown fields are errors), `standard` (unknown fields are warnings) or `lenient` (also loads name mismatches and over-long fields with warnings).' },
  { key: 'app.skills.catalogue_format', env: 'SKILLHOST_SKILLS_CATALOGUE_FORMAT', default: 'json', kind: { type: 'enum', values: CATALOGUE_FORMATS }, description: 'How the catalogue is rendered for the model: `json`, `xml` or `markdown`.' },
  { key: 'app.skills.include_location', env: 'SKILLHOST_SKILLS_INCLUDE_LOCATION', default: false, kind: { type: 'boolean' }, description: "With `markdown`, the prompt's skills section is the aloop design's: `- name: description` under `## Skills`, with its \"How to use skills\" rules. No catalogue the server shows (chats, the catalogue routes, MCP) carries a path of the server's: neither members nor their models can read its files by path. (An app embedding Skillhost lists each `SKILL.md` path with `skillhost/nest`'s `catalogue.includeLocation`, for a model that reads files itself.)" },
  { key: 'app.skills.max_skills', env: 'SKILLHOST_SKILLS_MAX_SKILLS', default: 10_000, kind: { type: 'integer', min: 1, max: HARD_LIMITS.maxSkills }, description: 'Valid skills past this count (in discovery order) are not loaded, with a warning. The prompt does not grow with the skills loaded (see `catalogue_budget_tokens`): this only bounds the scan and memory.' },
  { key: 'app.skills.catalogue_budget_tokens', env: 'SKILLHOST_SKILLS_CATALOGUE_BUDGET_TOKENS', default: 4000, kind: { type: 'integer', min: 100, max: 1_000_000 }, description: "The most the catalogue in a prompt may take, in o200k tokens (each listed entry as rendered with its separator, the catalogue's frame and its closing note; not the rules or the rest of the prompt). When the chat's skills do not all fit, each turn lists the skills ranked best for the message, whole entries only. See \"Choosing skills at scale\"." },
  { key: 'app.skills.catalogue_max_skills', env: 'SKILLHOST_SKILLS_CATALOGUE_MAX_SKILLS', default: 50, kind: { type: 'integer', min: 1, max: 10_000 }, description: 'The most skills the catalogue in a prompt lists (the chat\'s activated skills and the one invoked are listed even past it).' },
  { key: 'app.skills.search_tool', env: 'SKILLHOST_SKILLS_SEARCH_TOOL', default: 'auto', kind: { type: 'enum', values: ['auto', 'always'] }, description: '`auto`: the model is offered `skills.search` when the catalogue is partial (the chat\'s skills do not fit the budget); `always`: whenever tools are offered.' },
  { key: 'app.skills.max_skill_md_bytes', env: 'SKILLHOST_SKILLS_MAX_SKILL_MD_BYTES', default: 200_000, kind: { type: 'integer', min: 1024, max: HARD_LIMITS.skillMdBytes }, description: 'A `SKILL.md` body past this many bytes is cut on activation, with a notice.' },
  { key: 'app.skills.max_resource_bytes', env: 'SKILLHOST_SKILLS_MAX_RESOURCE_BYTES', default: 2_000_000, kind: { type: 'integer', min: 1024, max: HARD_LIMITS.resourceBytes }, description: 'A resource past this many bytes is cut, with a notice; only the shown part is read.' },
  { key: 'app.skills.watch', env: 'SKILLHOST_SKILLS_WATCH', default: false, kind: { type: 'boolean' }, description: 'Reload the skills, code skills and commands directories shortly after a change on disk (debounced 300 ms; what was added and removed is logged).' },
  { key: 'app.skills.disabled', env: 'SKILLHOST_SKILLS_DISABLED', default: [], kind: { type: 'string-list' }, description: 'Skills switched off, by name: in no catalogue, `/name` stays plain text, and activating or reading one answers 403 `SKILL_DISABLED` (an error card in a chat). The admin view lists them.' },
  { key: 'app.skills.max_install_bytes', env: 'SKILLHOST_SKILLS_MAX_INSTALL_BYTES', default: 10 * 1024 * 1024, kind: { type: 'integer', min: 1024, max: 256 * 1024 * 1024 }, description: 'The most a skill may hold, unpacked, to be installed into the store (413 beyond; reading an upload stops there) or to be pinned when a chat activates it from disk (larger skills are not pinned, with a warning on the card).' },
  { key: 'app.skills.max_personal_skills', env: 'SKILLHOST_SKILLS_MAX_PERSONAL_SKILLS', default: 50, kind: { type: 'integer', min: 0, max: 100_000 }, description: 'How many personal skills one user may have installed; a further new one is 403 `SKILL_QUOTA_EXCEEDED` (new versions of their skills are not counted). 0: users cannot install personal skills.' },
  { key: 'app.skills.store_directory', env: 'SKILLHOST_SKILLS_STORE_DIRECTORY', default: './.data/skill-store', kind: { type: 'string', nonEmpty: true }, description: 'Where installed and pinned versions are unpacked from PostgreSQL to be read (`<digest>/<name>/…`, written once, content-addressed). A cache: deleting it costs a re-read from the database.' },
  { key: 'app.skills.store_precedence', env: 'SKILLHOST_SKILLS_STORE_PRECEDENCE', default: 'last', kind: { type: 'enum', values: ['first', 'last'] }, description: '`last`: a skill in the skills directories wins a name collision with a shared store skill; `first`: the store wins. Either way the collision is listed in the admin view. A personal skill never wins over a team skill of the same name.' },
  { key: 'app.skills.sync_interval_ms', env: 'SKILLHOST_SKILLS_SYNC_INTERVAL_MS', default: 1000, kind: { type: 'integer', min: 100, max: 60_000 }, description: "How often an instance checks the store's generation in case it missed a change notification (instances hear of changes at once through PostgreSQL LISTEN/NOTIFY)." },
  { key: 'app.skills.code_directories', env: 'SKILLHOST_SKILLS_CODE_DIRECTORIES', default: [], kind: { type: 'string-list' }, description: 'Operator-trusted folders of *code skills* (a skill folder with `skill.mjs` exporting `execute(ctx)`); empty: none. Never the store or personal skills. See "Code skills".' },
  { key: 'app.skills.code_timeout_ms', env: 'SKILLHOST_SKILLS_CODE_TIMEOUT_MS', default: 30_000, kind: { type: 'integer', min: 100, max: 600_000 }, description: "A code skill's `execute` that takes longer is stopped (its worker terminated) and reported on its card." },
  { key: 'app.skills.code_memory_mb', env: 'SKILLHOST_SKILLS_CODE_MEMORY_MB', default: 256, kind: { type: 'integer', min: 16, max: 16_384 }, description: "Heap limit of a code skill's worker thread." },
  { key: 'app.skills.explicit_prefixes', env: 'SKILLHOST_SKILLS_EXPLICIT_PREFIXES', default: ['/'], kind: { type: 'string-list', values: EXPLICIT_PREFIXES }, description: 'Prefixes that invoke a skill explicitly at the start of a message: `/name`, and `$name` when `"$"` is listed.' },
  { key: 'app.skills.max_depth', env: 'SKILLHOST_SKILLS_MAX_DEPTH', default: 1, kind: { type: 'integer', min: 1, max: HARD_LIMITS.maxDepth }, description: '1 = immediate children of each directory hold skills; up to 6 for nested collections (deeper levels skip `.git` and `node_modules`).' },
  { key: 'app.mcp.enabled', env: 'SKILLHOST_MCP_ENABLED', default: true, kind: { type: 'boolean' }, description: 'Serve the skills over MCP at `/mcp` (the MCP Skills extension, an `activate_skill` tool and one prompt per skill) and the discovery index at `/.well-known/agent-skills/index.json`, while skills are enabled. See "Skills for every agent (MCP)".' },
  { key: 'app.mcp.page_size', env: 'SKILLHOST_MCP_PAGE_SIZE', default: 100, kind: { type: 'integer', min: 1, max: 1000 }, description: 'Skills per `skills/list` page (and children per `resources/directory/read` page).' },
  { key: 'app.mcp.max_sessions', env: 'SKILLHOST_MCP_MAX_SESSIONS', default: 1000, kind: { type: 'integer', min: 1, max: 100_000 }, description: 'Open MCP sessions (2025-era clients) per instance. Past it, a new session replaces the least recently used one that has no notification stream open; with every one listening, 503 `BUSY`.' },
  { key: 'app.mcp.max_sessions_per_user', env: 'SKILLHOST_MCP_MAX_SESSIONS_PER_USER', default: 20, kind: { type: 'integer', min: 1, max: 100_000 }, description: "Open MCP sessions one user may hold on an instance (so one key cannot take every session). Past it, the user's new session replaces their least recently used one: one without an open notification stream first, else (once the new one is open) a listening one. Agents re-initialise and rarely end a session." },
  { key: 'app.mcp.session_idle_seconds', env: 'SKILLHOST_MCP_SESSION_IDLE_SECONDS', default: 1800, kind: { type: 'integer', min: 10, max: 86_400 }, description: 'An MCP session that sends no request for this long is closed, even with its notification stream open (many clients never end theirs); its client starts a new one when it next calls.' },
  { key: 'app.mcp.catalogue_budget_tokens', env: 'SKILLHOST_MCP_CATALOGUE_BUDGET_TOKENS', default: 0, kind: { type: 'integer', min: 0, max: 1_000_000 }, description: "The most the skills listed to an MCP client may take (in `activate_skill`'s description and the server's instructions), in o200k tokens, counted as for `[app.skills] catalogue_budget_tokens`; `0`: that setting's value. When a user's skills do not fit, the team's most used are listed, then the rest in name order while they fit, and `search_skills` is offered." },
  { key: 'app.mcp.catalogue_max_skills', env: 'SKILLHOST_MCP_CATALOGUE_MAX_SKILLS', default: 0, kind: { type: 'integer', min: 0, max: 10_000 }, description: 'The most skills listed to an MCP client; `0`: `[app.skills] catalogue_max_skills`.' },
  { key: 'app.mcp.instructions_max_chars', env: 'SKILLHOST_MCP_INSTRUCTIONS_MAX_CHARS', default: 4096, kind: { type: 'integer', min: 1024, max: 1_000_000 }, description: "The most characters of the server's `instructions` (the catalogue after a few lines on using it, whole entries only, the rest named in a closing line). Claude Code shows the model the first 4096 and cuts the rest." },
  { key: 'app.mcp.cache_ttl_ms', env: 'SKILLHOST_MCP_CACHE_TTL_MS', default: 60_000, kind: { type: 'integer', min: 0, max: 86_400_000 }, description: 'The `ttlMs` freshness hint on `skills/list`, `skills/get` and file reads for 2026-07-28 clients (`cacheScope` is always `private`: each user has their own catalogue).' },
  { key: 'app.tools.enabled', env: 'SKILLHOST_TOOLS_ENABLED', default: true, kind: { type: 'boolean' }, description: 'Offer the skill tools of the configured `style` to models that support tools.' },
  { key: 'app.tools.style', env: 'SKILLHOST_TOOLS_STYLE', default: 'skillhost', kind: { type: 'enum', values: TOOL_STYLES }, description: 'How the model is offered skills: `skillhost` (`skills.activate`, `skills.readResource`, `skills.listResources`), `activate_skill` (the agentskills.io client guide), `load_skill` (skills listed in the tool, not the prompt) or `use_skill` (by name or best match). See "Tool styles".' },
  { key: 'app.tools.use_skill_threshold', env: 'SKILLHOST_TOOLS_USE_SKILL_THRESHOLD', default: 50, kind: { type: 'integer', min: 1, max: 100 }, description: "`use_skill` without a name: the best match is used when it matches at least this percentage of the request's words; below it the answer names the three best candidates." },
  { key: 'app.tools.max_steps', env: 'SKILLHOST_TOOLS_MAX_STEPS', default: 8, kind: { type: 'integer', min: 1, max: 64 }, description: 'Model steps per turn (each tool round is one); a turn that reaches it ends with a stored notice.' },
  { key: 'app.tools.max_answer_bytes', env: 'SKILLHOST_TOOLS_MAX_ANSWER_BYTES', default: 1_000_000, kind: { type: 'integer', min: 1024, max: 32 * 1024 * 1024 }, description: "The most of a model's answer (UTF-8 bytes) a turn stores and relays, streamed or not; a longer answer is cut with a notice." },
  { key: 'app.commands.directories', env: 'SKILLHOST_COMMANDS_DIRECTORIES', default: DEFAULT_COMMAND_DIRECTORIES, kind: { type: 'string-list' }, description: 'Folders of command files (`<name>.md`, see "Commands"), in precedence order (earlier wins a name collision); read with the skills, only while skills are enabled. `~` and relative paths as for skills.' },
  { key: 'app.scripts.enabled', env: 'SKILLHOST_SCRIPTS_ENABLED', default: false, kind: { type: 'boolean' }, description: 'Offer `skills.runScript`: a skill\'s script run in a bubblewrap sandbox (see "Scripts"). On: start-up stops if `bwrap` is missing or cannot create namespaces.' },
  { key: 'app.scripts.personal_skills', env: 'SKILLHOST_SCRIPTS_PERSONAL_SKILLS', default: false, kind: { type: 'boolean' }, description: "Whether scripts of *personal* store skills (installed by any user, not an admin) may run, sandboxed like the others; off: `SCRIPT_NOT_ALLOWED`. Scripts of folder skills and shared store skills follow the other settings." },
  { key: 'app.scripts.require_allowed_tools', env: 'SKILLHOST_SCRIPTS_REQUIRE_ALLOWED_TOOLS', default: true, kind: { type: 'boolean' }, description: "A script runs only if its skill's `allowed-tools` permits the command (`Bash(python3:*)`, `Bash(./scripts/x.sh)`, `Bash(*)`); false: any script of a loaded skill runs (still sandboxed)." },
  { key: 'app.scripts.timeout_ms', env: 'SKILLHOST_SCRIPTS_TIMEOUT_MS', default: 60_000, kind: { type: 'integer', min: 100, max: 600_000 }, description: 'A script still running after this is killed, with every process it started.' },
  { key: 'app.scripts.max_output_bytes', env: 'SKILLHOST_SCRIPTS_MAX_OUTPUT_BYTES', default: 1_000_000, kind: { type: 'integer', min: 1024, max: 16 * 1024 * 1024 }, description: "The most of a script's stdout and stderr together that is kept; past it the script is killed and the output cut with a notice." },
  { key: 'app.scripts.memory_mb', env: 'SKILLHOST_SCRIPTS_MEMORY_MB', default: 512, kind: { type: 'integer', min: 16, max: 65_536 }, description: "Each script process's data limit (its address space gets 1 GiB more); also the size of its `/tmp` and the largest file it may write." },
  { key: 'app.scripts.max_processes', env: 'SKILLHOST_SCRIPTS_MAX_PROCESSES', default: 64, kind: { type: 'integer', min: 1, max: 4096 }, description: 'The most processes a script may run at once (a fork bomb stops there).' },
  { key: 'app.scripts.max_concurrent', env: 'SKILLHOST_SCRIPTS_MAX_CONCURRENT', default: 4, kind: { type: 'integer', min: 1, max: 1024 }, description: 'Script sandboxes running at once on this instance, whoever asked and through whichever door (a model, the tool API, a code skill); one more is refused at once (not queued) with a `SCRIPTS_BUSY` error card saying to retry. The machine\'s worst case is this many times `max_processes` processes and `memory_mb` of `/tmp` (see "Scripts").' },
  { key: 'app.scripts.max_concurrent_per_user', env: 'SKILLHOST_SCRIPTS_MAX_CONCURRENT_PER_USER', default: 3, kind: { type: 'integer', min: 0, max: 1024 }, description: 'Of those, how many one user may run at once on this instance, across all their chats; past it `SCRIPTS_BUSY`. `0`: only `max_concurrent` applies.' },
  { key: 'app.scripts.max_concurrent_per_turn', env: 'SKILLHOST_SCRIPTS_MAX_CONCURRENT_PER_TURN', default: 2, kind: { type: 'integer', min: 0, max: 1024 }, description: 'Of those, how many one chat turn may run at once (a model step calling several scripts together); past it `SCRIPTS_BUSY` tells the model to run them one at a time. `0`: only the other two caps apply.' },
  { key: 'app.auth.mode', env: 'SKILLHOST_AUTH_MODE', default: 'auto', kind: { type: 'enum', values: AUTH_MODES }, description: '`auto`: no key needed while the server listens on a loopback address only, API keys required on any other; `api_key`: keys always required; `none`: a request without a key acts as the built-in admin `local` (a loud warning on a non-loopback address). With auth off, a key that is sent is still checked: a valid one acts as its user, any other answers 401.' },
  { key: 'app.auth.bootstrap_admin_key', env: 'SKILLHOST_BOOTSTRAP_ADMIN_KEY', default: '', kind: { type: 'api-key' }, description: "For containers and other headless installs: an API key (make one with `skillhost keys generate`) registered at start-up, labelled `bootstrap`, for the admin `admin` (created if missing; an existing `admin` who is a member or disabled is left as it is, and the key not registered). Registered once, whatever the restarts and instances; a revoked one stays revoked. Never logged; prefer the environment to the file. Empty: none." },
  { key: 'app.database.url', env: 'DATABASE_URL', default: '', kind: { type: 'database-url' }, description: 'PostgreSQL connection URL. Empty: an embedded PostgreSQL is started (data in `embedded_dir`).' },
  { key: 'app.database.pool_size', env: 'SKILLHOST_DATABASE_POOL_SIZE', default: 20, kind: { type: 'integer', min: 1, max: 200 }, description: 'Connections in the pool to PostgreSQL.' },
  { key: 'app.database.embedded_dir', env: 'SKILLHOST_DATABASE_EMBEDDED_DIR', default: './.data/postgres', kind: { type: 'string', nonEmpty: true }, description: "The embedded server's data folder, kept across restarts." },
  { key: 'app.database.statement_timeout_ms', env: 'SKILLHOST_DATABASE_STATEMENT_TIMEOUT_MS', default: 5000, kind: { type: 'integer', min: 100, max: 600_000 }, description: 'A database statement (or waiting for a connection) that takes longer fails with 503 `DATABASE_UNAVAILABLE`: a frozen database never holds requests longer than this.' },
  { key: 'app.database.embedded_port', env: 'SKILLHOST_DATABASE_EMBEDDED_PORT', default: 54329, kind: { type: 'integer', min: 1024, max: 65535 }, description: "The embedded server's port on 127.0.0.1." },
  { key: 'app.http.allowed_hosts', env: 'SKILLHOST_HTTP_ALLOWED_HOSTS', default: [], kind: { type: 'string-list' }, description: 'With auth off, requests must name the listening address or `localhost` in `Host` (else 421 `MISDIRECTED_REQUEST`, against DNS rebinding); these host names are accepted too.' },
  { key: 'app.http.cors_origins', env: 'SKILLHOST_HTTP_CORS_ORIGINS', default: [], kind: { type: 'string-list' }, description: 'Origins (e.g. `https://chat.example.com`) that browsers may call the API from; none by default.' },
  { key: 'app.http.body_timeout_ms', env: 'SKILLHOST_HTTP_BODY_TIMEOUT_MS', default: 30_000, kind: { type: 'integer', min: 100, max: 3_600_000 }, description: 'How long a request body may take to arrive whole, from when the server starts reading it (after the key is checked); past it 408 `REQUEST_TIMEOUT` and the connection is closed. Skill uploads have `upload_timeout_ms`.' },
  { key: 'app.http.upload_timeout_ms', env: 'SKILLHOST_HTTP_UPLOAD_TIMEOUT_MS', default: 300_000, kind: { type: 'integer', min: 100, max: 3_600_000 }, description: 'The same for a skill upload (`POST /v1/skills`, `POST /v1/admin/skills`).' },
  { key: 'app.http.body_min_bytes_per_second', env: 'SKILLHOST_HTTP_BODY_MIN_BYTES_PER_SECOND', default: 1024, kind: { type: 'integer', min: 0, max: 100_000_000 }, description: `After its first ${BODY_RATE_GRACE_MS / 1000} s, a request body must average at least this many bytes a second (time the server is busy not reading is not counted), else 408 \`REQUEST_TIMEOUT\` and the connection is closed; \`0\` turns the check off.` },
  { key: 'app.logging.level', env: 'SKILLHOST_LOGGING_LEVEL', default: 'info', kind: { type: 'enum', values: LOG_LEVELS }, description: 'Least severe level logged.' },
  { key: 'app.logging.format', env: 'SKILLHOST_LOGGING_FORMAT', default: 'auto', kind: { type: 'enum', values: LOG_FORMATS }, description: '`json` (one JSON object a line), `pretty` (readable), or `auto`: `pretty` on a terminal, else `json`.' },
  { key: 'app.metrics.public', env: 'SKILLHOST_METRICS_PUBLIC', default: false, kind: { type: 'boolean' }, description: '`/metrics` needs an admin key while auth is on, unless this is true.' },
  { key: 'app.limits.requests_per_minute', env: 'SKILLHOST_LIMITS_REQUESTS_PER_MINUTE', default: 600, kind: { type: 'integer', min: 1, max: 1_000_000 }, description: 'Requests per minute per user (per client address for requests without a key, while auth is off), per instance; past it 429 `RATE_LIMITED` with `Retry-After`. `/health*` is never limited.' },
  { key: 'app.limits.turns_per_minute', env: 'SKILLHOST_LIMITS_TURNS_PER_MINUTE', default: 60, kind: { type: 'integer', min: 1, max: 1_000_000 }, description: 'Turns (messages sent) per minute per user or client address, per instance.' },
  { key: 'app.limits.max_concurrent_turns', env: 'SKILLHOST_LIMITS_MAX_CONCURRENT_TURNS', default: 32, kind: { type: 'integer', min: 1, max: 10_000 }, description: 'Turns running at once on this instance; one more answers 503 `BUSY`.' },
];

/** Per-model keys under `[app.models.NAME]`. */
export const MODEL_PROVIDERS = ['openai-compatible', 'anthropic'] as const;
export interface ModelSetting {
  key: string;
  required: boolean;
  default: unknown;
  kind: SettingKind;
  description: string;
}
export const MODEL_SETTINGS: readonly ModelSetting[] = [
  { key: 'provider', required: true, default: undefined, kind: { type: 'enum', values: MODEL_PROVIDERS }, description: '`openai-compatible` (OpenAI, Ollama, vLLM, llama.cpp, LM Studio, …) or `anthropic`.' },
  { key: 'model', required: true, default: undefined, kind: { type: 'string', nonEmpty: true }, description: "The provider's model id, e.g. `gpt-4o-mini`, `llama3.1`, `claude-sonnet-4-5`." },
  { key: 'base_url', required: false, default: '', kind: { type: 'string' }, description: 'API base URL, e.g. `http://127.0.0.1:11434/v1`. Required for `openai-compatible`; Anthropic defaults to its public API.' },
  { key: 'api_key_env', required: false, default: '', kind: { type: 'string' }, description: 'Name of the environment variable holding the API key (the key itself never goes in the file).' },
  { key: 'tools', required: false, default: true, kind: { type: 'boolean' }, description: 'Whether the model can call tools; `false` uses the fallback (an invoked skill goes into the system prompt).' },
  { key: 'timeout_ms', required: false, default: 60000, kind: { type: 'integer', min: 100, max: 3_600_000 }, description: 'Whole-turn time limit for calls to this model.' },
  { key: 'max_retries', required: false, default: 1, kind: { type: 'integer', min: 0, max: 5 }, description: 'Retries of a failed provider call (5xx, rate limits) before the turn fails.' },
];

/** How messages name a setting: its environment variable and its key, e.g. `SKILLHOST_PORT (app.port)`. */
export function settingLabel(key: string): string {
  const setting = SETTINGS.find((candidate) => candidate.key === key);
  if (setting === undefined) throw new Error(`No setting '${key}'`);
  return `${setting.env} (${key})`;
}

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
        return kind.values ? `list of ${kind.values.map((v) => `\`${v}\``).join(', ')}` : 'list of strings';
      case 'database-url':
        return '`postgres://` URL';
      case 'api-key':
        return 'API key `skh_…`';
    }
  };
  const rows = SETTINGS.map((s) => {
    const [section, key] = [s.key.split('.').slice(0, -1).join('.'), s.key.split('.').pop()];
    const env = s.fallbackEnv ? `\`${s.env}\` (or \`${s.fallbackEnv}\`)` : `\`${s.env}\``;
    return `| \`[${section}]\` \`${key}\` | ${env} | ${kindText(s.kind)} | \`${JSON.stringify(s.default)}\` | ${s.description} |`;
  });
  const modelRows = MODEL_SETTINGS.map(
    (s) => `| \`[app.models.NAME]\` \`${s.key}\` | — | ${kindText(s.kind)} | ${s.required ? 'required' : `\`${JSON.stringify(s.default)}\``} | ${s.description} |`,
  );
  return ['| key | environment | type | default | meaning |', '|---|---|---|---|---|', ...rows, ...modelRows].join('\n');
}
