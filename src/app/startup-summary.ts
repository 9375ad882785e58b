import { isLoopbackHost } from '../domain/users/auth-mode.js';
import type { DirectoryReport } from '@skillhost/core';

/** What a person starting the server needs to know, gathered once it listens. */
export interface StartupFacts {
  authMode: 'api_key' | 'none';
  /** The address it listens on (app.host): auth off is only safe on a loopback one. */
  host: string;
  /** Which database, without its password (DatabaseLifecycle.description). */
  database: string;
  /** Undefined while skills are off. */
  skills:
    | {
        loaded: number;
        invalid: number;
        directories: readonly Pick<DirectoryReport, 'configured' | 'exists' | 'skills' | 'code'>[];
      }
    | undefined;
  mcp: boolean;
  models: readonly string[];
  defaultModel: string | undefined;
}

/** Fastify's "listening" line, the first of the summary: one per address it listens on. */
export function listeningLine(version: string, address: string): string {
  return `Skillhost ${version} listening at ${address}`;
}

/** The rest of the start-up summary: where to go, auth, database, skills, models; one line each. */
export function startupSummary(facts: StartupFacts): string[] {
  return [
    doorsLine(facts),
    authLine(facts.authMode, facts.host),
    `Database: ${facts.database}`,
    skillsLine(facts.skills),
    modelsLine(facts.models, facts.defaultModel),
  ];
}

function doorsLine(facts: StartupFacts): string {
  const doors = ['the chat page at /', 'the API at /docs (REST) and /graphql'];
  if (facts.skills !== undefined && facts.mcp) doors.push('agents at /mcp');
  return `Open ${doors.join(', ')}`;
}

function authLine(mode: StartupFacts['authMode'], host: string): string {
  if (mode === 'api_key')
    return (
      'Auth: API keys required; make one with `npx skillhost users add NAME --admin` and `npx skillhost keys ' +
      'create --user NAME`'
    );
  if (!isLoopbackHost(host))
    return (
      `Auth: OFF on ${host}, which is not a loopback address: anyone who can reach it acts as the admin 'local'; ` +
      `set SKILLHOST_AUTH_MODE=api_key unless a proxy in front authenticates`
    );
  return (
    "Auth: off on this loopback address: requests without a key act as the admin 'local' (a key that is sent is " +
    'still checked)'
  );
}

function skillsLine(skills: StartupFacts['skills']): string {
  if (skills === undefined) return 'Skills: off ([app.skills] enabled = false, or SKILLHOST_SKILLS_ENABLED=false)';
  const folders = skills.directories.filter((directory) => directory.code !== true);
  const invalid =
    skills.invalid > 0 ? `; ${skills.invalid} invalid: \`npx skillhost list\` or GET /v1/admin/skills says why` : '';
  if (skills.loaded === 0) {
    const where = folders.map((directory) => directory.configured).join(', ') || 'no folder';
    const create = folders.length > 0 ? `; \`npx skillhost create NAME\` makes one in ${folders[0].configured}` : '';
    return `Skills: none loaded (looked in ${where})${invalid}${create}`;
  }
  const sources = skills.directories
    .filter((directory) => directory.skills > 0)
    .map((directory) => ({ name: directory.configured, count: directory.skills }));
  const others = skills.loaded - sources.reduce((sum, source) => sum + source.count, 0);
  if (others > 0) sources.push({ name: 'the skill store', count: others });
  const from =
    sources.length === 1 ? sources[0].name : sources.map((source) => `${source.name} (${source.count})`).join(', ');
  return `Skills: ${skills.loaded} loaded from ${from}${invalid}`;
}

function modelsLine(models: readonly string[], defaultModel: string | undefined): string {
  if (models.length === 0) {
    return (
      'Models: none configured, so chats answer 503 MODEL_NOT_CONFIGURED until you configure one: SKILLHOST_MODEL ' +
      'with OPENAI_BASE_URL (any OpenAI-compatible server, e.g. Ollama), or [app.models.NAME] in config.toml; see ' +
      'docs/configuration.md#models'
    );
  }
  if (models.length === 1) return `Models: ${models[0]}`;
  return `Models: ${models.map((name) => (name === defaultModel ? `${name} (default)` : name)).join(', ')}`;
}
