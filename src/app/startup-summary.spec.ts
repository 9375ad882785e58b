import { describe, expect, it } from '@jest/globals';
import { listeningLine, type StartupFacts, startupSummary } from './startup-summary.js';

function facts(overrides: Partial<StartupFacts> = {}): StartupFacts {
  return {
    authMode: 'none',
    host: '127.0.0.1',
    database: 'embedded PostgreSQL on 127.0.0.1:54329, data in /srv/.data/postgres',
    skills: {
      loaded: 3,
      invalid: 0,
      directories: [
        { configured: './.skills', exists: false, skills: 0 },
        { configured: './skills', exists: true, skills: 3 },
      ],
    },
    mcp: true,
    models: [],
    defaultModel: undefined,
    ...overrides,
  };
}

describe(startupSummary.name, () => {
  it(
    'is five lines: where to go, auth, database, skills, models; a missing folder nobody needs is not ' + 'mentioned',
    () => {
      expect(listeningLine('1.2.3', 'http://127.0.0.1:3000')).toBe(
        'Skillhost 1.2.3 listening at http://127.0.0.1:3000',
      );
      expect(startupSummary(facts())).toEqual([
        'Open the chat page at /, the API at /docs (REST) and /graphql, agents at /mcp',
        "Auth: off on this loopback address: requests without a key act as the admin 'local' (a key that is sent " +
          'is still checked)',
        'Database: embedded PostgreSQL on 127.0.0.1:54329, data in /srv/.data/postgres',
        'Skills: 3 loaded from ./skills',
        'Models: none configured, so chats answer 503 MODEL_NOT_CONFIGURED until you configure one: ' +
          'SKILLHOST_MODEL with OPENAI_BASE_URL (any OpenAI-compatible server, e.g. Ollama), or [app.models.NAME] ' +
          'in config.toml; see docs/configuration.md#models',
      ]);
    },
  );

  it('names the default model, the keys to make when auth is on, and every source of skills with its count', () => {
    const lines = startupSummary(
      facts({
        authMode: 'api_key',
        models: ['local', 'claude'],
        defaultModel: 'local',
        skills: {
          loaded: 7,
          invalid: 2,
          directories: [
            { configured: './.skills', exists: true, skills: 1 },
            { configured: './skills', exists: true, skills: 3 },
            { configured: './code', exists: true, skills: 1, code: true },
          ],
        },
      }),
    );
    expect(lines[1]).toBe(
      'Auth: API keys required; make one with `npx skillhost users add NAME --admin` and `npx skillhost keys ' +
        'create --user NAME`',
    );
    expect(lines[3]).toBe(
      'Skills: 7 loaded from ./.skills (1), ./skills (3), ./code (1), the skill store (2); 2 invalid: `npx ' +
        'skillhost list` or GET /v1/admin/skills says why',
    );
    expect(lines[4]).toBe('Models: local (default), claude');
  });

  it('does not call auth off safe on an address others can reach (app.auth.mode = none on 0.0.0.0)', () => {
    expect(startupSummary(facts({ host: '0.0.0.0' }))[1]).toBe(
      'Auth: OFF on 0.0.0.0, which is not a loopback address: anyone who can reach it acts as the admin ' +
        "'local'; set SKILLHOST_AUTH_MODE=api_key unless a proxy in front authenticates",
    );
    expect(startupSummary(facts({ host: 'localhost' }))[1]).toMatch(/^Auth: off on this loopback address/);
    expect(startupSummary(facts({ authMode: 'api_key', host: '0.0.0.0' }))[1]).toMatch(/^Auth: API keys required/);
  });

  it('says how to get a first skill when none loaded, and when skills or MCP are off', () => {
    expect(
      startupSummary(
        facts({
          skills: { loaded: 0, invalid: 0, directories: [{ configured: './.skills', exists: false, skills: 0 }] },
        }),
      )[3],
    ).toBe('Skills: none loaded (looked in ./.skills); `npx skillhost create NAME` makes one in ./.skills');
    const off = startupSummary(facts({ skills: undefined }));
    expect(off[0]).toBe('Open the chat page at /, the API at /docs (REST) and /graphql');
    expect(off[3]).toBe('Skills: off ([app.skills] enabled = false, or SKILLHOST_SKILLS_ENABLED=false)');
    expect(startupSummary(facts({ mcp: false }))[0]).not.toContain('/mcp');
  });
});
