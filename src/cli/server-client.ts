import { clientEnvironment } from '../config/client-environment.js';
import { type CliIo, CommandFailure, environmentKey, networkReason } from './cli-io.js';
import { storedBearer } from './stored-login.js';

/** The longest a store command waits for one answer (an import clones a repository first). */
const REQUEST_TIMEOUT_MS = 300_000;

/**
 * A command's calls to a Skillhost server's REST API (`--server URL`), as the person who logged in: the key from
 * the environment (SKILLHOST_API_KEY, or the variable `--key-env` names), else what `skillhost login` stored (an
 * OAuth token is refreshed first when it is about to expire). The server applies its own rules (roles, scopes,
 * groups), so the command can do what that person may do there and nothing more. Redirects are refused: the
 * credential goes to the server named and nowhere else.
 */
export class ServerClient {
  private constructor(
    readonly server: URL,
    private readonly bearer: string | undefined,
  ) {}

  static async connect(server: URL, keyEnv: string | undefined, io: CliIo): Promise<ServerClient> {
    const environment = clientEnvironment(io);
    const fromEnv = environmentKey(environment.env, keyEnv);
    return new ServerClient(server, fromEnv ?? (await storedBearer(server, environment)));
  }

  /** A JSON request; the parsed answer, or null for 204. A refusal is a CommandFailure with the server's code. */
  async json<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown): Promise<T> {
    return this.send<T>(
      method,
      path,
      body === undefined ? undefined : JSON.stringify(body),
      body === undefined ? {} : { 'content-type': 'application/json' },
    );
  }

  /** An archive upload (zip, tar.gz or tar), as the install routes take it. */
  async upload<T>(path: string, bytes: Buffer, contentType: string): Promise<T> {
    return this.send<T>('POST', path, bytes, { 'content-type': contentType });
  }

  private async send<T>(
    method: string,
    path: string,
    body: string | Buffer | undefined,
    headers: Record<string, string>,
  ): Promise<T> {
    const url = new URL(path.replace(/^\//, ''), this.server);
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        body,
        redirect: 'error',
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
        headers: {
          ...headers,
          accept: 'application/json',
          ...(this.bearer === undefined ? {} : { authorization: `Bearer ${this.bearer}` }),
        },
      });
    } catch (error) {
      throw new CommandFailure(`Cannot reach ${url.href} (${networkReason(error)}); nothing changed.`);
    }
    if (response.status === 204) return null as T;
    const text = await response.text().catch(() => '');
    const answer = parseJson(text);
    if (response.ok && answer !== undefined) return answer as T;
    throw new CommandFailure(refusal(this.server, url, response.status, answer, text));
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The server's own words for a refusal (its error body's code and message), with what to do for a 401. */
function refusal(server: URL, url: URL, status: number, answer: unknown, text: string): string {
  const { code, message } = (answer ?? {}) as { code?: unknown; message?: unknown };
  const said =
    typeof message === 'string'
      ? `${typeof code === 'string' ? `${code}: ` : ''}${message}`
      : text.slice(0, 300).replace(/\s+/g, ' ');
  const hint =
    status === 401
      ? ` Log in first (skillhost login --server ${server.origin}), or set SKILLHOST_API_KEY to an API key.`
      : status === 403 && code === 'INSUFFICIENT_SCOPE'
        ? ` Log in again granting the scope it needs (skillhost login --server ${server.origin} --oauth).`
        : '';
  return `${url.href} answered ${status}${said === '' ? '' : `: ${said}`}.${hint}`;
}
