import { describe, expect, it } from '@jest/globals';
import { tempTree } from '../../test/support/files/skill-tree.js';
import { ConfigError, configWith, loadConfig } from './config-loader.js';

function problemsOf(run: () => unknown): readonly string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe(loadConfig.name, () => {
  const projectRoot = '/srv/app';
  const homeDir = '/home/u';

  it('gives the documented defaults when there is no file', () => {
    const sut = loadConfig({ env: {}, toml: {}, projectRoot, homeDir });
    expect(sut.app.port).toBe(3000);
    expect(sut.app.host).toBe('127.0.0.1');
    expect(sut.app.skills).toEqual({
      enabled: false,
      directories: [
        { configured: './.skills', path: '/srv/app/.skills' },
        { configured: './.agents/skills', path: '/srv/app/.agents/skills' },
        { configured: '~/.agents/skills', path: '/home/u/.agents/skills' },
        { configured: '~/.skillhost/skills', path: '/home/u/.skillhost/skills' },
      ],
      validation: 'standard',
      catalogueFormat: 'json',
      includeLocation: false,
      maxSkills: 10_000,
      mirrors: {},
      import: { memberHosts: [], maxCloneBytes: 256 * 1024 * 1024, maxConcurrent: 2 },
      evals: { gate: 'warn', modelMaxCalls: 50 },
      usage: { enabled: true, flushIntervalMs: 10_000, retentionDays: 400 },
      catalogueBudgetTokens: 4000,
      catalogueMaxSkills: 50,
      searchTool: 'auto',
      maxSkillMdBytes: 200000,
      maxResourceBytes: 2000000,
      maxDepth: 1,
      explicitPrefixes: ['/'],
      disabled: [],
      watch: false,
      maxInstallBytes: 10 * 1024 * 1024,
      maxPersonalSkills: 50,
      storeDirectory: '/srv/app/.data/skill-store',
      storePrecedence: 'last',
      syncIntervalMs: 1000,
      codeDirectories: [],
      codeTimeoutMs: 30_000,
      codeMemoryMb: 256,
      settings: {},
    });
    expect(sut.app.scripts).toEqual({
      enabled: false,
      requireAllowedTools: true,
      personalSkills: false,
      timeoutMs: 60_000,
      maxOutputBytes: 1_000_000,
      memoryMb: 512,
      maxProcesses: 64,
      maxConcurrent: 4,
      maxConcurrentPerUser: 3,
      maxConcurrentPerTurn: 2,
    });
    expect(sut.app.tools).toEqual({
      enabled: true,
      style: 'skillhost',
      useSkillThreshold: 50,
      maxSteps: 8,
      maxAnswerBytes: 1_000_000,
    });
    expect(sut.app.commands.directories).toEqual([
      { configured: './.skillhost/commands', path: '/srv/app/.skillhost/commands' },
      { configured: './commands', path: '/srv/app/commands' },
    ]);
    expect(sut.app.database).toEqual({
      url: '',
      poolSize: 20,
      embeddedDir: '/srv/app/.data/postgres',
      embeddedPort: 54329,
      statementTimeoutMs: 5000,
    });
    expect(sut.app.shutdownGraceMs).toBe(30_000);
    expect(sut.app.http).toEqual({
      allowedHosts: [],
      corsOrigins: [],
      bodyTimeoutMs: 30_000,
      uploadTimeoutMs: 300_000,
      bodyMinBytesPerSecond: 1024,
    });
    expect(sut.app.logging).toEqual({ level: 'info', format: 'auto' });
    expect(sut.app.metrics).toEqual({ public: false });
    // The catalogue MCP lists defaults to the chats' budget and count.
    expect(sut.app.mcp).toEqual({
      enabled: true,
      pageSize: 100,
      maxSessions: 1000,
      maxSessionsPerUser: 20,
      sessionIdleSeconds: 1800,
      cacheTtlMs: 60_000,
      catalogueBudgetTokens: 4000,
      catalogueMaxSkills: 50,
      instructionsMaxChars: 4096,
    });
    expect(sut.app.limits).toEqual({ requestsPerMinute: 600, turnsPerMinute: 60, maxConcurrentTurns: 32 });
    expect(sut.app.models).toEqual({});
    expect(sut.app.defaultModel).toBeUndefined();
    expect(sut.app.historyMessages).toBe(20);
    expect(sut.app.auth).toEqual({
      mode: 'auto',
      bootstrapAdminKey: '',
      oidc: {
        issuer: '',
        displayName: '',
        clientId: '',
        clientSecret: '',
        redirectUrl: '',
        scopes: ['openid', 'profile', 'email'],
        userClaim: 'preferred_username',
        groupsClaim: '',
        linkByEmail: true,
        createUsers: true,
        allowedUsers: [],
        sessionMaxAgeMinutes: 720,
        sessionIdleMinutes: 60,
      },
      oauth: { enabled: false, issuer: '', accessTokenTtlSeconds: 600, refreshTokenTtlSeconds: 2_592_000 },
    });
  });

  it("reads each skill's [app.skills.settings.NAME] table as it is, and refuses settings that are not tables", () => {
    const toml = { app: { skills: { settings: { weather: { units: 'metric', retries: 2, nested: { a: [1] } } } } } };
    expect(loadConfig({ env: {}, toml, projectRoot, homeDir }).app.skills.settings).toEqual({
      weather: { units: 'metric', retries: 2, nested: { a: [1] } },
    });
    expect(
      problemsOf(() =>
        loadConfig({ env: {}, toml: { app: { skills: { settings: { weather: 'metric' } } } }, projectRoot, homeDir }),
      ),
    ).toEqual([expect.stringMatching(/^app\.skills\.settings\.weather: /)]);
  });

  it(
    "takes the MCP catalogue's budget and count from [app.skills] while [app.mcp]'s are 0, and its own " + 'otherwise',
    () => {
      const mcp = (toml: Record<string, unknown>, env: Record<string, string> = {}) =>
        loadConfig({ env, toml: { app: toml }, projectRoot, homeDir }).app.mcp;
      expect(mcp({ skills: { catalogue_budget_tokens: 9000, catalogue_max_skills: 80 } })).toMatchObject({
        catalogueBudgetTokens: 9000,
        catalogueMaxSkills: 80,
      });
      expect(
        mcp({
          skills: { catalogue_budget_tokens: 9000 },
          mcp: { catalogue_budget_tokens: 700, catalogue_max_skills: 12 },
        }),
      ).toMatchObject({ catalogueBudgetTokens: 700, catalogueMaxSkills: 12 });
      expect(
        mcp({}, { SKILLHOST_MCP_CATALOGUE_BUDGET_TOKENS: '1500', SKILLHOST_MCP_INSTRUCTIONS_MAX_CHARS: '2048' }),
      ).toMatchObject({ catalogueBudgetTokens: 1500, instructionsMaxChars: 2048 });
      expect(problemsOf(() => mcp({ mcp: { instructions_max_chars: 100 } }))).toEqual([
        expect.stringMatching(/^app\.mcp\.instructions_max_chars: /),
      ]);
    },
  );

  it('reads the auth mode from [app.auth] and SKILLHOST_AUTH_MODE, refusing anything else', () => {
    expect(
      loadConfig({ env: {}, toml: { app: { auth: { mode: 'api_key' } } }, projectRoot, homeDir }).app.auth.mode,
    ).toBe('api_key');
    expect(
      loadConfig({
        env: { SKILLHOST_AUTH_MODE: 'none' },
        toml: { app: { auth: { mode: 'api_key' } } },
        projectRoot,
        homeDir,
      }).app.auth.mode,
    ).toBe('none');
    expect(
      problemsOf(() => loadConfig({ env: { SKILLHOST_AUTH_MODE: 'off' }, toml: {}, projectRoot, homeDir })),
    ).toEqual(['SKILLHOST_AUTH_MODE (app.auth.mode): "off" is not allowed; expected one of auto, api_key, none']);
  });

  it('reads [app.models.NAME] tables, resolving each API key from its environment variable', () => {
    const sut = loadConfig({
      env: { MY_KEY: 'sk-secret' },
      toml: {
        app: {
          default_model: 'claude',
          models: {
            local: {
              provider: 'openai-compatible',
              base_url: 'http://127.0.0.1:11434/v1',
              model: 'llama3.1',
              tools: false,
            },
            claude: { provider: 'anthropic', model: 'claude-sonnet-4-5', api_key_env: 'MY_KEY', timeout_ms: 30000 },
          },
        },
      },
      projectRoot,
      homeDir,
    });
    expect(sut.app.defaultModel).toBe('claude');
    expect(sut.app.models.local).toEqual({
      name: 'local',
      provider: 'openai-compatible',
      model: 'llama3.1',
      baseUrl: 'http://127.0.0.1:11434/v1',
      apiKeyEnv: '',
      apiKey: undefined,
      tools: false,
      timeoutMs: 60000,
      maxRetries: 1,
    });
    expect(sut.app.models.claude).toMatchObject({
      provider: 'anthropic',
      baseUrl: 'https://api.anthropic.com/v1',
      apiKey: 'sk-secret',
      timeoutMs: 30000,
      tools: true,
    });
  });

  it('defines a quick-start model from SKILLHOST_MODEL, OPENAI_BASE_URL and OPENAI_API_KEY', () => {
    const sut = loadConfig({
      env: { SKILLHOST_MODEL: 'gpt-4o-mini', OPENAI_BASE_URL: 'http://127.0.0.1:8080/v1', OPENAI_API_KEY: 'k' },
      toml: {},
      projectRoot,
      homeDir,
    });
    expect(sut.app.defaultModel).toBe('default');
    expect(sut.app.models.default).toMatchObject({
      provider: 'openai-compatible',
      model: 'gpt-4o-mini',
      baseUrl: 'http://127.0.0.1:8080/v1',
      apiKey: 'k',
    });
  });

  it('reports bad model tables and an unknown default model', () => {
    const problems = problemsOf(() =>
      loadConfig({
        env: {},
        toml: {
          app: {
            default_model: 'nope',
            models: {
              a: { provider: 'openai', model: '' },
              b: { provider: 'openai-compatible', model: 'm', colour: 'red' },
            },
          },
        },
        projectRoot,
        homeDir,
      }),
    );
    expect(problems).toEqual([
      'app.models.a.provider: "openai" is not allowed; expected one of openai-compatible, anthropic',
      'app.models.a.model: "" is not allowed; expected a non-empty string',
      'app.models.b.colour: unknown key (known keys: provider, model, base_url, api_key_env, tools, timeout_ms, ' +
        'max_retries)',
      "app.models.b.base_url: missing; an openai-compatible model needs its API's base URL",
      'app.default_model: "nope" is not allowed; expected one of the configured models (a, b)',
    ]);
  });

  it('reads [app.skills.mirrors.NAME] tables: a source and an interval (15m unless given)', () => {
    const mirrors = { team: { source: 'git+https://example.test/skills.git', interval: '2h' }, docs: { source: 'x' } };
    const sut = loadConfig({ env: {}, toml: { app: { skills: { mirrors } } }, projectRoot, homeDir });
    expect(sut.app.skills.mirrors).toEqual({
      team: { name: 'team', source: 'git+https://example.test/skills.git', interval: '2h', intervalMs: 7_200_000 },
      docs: { name: 'docs', source: 'x', interval: '15m', intervalMs: 900_000 },
    });
    expect(loadConfig({ env: {}, toml: {}, projectRoot, homeDir }).app.skills.mirrors).toEqual({});
  });

  it('names each bad mirror table: its name, a missing source, an interval out of range, an unknown key', () => {
    const problems = problemsOf(() =>
      loadConfig({
        env: {},
        toml: {
          app: {
            skills: {
              mirrors: {
                'Bad Name': { source: 's' },
                a: { interval: '15m' },
                b: { source: 's', interval: '10s', x: 1 },
              },
            },
          },
        },
        projectRoot,
        homeDir,
      }),
    );
    expect(problems).toEqual([
      "app.skills.mirrors.Bad Name: mirror names may use lowercase letters, digits, '_' and '-' (1–64, a letter or " +
        'digit first)',
      'app.skills.mirrors.a.source: missing; expected a non-empty string',
      'app.skills.mirrors.b.interval: "10s" is not allowed; expected a duration from 1m to 7d, like 15m, 2h or 1d ' +
        '(units s, m, h, d)',
      'app.skills.mirrors.b.x: unknown key (known keys: source, interval)',
    ]);
  });

  it('reads a TOML file and lets the environment override it', () => {
    const tree = tempTree();
    try {
      tree.write(
        'config.toml',
        '[app]\nport = 8080\n[app.skills]\nenabled = true\ndirectories = ["skills", "/abs"]\nvalidation = "lenient"\n',
      );
      const sut = loadConfig({
        env: { SKILLHOST_PORT: '9090', SKILLHOST_SKILLS_CATALOGUE_FORMAT: 'xml' },
        projectRoot: tree.root,
        homeDir,
      });
      expect(sut.app.port).toBe(9090);
      expect(sut.app.skills.enabled).toBe(true);
      expect(sut.app.skills.validation).toBe('lenient');
      expect(sut.app.skills.catalogueFormat).toBe('xml');
      expect(sut.app.skills.directories).toEqual([
        { configured: 'skills', path: tree.path('skills') },
        { configured: '/abs', path: '/abs' },
      ]);
    } finally {
      tree.cleanup();
    }
  });

  it('takes the file path from SKILLHOST_CONFIG and fails when that file is missing', () => {
    expect(
      problemsOf(() => loadConfig({ env: { SKILLHOST_CONFIG: '/nope/config.toml' }, projectRoot, homeDir })),
    ).toEqual(['config file /nope/config.toml: cannot be read (ENOENT)']);
  });

  it('reads list and boolean overrides from the environment', () => {
    const sut = loadConfig({
      env: { SKILLHOST_SKILLS_ENABLED: 'yes', SKILLHOST_SKILLS_DIRECTORIES: 'a, ~/b' },
      toml: {},
      projectRoot,
      homeDir,
    });
    expect(sut.app.skills.enabled).toBe(true);
    expect(sut.app.skills.directories.map((d) => d.path)).toEqual(['/srv/app/a', '/home/u/b']);
  });

  it('reports every problem on its own line, naming the key, the value and what is allowed', () => {
    const problems = problemsOf(() =>
      loadConfig({
        env: { SKILLHOST_SKILLS_MAX_DEPTH: '9' },
        toml: {
          app: {
            port: 70000,
            skills: { validation: 'loose', enabled: 'yes', catalogue_format: 'yaml', directories: 'skills', extra: 1 },
          },
        },
        projectRoot,
        homeDir,
      }),
    );
    expect(problems).toEqual([
      'app.port: 70000 is not allowed; expected an integer from 0 to 65535',
      'app.skills.enabled: "yes" is not allowed; expected true or false',
      'app.skills.directories: "skills" is not allowed; expected a list of non-empty strings',
      'app.skills.validation: "loose" is not allowed; expected one of strict, standard, lenient',
      'app.skills.catalogue_format: "yaml" is not allowed; expected one of json, xml, markdown',
      'SKILLHOST_SKILLS_MAX_DEPTH (app.skills.max_depth): 9 is not allowed; expected an integer from 1 to 6',
      expect.stringMatching(/^app\.skills\.extra: unknown key/),
    ]);
  });

  it(
    'reads [app.skills.import]: defaults, hosts from the file or the environment, and refuses a host that is not ' +
      'one',
    () => {
      const defaults = loadConfig({ env: {}, toml: {}, projectRoot, homeDir }).app.skills.import;
      expect(defaults).toEqual({ memberHosts: [], maxCloneBytes: 256 * 1024 * 1024, maxConcurrent: 2 });
      const hosts = ['git.corp.example', 'skills.internal:8443', '*.corp.example', '10.0.0.7', '[fd00::7]:443'];
      const toml = { app: { skills: { import: { member_hosts: hosts } } } };
      expect(loadConfig({ env: {}, toml, projectRoot, homeDir }).app.skills.import.memberHosts).toEqual(hosts);
      const fromEnv = loadConfig({
        env: { SKILLHOST_SKILLS_IMPORT_MEMBER_HOSTS: '["git.corp.example"]' },
        toml: {},
        projectRoot,
        homeDir,
      });
      expect(fromEnv.app.skills.import.memberHosts).toEqual(['git.corp.example']);
      const problems = problemsOf(() =>
        loadConfig({
          env: {},
          toml: { app: { skills: { import: { member_hosts: ['https://git.corp.example/'] } } } },
          projectRoot,
          homeDir,
        }),
      );
      expect(problems).toEqual([expect.stringMatching(/^app\.skills\.import\.member_hosts: .*a list of host names/)]);
    },
  );

  it('honours PORT when SKILLHOST_PORT is not set (the platform convention)', () => {
    expect(loadConfig({ env: { PORT: '8081' }, toml: {}, projectRoot, homeDir }).app.port).toBe(8081);
    expect(loadConfig({ env: { PORT: '8081', SKILLHOST_PORT: '9000' }, toml: {}, projectRoot, homeDir }).app.port).toBe(
      9000,
    );
    expect(problemsOf(() => loadConfig({ env: { PORT: 'eighty' }, toml: {}, projectRoot, homeDir }))).toEqual([
      'PORT (app.port): "eighty" is not allowed; expected an integer from 0 to 65535',
    ]);
  });

  it('refuses a malformed DATABASE_URL at load time without echoing it (it may hold a password)', () => {
    for (const url of ['not a url', 'mysql://u:secret@h/db', 'postgres://', 'postgres:///db']) {
      const problems = problemsOf(() => loadConfig({ env: { DATABASE_URL: url }, toml: {}, projectRoot, homeDir }));
      expect(problems).toEqual([
        'DATABASE_URL (app.database.url): (a URL that is not valid here; not shown, it may hold a password) is ' +
          'not allowed; expected a postgres:// or postgresql:// URL with a host (or empty for the embedded ' +
          'PostgreSQL)',
      ]);
    }
    expect(
      loadConfig({ env: { DATABASE_URL: 'postgresql://app:s3cret@db:5432/x' }, toml: {}, projectRoot, homeDir }).app
        .database.url,
    ).toBe('postgresql://app:s3cret@db:5432/x');
  });

  it('turns telemetry on with an OTLP/HTTP endpoint, off by default, and refuses a URL it cannot export to', () => {
    expect(loadConfig({ env: {}, toml: {}, projectRoot, homeDir }).app.telemetry).toEqual({
      endpoint: '',
      serviceName: 'skillhost',
      metricsIntervalMs: 60_000,
      sampleRatio: 1,
      acceptTraceContext: false,
      headers: {},
      headersEnv: {},
      exportHeaders: {},
    });
    const on = loadConfig({
      env: { SKILLHOST_TELEMETRY_ENDPOINT: 'https://otel.example.test:4318/' },
      toml: { app: { telemetry: { service_name: 'skillhost-eu', metrics_interval_ms: 5000 } } },
      projectRoot,
      homeDir,
    });
    expect(on.app.telemetry).toMatchObject({
      endpoint: 'https://otel.example.test:4318',
      serviceName: 'skillhost-eu',
      metricsIntervalMs: 5000,
    });
    for (const endpoint of ['localhost:4318', 'grpc://collector:4317', 'http://', 'http://c:4318/?token=x']) {
      const problems = problemsOf(() =>
        loadConfig({ env: {}, toml: { app: { telemetry: { endpoint } } }, projectRoot, homeDir }),
      );
      expect(problems).toEqual([
        'app.telemetry.endpoint: (a URL that is not valid here; not shown, it may hold a password) is not allowed; ' +
          'expected an http:// or https:// URL with a host and no query, like http://127.0.0.1:4318 (or empty for off)',
      ]);
    }
  });

  it(
    "reads OpenTelemetry's standard variables only where Skillhost's configuration says nothing: the file and its " +
      'SKILLHOST_TELEMETRY_ variables win',
    () => {
      const standard = {
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        OTEL_SERVICE_NAME: 'from-otel',
        OTEL_METRIC_EXPORT_INTERVAL: '15000',
      };
      const telemetryOf = (env: Record<string, string>, telemetry: Record<string, unknown> = {}) =>
        loadConfig({ env, toml: { app: { telemetry } }, projectRoot, homeDir }).app.telemetry;
      expect(telemetryOf(standard)).toMatchObject({
        endpoint: 'http://collector:4318',
        serviceName: 'from-otel',
        metricsIntervalMs: 15000,
      });
      // An endpoint written empty is telemetry turned off, whatever the standard variable says.
      expect(telemetryOf(standard, { endpoint: '', service_name: 'skillhost-eu' })).toMatchObject({
        endpoint: '',
        serviceName: 'skillhost-eu',
        metricsIntervalMs: 15000,
      });
      expect(
        telemetryOf(
          { ...standard, SKILLHOST_TELEMETRY_ENDPOINT: 'http://mine:4318' },
          { endpoint: 'http://file:4318' },
        ),
      ).toMatchObject({ endpoint: 'http://mine:4318' });
      expect(
        problemsOf(() => loadConfig({ env: { OTEL_METRIC_EXPORT_INTERVAL: 'often' }, toml: {}, projectRoot, homeDir })),
      ).toEqual([
        'OTEL_METRIC_EXPORT_INTERVAL (app.telemetry.metrics_interval_ms): "often" is not allowed; expected an ' +
          'integer from 100 to 3600000',
      ]);
    },
  );

  it('reads the sampling ratio, 0 to 1, from the file or the environment, and refuses one outside', () => {
    const ratioOf = (env: Record<string, string>, toml: Record<string, unknown> = {}) =>
      loadConfig({ env, toml, projectRoot, homeDir }).app.telemetry.sampleRatio;
    expect(ratioOf({})).toBe(1);
    expect(ratioOf({}, { app: { telemetry: { sample_ratio: 0 } } })).toBe(0);
    expect(ratioOf({}, { app: { telemetry: { sample_ratio: 0.25 } } })).toBe(0.25);
    expect(ratioOf({ SKILLHOST_TELEMETRY_SAMPLE_RATIO: '0.1' }, { app: { telemetry: { sample_ratio: 1 } } })).toBe(0.1);
    const expected = 'expected a number from 0 to 1, like 0.25 for one turn in four (0: none, 1: every one)';
    expect(
      problemsOf(() =>
        loadConfig({ env: {}, toml: { app: { telemetry: { sample_ratio: 1.5 } } }, projectRoot, homeDir }),
      ),
    ).toEqual([`app.telemetry.sample_ratio: 1.5 is not allowed; ${expected}`]);
    for (const [text, shown] of [
      ['-0.1', '-0.1'],
      ['10%', '"10%"'],
      ['', undefined],
    ] as const) {
      const load = () =>
        loadConfig({ env: { SKILLHOST_TELEMETRY_SAMPLE_RATIO: text }, toml: {}, projectRoot, homeDir });
      // An empty variable is no variable.
      if (shown === undefined) expect(load().app.telemetry.sampleRatio).toBe(1);
      else
        expect(problemsOf(load)).toEqual([
          `SKILLHOST_TELEMETRY_SAMPLE_RATIO (app.telemetry.sample_ratio): ${shown} is not allowed; ${expected}`,
        ]);
    }
  });

  it(
    "sends [app.telemetry] headers as written and headers_env's from the environment variables they name, read at " +
      'start-up',
    () => {
      const sut = loadConfig({
        env: { HONEYCOMB_API_KEY: 'hc-secret', SKILLHOST_TELEMETRY_HEADERS: 'x-a=1, x-b=two%20words' },
        toml: {
          app: {
            telemetry: {
              headers: { 'X-Scope-OrgID': 'team-a' },
              headers_env: { 'x-honeycomb-team': 'HONEYCOMB_API_KEY' },
            },
          },
        },
        projectRoot,
        homeDir,
      });
      // The variable replaces the file's table, as every variable replaces its key.
      expect(sut.app.telemetry.exportHeaders).toEqual({
        'x-a': '1',
        'x-b': 'two words',
        'x-honeycomb-team': 'hc-secret',
      });
      expect(sut.app.telemetry.headersEnv).toEqual({ 'x-honeycomb-team': 'HONEYCOMB_API_KEY' });
    },
  );

  it(
    'stops on a header variable that is not set, a secret a header cannot carry (without showing it), a header named ' +
      'twice, and a table it cannot send',
    () => {
      const problems = (env: Record<string, string>, telemetry: Record<string, unknown>) =>
        problemsOf(() => loadConfig({ env, toml: { app: { telemetry } }, projectRoot, homeDir }));
      expect(problems({ EMPTY: '' }, { headers_env: { authorization: 'UNSET_KEY', 'x-key': 'EMPTY' } })).toEqual([
        'app.telemetry.headers_env.authorization: the environment variable UNSET_KEY is not set (or is empty); ' +
          "set it to the header's value, or remove the header",
        'app.telemetry.headers_env.x-key: the environment variable EMPTY is not set (or is empty); set it to ' +
          "the header's value, or remove the header",
      ]);
      const secret = 'line1\r\nX-Injected: yes';
      const injected = problems({ KEY: secret }, { headers_env: { authorization: 'KEY' } });
      expect(injected).toEqual([
        'app.telemetry.headers_env.authorization: the value of KEY holds a line break or another character a header ' +
          'cannot carry (not shown, it is a secret)',
      ]);
      expect(injected.join('\n')).not.toContain('line1');
      expect(
        problems({ KEY: 'k' }, { headers: { Authorization: 'a' }, headers_env: { authorization: 'KEY' } }),
      ).toEqual([
        'app.telemetry.headers_env.authorization: the header is also in app.telemetry.headers; name each header once',
      ]);
      const expected =
        'expected a table of header names and values, each name once (in an environment variable: ' +
        'name=value,name=value)';
      expect(problems({}, { headers: { 'bad name': 'v' } })).toEqual([
        `app.telemetry.headers: {"bad name":"v"} is not allowed; ${expected}`,
      ]);
      expect(problems({}, { headers: { 'x-a': '1', 'X-A': '2' } })).toEqual([
        `app.telemetry.headers: {"x-a":"1","X-A":"2"} is not allowed; ${expected}`,
      ]);
      expect(problems({ SKILLHOST_TELEMETRY_HEADERS: 'no-equals-sign' }, {})).toEqual([
        `SKILLHOST_TELEMETRY_HEADERS (app.telemetry.headers): "no-equals-sign" is not allowed; ${expected}`,
      ]);
      expect(problems({}, { headers_env: { authorization: 'not a variable' } })).toEqual([
        'app.telemetry.headers_env: {"authorization":"not a variable"} is not allowed; expected a table of header ' +
          'names and the environment variables holding their values, each name once (in an environment variable: ' +
          'name=value,name=value)',
      ]);
    },
  );

  it(
    'reads a well-formed bootstrap admin key from SKILLHOST_BOOTSTRAP_ADMIN_KEY or [app.auth], the environment ' +
      'winning',
    () => {
      const [fromEnv, fromFile] = [`skh_${'A'.repeat(43)}`, `skh_${'b-_9'.repeat(10)}xyz`];
      expect(
        loadConfig({
          env: { SKILLHOST_BOOTSTRAP_ADMIN_KEY: fromEnv },
          toml: { app: { auth: { bootstrap_admin_key: fromFile } } },
          projectRoot,
          homeDir,
        }).app.auth.bootstrapAdminKey,
      ).toBe(fromEnv);
      expect(
        loadConfig({ env: {}, toml: { app: { auth: { bootstrap_admin_key: fromFile } } }, projectRoot, homeDir }).app
          .auth.bootstrapAdminKey,
      ).toBe(fromFile);
    },
  );

  it(
    'refuses a malformed bootstrap admin key at load time, saying what a key looks like, without echoing ' +
      'any of it',
    () => {
      const malformed = [
        `skh_${'A'.repeat(42)}`,
        `skh_${'A'.repeat(44)}`,
        `skh_${'A'.repeat(42)}+`,
        `SKH_${'A'.repeat(43)}`,
        `skh_${'A'.repeat(43)}\n`,
        ` skh_${'A'.repeat(43)}`,
        'hunter2-secret',
      ];
      for (const key of malformed) {
        const problems = problemsOf(() =>
          loadConfig({ env: { SKILLHOST_BOOTSTRAP_ADMIN_KEY: key }, toml: {}, projectRoot, homeDir }),
        );
        expect(problems).toEqual([
          `SKILLHOST_BOOTSTRAP_ADMIN_KEY (app.auth.bootstrap_admin_key): (a value of ${key.length} characters; ` +
            `not shown, it is a secret) is not allowed; expected an API key: 'skh_' and 43 characters of A-Z, a-z, ` +
            `0-9, '_' or '-', as \`skillhost keys generate\` prints (or empty for none)`,
        ]);
        const message = new ConfigError(problems).message;
        for (const part of [key.trim(), key.trim().slice(4, 14)]) expect(message).not.toContain(part);
      }
      expect(
        problemsOf(() =>
          loadConfig({ env: {}, toml: { app: { auth: { bootstrap_admin_key: 12345 } } }, projectRoot, homeDir }),
        ),
      ).toEqual([
        expect.stringMatching(
          /^app\.auth\.bootstrap_admin_key: \(a number; not shown, it is a secret\) is not allowed; /,
        ),
      ]);
    },
  );

  it('reports a section written as a plain value, and unknown keys at any depth, each on its line', () => {
    const problems = problemsOf(() =>
      loadConfig({ env: {}, toml: { app: { tools: 3, colour: 'red' }, extra: {} }, projectRoot, homeDir }),
    );
    expect(problems).toEqual([
      'app.tools: 3 is not allowed; expected a table',
      expect.stringMatching(/^app\.colour: unknown key \(known keys: app\.port, /),
      expect.stringMatching(/^extra: unknown key/),
    ]);
  });

  it('reports invalid TOML', () => {
    const tree = tempTree();
    try {
      tree.write('config.toml', '[app\nport = 1');
      expect(problemsOf(() => loadConfig({ env: {}, projectRoot: tree.root, homeDir }))[0]).toMatch(
        /config\.toml: invalid TOML/,
      );
    } finally {
      tree.cleanup();
    }
  });

  it('returns a frozen object', () => {
    const sut = configWith({ 'app.skills.enabled': true });
    expect(Object.isFrozen(sut.app.skills)).toBe(true);
    expect(Object.isFrozen(sut.app.skills.directories[0])).toBe(true);
  });
});
