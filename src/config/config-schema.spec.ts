import { availableParallelism } from 'node:os';
import { describe, expect, it } from '@jest/globals';
import { SKILLS_OPTIONS } from '@skillhost/core';
import { ConfigError, loadConfig } from './config-loader.js';
import { CONFIG_SETTINGS, MAX_WORKERS, renderConfigReference, SETTINGS, settingLabel } from './config-schema.js';
import { CONFIG_TREE_SCHEMA } from './config-validation.js';

/**
 * The one settings tree: what its schema fills in, what the environment overrides, and how the skills library's options
 * sit in it.
 */
describe('CONFIG_SETTINGS', () => {
  const place = { projectRoot: '/srv/app', homeDir: '/home/u' };
  const problemsOf = (env: Record<string, string>, toml: Record<string, unknown> = {}): readonly string[] => {
    try {
      loadConfig({ env, toml, ...place });
    } catch (error) {
      if (error instanceof ConfigError) return error.problems;
      throw error;
    }
    throw new Error('expected a ConfigError');
  };

  describe('the schema', () => {
    it('fills every key with its default from an empty file, and gives the TOML-shaped values', () => {
      const sut = CONFIG_TREE_SCHEMA.parse({});
      expect(sut.app.port).toBe(3000);
      expect(sut.app.skills).toMatchObject({
        enabled: false,
        max_depth: 1,
        catalogue_format: 'json',
        explicit_prefixes: ['/'],
        store_directory: './.data/skill-store',
      });
      expect(sut.app.tools.style).toBe('skillhost');
      expect(sut.app.database).toEqual({
        url: '',
        pool_size: 20,
        embedded_dir: './.data/postgres',
        statement_timeout_ms: 5000,
        embedded_port: 54329,
      });
    });

    it('keeps a value the file gives over the default, and refuses an unknown key in any section', () => {
      expect(CONFIG_TREE_SCHEMA.parse({ app: { skills: { max_depth: 3 } } }).app.skills.max_depth).toBe(3);
      expect(CONFIG_TREE_SCHEMA.safeParse({ app: { skills: { colour: 'red' } } }).success).toBe(false);
    });
  });

  describe('the environment', () => {
    it(
      "names each key's variable after its path, but for those that keep a name of their own or the platform's (PORT " +
        'read after SKILLHOST_PORT, the lower-case proxy variables after the upper-case ones)',
      () => {
        const named = SETTINGS.filter(
          ({ key, env }) => env !== `SKILLHOST_${key.split('.').slice(1).join('_').toUpperCase()}`,
        ).map(({ key, env }) => [key, env]);
        expect(named).toEqual([
          ['app.auth.bootstrap_admin_key', 'SKILLHOST_BOOTSTRAP_ADMIN_KEY'],
          ['app.auth.oidc.client_secret', 'SKILLHOST_OIDC_CLIENT_SECRET'],
          ['app.database.url', 'DATABASE_URL'],
          ['app.proxy.http', 'HTTP_PROXY'],
          ['app.proxy.https', 'HTTPS_PROXY'],
          ['app.proxy.no_proxy', 'NO_PROXY'],
        ]);
        expect(SETTINGS.filter((s) => s.fallbackEnv !== undefined).map((s) => [s.key, s.fallbackEnv])).toEqual([
          ['app.port', 'PORT'],
          ['app.proxy.http', 'http_proxy'],
          ['app.proxy.https', 'https_proxy'],
          ['app.proxy.no_proxy', 'no_proxy'],
        ]);
        // OpenTelemetry's standard variables, read below the file (the loader's spec shows the order).
        expect(SETTINGS.filter((s) => s.standardEnv !== undefined).map((s) => [s.key, s.standardEnv])).toEqual([
          ['app.telemetry.endpoint', 'OTEL_EXPORTER_OTLP_ENDPOINT'],
          ['app.telemetry.service_name', 'OTEL_SERVICE_NAME'],
          ['app.telemetry.metrics_interval_ms', 'OTEL_METRIC_EXPORT_INTERVAL'],
        ]);
        expect(settingLabel('app.skills.max_depth')).toBe('SKILLHOST_SKILLS_MAX_DEPTH (app.skills.max_depth)');
      },
    );

    it("overrides the file, read as the setting's kind", () => {
      const sut = loadConfig({
        env: { SKILLHOST_SKILLS_MAX_DEPTH: '4', SKILLHOST_SKILLS_WATCH: 'on', SKILLHOST_SKILLS_DISABLED: 'a, b' },
        toml: { app: { skills: { max_depth: 2, watch: false } } },
        ...place,
      });
      expect(sut.app.skills).toMatchObject({ maxDepth: 4, watch: true, disabled: ['a', 'b'] });
    });
  });

  describe('bad values', () => {
    it('are one line each, naming the variable that gave them, in the order of the tree', () => {
      expect(
        problemsOf({ SKILLHOST_TOOLS_STYLE: 'mine', SKILLHOST_SKILLS_MAX_DEPTH: '7' }, { app: { port: -1 } }),
      ).toEqual([
        'app.port: -1 is not allowed; expected an integer from 0 to 65535',
        'SKILLHOST_SKILLS_MAX_DEPTH (app.skills.max_depth): 7 is not allowed; expected an integer from 1 to 6',
        'SKILLHOST_TOOLS_STYLE (app.tools.style): "mine" is not allowed; expected one of skillhost, ' +
          'activate_skill, load_skill, use_skill',
      ]);
    });

    it('in a list are one line about the list, saying what it may hold', () => {
      expect(
        problemsOf({}, { app: { skills: { explicit_prefixes: ['/', '#', '!'], directories: ['a', ''] } } }),
      ).toEqual([
        'app.skills.directories: ["a",""] is not allowed; expected a list of non-empty strings',
        'app.skills.explicit_prefixes: ["/","#","!"] is not allowed; expected a list of /, $',
      ]);
    });
  });

  describe('[app] workers', () => {
    const workersOf = (env: Record<string, string>, toml: Record<string, unknown> = {}) =>
      loadConfig({ env, toml, ...place }).app.workers;

    it('is one process unless asked, a count from the file or SKILLHOST_WORKERS, and auto is one per core', () => {
      expect(workersOf({})).toBe(1);
      expect(workersOf({}, { app: { workers: 3 } })).toBe(3);
      expect(workersOf({ SKILLHOST_WORKERS: '2' }, { app: { workers: 3 } })).toBe(2);
      expect(workersOf({}, { app: { workers: 'auto' } })).toBe(Math.min(availableParallelism(), MAX_WORKERS));
      expect(workersOf({ SKILLHOST_WORKERS: 'auto' })).toBe(Math.min(availableParallelism(), MAX_WORKERS));
    });

    it('refuses anything but a count from 1 to the most, or auto, with one line saying what is allowed', () => {
      const expected = `expected an integer from 1 to ${MAX_WORKERS}, or 'auto' (one per core)`;
      expect(problemsOf({}, { app: { workers: 0 } })).toEqual([`app.workers: 0 is not allowed; ${expected}`]);
      expect(problemsOf({ SKILLHOST_WORKERS: 'all' })).toEqual([
        `SKILLHOST_WORKERS (app.workers): "all" is not allowed; ${expected}`,
      ]);
      expect(problemsOf({}, { app: { workers: 2.5 } })).toEqual([`app.workers: 2.5 is not allowed; ${expected}`]);
      expect(problemsOf({}, { app: { workers: MAX_WORKERS + 1 } })).toEqual([
        `app.workers: ${MAX_WORKERS + 1} is not allowed; ${expected}`,
      ]);
      expect(problemsOf({}, { app: { workers: 'AUTO' } })).toEqual([`app.workers: "AUTO" is not allowed; ${expected}`]);
    });

    it('appears in the reference table with its variable and both kinds of value', () => {
      expect(renderConfigReference()).toContain(
        `| \`[app]\` \`workers\` | \`SKILLHOST_WORKERS\` | integer 1–${MAX_WORKERS} or \`auto\` | \`1\` |`,
      );
    });
  });

  describe("the skills library's options", () => {
    it("are the server's [app.skills] and [app.tools] keys: the same rule, default and bounds", () => {
      const sut = CONFIG_SETTINGS.app;
      expect(sut.skills.max_depth).toBe(SKILLS_OPTIONS.maxDepth);
      expect(sut.skills.catalogue_budget_tokens).toBe(SKILLS_OPTIONS.catalogue.budgetTokens);
      expect(sut.tools.style).toBe(SKILLS_OPTIONS.toolStyle);
      // The server scans default folders where the library requires them, and says what include_location does in its
      // prompts.
      expect(sut.skills.directories.rule).toBe(SKILLS_OPTIONS.directories.rule);
      expect(SKILLS_OPTIONS.directories.default).toBeUndefined();
      expect(sut.skills.directories.default).toEqual([
        './.skills',
        './.agents/skills',
        '~/.agents/skills',
        '~/.skillhost/skills',
      ]);
      expect(sut.skills.include_location.rule).toBe(SKILLS_OPTIONS.catalogue.includeLocation.rule);
    });

    it("are refused by the server's file with the library's bounds", () => {
      expect(problemsOf({}, { app: { skills: { catalogue_max_skills: 10_001 } } })).toEqual([
        'app.skills.catalogue_max_skills: 10001 is not allowed; expected an integer from 1 to 10000',
      ]);
    });

    it('appear in the reference table with the rule the library gives them', () => {
      expect(renderConfigReference()).toContain(
        '| `[app.skills]` `max_depth` | `SKILLHOST_SKILLS_MAX_DEPTH` | integer 1–6 | `1` |',
      );
    });
  });
});
