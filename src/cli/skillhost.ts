import { existsSync, statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  AppError,
  buildSnapshot,
  discoverCommands,
  discoverSkills,
  type FolderInspection,
  inspectSkillFolder,
  renderCatalogue,
} from '@skillhost/core';
import {
  CATALOGUE_FORMATS,
  type CatalogueFormat,
  VALIDATION_MODES,
  type ValidationMode,
} from '../config/app-config.js';
import { ConfigError, loadConfig } from '../config/config-loader.js';
import { presentAdminReport } from '../api/presenters/skill.presenter.js';
import { type CliIo, CommandFailure, UsageError } from './cli-io.js';
import { createCommand } from './create.command.js';

export type { CliIo } from './cli-io.js';

const USAGE = `Usage:
  skillhost validate PATH... [--mode strict|standard|lenient] [--json]
  skillhost to-prompt PATH... [--format xml|json|markdown] [--mode MODE]
  skillhost list [--config FILE] [--json]
  skillhost create NAME [--dir D] [--description TEXT] [--config FILE]
  skillhost users add NAME [--admin] [--config FILE] [--json]
  skillhost users list [--config FILE] [--json]
  skillhost keys create --user NAME [--label L] [--expires-at ISO] [--config FILE] [--json]
  skillhost keys list [--user NAME] [--config FILE] [--json]
  skillhost keys revoke ID [--config FILE] [--json]
  skillhost keys generate
  skillhost install PATH|ARCHIVE|SOURCE [--submodules] [--personal --user NAME] [--config FILE] [--json]
  skillhost uninstall NAME [--personal --user NAME] [--config FILE] [--json]
  skillhost versions NAME [--personal --user NAME] [--config FILE] [--json]
  skillhost enable NAME [--config FILE] [--json]
  skillhost disable NAME [--config FILE] [--json]
  skillhost install|uninstall|versions|enable|disable ... --server URL [--key-env NAME] [--personal] [--json]
  skillhost mirrors list|add NAME SOURCE [--interval 15m]|run NAME|remove NAME [--config FILE] [--json]
  skillhost eval [NAME...] [--level catalogue|model [--model M]] [--config FILE] [--json]
  skillhost eval NAME... --server URL [--key-env NAME] [--level catalogue|model [--model M]] [--json]
  skillhost sync --server URL (--target claude|codex|gemini|cursor|opencode|agents [--project] | --dir PATH)...
                 [--key-env NAME] [--dry-run] [--watch [--interval SECONDS]] [--pin NAME@sha256:HEX] [--unpin NAME]
                 [--max-file-bytes N] [--json]
  skillhost login --server URL [--oauth [--no-browser] [--scope S] [--timeout SECONDS] | --with-key | --key-env NAME]
  skillhost logout --server URL

PATH is a skill folder or its SKILL.md (install: a skill folder, .zip, .tar.gz or .tar). SOURCE is a git
repository (git+https://…, git+file://… with #REF, #REF:PATH or #:PATH) or another server's discovery index
(https://host/.well-known/agent-skills/index.json, #NAME for one skill); --submodules checks out a git
SOURCE's submodules too. users, keys and
the store commands (install … disable, mirrors, eval) work on the configured database (DATABASE_URL
or [app.database] url; else the embedded PostgreSQL's data folder, through the running server's
PostgreSQL when there is one); keys generate needs none: it prints a new key (for
SKILLHOST_BOOTSTRAP_ADMIN_KEY) and stores it nowhere. sync mirrors the skills a server's
discovery index offers (key from SKILLHOST_API_KEY, else the one login stored for that
server) into agents' skill folders, with a skills-lock.json in each (docs/mcp-and-agents.md).
With --server, the store commands and eval go through that server's REST API as the person logged in
(SKILLHOST_API_KEY, else what login stored), with what that person may do there. eval --level model asks
the configured model (one call per case) for the skills named, with the server's own prompt and tools. login signs in
through the server's sign-in page in a browser (--oauth, the default at a terminal: a token, refreshed
as needed) or takes an API key from stdin (--with-key, the default from a pipe), checks it with the
server and stores it in $XDG_CONFIG_HOME/skillhost/credentials.json (~/.config/skillhost/); logout
removes it (and revokes a token).
Exit codes: 0 ok, 1 something invalid or failed (not found, name taken, database unreachable,
a mirror's run failed, a trigger eval failed), 2 usage or configuration error.`;

/**
 * `skillhost validate | to-prompt | list`, the same checks the server runs, from a terminal, and
 * `users` / `keys`, the server's own services on its database. The database commands are loaded
 * only when used, so the skill commands start without Nest, TypeORM or PostgreSQL.
 */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  try {
    const [command, ...rest] = argv;
    switch (command) {
      case 'validate':
        return validateCommand(rest, io);
      case 'to-prompt':
        return toPromptCommand(rest, io);
      case 'list':
        return listCommand(rest, io);
      case 'create':
        return createCommand(rest, io);
      case 'users':
        return await (await import('./users.command.js')).usersCommand(rest, io);
      case 'keys':
        return await (await import('./keys.command.js')).keysCommand(rest, io);
      case 'install':
      case 'uninstall':
      case 'versions':
      case 'enable':
      case 'disable':
        return await (await import('./store.command.js')).storeCommand(command, rest, io);
      case 'mirrors':
        return await (await import('./mirrors.command.js')).mirrorsCommand(rest, io);
      case 'eval':
        return await (await import('./eval.command.js')).evalCommand(rest, io);
      case 'sync':
        return await (await import('./sync.command.js')).syncCommand(rest, io);
      case 'login':
        return await (await import('./login.command.js')).loginCommand(rest, io);
      case 'logout':
        return await (await import('./login.command.js')).logoutCommand(rest, io);
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        io.out(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`Unknown command '${command}'.`);
    }
  } catch (error) {
    if (error instanceof UsageError || (error as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      io.err(`${(error as Error).message}\n\n${USAGE}`);
      return 2;
    }
    if (error instanceof ConfigError) {
      for (const problem of error.problems) io.err(`config: ${problem}`);
      return 2;
    }
    if (AppError.isInstance(error) || error instanceof CommandFailure) {
      io.err(oneLine(error.message));
      return 1;
    }
    throw error;
  }
}

/** The message on one line; a control character left in it (a server's or a file's text) is printed as an escape. */
function oneLine(message: string): string {
  return message
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\p{Cc}/gu, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

interface CheckedPath {
  path: string;
  valid: boolean;
  name: string | null;
  errors: readonly string[];
  warnings: readonly string[];
  inspection?: FolderInspection;
}

/** One PATH, checked like the reference validator: missing paths and files are reported, not thrown. */
function checkPath(input: string, mode: ValidationMode, cwd: string): CheckedPath {
  const absolute = resolve(cwd, input);
  const failed = (errors: string[]): CheckedPath => ({ path: input, valid: false, name: null, errors, warnings: [] });
  if (!existsSync(absolute)) return failed([`Path does not exist: ${input}`]);
  const folder = statSync(absolute).isDirectory() ? absolute : dirname(absolute);
  const inspection = inspectSkillFolder(folder, folder, mode, basename(folder));
  if (inspection === undefined) return failed(['Missing required file: SKILL.md']);
  if (inspection.kind === 'invalid') {
    const { name, errors, warnings } = inspection.invalid;
    return { path: input, valid: false, name: name ?? null, errors, warnings, inspection };
  }
  const { name, warnings } = inspection.skill;
  return { path: input, valid: true, name, errors: [], warnings, inspection };
}

function parseMode(value: string | undefined, fallback: ValidationMode): ValidationMode {
  if (value === undefined) return fallback;
  if (!(VALIDATION_MODES as readonly string[]).includes(value))
    throw new UsageError(`--mode must be one of ${VALIDATION_MODES.join(', ')}; got '${value}'.`);
  return value as ValidationMode;
}

function requirePaths(paths: string[]): string[] {
  if (paths.length === 0) throw new UsageError('Give at least one PATH.');
  return paths;
}

function validateCommand(args: string[], io: CliIo): number {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { mode: { type: 'string' }, json: { type: 'boolean' } },
  });
  const mode = parseMode(values.mode, 'strict');
  const results = requirePaths(positionals).map((path) => checkPath(path, mode, io.cwd));
  if (values.json) {
    io.out(
      JSON.stringify(
        results.map(({ inspection: _, ...rest }) => rest),
        null,
        2,
      ),
    );
  } else {
    for (const result of results) {
      if (result.valid) io.out(`Valid skill: ${result.path}`);
      else io.err([`Validation failed for ${result.path}:`, ...result.errors.map((e) => `  - ${e}`)].join('\n'));
      for (const warning of result.warnings) io.err(`  warning: ${warning}`);
    }
  }
  return results.every((r) => r.valid) ? 0 : 1;
}

function toPromptCommand(args: string[], io: CliIo): number {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { format: { type: 'string' }, mode: { type: 'string' } },
  });
  const format = (values.format ?? 'xml') as CatalogueFormat;
  if (!CATALOGUE_FORMATS.includes(format))
    throw new UsageError(`--format must be one of ${CATALOGUE_FORMATS.join(', ')}; got '${values.format}'.`);
  const results = requirePaths(positionals).map((path) => checkPath(path, parseMode(values.mode, 'strict'), io.cwd));
  const invalid = results.filter((r) => !r.valid);
  for (const result of invalid)
    io.err([`Validation failed for ${result.path}:`, ...result.errors.map((e) => `  - ${e}`)].join('\n'));
  if (invalid.length > 0) return 1;
  const entries = results.flatMap((r) => (r.inspection?.kind === 'valid' ? [r.inspection.skill] : []));
  io.out(
    renderCatalogue(
      entries.map((s) => ({ name: s.name, description: s.description, location: s.skillFile })),
      format,
      true,
    ),
  );
  return 0;
}

function listCommand(args: string[], io: CliIo): number {
  const { values } = parseArgs({
    args,
    allowPositionals: false,
    options: { config: { type: 'string' }, json: { type: 'boolean' } },
  });
  const config = loadConfig({ file: values.config, env: io.env, projectRoot: io.cwd });
  const skills = config.app.skills;
  const started = performance.now();
  const result = discoverSkills({
    directories: skills.directories,
    mode: skills.validation,
    maxDepth: skills.maxDepth,
    maxSkills: skills.maxSkills,
  });
  const commands = discoverCommands(config.app.commands.directories);
  const report = presentAdminReport(
    buildSnapshot(
      result,
      skills,
      { scannedAt: new Date(), durationMs: Math.round(performance.now() - started) },
      commands,
    ),
  );
  if (values.json) {
    io.out(JSON.stringify({ enabled: skills.enabled, ...report }, null, 2));
    return 0;
  }
  if (!skills.enabled)
    io.out(
      'Note: skills are disabled in this configuration (app.skills.enabled = false); the server would not load these.',
    );
  io.out(`Directories (mode ${report.mode}):`);
  for (const d of report.directories)
    io.out(
      `  ${d.exists ? '✓' : '✗'} ${d.configured} → ` +
        `${d.path}${d.exists ? `: ${d.skills} loaded, ${d.invalid} invalid` : ' (missing)'}`,
    );
  io.out(`\nValid (${report.valid.length}):`);
  for (const skill of result.skills)
    io.out(
      `  ${skill.name} — ${skill.description.length > 100 ? `${skill.description.slice(0, 99)}…` : skill.description}`,
    );
  if (report.invalid.length > 0) {
    io.out(`\nInvalid (${report.invalid.length}):`);
    for (const entry of report.invalid)
      io.out([`  ${entry.path}`, ...entry.errors.map((e) => `    - ${e}`)].join('\n'));
  }
  if (report.collisions.length > 0) {
    io.out(`\nCollisions (${report.collisions.length}):`);
    for (const c of report.collisions) io.out(`  ${c.name}: ${c.winner.path} wins over ${c.loser.path}`);
  }
  if (report.warnings.length > 0) {
    io.out(`\nWarnings (${report.warnings.length}):`);
    for (const warning of report.warnings) io.out(`  ${warning}`);
  }
  return 0;
}
