import { parseArgs } from 'node:util';
import type { CreateApiKeyDto } from '../api/http/dto/users.dto.js';
import { generateApiKey } from '../domain/users/api-key.js';
import { presentApiKey, presentCreatedApiKey } from '../api/presenters/user.presenter.js';
import { loadConfig } from '../config/config-loader.js';
import { withUsersService } from './cli-context.js';
import { type CliIo, UsageError } from './cli-io.js';
import { formatInstant, formatTable } from './text-table.js';

/**
 * `skillhost keys create | list | revoke`, on the configured database (keys are shown once, at creation), and `keys
 * generate`, on none.
 */
export async function keysCommand(args: string[], io: CliIo): Promise<number> {
  const [subcommand, ...rest] = args;
  switch (subcommand) {
    case 'create':
      return createKey(rest, io);
    case 'list':
      return listKeys(rest, io);
    case 'revoke':
      return revokeKey(rest, io);
    case 'generate':
      return generateKey(rest, io);
    default:
      throw new UsageError(
        subcommand === undefined || subcommand.startsWith('-')
          ? 'Give a keys command: create, list, revoke or generate.'
          : `Unknown keys command '${subcommand}'; expected create, list, revoke or generate.`,
      );
  }
}

/** Stdout carries the key alone, so `KEY=$(skillhost keys create --user alice)` works; the rest goes to stderr. */
async function createKey(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    allowPositionals: false,
    options: {
      config: { type: 'string' },
      user: { type: 'string' },
      label: { type: 'string' },
      'expires-at': { type: 'string' },
      json: { type: 'boolean' },
    },
  });
  const owner = values.user;
  if (owner === undefined) throw new UsageError('keys create needs --user NAME.');
  const options = await keyOptions(values.label, values['expires-at']);
  const config = loadConfig({ file: values.config, env: io.env, projectRoot: io.cwd });
  const created = await withUsersService(config, async (users) =>
    users.createKey((await users.getUserByName(owner)).id, options),
  );
  if (values.json) {
    io.out(JSON.stringify(presentCreatedApiKey(created), null, 2));
    return 0;
  }
  io.out(created.key);
  io.err(
    `Created API key ${created.apiKey.id} (${created.apiKey.prefix}…) for ` +
      `'${created.userName}'. It is shown this once; keep it somewhere safe.`,
  );
  return 0;
}

/**
 * A new well-formed key, stored nowhere: for SKILLHOST_BOOTSTRAP_ADMIN_KEY, set before there is a
 * database (`export SKILLHOST_BOOTSTRAP_ADMIN_KEY=$(skillhost keys generate)`). Stdout carries the key alone.
 */
function generateKey(args: string[], io: CliIo): number {
  parseArgs({ args, allowPositionals: false, options: {} });
  io.out(generateApiKey().key);
  io.err(
    'A new API key, stored nowhere yet: set it as SKILLHOST_BOOTSTRAP_ADMIN_KEY, and the server registers it ' +
      'for the admin `admin` when it starts. Keep it somewhere safe.',
  );
  return 0;
}

/**
 * --label and --expires-at follow the same rules as the HTTP API's body (CreateApiKeyDto), loaded
 * here only: its OpenAPI decorators bring in Swagger, which the other commands do without.
 */
async function keyOptions(label: string | undefined, expiresAt: string | undefined): Promise<CreateApiKeyDto> {
  const [{ plainToInstance }, { validateSync }, { CreateApiKeyDto }] = await Promise.all([
    import('class-transformer'),
    import('class-validator'),
    import('../api/http/dto/users.dto.js'),
  ]);
  const dto = plainToInstance(CreateApiKeyDto, { label, expiresAt });
  const flags: Record<string, string> = { label: '--label', expiresAt: '--expires-at' };
  const problems = validateSync(dto).flatMap((e) =>
    Object.values(e.constraints ?? {}).map((message) => `${flags[e.property] ?? e.property}: ${message}`),
  );
  if (problems.length > 0) throw new UsageError(problems.join('; '));
  return dto;
}

async function listKeys(args: string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args,
    allowPositionals: false,
    options: { config: { type: 'string' }, user: { type: 'string' }, json: { type: 'boolean' } },
  });
  const config = loadConfig({ file: values.config, env: io.env, projectRoot: io.cwd });
  const owner = values.user;
  const keys = await withUsersService(config, async (users) =>
    users.listKeys(owner === undefined ? undefined : (await users.getUserByName(owner)).id),
  );
  const presented = keys.map((k) => presentApiKey(k.key, k.userName));
  if (values.json) {
    io.out(JSON.stringify(presented, null, 2));
    return 0;
  }
  const rows = presented.map((k) => [
    k.id,
    k.user,
    k.prefix,
    k.label ?? '-',
    formatInstant(k.createdAt),
    formatInstant(k.lastUsedAt),
    formatInstant(k.expiresAt),
    formatInstant(k.revokedAt),
  ]);
  for (const line of formatTable(['ID', 'USER', 'PREFIX', 'LABEL', 'CREATED', 'LAST USED', 'EXPIRES', 'REVOKED'], rows))
    io.out(line);
  return 0;
}

async function revokeKey(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { config: { type: 'string' }, json: { type: 'boolean' } },
  });
  if (positionals.length !== 1)
    throw new UsageError(`keys revoke takes one key ID (see \`skillhost keys list\`); got ${positionals.length}.`);
  const config = loadConfig({ file: values.config, env: io.env, projectRoot: io.cwd });
  const { key, userName } = await withUsersService(config, async (users) => {
    // The operator at the server's database may revoke any key, the last admin's too: `keys create` makes another.
    const revoked = await users.revokeKey(positionals[0], undefined, { keepAnAdmin: false });
    return { key: revoked, userName: (await users.getUser(revoked.userId)).name };
  });
  if (values.json) io.out(JSON.stringify(presentApiKey(key, userName), null, 2));
  else io.out(`Revoked API key ${key.id} (${key.prefix}…) of '${userName}' at ${formatInstant(key.revokedAt)}.`);
  return 0;
}
