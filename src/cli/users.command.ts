import { parseArgs } from 'node:util';
import { presentUser } from '../api/presenters/user.presenter.js';
import type { User } from '../domain/users/user.types.js';
import type { UsersService } from '../domain/users/users.service.js';
import { loadConfig } from '../config/config-loader.js';
import { withUsersService } from './cli-context.js';
import { type CliIo, UsageError } from './cli-io.js';
import { formatInstant, formatTable } from './text-table.js';

/** `skillhost users add NAME [--admin] | list`, on the configured database. */
export async function usersCommand(args: string[], io: CliIo): Promise<number> {
  const [subcommand, ...rest] = args;
  switch (subcommand) {
    case 'add':
      return addUser(rest, io);
    case 'list':
      return listUsers(rest, io);
    default:
      throw new UsageError(
        subcommand === undefined || subcommand.startsWith('-')
          ? 'Give a users command: add or list.'
          : `Unknown users command '${subcommand}'; expected add or list.`,
      );
  }
}

async function addUser(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { config: { type: 'string' }, admin: { type: 'boolean' }, json: { type: 'boolean' } },
  });
  if (positionals.length !== 1) throw new UsageError(`users add takes one NAME; got ${positionals.length}.`);
  const config = loadConfig({ file: values.config, env: io.env, projectRoot: io.cwd });
  const user = await withUsersService(config, (users) =>
    users.createUser(positionals[0], values.admin ? 'admin' : 'member'),
  );
  io.out(
    values.json ? JSON.stringify(presentUser(user), null, 2) : `Created ${user.role} '${user.name}' (id ${user.id}).`,
  );
  return 0;
}

async function listUsers(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    allowPositionals: false,
    options: { config: { type: 'string' }, json: { type: 'boolean' } },
  });
  const config = loadConfig({ file: values.config, env: io.env, projectRoot: io.cwd });
  const all = await withUsersService(config, allUsers);
  if (values.json) {
    io.out(JSON.stringify(all.map(presentUser), null, 2));
    return 0;
  }
  const rows = all.map((u) => [u.name, u.role, u.disabled ? 'disabled' : 'active', formatInstant(u.createdAt), u.id]);
  for (const line of formatTable(['NAME', 'ROLE', 'STATUS', 'CREATED', 'ID'], rows)) io.out(line);
  return 0;
}

/** Every user, page by page: the service pages for the HTTP routes; a terminal wants them all. */
async function allUsers(users: UsersService): Promise<User[]> {
  const all: User[] = [];
  for (;;) {
    const page = await users.listUsers(200, all.length);
    all.push(...page.items);
    if (page.items.length === 0 || all.length >= page.total) return all;
  }
}
