import { parseArgs } from 'node:util';
import { clientEnvironment } from '../config/client-environment.js';
import { type CliInput, type CliIo, CommandFailure, environmentKey, networkReason, UsageError } from './cli-io.js';
import { credentialsPath, readCredentials, serverOption, writeCredentials } from './credentials-file.js';
import { oauthLogin, revokeLogin } from './oauth-login.js';

/** A key is some tens of characters; a pipe that brings more than this is not a key. */
const MAX_INPUT_BYTES = 16 * 1024;
const CTRL_C = '\u0003';
const CTRL_D = '\u0004';

const DEFAULT_SCOPE = 'skills:read chats admin';
const DEFAULT_TIMEOUT_SECONDS = 300;

/**
 * `skillhost login --server URL`: signs in and stores what lets `sync` and the `--server` commands act as the person,
 * for the server's origin. Two ways:
 * - OAuth (`--oauth`; the default at a terminal): the server's sign-in page in a browser, its consent, and a token
 *   the CLI refreshes as needed (oauth-login.ts);
 * - an API key (`--with-key`; the default when stdin is a pipe): read from stdin or the variable `--key-env` names.
 * Either is checked with the server before it is stored; a new login replaces (and revokes) the previous OAuth one.
 * Nothing secret is printed.
 */
export async function loginCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      server: { type: 'string' },
      'key-env': { type: 'string' },
      'with-key': { type: 'boolean' },
      oauth: { type: 'boolean' },
      'no-browser': { type: 'boolean' },
      scope: { type: 'string' },
      timeout: { type: 'string' },
    },
  });
  if (positionals.length > 0) throw new UsageError(`login takes no positional arguments; got '${positionals[0]}'.`);
  const server = serverOption(values.server, 'login');
  const withKey = values['with-key'] === true || values['key-env'] !== undefined;
  if (withKey && values.oauth) throw new UsageError('--oauth signs in through the server; it takes no key.');
  const oauth = values.oauth === true || (!withKey && io.stdin?.isTTY === true);
  for (const option of ['no-browser', 'scope', 'timeout'] as const)
    if (!oauth && values[option] !== undefined) throw new UsageError(`--${option} goes with --oauth.`);
  return oauth ? loginWithOAuth(server, values, io) : loginWithKey(server, values['key-env'], io);
}

async function loginWithKey(server: URL, keyEnv: string | undefined, io: CliIo): Promise<number> {
  const environment = clientEnvironment(io);
  let key: string;
  if (keyEnv === undefined) key = await readKey(io, server.origin);
  else key = environmentKey(environment.env, keyEnv) ?? '';
  if (key === '')
    throw new UsageError(
      'No API key on stdin: pipe one in (skillhost login --server URL < key-file), use --key-env, or sign in in a ' +
        'browser with --oauth.',
    );
  if (/[\s\p{Cc}]/u.test(key)) throw new UsageError('The API key has a space or a control character in it: check it.');
  const who = await whoIs(server, key, 'API key');
  const path = credentialsPath(environment);
  // Read first: a file refused as unsafe is reported, not overwritten.
  const file = readCredentials(path);
  const { oauth: previous, ...rest } = file.servers[server.origin] ?? {};
  file.servers[server.origin] = { ...rest, apiKey: key };
  writeCredentials(path, file);
  if (previous !== undefined) await revokeLogin(server, previous);
  io.out(
    `Logged in to ${server.origin}${who === undefined ? '' : ` as ${who}`}; the key is stored in ${path}. ` +
      `skillhost sync --server ${server.origin} uses it unless SKILLHOST_API_KEY or --key-env gives another.`,
  );
  return 0;
}

async function loginWithOAuth(
  server: URL,
  values: { 'no-browser'?: boolean; scope?: string; timeout?: string },
  io: CliIo,
): Promise<number> {
  const scope = (values.scope ?? DEFAULT_SCOPE).trim().split(/\s+/).join(' ');
  if (!/^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/.test(scope))
    throw new UsageError(`--scope takes space-separated scopes (skills:read, chats, admin); got '${values.scope}'.`);
  const timeout = values.timeout ?? String(DEFAULT_TIMEOUT_SECONDS);
  if (!/^[1-9][0-9]{0,4}$/.test(timeout))
    throw new UsageError(`--timeout takes whole seconds (1 or more); got '${values.timeout}'.`);
  const path = credentialsPath(clientEnvironment(io));
  // Read first: a file refused as unsafe is reported before the person signs in, not after.
  readCredentials(path);
  const login = await oauthLogin(server, io, {
    scope,
    openBrowser: values['no-browser'] !== true,
    timeoutSeconds: Number(timeout),
  });
  const who = await whoIs(server, login.accessToken, 'token');
  const file = readCredentials(path);
  const { apiKey: _replaced, oauth: previous, ...rest } = file.servers[server.origin] ?? {};
  file.servers[server.origin] = { ...rest, oauth: login };
  writeCredentials(path, file);
  if (previous !== undefined) await revokeLogin(server, previous);
  io.out(
    `Logged in to ${server.origin}${who === undefined ? '' : ` as ${who}`} with scopes ${login.scope}; the token ` +
      `is stored in ${path} and refreshed as needed. skillhost sync --server ${server.origin} and the --server ` +
      'commands use it unless SKILLHOST_API_KEY or --key-env gives a key.',
  );
  return 0;
}

/** `skillhost logout --server URL`: removes what login stored for the server's origin (the key stays valid there). */
export async function logoutCommand(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { server: { type: 'string' } } });
  if (positionals.length > 0) throw new UsageError(`logout takes no positional arguments; got '${positionals[0]}'.`);
  const server = serverOption(values.server, 'logout');
  const path = credentialsPath(clientEnvironment(io));
  const file = readCredentials(path);
  if (file.servers[server.origin] === undefined) {
    io.out(`No login stored for ${server.origin} in ${path}: nothing to remove.`);
    return 0;
  }
  const { oauth } = file.servers[server.origin];
  delete file.servers[server.origin];
  writeCredentials(path, file);
  if (oauth === undefined) {
    io.out(
      `Logged out of ${server.origin}: its key is removed from ${path}. The key itself still works until it is ` +
        'revoked on the server.',
    );
    return 0;
  }
  const revoked = await revokeLogin(server, oauth);
  io.out(
    revoked
      ? `Logged out of ${server.origin}: its token is revoked there and removed from ${path}.`
      : `Logged out of ${server.origin}: its token is removed from ${path}, but the server could not be told to ` +
          'revoke it: revoke the grant on the web page (or DELETE /v1/me/oauth-grants/ID) if it may have leaked.',
  );
  return 0;
}

/**
 * Who the key belongs to, from `GET /v1/me`; a key the server does not take is refused, and nothing is stored.
 * Redirects are refused, as sync does: the key goes to the server named and nowhere else.
 */
async function whoIs(server: URL, key: string, what: 'API key' | 'token'): Promise<string | undefined> {
  const url = new URL('v1/me', server);
  let response: Response;
  try {
    response = await fetch(url, {
      headers: { authorization: `Bearer ${key}`, accept: 'application/json' },
      redirect: 'error',
    });
  } catch (error) {
    throw new CommandFailure(`Cannot reach ${url.href} (${networkReason(error)}); nothing stored.`);
  }
  if (response.status === 401)
    throw new CommandFailure(
      what === 'token'
        ? `${server.origin} refused the token it just issued (401); nothing stored. Try login again.`
        : `${server.origin} refused this API key (401: unknown, revoked or expired); nothing stored. Check the key, ` +
            'or make a new one (skillhost keys create --user NAME on the server, or POST /v1/me/keys).',
    );
  if (response.status !== 200) {
    const body = (await response.text().catch(() => '')).slice(0, 300).replace(/\s+/g, ' ');
    throw new CommandFailure(
      `${url.href} answered ${response.status}${body === '' ? '' : `: ${body}`}; nothing stored. ` +
        `Is ${server.origin} a Skillhost server?`,
    );
  }
  const me = (await response.json().catch(() => undefined)) as { name?: unknown; role?: unknown } | undefined;
  if (typeof me?.name !== 'string') return undefined;
  return typeof me.role === 'string' ? `'${me.name}' (${me.role})` : `'${me.name}'`;
}

/** The key: from a pipe, its first line; from a terminal, typed without echo after a prompt on stderr. */
async function readKey(io: CliIo, origin: string): Promise<string> {
  const stdin = io.stdin;
  if (stdin === undefined)
    throw new UsageError('login reads the API key from stdin, and there is none: use --key-env, or --oauth.');
  if (stdin.isTTY === true && stdin.setRawMode !== undefined) {
    io.err(`API key for ${origin} (not shown; Enter when done):`);
    return (await readHidden(stdin)).trim();
  }
  let text = '';
  for await (const chunk of stdin) {
    text += chunk.toString();
    if (text.length > MAX_INPUT_BYTES) throw new UsageError(`stdin holds more than ${MAX_INPUT_BYTES} bytes: no key.`);
  }
  return (text.split(/\r?\n/)[0] ?? '').trim();
}

/** A line from a terminal in raw mode, so the key is not echoed: Enter ends it, Ctrl-C cancels, Backspace erases. */
function readHidden(stdin: CliInput): Promise<string> {
  return new Promise((resolve, reject) => {
    let typed = '';
    const finish = (error?: Error) => {
      stdin.off('data', onData);
      stdin.setRawMode?.(false);
      stdin.pause();
      if (error === undefined) resolve(typed);
      else reject(error);
    };
    const onData = (chunk: Buffer | string) => {
      for (const char of chunk.toString()) {
        if (char === '\r' || char === '\n' || char === CTRL_D) return finish();
        if (char === CTRL_C) return finish(new CommandFailure('Cancelled; nothing stored.'));
        if (char === '\u007f' || char === '\b') typed = typed.slice(0, -1);
        else typed += char;
        if (typed.length > MAX_INPUT_BYTES) return finish(new UsageError('That is too long for an API key.'));
      }
    };
    stdin.setRawMode?.(true);
    stdin.on('data', onData);
    stdin.resume();
  });
}
