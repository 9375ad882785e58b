import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';
import * as oidc from 'openid-client';
import { isLoopbackHost } from '../domain/users/auth-mode.js';
import { type CliIo, CommandFailure, networkReason, UsageError } from './cli-io.js';
import type { StoredOAuth } from './credentials-file.js';

/** How long one request to the server may take (metadata, registration, token). */
const REQUEST_TIMEOUT_SECONDS = 15;
/** A callback's query is a code, a state and an issuer: anything longer is not one. */
const MAX_CALLBACK_URL = 8 * 1024;

export interface OAuthLoginOptions {
  /** The scopes asked for; the consent page grants only those the person's role allows. */
  scope: string;
  /** Open the sign-in address in the default browser (it is printed either way). */
  openBrowser: boolean;
  timeoutSeconds: number;
}

/** The server's OAuth metadata and a client registered for this login: what a refresh needs later. */
interface LoginClient {
  config: oidc.Configuration;
  resource: string;
}

/**
 * `skillhost login --oauth`: the OAuth 2.0 authorization code flow for a native app (RFC 8252), through
 * `openid-client`. The CLI registers itself with the server (dynamic client registration), listens on a loopback
 * port for the answer, and prints (and opens) the server's sign-in address; the person signs in there (the team's
 * identity provider or an API key) and consents; the code comes back to the loopback port, and is exchanged with its
 * PKCE verifier for an access token bound to the server's resource and a refresh token.
 *
 * Skillhost is its own authorization server: one that names another origin as its authorization server is refused
 * (it would collect a token for somewhere else).
 */
export async function oauthLogin(server: URL, io: CliIo, options: OAuthLoginOptions): Promise<StoredOAuth> {
  const client = await registerClient(server);
  const listener = await listenForCallback(io.signal);
  try {
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const address = oidc.buildAuthorizationUrl(client.config, {
      redirect_uri: listener.redirectUri,
      scope: options.scope,
      resource: client.resource,
      state,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    io.err(`To sign in to ${server.origin}, open this address in a browser:`);
    io.err(address.href);
    if (options.openBrowser) openInBrowser(address.href);
    io.err(`Waiting for the sign-in (${options.timeoutSeconds} s; Ctrl-C cancels)…`);
    const tokens = await listener.answer(state, options.timeoutSeconds, async (callback) => {
      try {
        return await oidc.authorizationCodeGrant(client.config, callback, {
          pkceCodeVerifier: verifier,
          expectedState: state,
        });
      } catch (error) {
        throw new CommandFailure(`${server.origin} did not give a token for this sign-in: ${reasonOf(error)}.`);
      }
    });
    const metadata = client.config.serverMetadata();
    return {
      issuer: metadata.issuer,
      clientId: client.config.clientMetadata().client_id,
      tokenEndpoint: String(metadata.token_endpoint),
      ...(metadata.revocation_endpoint === undefined ? {} : { revocationEndpoint: metadata.revocation_endpoint }),
      resource: client.resource,
      accessToken: tokens.access_token,
      ...(tokens.refresh_token === undefined ? {} : { refreshToken: tokens.refresh_token }),
      expiresAt: expiryOf(tokens.expiresIn()),
      scope: tokens.scope ?? options.scope,
    };
  } finally {
    listener.close();
  }
}

/**
 * A new access token for a stored login, with its refresh token (which the server rotates: the new one is kept).
 * Refused answers (the grant was revoked, the refresh token expired) say to log in again.
 */
export async function refreshLogin(server: URL, stored: StoredOAuth): Promise<StoredOAuth> {
  if (stored.refreshToken === undefined)
    throw new CommandFailure(
      `The login stored for ${server.origin} has expired and cannot be refreshed: run skillhost login --server ` +
        `${server.origin} again.`,
    );
  let tokens: Awaited<ReturnType<typeof oidc.refreshTokenGrant>>;
  try {
    tokens = await oidc.refreshTokenGrant(configOf(server, stored), stored.refreshToken, { resource: stored.resource });
  } catch (error) {
    if (error instanceof oidc.ResponseBodyError && ['invalid_grant', 'invalid_client'].includes(error.error))
      throw new CommandFailure(
        `The login stored for ${server.origin} has ended (revoked, or unused for too long): run skillhost login ` +
          `--server ${server.origin} again. (${error.error}: ${error.error_description ?? 'no description'})`,
      );
    throw new CommandFailure(`Could not refresh the login stored for ${server.origin}: ${reasonOf(error)}.`);
  }
  return {
    ...stored,
    accessToken: tokens.access_token,
    refreshToken: tokens.refresh_token ?? stored.refreshToken,
    expiresAt: expiryOf(tokens.expiresIn()),
    scope: tokens.scope ?? stored.scope,
  };
}

/**
 * Revokes a stored login's refresh token (which ends its grant, and so its access tokens) and its access token.
 * Whether the server took it: a logout still forgets the login when it did not.
 */
export async function revokeLogin(server: URL, stored: StoredOAuth): Promise<boolean> {
  if (stored.revocationEndpoint === undefined) return false;
  const config = configOf(server, stored);
  try {
    if (stored.refreshToken !== undefined)
      await oidc.tokenRevocation(config, stored.refreshToken, { token_type_hint: 'refresh_token' });
    await oidc.tokenRevocation(config, stored.accessToken, { token_type_hint: 'access_token' });
    return true;
  } catch {
    return false;
  }
}

/** The server's metadata, checked to be its own, and a client registered as this CLI on this machine. */
async function registerClient(server: URL): Promise<LoginClient> {
  if (server.protocol === 'http:' && !isLoopbackHost(server.hostname))
    throw new UsageError(
      `--oauth needs an https server (or one on this machine): a token sent over plain http to ${server.host} could ` +
        'be read on the way. Use https, or log in with an API key.',
    );
  const resourceUrl = new URL('.well-known/oauth-protected-resource/mcp', server);
  let answer: Response;
  try {
    answer = await fetch(resourceUrl, {
      headers: { accept: 'application/json' },
      redirect: 'error',
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_SECONDS * 1000),
    });
  } catch (error) {
    throw new CommandFailure(`Cannot reach ${resourceUrl.href} (${reasonOf(error)}); nothing stored.`);
  }
  const body = (await answer.json().catch(() => undefined)) as
    | { resource?: unknown; authorization_servers?: unknown; code?: unknown }
    | undefined;
  if (answer.status === 404)
    throw new CommandFailure(
      `${server.origin} offers no OAuth sign-in${body?.code === 'OAUTH_NOT_SUPPORTED' ? ' (it is off there)' : ''}: ` +
        `log in with an API key instead (skillhost login --server ${server.origin} --with-key < key-file).`,
    );
  const issuer = Array.isArray(body?.authorization_servers) ? body.authorization_servers[0] : undefined;
  if (answer.status !== 200 || typeof body?.resource !== 'string' || typeof issuer !== 'string')
    throw new CommandFailure(
      `${resourceUrl.href} answered ${answer.status} without a resource and its authorization server: is ` +
        `${server.origin} a Skillhost server?`,
    );
  const issuerUrl = URL.parse(issuer);
  if (issuerUrl?.origin !== server.origin || URL.parse(body.resource)?.origin !== server.origin)
    throw new CommandFailure(
      `${server.origin} names ${issuerUrl?.origin ?? issuer.slice(0, 200)} as where to sign in; Skillhost signs its ` +
        'own users in, so this login is refused (the token would be for another server).',
    );
  const execute = server.protocol === 'http:' ? [oidc.allowInsecureRequests] : [];
  try {
    const config = await oidc.dynamicClientRegistration(
      new URL(issuerUrl.href),
      {
        client_name: `skillhost CLI on ${hostname().slice(0, 100)}`,
        application_type: 'native',
        // The port is left out: RFC 8252 §7.3 has the server take any port on a loopback redirect URI.
        redirect_uris: ['http://127.0.0.1/callback'],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
      },
      oidc.None(),
      { algorithm: 'oauth2', timeout: REQUEST_TIMEOUT_SECONDS, execute },
    );
    return { config, resource: body.resource };
  } catch (error) {
    throw new CommandFailure(`${server.origin} did not register this CLI for a sign-in: ${reasonOf(error)}.`);
  }
}

function configOf(server: URL, stored: StoredOAuth): oidc.Configuration {
  const config = new oidc.Configuration(
    {
      issuer: stored.issuer,
      token_endpoint: stored.tokenEndpoint,
      ...(stored.revocationEndpoint === undefined ? {} : { revocation_endpoint: stored.revocationEndpoint }),
    },
    stored.clientId,
    undefined,
    oidc.None(),
  );
  config.timeout = REQUEST_TIMEOUT_SECONDS;
  if (server.protocol === 'http:') oidc.allowInsecureRequests(config);
  return config;
}

interface CallbackListener {
  redirectUri: string;
  /** The first callback that carries `state`: exchanged with `exchange`, the browser told how it went. */
  answer<T>(state: string, timeoutSeconds: number, exchange: (callback: URL) => Promise<T>): Promise<T>;
  close(): void;
}

/**
 * The loopback port the browser brings the answer to. Only `GET /callback` with this login's `state` is taken; any
 * other request (another page, a forged or stale answer) is refused and the login goes on waiting.
 */
async function listenForCallback(signal: AbortSignal | undefined): Promise<CallbackListener> {
  let onRequest: (request: IncomingMessage, response: ServerResponse) => void = (_request, response) =>
    reply(response, 503, 'Not ready yet.');
  const server = createServer((request, response) => onRequest(request, response));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  return {
    redirectUri,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
    answer: <T>(state: string, timeoutSeconds: number, exchange: (callback: URL) => Promise<T>) =>
      new Promise<T>((resolve, reject) => {
        let done = false;
        const finish = (outcome: () => void) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          outcome();
        };
        const timer = setTimeout(
          () =>
            finish(() =>
              reject(new CommandFailure(`No sign-in within ${timeoutSeconds} s; nothing stored. Run login again.`)),
            ),
          timeoutSeconds * 1000,
        );
        const onAbort = () => finish(() => reject(new CommandFailure('Cancelled; nothing stored.')));
        signal?.addEventListener('abort', onAbort);
        onRequest = (request, response) => {
          const url = new URL(request.url ?? '/', redirectUri);
          if (request.method !== 'GET' || url.pathname !== '/callback' || (request.url ?? '').length > MAX_CALLBACK_URL)
            return reply(response, 404, 'Nothing here: this port waits for a Skillhost sign-in only.');
          if (done || url.searchParams.get('state') !== state)
            return reply(response, 400, 'This answer is not for the sign-in skillhost is waiting for; it is ignored.');
          const error = url.searchParams.get('error');
          if (error !== null) {
            const description = url.searchParams.get('error_description') ?? '';
            reply(response, 400, `The sign-in ended: ${error}${description === '' ? '' : ` (${description})`}.`);
            return finish(() => reject(new CommandFailure(endedSignIn(error, description))));
          }
          done = true;
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          exchange(url).then(
            (value) => {
              reply(response, 200, 'Signed in to Skillhost. You can close this tab and go back to the terminal.');
              resolve(value);
            },
            (failure: unknown) => {
              reply(response, 400, (failure as Error).message);
              reject(failure);
            },
          );
        };
      }),
  };
}

/** The CLI's words for an error the server sent back to the loopback port instead of a code. */
function endedSignIn(error: string, description: string): string {
  if (error === 'access_denied') return 'The sign-in was declined on the consent page; nothing stored.';
  const detail = description === '' ? '' : ` (${description.slice(0, 300)})`;
  return `The server ended the sign-in: ${error.slice(0, 100)}${detail}; nothing stored.`;
}

function reply(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
  });
  response.end(`${text}\n`);
}

/** Opens the address with the platform's opener; when there is none (a server, CI), the printed address serves. */
function openInBrowser(address: string): void {
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [address]]
      : process.platform === 'win32'
        ? ['rundll32', ['url.dll,FileProtocolHandler', address]]
        : ['xdg-open', [address]];
  try {
    const child = spawn(command, args, { stdio: 'ignore', detached: true });
    child.on('error', () => {});
    child.unref();
  } catch {
    // No opener: the address is printed above.
  }
}

function expiryOf(expiresIn: number | undefined): string {
  // A server that gives no lifetime: treat the token as short-lived, so it is refreshed rather than trusted.
  return new Date(Date.now() + (expiresIn ?? 300) * 1000).toISOString();
}

function reasonOf(error: unknown): string {
  if (error instanceof oidc.ResponseBodyError)
    return `${error.error}${error.error_description === undefined ? '' : ` (${error.error_description})`}`;
  return networkReason(error);
}
