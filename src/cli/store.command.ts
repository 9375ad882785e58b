import { createReadStream, existsSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/config-loader.js';
import type { InstallKey } from '../domain/skills/store/skill-version-store.js';
import { readFolderFiles } from '@skillhost/core';
import { hasMarketplace } from '../domain/skills/store/plugin-marketplace.js';
import { SkillImportService } from '../domain/skills/store/skill-import.service.js';
import type { InstallResult, SkillStoreService } from '../domain/skills/store/skill-store.service.js';
import type { UsersService } from '../domain/users/users.service.js';
import { withServices } from './cli-context.js';
import { triggerEvals } from './eval.command.js';
import { type CliIo, CommandFailure, UsageError } from './cli-io.js';
import { ARCHIVE_TYPES, checkSkillName, installedText, isImportSource, printVersions } from './store-common.js';
import { SYSTEM_ACTOR } from '../domain/shared/audit.js';

const SCOPE_OPTIONS = {
  personal: { type: 'boolean' },
  user: { type: 'string' },
  config: { type: 'string' },
  json: { type: 'boolean' },
  submodules: { type: 'boolean' },
  server: { type: 'string' },
  'key-env': { type: 'string' },
} as const;

/**
 * `skillhost install | uninstall | versions | enable | disable`: the skill store on the configured
 * database, with the server's own services, so the same checks apply as over HTTP. Running
 * servers on that database hear of each change (PostgreSQL NOTIFY) and take it up within seconds.
 * With `--server URL`, the same commands go through that server's REST API as the person logged in
 * (store-remote.ts), with what that person may do there.
 */
export async function storeCommand(
  command: 'install' | 'uninstall' | 'versions' | 'enable' | 'disable',
  args: string[],
  io: CliIo,
): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: SCOPE_OPTIONS });
  if (positionals.length !== 1)
    throw new UsageError(
      `${command} takes one ${command === 'install' ? 'PATH, ARCHIVE or SOURCE' : 'NAME'}; got ${positionals.length}.`,
    );
  if (values.personal && values.user === undefined && values.server === undefined)
    throw new UsageError('--personal needs --user NAME: whose personal skill it is.');
  if (values.user !== undefined && !values.personal) throw new UsageError('--user goes with --personal.');
  if (values.submodules && command !== 'install') throw new UsageError('--submodules goes with install SOURCE.');
  if (values.personal && (command === 'enable' || command === 'disable'))
    throw new UsageError(`${command} switches a skill for everyone; it takes no --personal.`);
  if (values.server !== undefined)
    return (await import('./store-remote.js')).remoteStoreCommand(command, positionals[0], values, io);
  if (values['key-env'] !== undefined) throw new UsageError('--key-env goes with --server.');
  const config = loadConfig({ file: values.config, env: io.env, projectRoot: io.cwd });
  const [target] = positionals;
  return withServices(config, async ({ users, store, runStore, caseStore }) => {
    const scope = await scopeOf(users, values.personal === true ? values.user : undefined);
    switch (command) {
      case 'install':
        if (values.submodules && !isImportSource(target))
          throw new UsageError('--submodules goes with a git SOURCE (git+https://…, git+file://…), not a path.');
        // Trigger evals checked and the publishing gate, as a server's install has them, its runs kept
        // (docs/trigger-evals.md).
        if (config.app.skills.enabled) store.useInstallGate(await triggerEvals(config, store, runStore, caseStore));
        if (isImportSource(target) || isMarketplace(resolve(io.cwd, target)))
          return importFrom(
            new SkillImportService(store, config),
            scope,
            isImportSource(target) ? target : resolve(io.cwd, target),
            { json: values.json === true, submodules: values.submodules === true },
            io,
          );
        return install(store, scope, resolve(io.cwd, target), values.json === true, io);
      case 'uninstall':
        await store.uninstall({ ...scope.key, name: target }, SYSTEM_ACTOR);
        io.out(
          values.json
            ? JSON.stringify({ name: target, scope: scope.key.scope, uninstalled: true })
            : `Uninstalled ${describe(scope)} skill '${target}'.`,
        );
        return 0;
      case 'versions':
        return versions(store, { ...scope.key, name: target }, values.json === true, io);
      case 'enable':
      case 'disable':
        return setSwitch(store, target, command === 'enable', values.json === true, io);
    }
  });
}

interface Scope {
  key: Omit<InstallKey, 'name'>;
  owner: string | null;
}

async function scopeOf(users: UsersService, userName: string | undefined): Promise<Scope> {
  if (userName === undefined) return { key: { scope: 'shared', ownerId: null }, owner: null };
  const user = await users.getUserByName(userName);
  return { key: { scope: 'personal', ownerId: user.id }, owner: user.name };
}

function describe(scope: Scope): string {
  return scope.owner === null ? 'shared' : `${scope.owner}'s personal`;
}

async function install(
  store: SkillStoreService,
  scope: Scope,
  path: string,
  json: boolean,
  io: CliIo,
): Promise<number> {
  const result = await installFrom(store, path, {
    scope: scope.key.scope,
    ownerId: scope.key.ownerId,
    owner: scope.owner,
  });
  if (json) io.out(JSON.stringify(result, null, 2));
  else io.out(installedLine(scope, result));
  for (const warning of result.warnings) io.err(`warning: ${warning}`);
  return 0;
}

/** A folder holding a Claude Code plugin marketplace: its plugins' skills are installed. */
function isMarketplace(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory() && hasMarketplace(path, '');
}

/**
 * Every skill a git repository, another server's index or a marketplace folder names, with the same checks as the
 * import routes.
 */
async function importFrom(
  importer: SkillImportService,
  scope: Scope,
  source: string,
  { json, submodules }: { json: boolean; submodules: boolean },
  io: CliIo,
): Promise<number> {
  const target = { scope: scope.key.scope, ownerId: scope.key.ownerId, owner: scope.owner };
  // The CLI runs on the server's own machine with its database: local repositories (and the network the server
  // sits in) are the operator's to read.
  const result = isImportSource(source)
    ? await importer.importFrom(source, target, null, { localFiles: true, submodules })
    : await importer.importMarketplaceFolder(source, target, null);
  if (json) io.out(JSON.stringify(result, null, 2));
  for (const skill of json ? [] : result.skills) io.out(installedLine(scope, skill));
  for (const warning of [...result.warnings, ...result.skills.flatMap((skill) => skill.warnings)])
    io.err(`warning: ${warning}`);
  return 0;
}

function installedLine(scope: Scope, result: InstallResult): string {
  return installedText(describe(scope), result);
}

/** A skill folder as it is on disk, or an archive read with the upload routes' checks. */
async function installFrom(
  store: SkillStoreService,
  path: string,
  target: Parameters<SkillStoreService['install']>[2],
): Promise<InstallResult> {
  if (!existsSync(path))
    throw new CommandFailure(`Nothing to install at ${path}: give a skill folder, a .zip, a .tar.gz or a .tar.`);
  if (statSync(path).isDirectory()) {
    const read = readFolderFiles(path, store.limits);
    if (read.kind !== 'files') throw new CommandFailure(`Cannot install ${path}: ${read.reason}.`);
    return store.install(read.files, basename(path), target, null);
  }
  const type = ARCHIVE_TYPES.find(([pattern]) => pattern.test(path))?.[1];
  if (type === undefined)
    throw new CommandFailure(
      `Cannot install ${path}: not a folder, and not a .zip, .tar.gz, .tgz or .tar by its name.`,
    );
  return store.installUpload(createReadStream(path), type, target, null);
}

async function versions(store: SkillStoreService, key: InstallKey, json: boolean, io: CliIo): Promise<number> {
  const history = await store.history(key);
  if (history === null) throw new CommandFailure(`Skill '${key.name}' is not installed in the store (${key.scope}).`);
  printVersions({ name: key.name, scope: key.scope, current: history.current, versions: history.versions }, json, io);
  return 0;
}

async function setSwitch(
  store: SkillStoreService,
  name: string,
  enabled: boolean,
  json: boolean,
  io: CliIo,
): Promise<number> {
  checkSkillName(name);
  await store.setSwitch(name, enabled, SYSTEM_ACTOR);
  io.out(
    json
      ? JSON.stringify({ name, enabled })
      : `Switched skill '${name}' ${enabled ? 'on' : 'off'} (servers on this database follow within seconds).`,
  );
  return 0;
}
