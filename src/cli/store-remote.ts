import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { PUBLISHED_LIMITS, readFolderFiles } from '@skillhost/core';
import tar from 'tar-stream';
import { type CliIo, CommandFailure, UsageError } from './cli-io.js';
import { serverOption } from './credentials-file.js';
import { ServerClient } from './server-client.js';
import { ARCHIVE_TYPES, checkSkillName, installedText, isImportSource, printVersions } from './store-common.js';

type StoreCommand = 'install' | 'uninstall' | 'versions' | 'enable' | 'disable';

interface RemoteOptions {
  server?: string;
  'key-env'?: string;
  personal?: boolean;
  user?: string;
  config?: string;
  json?: boolean;
  submodules?: boolean;
}

interface RemoteInstall {
  name: string;
  version: number;
  digest: string;
  files: unknown[];
  created: boolean;
  warnings: string[];
}

/**
 * `install | uninstall | versions | enable | disable --server URL`: the store commands through a server's REST API,
 * as the person logged in there (`skillhost login`, or SKILLHOST_API_KEY). The server decides what they may do: an
 * admin everything, an editor the shared skills they or their groups own, anyone their own personal skills
 * (`--personal`); a token without the `admin` scope only the personal ones.
 */
export async function remoteStoreCommand(
  command: StoreCommand,
  target: string,
  options: RemoteOptions,
  io: CliIo,
): Promise<number> {
  if (options.user !== undefined)
    throw new UsageError(
      "--user picks a user on the database; with --server a personal skill is the logged-in person's: give only " +
        '--personal.',
    );
  if (options.config !== undefined) throw new UsageError('--config is for the database; --server talks to a server.');
  const client = await ServerClient.connect(serverOption(options.server, command), options['key-env'], io);
  const personal = options.personal === true;
  const json = options.json === true;
  const whose = personal ? 'your personal' : 'shared';
  const name = encodeURIComponent(target);
  switch (command) {
    case 'install':
      return install(client, resolveTarget(target, io), personal, options.submodules === true, json, io);
    case 'uninstall':
      await client.json('DELETE', personal ? `v1/skills/${name}` : `v1/admin/skills/${name}`);
      io.out(
        json
          ? JSON.stringify({ name: target, scope: personal ? 'personal' : 'shared', uninstalled: true })
          : `Uninstalled ${whose} skill '${target}' on ${client.server.origin}.`,
      );
      return 0;
    case 'versions': {
      const history = await client.json<Parameters<typeof printVersions>[0]>(
        'GET',
        `v1/skills/${name}/versions?scope=${personal ? 'personal' : 'shared'}`,
      );
      printVersions(history, json, io);
      return 0;
    }
    case 'enable':
    case 'disable': {
      checkSkillName(target);
      const enabled = command === 'enable';
      await client.json('PUT', `v1/admin/skills/${name}/enabled`, { enabled });
      io.out(
        json
          ? JSON.stringify({ name: target, enabled })
          : `Switched skill '${target}' ${enabled ? 'on' : 'off'} on ${client.server.origin}.`,
      );
      return 0;
    }
  }
}

/** A SOURCE stays as given; a path is resolved from the working folder. */
function resolveTarget(target: string, io: CliIo): string {
  return isImportSource(target) ? target : resolve(io.cwd, target);
}

async function install(
  client: ServerClient,
  target: string,
  personal: boolean,
  submodules: boolean,
  json: boolean,
  io: CliIo,
): Promise<number> {
  const whose = personal ? 'your personal' : 'shared';
  if (submodules && !isImportSource(target))
    throw new UsageError('--submodules goes with a git SOURCE (git+https://…), not a path.');
  if (isImportSource(target)) {
    const result = await client.json<{ skills: RemoteInstall[]; warnings: string[] }>(
      'POST',
      personal ? 'v1/skills/import' : 'v1/admin/skills/import',
      { source: target, ...(submodules ? { submodules: true } : {}) },
    );
    if (json) io.out(JSON.stringify(result, null, 2));
    else for (const skill of result.skills) io.out(installedText(whose, skill));
    for (const warning of [...result.warnings, ...result.skills.flatMap((skill) => skill.warnings)])
      io.err(`warning: ${warning}`);
    return 0;
  }
  const { bytes, type } = await uploadOf(target);
  const result = await client.upload<RemoteInstall>(personal ? 'v1/skills' : 'v1/admin/skills', bytes, type);
  io.out(json ? JSON.stringify(result, null, 2) : installedText(whose, result));
  for (const warning of result.warnings) io.err(`warning: ${warning}`);
  return 0;
}

/**
 * What is sent for a path: an archive as it is, or a skill folder packed as a tar under its own name (the server
 * takes the folder's name from it, as it does on the database). The folder is read with the published limits, so
 * links out of it and oversized folders are refused here; the server checks again with its own.
 */
async function uploadOf(path: string): Promise<{ bytes: Buffer; type: string }> {
  if (!existsSync(path))
    throw new CommandFailure(`Nothing to install at ${path}: give a skill folder, a .zip, a .tar.gz or a .tar.`);
  if (!statSync(path).isDirectory()) {
    const type = ARCHIVE_TYPES.find(([pattern]) => pattern.test(path))?.[1];
    if (type === undefined)
      throw new CommandFailure(
        `Cannot install ${path}: not a folder, and not a .zip, .tar.gz, .tgz or .tar by its name.`,
      );
    return { bytes: readFileSync(path), type };
  }
  const read = readFolderFiles(path, PUBLISHED_LIMITS);
  if (read.kind !== 'files') throw new CommandFailure(`Cannot install ${path}: ${read.reason}.`);
  const pack = tar.pack();
  const folder = basename(path);
  for (const file of read.files) pack.entry({ name: `${folder}/${file.path}`, mode: 0o644 }, file.bytes);
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack) chunks.push(chunk as Buffer);
  return { bytes: Buffer.concat(chunks), type: 'application/x-tar' };
}
