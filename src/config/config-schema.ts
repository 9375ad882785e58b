import { availableParallelism } from 'node:os';
import { z } from 'zod';
import {
  DEFAULT_COMMAND_DIRECTORIES,
  DEFAULT_SKILL_DIRECTORIES,
  HOST_SKILLS_DEFAULTS,
  type Setting,
  setting,
  settingsOf,
  type SettingTree,
  SKILLS_OPTIONS,
} from '@skillhost/core';

/**
 * Every configuration key, defined once: a tree of settings (rule, default, meaning) whose keys are
 * the TOML paths. The skills keys are the skills library's options (skills-options.schema.ts),
 * placed here. Each key's environment variable is `SKILLHOST_` and its path without `app`
 * (`app.skills.max_depth` → `SKILLHOST_SKILLS_MAX_DEPTH`) unless it names another. The loader's
 * schema, the AppConfig type, the problem lines and the README's reference are derived from it.
 */
/** A configuration setting of any value type (see AnySetting). */
// biome-ignore lint/suspicious/noExplicitAny: the one place the tree erases its settings' types
export type AnyConfigSetting = ConfigSetting<any, any>;

export type ConfigSetting<T = unknown, R = T> = Setting<T, R> & {
  /** The environment variable, where it is not the one the path gives. */
  env?: string;
  /** A platform convention read when `env` is not set (`PORT`). */
  fallbackEnv?: string;
  /**
   * A standard variable of another tool's (OpenTelemetry's `OTEL_…`), read only when neither the file nor `env` sets
   * the key: Skillhost's own configuration wins over it, as a program's own settings win over those variables in the
   * OpenTelemetry SDKs.
   */
  standardEnv?: string;
};

interface ConfigTree {
  readonly [key: string]: AnyConfigSetting | ConfigTree;
}

/**
 * A host a member may import from: a name or address, `*.` for its subdomains, an optional `:port`; IPv6 in brackets.
 */
export const MEMBER_HOST =
  /^(?:(?:\*\.)?[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;

/** `[app.skills.import] member_hosts`: a list of strings, each a MEMBER_HOST. */
function memberHosts(options: { default: readonly string[]; description: string }): Setting<readonly string[]> {
  return {
    ...setting.list(options),
    rule: z.array(z.string().regex(MEMBER_HOST)).readonly(),
    expected: 'a list of host names, addresses or `*.domain`, each with an optional `:port`',
  };
}

export const AUTH_MODES = ['auto', 'api_key', 'none'] as const;
export type AuthMode = (typeof AUTH_MODES)[number];
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/**
 * An API key's shape: `skh_` and 32 random bytes in base64url (43 characters). Here, at the bottom
 * of the imports, because the configuration checks a key it is given (`bootstrap_admin_key`) as
 * auth does (src/domain/users/api-key.ts).
 */
export const API_KEY_PATTERN = /^skh_[A-Za-z0-9_-]{43}$/;

export const DEFAULT_BASE_PROMPT = 'You are a helpful assistant.';
/**
 * How long a request body may come at any pace before `body_min_bytes_per_second` applies: a
 * connection's slow start and a phone's short stall (Kestrel's minimum body rate has the same grace).
 */
export const BODY_RATE_GRACE_MS = 5000;

/** A PostgreSQL URL, or empty for the embedded server; never echoed (it may hold a password). */
function databaseUrl(options: { default: string; description: string }): Setting<string> {
  const rule = z.string().refine((v) => v === '' || isDatabaseUrl(v));
  return {
    ...options,
    rule,
    expected: 'a postgres:// or postgresql:// URL with a host (or empty for the embedded PostgreSQL)',
    type: '`postgres://` URL',
    shape: 'string',
    secret: 'url',
  };
}

/**
 * A proxy's URL (`http://` or `https://`, credentials allowed; `host:port` alone means `http://host:port`, as curl
 * reads it), or empty for none; never echoed.
 */
function proxyUrl(options: { description: string }): Setting<string> {
  const rule = z.string().refine((v) => v === '' || proxyUrlOf(v) !== undefined);
  return {
    ...options,
    default: '',
    rule,
    expected: 'an http:// or https:// URL with a host, or host:port (or empty for none)',
    type: '`http(s)://` URL',
    shape: 'string',
    secret: 'url',
    resolve: (value) => (value === '' ? '' : (proxyUrlOf(value) ?? '')),
  };
}

/** The proxy URL `text` names, or undefined when it names none (another scheme, no host, undecodable credentials). */
function proxyUrlOf(text: string): string | undefined {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  try {
    const url = new URL(withScheme);
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') return undefined;
    decodeURIComponent(url.username);
    decodeURIComponent(url.password);
    return url.href;
  } catch {
    return undefined;
  }
}

/**
 * An OTLP/HTTP collector's base URL (`http://` or `https://` with a host, no query or fragment: the signal's path is
 * added to it), or empty for none; never echoed (a collector's URL may carry a token).
 */
function otlpEndpoint(options: { description: string }): Setting<string> {
  const rule = z.string().refine((v) => v === '' || otlpEndpointOf(v) !== undefined);
  return {
    ...options,
    default: '',
    rule,
    expected: 'an http:// or https:// URL with a host and no query, like http://127.0.0.1:4318 (or empty for off)',
    type: '`http(s)://` URL',
    shape: 'string',
    secret: 'url',
    resolve: (value) => (value === '' ? '' : (otlpEndpointOf(value) ?? '')),
  };
}

/** The endpoint without a trailing `/` (the exporters add `/v1/traces`), or undefined when `text` is not one. */
function otlpEndpointOf(text: string): string | undefined {
  try {
    const url = new URL(text);
    if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') return undefined;
    if (url.search !== '' || url.hash !== '' || text.includes('?') || text.includes('#')) return undefined;
    return url.href.replace(/\/+$/, '');
  } catch {
    return undefined;
  }
}

/** The share of turns traced, 0 to 1 (a fraction: `0.1` is one turn in ten). */
function ratio(options: { default: number; description: string }): Setting<number> {
  const rule = z.preprocess((v) => (typeof v === 'bigint' ? Number(v) : v), z.number().min(0).max(1));
  return {
    ...options,
    rule: rule as z.ZodType<number>,
    expected: 'a number from 0 to 1, like 0.25 for one turn in four (0: none, 1: every one)',
    type: 'number 0–1',
    shape: 'number',
  };
}

/** A header's name as HTTP allows it (RFC 9110's token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** What a header's value may hold as Node sends it: no line break, NUL or other control character but a tab. */
export const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** An environment variable's name, as a shell can set it. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * A table of headers, `{ "name" = "value" }` in the file; in an environment variable `name=value,name=value` (the form
 * of OpenTelemetry's `OTEL_EXPORTER_OTLP_HEADERS`, values percent-decoded). Each name once, whatever its case. Its
 * shape is a string's: the environment's text reaches the rule as it is.
 */
function headerTable(options: {
  description: string;
  value: RegExp;
  values: string;
}): Setting<Readonly<Record<string, string>> | string, Readonly<Record<string, string>>> {
  const { value, values, ...rest } = options;
  const table = z
    .record(z.string().regex(HEADER_NAME), z.string().regex(value))
    .refine(
      (headers) => new Set(Object.keys(headers).map((name) => name.toLowerCase())).size === Object.keys(headers).length,
    );
  const rule = z.union([table, z.string().refine((text) => table.safeParse(headerPairsOf(text)).success)]);
  return {
    ...rest,
    default: {},
    rule,
    expected:
      `a table of header names and ${values}, each name once (in an environment variable: ` + `name=value,name=value)`,
    type: 'table of headers',
    shape: 'string',
    resolve: (given) => (typeof given === 'string' ? (headerPairsOf(given) ?? {}) : given),
  };
}

/** `name=value,name=value` as a table (values percent-decoded); undefined when it is not one. */
function headerPairsOf(text: string): Record<string, string> | undefined {
  const headers: Record<string, string> = {};
  for (const pair of text.split(',')) {
    if (pair.trim() === '') continue;
    const at = pair.indexOf('=');
    if (at <= 0) return undefined;
    try {
      headers[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      return undefined;
    }
  }
  return headers;
}

/** A secret Skillhost API key (`skh_…`), or empty: checked like a key a request presents, never shown. */
function apiKey(options: { default: string; description: string }): Setting<string> {
  const rule = z.string().refine((v) => v === '' || API_KEY_PATTERN.test(v));
  const expected =
    "an API key: 'skh_' and 43 characters of A-Z, a-z, 0-9, '_' or '-', as `skillhost keys generate` prints (or " +
    'empty for none)';
  return { ...options, rule, expected, type: 'API key `skh_…`', shape: 'string', secret: 'key' };
}

/** The most worker processes `[app] workers` may ask for. */
export const MAX_WORKERS = 64;

/** `[app] workers`: a count, or `auto` for one per core (what the machine offers this process). */
function workerCount(options: { default: number; description: string }): Setting<number | 'auto', number> {
  // smol-toml reads integers past 2^53 as bigint; they are then simply out of range.
  const rule = z.preprocess(
    (v) => (typeof v === 'bigint' ? Number(v) : v),
    z.union([z.number().int().min(1).max(MAX_WORKERS), z.literal('auto')]),
  ) as z.ZodType<number | 'auto'>;
  return {
    ...options,
    rule,
    expected: `an integer from 1 to ${MAX_WORKERS}, or 'auto' (one per core)`,
    type: `integer 1–${MAX_WORKERS} or \`auto\``,
    shape: 'number',
    resolve: (value) => (value === 'auto' ? Math.min(availableParallelism(), MAX_WORKERS) : value),
  };
}

function isDatabaseUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'postgres:' || url.protocol === 'postgresql:') && url.hostname !== '';
  } catch {
    return false;
  }
}

export const CONFIG_SETTINGS = {
  app: {
    port: {
      ...setting.integer({ min: 0, max: 65_535, default: 3000, description: 'HTTP port (0 picks a free one).' }),
      fallbackEnv: 'PORT',
    },
    host: setting.string({
      nonEmpty: true,
      default: '127.0.0.1',
      description: 'Interface to listen on; `0.0.0.0` for all.',
    }),
    workers: workerCount({
      default: 1,
      description:
        'Server processes answering on the one port (node:cluster, connections handed out in turn); `auto`: one ' +
        'per core. The first process starts the embedded PostgreSQL and runs the migrations, then starts the ' +
        'workers and restarts one that crashes; 1: a single process, no cluster. Each worker has its own ' +
        'snapshot, pool (`pool_size` each), MCP sessions and `/metrics` counters.',
    }),
    base_prompt: setting.string({ default: DEFAULT_BASE_PROMPT, description: 'The start of every system prompt.' }),
    default_model: setting.string({
      default: '',
      description:
        'Model used when a message names none: a name under `[app.models]`. Empty: `default` when the ' +
        'quick-start variables define it, else the first model in the file.',
    }),
    shutdown_grace_ms: setting.integer({
      min: 0,
      max: 600_000,
      default: 30_000,
      description:
        'On SIGTERM/SIGINT: how long turns in flight may take to finish and be stored before the server stops anyway.',
    }),
    history_messages: setting.integer({
      min: 0,
      max: 1000,
      default: 20,
      description: "How many of the chat's earlier messages go to the model with each turn.",
    }),
    skills: {
      enabled: setting.boolean({
        default: false,
        description: 'Master switch. Off: no discovery runs and every skills route answers 404 `SKILLS_DISABLED`.',
      }),
      directories: {
        ...SKILLS_OPTIONS.directories,
        default: DEFAULT_SKILL_DIRECTORIES,
        description:
          'Skill folders to scan, in precedence order (earlier wins a name collision). `~` is the home folder; ' +
          'relative paths resolve from the project root (the working directory).',
      },
      validation: SKILLS_OPTIONS.validation,
      catalogue_format: SKILLS_OPTIONS.catalogue.format,
      include_location: {
        ...SKILLS_OPTIONS.catalogue.includeLocation,
        description:
          "With `markdown`, the prompt's skills section is the aloop design's: `- name: description` under `## " +
          'Skills`, with its "How to use skills" rules. No catalogue the server shows (chats, the catalogue ' +
          "routes, MCP) carries a path of the server's: neither members nor their models can read its files by " +
          "path. (An app embedding Skillhost lists each `SKILL.md` path with `skillhost/nest`'s " +
          '`catalogue.includeLocation`, for a model that reads files itself.)',
      },
      max_skills: SKILLS_OPTIONS.maxSkills,
      catalogue_budget_tokens: SKILLS_OPTIONS.catalogue.budgetTokens,
      catalogue_max_skills: SKILLS_OPTIONS.catalogue.maxSkills,
      search_tool: setting.choice(['auto', 'always'], {
        default: HOST_SKILLS_DEFAULTS.searchTool,
        description:
          "`auto`: the model is offered `skills.search` when the catalogue is partial (the chat's skills do not " +
          'fit the budget); `always`: whenever tools are offered.',
      }),
      max_skill_md_bytes: SKILLS_OPTIONS.maxSkillMdBytes,
      max_resource_bytes: SKILLS_OPTIONS.maxResourceBytes,
      watch: setting.boolean({
        default: false,
        description:
          'Reload the skills, code skills and commands directories shortly after a change on disk (debounced ' +
          '300 ms; what was added and removed is logged).',
      }),
      disabled: SKILLS_OPTIONS.disabled,
      max_install_bytes: setting.integer({
        min: 1024,
        max: 256 * 1024 * 1024,
        default: HOST_SKILLS_DEFAULTS.maxInstallBytes,
        description:
          'The most a skill may hold, unpacked, to be installed into the store (413 beyond; reading an upload ' +
          'stops there) or to be pinned when a chat activates it from disk (larger skills are not pinned, with ' +
          'a warning on the card).',
      }),
      max_personal_skills: setting.integer({
        min: 0,
        max: 100_000,
        default: 50,
        description:
          'How many personal skills one user may have installed; a further new one is 403 ' +
          '`SKILL_QUOTA_EXCEEDED` (new versions of their skills are not counted). 0: users cannot install ' +
          'personal skills.',
      }),
      store_directory: setting.folder({
        default: './.data/skill-store',
        description:
          'Where installed and pinned versions are unpacked from PostgreSQL to be read (`<digest>/<name>/…`, ' +
          'written once, content-addressed). A cache: deleting it costs a re-read from the database.',
      }),
      store_precedence: setting.choice(['first', 'last'], {
        default: HOST_SKILLS_DEFAULTS.storePrecedence,
        description:
          '`last`: a skill in the skills directories wins a name collision with a shared store skill; `first`: ' +
          'the store wins. Either way the collision is listed in the admin view. A personal skill never wins ' +
          'over a team skill of the same name.',
      }),
      sync_interval_ms: setting.integer({
        min: 100,
        max: 60_000,
        default: 1000,
        description:
          "How often an instance checks the store's generation in case it missed a change notification " +
          '(instances hear of changes at once through PostgreSQL LISTEN/NOTIFY).',
      }),
      code_directories: setting.folders({
        default: [],
        description:
          'Operator-trusted folders of *code skills* (a skill folder with `skill.mjs` exporting ' +
          '`execute(ctx)`); empty: none. Never the store or personal skills. See "Code skills".',
      }),
      code_timeout_ms: setting.integer({
        min: 100,
        max: 600_000,
        default: 30_000,
        description:
          "A code skill's `execute` that takes longer is stopped (its worker terminated) and reported on its card.",
      }),
      code_memory_mb: setting.integer({
        min: 16,
        max: 16_384,
        default: 256,
        description: "Heap limit of a code skill's worker thread.",
      }),
      explicit_prefixes: SKILLS_OPTIONS.explicitPrefixes,
      max_depth: SKILLS_OPTIONS.maxDepth,
      import: {
        member_hosts: memberHosts({
          default: [],
          description:
            "Hosts a member's import (`POST /v1/skills/import`) may read from although they resolve to a loopback, " +
            'private (RFC 1918, `fc00::/7`), link-local (`169.254.0.0/16`, `fe80::/10`), unspecified or multicast ' +
            'address: `git.internal` (any port), `git.internal:8443` (that port), `*.corp.example` (its subdomains, ' +
            'not itself), `10.0.0.7` or `[fd00::7]:443`. Any other such destination is 422 ' +
            '`IMPORT_SOURCE_FORBIDDEN`. Admin and CLI imports are not checked.',
        }),
        max_clone_bytes: setting.integer({
          min: 1024 * 1024,
          max: 64 * 1024 * 1024 * 1024,
          default: 256 * 1024 * 1024,
          description:
            "The most a git import's clone (with its submodules) may take on disk; git is stopped as soon as the " +
            'clone grows past it, and the import is 422 `IMPORT_TOO_LARGE`.',
        }),
        max_concurrent: setting.integer({
          min: 1,
          max: 64,
          default: 2,
          description:
            'Imports (routes, mirrors) running at once on this instance; one more from a route is refused at once ' +
            'with 503 `IMPORT_BUSY` and `Retry-After`, a mirror run waits for its turn.',
        }),
      },
      evals: {
        gate: setting.choice(['off', 'warn', 'refuse'], {
          default: 'warn',
          description:
            "Compares a new version's catalogue recall on its trigger evals (`evals/triggers.json`) with the serving " +
            "version's: `warn` installs it and answers with the cases that regressed; `refuse` keeps the old " +
            'version serving and answers 422 `EVAL_REGRESSION` with them; `off` ' +
            'compares nothing. See docs/trigger-evals.md.',
        }),
        model_max_calls: setting.integer({
          min: 1,
          max: 10_000,
          default: 50,
          description:
            'Model calls one model-level eval run (`POST /v1/admin/skills/NAME/evals/run` with `level: "model"`) may ' +
            'make, one per case; the cases past it are reported as not run (`notRun`).',
        }),
      },
      usage: {
        enabled: setting.boolean({
          default: true,
          description:
            'Count the skills usage funnel (offered, activated, resources read, scripts run, errors, turns) per ' +
            'skill, version, model and day, for `GET /v1/admin/skills/usage`. Counts are kept in memory and ' +
            'written in one statement per flush; a crash loses at most one flush interval of counts.',
        }),
        flush_interval_ms: setting.integer({
          min: 100,
          max: 600_000,
          default: 10_000,
          description:
            'How often an instance writes the counts it gathered (one multi-row upsert); also at a clean shutdown.',
        }),
        retention_days: setting.integer({
          min: 1,
          max: 36_500,
          default: 400,
          description: 'Days of usage kept; older days are deleted by a sweep at start-up and once a day after.',
        }),
      },
    },
    mcp: {
      enabled: setting.boolean({
        default: true,
        description:
          'Serve the skills over MCP at `/mcp` (the MCP Skills extension, an `activate_skill` tool and one ' +
          'prompt per skill) and the discovery index at `/.well-known/agent-skills/index.json`, while skills ' +
          'are enabled. See "Skills for every agent (MCP)".',
      }),
      page_size: setting.integer({
        min: 1,
        max: 1000,
        default: 100,
        description: 'Skills per `skills/list` page (and children per `resources/directory/read` page).',
      }),
      max_sessions: setting.integer({
        min: 1,
        max: 100_000,
        default: 1000,
        description:
          'Open MCP sessions (2025-era clients) per instance. Past it, a new session replaces the least ' +
          'recently used one that has no notification stream open; with every one listening, 503 `BUSY`.',
      }),
      max_sessions_per_user: setting.integer({
        min: 1,
        max: 100_000,
        default: 20,
        description:
          'Open MCP sessions one user may hold on an instance (so one key cannot take every session). Past it, ' +
          "the user's new session replaces their least recently used one: one without an open notification " +
          'stream first, else (once the new one is open) a listening one. Agents re-initialise and rarely end a ' +
          'session.',
      }),
      session_idle_seconds: setting.integer({
        min: 10,
        max: 86_400,
        default: 1800,
        description:
          'An MCP session that sends no request for this long is closed, even with its notification stream open ' +
          '(many clients never end theirs); its client starts a new one when it next calls.',
      }),
      catalogue_budget_tokens: setting.integer({
        min: 0,
        max: 1_000_000,
        default: 0,
        description:
          "The most the skills listed to an MCP client may take (in `activate_skill`'s description and the " +
          "server's instructions), in o200k tokens, counted as for `[app.skills] catalogue_budget_tokens`; `0`: " +
          "that setting's value. When a user's skills do not fit, the team's most used are listed, then the " +
          'rest in name order while they fit, and `search_skills` is offered.',
      }),
      catalogue_max_skills: setting.integer({
        min: 0,
        max: 10_000,
        default: 0,
        description: 'The most skills listed to an MCP client; `0`: `[app.skills] catalogue_max_skills`.',
      }),
      instructions_max_chars: setting.integer({
        min: 1024,
        max: 1_000_000,
        default: 4096,
        description:
          "The most characters of the server's `instructions` (the catalogue after a few lines on using it, " +
          'whole entries only, the rest named in a closing line). Claude Code shows the model the first 4096 ' +
          'and cuts the rest.',
      }),
      cache_ttl_ms: setting.integer({
        min: 0,
        max: 86_400_000,
        default: 60_000,
        description:
          'The `ttlMs` freshness hint on `skills/list`, `skills/get` and file reads for 2026-07-28 clients ' +
          '(`cacheScope` is always `private`: each user has their own catalogue).',
      }),
    },
    gateway: {
      enabled: setting.boolean({
        default: true,
        description:
          "Serve OpenAI's API at `/openai/v1` (chat completions, responses, models) with the team's skills added to " +
          'every request. See "Skills for every chat client (OpenAI-compatible gateway)".',
      }),
      show_work: setting.boolean({
        default: false,
        description:
          'Add a `skillhost` field to every answer (the conversation id, a notice of the skills activated, ' +
          "Skillhost's " +
          'tool cards); standard clients ignore it. A request may ask for it with `X-Skillhost-Show-Work: true`.',
      }),
      max_messages: setting.integer({
        min: 1,
        max: 100_000,
        default: 2000,
        description: 'The most messages (or input items) one request may send; past it, 400.',
      }),
      max_tools: setting.integer({
        min: 0,
        max: 1000,
        default: 128,
        description: "The most tools of the client's own one request may offer (OpenAI's limit is 128); past it, 400.",
      }),
      max_body_bytes: setting.integer({
        min: 1024 * 1024,
        max: 256 * 1024 * 1024,
        default: 8 * 1024 * 1024,
        description:
          'The largest request body the gateway reads (agents resend whole histories with tool outputs); past it, ' +
          '413. Every other route keeps its 1 MiB.',
      }),
    },
    tools: {
      enabled: setting.boolean({
        default: true,
        description: 'Offer the skill tools of the configured `style` to models that support tools.',
      }),
      style: SKILLS_OPTIONS.toolStyle,
      use_skill_threshold: setting.integer({
        min: 1,
        max: 100,
        default: HOST_SKILLS_DEFAULTS.useSkillThreshold,
        description:
          '`use_skill` without a name: the best match is used when it matches at least this percentage of the ' +
          "request's words; below it the answer names the three best candidates.",
      }),
      max_steps: setting.integer({
        min: 1,
        max: 64,
        default: 8,
        description: 'Model steps per turn (each tool round is one); a turn that reaches it ends with a stored notice.',
      }),
      max_answer_bytes: setting.integer({
        min: 1024,
        max: 32 * 1024 * 1024,
        default: 1_000_000,
        description:
          "The most of a model's answer (UTF-8 bytes) a turn stores and relays, streamed or not; a longer " +
          'answer is cut with a notice.',
      }),
    },
    commands: {
      directories: setting.folders({
        default: DEFAULT_COMMAND_DIRECTORIES,
        description:
          'Folders of command files (`<name>.md`, see "Commands"), in precedence order (earlier wins a name ' +
          'collision); read with the skills, only while skills are enabled. `~` and relative paths as for ' +
          'skills.',
      }),
    },
    scripts: {
      enabled: setting.boolean({
        default: false,
        description:
          'Offer `skills.runScript`: a skill\'s script run in a bubblewrap sandbox (see "Scripts"). On: ' +
          'start-up stops if `bwrap` is missing or cannot create namespaces.',
      }),
      personal_skills: setting.boolean({
        default: false,
        description:
          'Whether scripts of *personal* store skills (installed by any user, not an admin) may run, sandboxed ' +
          'like the others; off: `SCRIPT_NOT_ALLOWED`. Scripts of folder skills and shared store skills follow ' +
          'the other settings.',
      }),
      require_allowed_tools: setting.boolean({
        default: true,
        description:
          "A script runs only if its skill's `allowed-tools` permits the command (`Bash(python3:*)`, " +
          '`Bash(./scripts/x.sh)`, `Bash(*)`); false: any script of a loaded skill runs (still sandboxed).',
      }),
      timeout_ms: setting.integer({
        min: 100,
        max: 600_000,
        default: 60_000,
        description: 'A script still running after this is killed, with every process it started.',
      }),
      max_output_bytes: setting.integer({
        min: 1024,
        max: 16 * 1024 * 1024,
        default: 1_000_000,
        description:
          "The most of a script's stdout and stderr together that is kept; past it the script is killed and the " +
          'output cut with a notice.',
      }),
      memory_mb: setting.integer({
        min: 16,
        max: 65_536,
        default: 512,
        description:
          "Each script process's data limit (its address space gets 1 GiB more); also the size of its `/tmp` " +
          'and the largest file it may write.',
      }),
      max_processes: setting.integer({
        min: 1,
        max: 4096,
        default: 64,
        description: 'The most processes a script may run at once (a fork bomb stops there).',
      }),
      max_concurrent: setting.integer({
        min: 1,
        max: 1024,
        default: 4,
        description:
          'Script sandboxes running at once on this instance, whoever asked and through whichever door (a ' +
          'model, the tool API, a code skill); one more is refused at once (not queued) with a `SCRIPTS_BUSY` ' +
          "error card saying to retry. The machine's worst case is this many times `max_processes` processes " +
          'and `memory_mb` of `/tmp` (see "Scripts").',
      }),
      max_concurrent_per_user: setting.integer({
        min: 0,
        max: 1024,
        default: 3,
        description:
          'Of those, how many one user may run at once on this instance, across all their chats; past it ' +
          '`SCRIPTS_BUSY`. `0`: only `max_concurrent` applies.',
      }),
      max_concurrent_per_turn: setting.integer({
        min: 0,
        max: 1024,
        default: 2,
        description:
          'Of those, how many one chat turn may run at once (a model step calling several scripts together); ' +
          'past it `SCRIPTS_BUSY` tells the model to run them one at a time. `0`: only the other two caps apply.',
      }),
    },
    auth: {
      mode: setting.choice(AUTH_MODES, {
        default: 'auto',
        description:
          '`auto`: no key needed while the server listens on a loopback address only, API keys required on any ' +
          'other; `api_key`: keys always required; `none`: a request without a key acts as the built-in admin ' +
          '`local` (a loud warning on a non-loopback address). With auth off, a key that is sent is still ' +
          'checked: a valid one acts as its user, any other answers 401.',
      }),
      bootstrap_admin_key: {
        ...apiKey({
          default: '',
          description:
            'For containers and other headless installs: an API key (make one with `skillhost keys generate`) ' +
            'registered at start-up, labelled `bootstrap`, for the admin `admin` (created if missing; an ' +
            'existing `admin` who is a member or disabled is left as it is, and the key not registered). ' +
            'Registered once, whatever the restarts and instances; a revoked one stays revoked. Never logged; ' +
            'prefer the environment to the file. Empty: none.',
        }),
        env: 'SKILLHOST_BOOTSTRAP_ADMIN_KEY',
      },
      oidc: {
        issuer: setting.string({
          default: '',
          description:
            "Sign-in with the team's identity provider (OpenID Connect): its issuer URL, whose " +
            '`/.well-known/openid-configuration` is read at the first sign-in. Empty: no sign-in, API keys only.',
        }),
        display_name: setting.string({
          default: '',
          description: 'The name on the web page\'s "Sign in with …" button. Empty: the issuer\'s host name.',
        }),
        client_id: setting.string({ default: '', description: "Skillhost's client id at the provider." }),
        client_secret: {
          ...setting.string({
            default: '',
            description:
              "Skillhost's client secret at the provider; prefer the environment to the file. Empty: a public " +
              'client (PKCE only).',
          }),
          secret: 'key',
          env: 'SKILLHOST_OIDC_CLIENT_SECRET',
        },
        redirect_url: setting.string({
          default: '',
          description:
            'The callback URL registered at the provider (`https://skills.example.com/auth/oidc/callback`). ' +
            "Empty: this server's address as the browser named it, with `/auth/oidc/callback`.",
        }),
        scopes: setting.list({
          default: ['openid', 'profile', 'email'],
          description: 'The scopes asked for; `openid` is always added.',
        }),
        user_claim: setting.string({
          default: 'preferred_username',
          description:
            "The claim whose value names a new user (made lower-case; characters a user name cannot hold become '-').",
        }),
        groups_claim: setting.string({
          default: '',
          description: 'The claim that lists the groups a person is in (an array of strings). Empty: none read.',
        }),
        link_by_email: setting.boolean({
          default: true,
          description:
            "A person whose verified email (`email_verified` true) is an existing user's email signs in as that " +
            'user, and the link is kept.',
        }),
        create_users: setting.boolean({
          default: true,
          description:
            'A person not linked to a user yet gets one at first sign-in; false: only people an admin linked (or ' +
            'matched by email) sign in.',
        }),
        allowed_users: setting.list({
          default: [],
          description:
            'When not empty, only these people may sign in: each an email (verified) or a value of `user_claim`.',
        }),
        session_max_age_minutes: setting.integer({
          min: 5,
          max: 43_200,
          default: 720,
          description: 'A web session ends this long after sign-in, used or not.',
        }),
        session_idle_minutes: setting.integer({
          min: 1,
          max: 43_200,
          default: 60,
          description: 'A web session not used for this long ends.',
        }),
      },
      oauth: {
        enabled: setting.boolean({
          default: false,
          description:
            'Skillhost is the OAuth authorization server for its own `/mcp` (the MCP authorization specification): ' +
            'MCP clients register, send the person to a sign-in and consent page, and act with short-lived tokens ' +
            'bound to `/mcp`. Off: only API keys, and the OAuth probes answer 404 `OAUTH_NOT_SUPPORTED`.',
        }),
        issuer: setting.string({
          default: '',
          description:
            'The origin MCP clients reach this server at (e.g. `https://skills.example.com`), which names the ' +
            'authorization server and the `/mcp` resource in every token. Empty: `http://HOST:PORT` from ' +
            '`app.host` and `app.port` (for a server on loopback).',
        }),
        access_token_ttl_seconds: setting.integer({
          min: 60,
          max: 86_400,
          default: 600,
          description: 'How long an access token works; clients refresh it with their refresh token after.',
        }),
        refresh_token_ttl_seconds: setting.integer({
          min: 300,
          max: 31_536_000,
          default: 2_592_000,
          description:
            'How long a refresh token (and the grant behind it) lasts unused; each use replaces it with a new one.',
        }),
      },
    },
    database: {
      url: {
        ...databaseUrl({
          default: '',
          description: 'PostgreSQL connection URL. Empty: an embedded PostgreSQL is started (data in `embedded_dir`).',
        }),
        env: 'DATABASE_URL',
      },
      pool_size: setting.integer({
        min: 1,
        max: 200,
        default: 20,
        description: 'Connections in the pool to PostgreSQL.',
      }),
      embedded_dir: setting.folder({
        default: './.data/postgres',
        description: "The embedded server's data folder, kept across restarts.",
      }),
      statement_timeout_ms: setting.integer({
        min: 100,
        max: 600_000,
        default: 5000,
        description:
          'A database statement (or waiting for a connection) that takes longer fails with 503 ' +
          '`DATABASE_UNAVAILABLE`: a frozen database never holds requests longer than this.',
      }),
      embedded_port: setting.integer({
        min: 1024,
        max: 65_535,
        default: 54_329,
        description: "The embedded server's port on 127.0.0.1.",
      }),
    },
    http: {
      allowed_hosts: setting.list({
        default: [],
        description:
          'With auth off, requests must name the listening address or `localhost` in `Host` (else 421 ' +
          '`MISDIRECTED_REQUEST`, against DNS rebinding); these host names are accepted too.',
      }),
      cors_origins: setting.list({
        default: [],
        description: 'Origins (e.g. `https://chat.example.com`) that browsers may call the API from; none by default.',
      }),
      body_timeout_ms: setting.integer({
        min: 100,
        max: 3_600_000,
        default: 30_000,
        description:
          'How long a request body may take to arrive whole, from when the server starts reading it (after the ' +
          'key is checked); past it 408 `REQUEST_TIMEOUT` and the connection is closed. Skill uploads have ' +
          '`upload_timeout_ms`.',
      }),
      upload_timeout_ms: setting.integer({
        min: 100,
        max: 3_600_000,
        default: 300_000,
        description: 'The same for a skill upload (`POST /v1/skills`, `POST /v1/admin/skills`).',
      }),
      body_min_bytes_per_second: setting.integer({
        min: 0,
        max: 100_000_000,
        default: 1024,
        description:
          `After its first ${BODY_RATE_GRACE_MS / 1000} s, a request body must average at least this many bytes a ` +
          `second (time the server is busy not reading is not counted), else 408 \`REQUEST_TIMEOUT\` and the ` +
          `connection is closed; \`0\` turns the check off.`,
      }),
    },
    logging: {
      level: setting.choice(LOG_LEVELS, { default: 'info', description: 'Least severe level logged.' }),
      format: setting.choice(LOG_FORMATS, {
        default: 'auto',
        description:
          '`json` (one JSON object a line), `pretty` (readable), or `auto`: `pretty` on a terminal, else `json`.',
      }),
    },
    metrics: {
      public: setting.boolean({
        default: false,
        description: '`/metrics` needs an admin key while auth is on, unless this is true.',
      }),
    },
    telemetry: {
      endpoint: {
        ...otlpEndpoint({
          description:
            "An OpenTelemetry collector's OTLP/HTTP base URL (`http://127.0.0.1:4318`): traces of turns go to " +
            '`/v1/traces` and metrics to `/v1/metrics` under it. Empty: off, and no OpenTelemetry SDK is loaded.',
        }),
        standardEnv: 'OTEL_EXPORTER_OTLP_ENDPOINT',
      },
      service_name: {
        ...setting.string({
          nonEmpty: true,
          default: 'skillhost',
          description: "The `service.name` the traces and metrics carry (one per deployment, e.g. 'skillhost-eu').",
        }),
        standardEnv: 'OTEL_SERVICE_NAME',
      },
      metrics_interval_ms: {
        ...setting.integer({
          min: 100,
          max: 3_600_000,
          default: 60_000,
          description: 'How often the metrics are sent.',
        }),
        standardEnv: 'OTEL_METRIC_EXPORT_INTERVAL',
      },
      sample_ratio: ratio({
        default: 1,
        description:
          "The share of turns whose traces are kept (a turn's spans all go, or none of them: a turn's trace id " +
          'decides, and a span with a parent follows it). The metrics count every turn whatever this is.',
      }),
      accept_trace_context: setting.boolean({
        default: false,
        description:
          "Continue the caller's trace: a request's W3C `traceparent` (and `tracestate`) header makes its turn a " +
          'child of that span, and its sampled flag decides the turn is traced. For a server behind a proxy or ' +
          'gateway that traces; off, every turn starts a trace of its own, so no client can join or force one.',
      }),
      headers: headerTable({
        value: HEADER_VALUE,
        values: 'values',
        description:
          'Headers sent with every export, e.g. a tenant (`{ "X-Scope-OrgID" = "team-a" }`): not for secrets, ' +
          'which go in `headers_env`.',
      }),
      headers_env: headerTable({
        value: ENV_NAME,
        values: 'the environment variables holding their values',
        description:
          'Headers sent with every export whose values are secrets (an API key, a token), each named with the ' +
          'environment variable that holds its value, read at start-up (`{ "x-honeycomb-team" = ' +
          '"HONEYCOMB_API_KEY" }`): the value never goes in the file and is never logged. A variable that is ' +
          'not set stops start-up.',
      }),
    },
    proxy: {
      http: {
        ...proxyUrl({ description: 'Proxy for calls to `http://` model providers. Empty: direct.' }),
        env: 'HTTP_PROXY',
        fallbackEnv: 'http_proxy',
      },
      https: {
        ...proxyUrl({
          description: 'Proxy for calls to `https://` model providers (through `CONNECT`). Empty: as `http`.',
        }),
        env: 'HTTPS_PROXY',
        fallbackEnv: 'https_proxy',
      },
      no_proxy: {
        ...setting.string({
          default: '',
          description:
            'Hosts the model calls reach directly, comma- or space-separated: `host` or `.host` (either covers the ' +
            'host and its subdomains), `host:port`, `*` (every host).',
        }),
        env: 'NO_PROXY',
        fallbackEnv: 'no_proxy',
      },
    },
    limits: {
      requests_per_minute: setting.integer({
        min: 1,
        max: 1_000_000,
        default: 600,
        description:
          'Requests per minute per user (per client address for requests without a key, while auth is off), ' +
          'counted together by every instance on the database (a fixed minute per caller); past it 429 ' +
          '`RATE_LIMITED` with `Retry-After`. `/health*` is never limited.',
      }),
      turns_per_minute: setting.integer({
        min: 1,
        max: 1_000_000,
        default: 60,
        description:
          'Turns (messages sent) per minute per user or client address, counted together by every instance on the ' +
          'database; a turn also counts as a request.',
      }),
      max_concurrent_turns: setting.integer({
        min: 1,
        max: 10_000,
        default: 32,
        description: 'Turns running at once on this instance; one more answers 503 `BUSY`.',
      }),
    },
  },
} satisfies ConfigTree;

/** Per-model keys under `[app.models.NAME]` (no environment variables: a model's API key is named by `api_key_env`). */
export const MODEL_PROVIDERS = ['openai-compatible', 'anthropic'] as const;
export type ModelProvider = (typeof MODEL_PROVIDERS)[number];
export const MODEL_SETTINGS = {
  provider: setting.choice(MODEL_PROVIDERS, {
    description: '`openai-compatible` (OpenAI, Ollama, vLLM, llama.cpp, LM Studio, …) or `anthropic`.',
  }),
  model: setting.string({
    nonEmpty: true,
    description: "The provider's model id, e.g. `gpt-4o-mini`, `llama3.1`, `claude-sonnet-4-5`.",
  }),
  base_url: setting.string({
    default: '',
    description:
      'API base URL, e.g. `http://127.0.0.1:11434/v1`. Required for `openai-compatible`; Anthropic defaults to ' +
      'its public API.',
  }),
  api_key_env: setting.string({
    default: '',
    description: 'Name of the environment variable holding the API key (the key itself never goes in the file).',
  }),
  tools: setting.boolean({
    default: true,
    description:
      'Whether the model can call tools; `false` uses the fallback (an invoked skill goes into the system prompt).',
  }),
  timeout_ms: setting.integer({
    min: 100,
    max: 3_600_000,
    default: 60_000,
    description: 'Whole-turn time limit for calls to this model.',
  }),
  max_retries: setting.integer({
    min: 0,
    max: 5,
    default: 1,
    description: 'Retries of a failed provider call (5xx, rate limits) before the turn fails.',
  }),
} satisfies SettingTree;

/** A duration's units, as `[app.skills.mirrors.NAME] interval` takes them: `90s`, `15m`, `6h`, `1d`. */
const DURATION_UNITS_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^([1-9][0-9]{0,6})(s|m|h|d)$/;

/** Milliseconds of a duration written as a whole number and a unit (`15m`); undefined when it is not one. */
export function durationMs(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  return match === null ? undefined : Number(match[1]) * DURATION_UNITS_MS[match[2]];
}

/** A duration from `min` to `max` milliseconds, written `15m` (the resolved value is in milliseconds). */
function duration(options: { default: string; description: string; min: number; max: number }): Setting<string> {
  const { min, max, ...rest } = options;
  const rule = z.string().refine((text) => {
    const ms = durationMs(text);
    return ms !== undefined && ms >= min && ms <= max;
  });
  return {
    ...rest,
    rule,
    expected: `a duration from ${min / 60_000}m to ${max / 86_400_000}d, like 15m, 2h or 1d (units s, m, h, d)`,
    type: 'duration',
    shape: 'string',
  };
}

/** What a mirror may be called, in the configuration and the admin route alike. */
export const MIRROR_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** Per-mirror keys under `[app.skills.mirrors.NAME]` (no environment variables). */
export const MIRROR_SETTINGS = {
  source: setting.string({
    nonEmpty: true,
    description:
      'Where the mirror imports shared skills from, as `skillhost install` takes it: `git+https://…` or ' +
      "`git+file://…` (with `#REF`, `:PATH`), or another server's discovery index URL. The server refuses to start " +
      'with a source the importer cannot read.',
  }),
  interval: duration({
    default: '15m',
    min: 60_000,
    max: 7 * 86_400_000,
    description:
      'How often the mirror imports its source again: a new commit or index digest becomes a new version; a skill ' +
      'rolled back to an earlier version is kept there.',
  }),
} satisfies SettingTree;

/** A configuration key with its dotted TOML path and the environment variable that overrides it. */
export interface KeyedSetting {
  key: string;
  env: string;
  fallbackEnv?: string;
  standardEnv?: string;
  setting: AnyConfigSetting;
}

/** Every key, in the tree's order (the order of the reference table and of the problem lines). */
export const SETTINGS: readonly KeyedSetting[] = settingsOf(CONFIG_SETTINGS).map(({ key, setting: of }) => {
  const { env, fallbackEnv, standardEnv } = of as ConfigSetting;
  return {
    key,
    env: env ?? `SKILLHOST_${key.split('.').slice(1).join('_').toUpperCase()}`,
    ...(fallbackEnv === undefined ? {} : { fallbackEnv }),
    ...(standardEnv === undefined ? {} : { standardEnv }),
    setting: of,
  };
});

/** How messages name a setting: its environment variable and its key, e.g. `SKILLHOST_PORT (app.port)`. */
export function settingLabel(key: string): string {
  const found = SETTINGS.find((candidate) => candidate.key === key);
  if (found === undefined) throw new Error(`No setting '${key}'`);
  return `${found.env} (${key})`;
}

/** The configuration reference table in the README; a test keeps the README equal to this. */
export function renderConfigReference(): string {
  const rows = SETTINGS.map(({ key, env, fallbackEnv, standardEnv, setting: of }) => {
    const [section, name] = [key.split('.').slice(0, -1).join('.'), key.split('.').pop()];
    let variable = fallbackEnv ? `\`${env}\` (or \`${fallbackEnv}\`)` : `\`${env}\``;
    if (standardEnv) variable += ` (\`${standardEnv}\` when neither sets it)`;
    return (
      `| \`[${section}]\` \`${name}\` | ${variable} | ${of.type} | \`${JSON.stringify(of.default)}\` | ` +
      `${of.description} |`
    );
  });
  const modelRows = settingsOf(MODEL_SETTINGS).map(
    ({ key, setting: of }) =>
      `| \`[app.models.NAME]\` \`${key}\` | — | ${of.type} | ` +
      `${of.default === undefined ? 'required' : `\`${JSON.stringify(of.default)}\``} | ${of.description} |`,
  );
  const mirrorRows = settingsOf(MIRROR_SETTINGS).map(
    ({ key, setting: of }) =>
      `| \`[app.skills.mirrors.NAME]\` \`${key}\` | — | ${of.type} | ` +
      `${of.default === undefined ? 'required' : `\`${JSON.stringify(of.default)}\``} | ${of.description} |`,
  );
  return [
    '| key | environment | type | default | meaning |',
    '|---|---|---|---|---|',
    ...rows,
    ...modelRows,
    ...mirrorRows,
  ].join('\n');
}
