import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { type ClientEnvironment, userConfigHome } from '../config/client-environment.js';
import { CommandFailure, UsageError } from './cli-io.js';

/**
 * What `skillhost login --oauth` stores: the tokens, and what refreshing and revoking them needs (the server's
 * endpoints and the client the CLI registered there), so neither asks the server's metadata again.
 */
export interface StoredOAuth {
  issuer: string;
  clientId: string;
  tokenEndpoint: string;
  revocationEndpoint?: string;
  /** The resource the tokens are bound to (RFC 8707), asked for again on refresh. */
  resource: string;
  accessToken: string;
  refreshToken?: string;
  /** When the access token expires (ISO 8601); it is refreshed shortly before. */
  expiresAt: string;
  scope: string;
}

/**
 * What is stored for one server: an API key (`skillhost login --with-key`) or an OAuth login's tokens (`--oauth`), the
 * latest login's. Other keys are kept as they are when this one is written, so an older skillhost does not drop what
 * a newer one stored.
 */
export interface ServerCredentials {
  apiKey?: string;
  oauth?: StoredOAuth;
  [other: string]: unknown;
}

/** `credentials.json`: a version, and the credentials of each server by origin (`https://host:port`). */
export interface CredentialsFile {
  version: 1;
  servers: Record<string, ServerCredentials>;
  [other: string]: unknown;
}

/** Far beyond any number of logins: a file this large is not ours. */
const MAX_FILE_BYTES = 1024 * 1024;

/** `$XDG_CONFIG_HOME/skillhost/credentials.json`, by default `~/.config/skillhost/credentials.json`. */
export function credentialsPath(environment: ClientEnvironment): string {
  return join(userConfigHome(environment), 'skillhost', 'credentials.json');
}

/**
 * A server URL option (`--server`): http(s), no credentials in it, with a trailing slash so that paths resolve under a
 * server mounted at a path.
 */
export function serverOption(given: string | undefined, command: string): URL {
  if (given === undefined) throw new UsageError(`${command} needs --server URL (the Skillhost server).`);
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw new UsageError(`--server must be an http(s) URL; got '${given}'.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`--server must be an http(s) URL; got '${given}'.`);
  if (url.username !== '' || url.password !== '')
    throw new UsageError('--server takes no credentials: the key comes from stdin, --key-env or the environment.');
  return new URL(url.pathname.endsWith('/') ? url.href : `${url.href}/`);
}

/**
 * The file's contents, or an empty one when there is none. Refused (CommandFailure, saying why and what to do): a
 * symbolic link (it could point anywhere, and a write would replace it), anything but a regular file, a file group or
 * others may read or write, one of another user, or contents that are not a credentials file. The file is opened
 * without following a link and checked through the descriptor it was read from, so nothing can be swapped in between.
 */
export function readCredentials(path: string): CredentialsFile {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { version: 1, servers: {} };
    if (code === 'ELOOP')
      throw refused(path, 'it is a symbolic link; remove it and run skillhost login again, to a real file');
    throw refused(path, `it cannot be opened (${code ?? (error as Error).message})`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw refused(path, 'it is not a regular file');
    if ((stat.mode & 0o077) !== 0)
      throw refused(
        path,
        `its mode is ${(stat.mode & 0o777).toString(8).padStart(4, '0')}, so other users may read or change it; ` +
          `make it yours alone (chmod 600 ${path}) and revoke the keys in it if someone else could have read them`,
      );
    const uid = process.getuid?.();
    if (uid !== undefined && stat.uid !== uid) throw refused(path, `it belongs to another user (uid ${stat.uid})`);
    if (stat.size > MAX_FILE_BYTES) throw refused(path, `it is over ${MAX_FILE_BYTES} bytes`);
    return parseCredentials(readFileSync(fd, 'utf8'), path);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes the file whole and renames it into place, so a reader sees the old file or the new one: the folder is made
 * (or made again) 0700, the file 0600 from its creation.
 */
export function writeCredentials(path: string, file: CredentialsFile): void {
  const folder = dirname(path);
  mkdirSync(dirname(folder), { recursive: true });
  try {
    mkdirSync(folder, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const stat = lstatSync(folder);
  if (!stat.isDirectory())
    throw new CommandFailure(`Cannot store credentials in ${folder}: it is not a folder (a link or a file).`);
  if ((stat.mode & 0o777) !== 0o700) chmodSync(folder, 0o700);
  const temporary = join(folder, `.credentials.json.${process.pid}.${randomBytes(6).toString('hex')}`);
  const fd = openSync(temporary, 'wx', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(file, null, 2)}\n`);
    fsyncSync(fd);
    closeSync(fd);
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

function parseCredentials(text: string, path: string): CredentialsFile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not the parser's message: it quotes the text, which holds keys.
    throw refused(path, 'it is not valid JSON; remove it and run skillhost login again');
  }
  if (!isObject(parsed) || !isObject(parsed.servers))
    throw refused(path, 'it is not a credentials file (expected {"version": 1, "servers": {…}})');
  if (parsed.version !== 1)
    throw refused(
      path,
      `it has version ${JSON.stringify(parsed.version)}, which this skillhost does not know (a newer one wrote it?)`,
    );
  for (const [origin, entry] of Object.entries(parsed.servers)) {
    if (!isObject(entry) || (entry.apiKey !== undefined && typeof entry.apiKey !== 'string'))
      throw refused(path, `its entry for ${origin.slice(0, 200)} is not an object with a string apiKey`);
    if (entry.oauth !== undefined && !isStoredOAuth(entry.oauth))
      throw refused(
        path,
        `its OAuth login for ${origin.slice(0, 200)} is incomplete (tokens, endpoints or expiry missing); run ` +
          'skillhost login again',
      );
  }
  return parsed as CredentialsFile;
}

const REQUIRED_OAUTH_FIELDS = ['issuer', 'clientId', 'tokenEndpoint', 'resource', 'accessToken', 'expiresAt', 'scope'];
const OPTIONAL_OAUTH_FIELDS = ['revocationEndpoint', 'refreshToken'];

function isStoredOAuth(value: unknown): value is StoredOAuth {
  if (!isObject(value)) return false;
  if (!REQUIRED_OAUTH_FIELDS.every((field) => typeof value[field] === 'string' && value[field] !== '')) return false;
  if (!OPTIONAL_OAUTH_FIELDS.every((field) => value[field] === undefined || typeof value[field] === 'string'))
    return false;
  return !Number.isNaN(Date.parse(value.expiresAt as string));
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function refused(path: string, why: string): CommandFailure {
  return new CommandFailure(`Refusing to use the credentials file ${path}: ${why}.`);
}
