import { generateKeyPairSync, hash, randomBytes } from 'node:crypto';
import { type IncomingMessage, ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type Provider from 'oidc-provider';
import type { AccessTokenInstance } from 'oidc-provider';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { AuthService, KEY_CACHE_TTL_MS, unauthenticated } from '../../domain/users/auth.service.js';
import type { BearerTokenVerifier } from '../../domain/users/bearer-token.js';
import type { Principal } from '../../domain/users/principal.js';
import { parseScopes, SCOPES } from '../../domain/users/scopes.js';
import { USER_STORE, type UserStore } from '../../domain/users/user-store.js';
import { type BrowserSignIn, WebSessionService } from '../../domain/users/web-session.service.js';
import {
  OAUTH_ARTIFACT_STORE,
  type OAuthArtifactStore,
  type OAuthPayload,
} from '../../domain/oauth/oauth-artifact-store.js';
import { type OAuthAddresses, oauthAddresses } from './oauth-issuer.js';
import { renderOAuthError } from './oauth-pages.js';

/** Where the provider's own routes live: all under `/oauth`, beside the discovery documents at the root. */
export const OAUTH_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
  userinfo: '/oauth/userinfo',
  end_session: '/oauth/session/end',
  introspection: '/oauth/introspect',
  pushed_authorization_request: '/oauth/par',
  code_verification: '/oauth/device',
  device_authorization: '/oauth/device/auth',
  backchannel_authentication: '/oauth/backchannel',
  challenge: '/oauth/challenge',
} as const;
export const INTERACTION_PATH = '/oauth/interaction';

/** A code is exchanged at once by the client that asked for it; a sign-in page is filled in minutes. */
const AUTHORIZATION_CODE_TTL_SECONDS = 60;
const INTERACTION_TTL_SECONDS = 600;
/** The provider's own sign-in session: a person who just signed in is not asked again for an hour. */
const SESSION_TTL_SECONDS = 3600;
const TOKEN_CACHE_MAX_ENTRIES = 10_000;
/** Every instance sweeps; the statement is idempotent and cheap on the partial index of expiring rows. */
const SWEEP_INTERVAL_MS = 3_600_000;
/**
 * A registered client with no live grant this long after its registration is deleted (a client that comes back
 * registers again, as MCP clients do on `invalid_client`); one in use keeps its grant, and so itself.
 */
export const UNUSED_CLIENT_DAYS = 30;

interface CachedToken {
  principal: Principal | null;
  reason: string;
  /** When the token itself expires (ms), checked on every request. */
  expiresAt: number;
  until: number;
}

/**
 * Skillhost as the OAuth authorization server for its own `/mcp` (the MCP authorization specification,
 * https://modelcontextprotocol.io/specification/draft/basic/authorization): oidc-provider, a certified
 * implementation, with its artifacts in PostgreSQL. It issues short-lived opaque access tokens bound to the `/mcp`
 * resource (RFC 8707) and rotating refresh tokens, after authorization code + PKCE (S256 only) and the person's
 * sign-in and consent (oauth-interactions.ts). Its access tokens are then accepted wherever an API key is: this
 * service is the AuthService's verifier for bearer tokens that are not keys.
 */
@Injectable()
export class OAuthServerService implements OnModuleInit, OnModuleDestroy, BearerTokenVerifier, BrowserSignIn {
  private readonly logger = new Logger('OAuth');
  readonly addresses: OAuthAddresses;
  private provider: Provider | undefined;
  /** What the interaction forms' CSRF tokens are keyed with (the provider's cookie key, shared by every instance). */
  formSecret = '';
  private readonly cache = new Map<string, CachedToken>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(OAUTH_ARTIFACT_STORE) private readonly store: OAuthArtifactStore,
    @Inject(USER_STORE) private readonly users: UserStore,
    private readonly auth: AuthService,
    private readonly sessions: WebSessionService,
  ) {
    this.addresses = oauthAddresses(config);
  }

  async onModuleInit(): Promise<void> {
    const [signing, cookies] = await Promise.all([
      this.store.sharedSecret('signing-key', makeSigningKey),
      this.store.sharedSecret('cookie-keys', () => ({ keys: [randomBytes(32).toString('base64url')] })),
    ]);
    // Loaded only when OAuth is on: the package warns on stderr at import on any runtime but Node 22+, which a
    // server without OAuth (and a CLI command) should not print.
    const oidcProvider = await import('oidc-provider');
    this.provider = this.build(oidcProvider, signing, cookies.keys as string[]);
    this.formSecret = (cookies.keys as string[])[0];
    // Behind a TLS-terminating proxy (an https issuer), the provider reads the scheme from X-Forwarded-Proto.
    this.provider.proxy = this.addresses.issuer.startsWith('https:');
    this.auth.acceptBearerTokens(this);
    this.sessions.endAtLogout(this);
    this.sweeper = setInterval(() => this.deleteExpired(), SWEEP_INTERVAL_MS).unref();
    this.logger.log(`OAuth for MCP clients: issuer ${this.addresses.issuer}, resource ${this.addresses.resource}`);
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
  }

  /** Expired codes, tokens and sessions are refused already; this only keeps the table from growing. */
  private deleteExpired(): void {
    this.store
      .deleteExpired(UNUSED_CLIENT_DAYS)
      .then((deleted) => deleted > 0 && this.logger.debug(`Deleted ${deleted} expired OAuth artifacts`))
      .catch((error: unknown) =>
        this.logger.warn(`Could not delete expired OAuth artifacts: ${(error as Error).message ?? String(error)}`),
      );
  }

  get oidc(): Provider {
    if (this.provider === undefined) throw new Error('The OAuth server is used before the app started.');
    return this.provider;
  }

  /** The principal of an access token: its user, with the scopes granted (cached as briefly as API keys are). */
  verify(token: string): Principal | Promise<Principal> {
    const key = hash('sha256', token, 'hex');
    const cached = this.cache.get(key);
    if (cached !== undefined && cached.until > Date.now()) return admit(cached);
    return this.lookUp(token).then((entry) => admit(this.remember(key, entry)));
  }

  /** Drops the cached tokens of a grant (it was revoked here): its next request is refused at once. */
  forgetGrant(grantId: string): void {
    for (const [key, entry] of this.cache) if (entry.principal?.grantId === grantId) this.cache.delete(key);
  }

  /**
   * Ends the provider's own sign-in session of the browser that sent `request` (found by its signed `_session`
   * cookie, as the provider finds it) and answers the provider's `Set-Cookie` lines that clear the cookie. Without it,
   * a person who logged out of the web page would still be signed in here, and the next authorization in this
   * browser would skip the sign-in page.
   */
  async endFor(request: IncomingMessage): Promise<string[]> {
    // The provider writes its cookies on the response it is given: a throwaway one, whose lines are read back.
    const response = new ServerResponse(request);
    const context = this.oidc.createContext(request, response);
    const name = this.oidc.cookieName('session');
    const id = context.cookies.get(name, { signed: true });
    if (id !== undefined) await (await this.oidc.Session.find(id))?.destroy();
    context.cookies.set(name, null, { signed: true, httpOnly: true, sameSite: 'lax' });
    const lines = response.getHeader('set-cookie') ?? [];
    return Array.isArray(lines) ? lines : [String(lines)];
  }

  private async lookUp(token: string): Promise<Omit<CachedToken, 'until'>> {
    const found = await this.oidc.AccessToken.find(token);
    const refused = (reason: string) => ({ principal: null, reason, expiresAt: Number.POSITIVE_INFINITY });
    if (found === undefined) return refused('The access token is not valid (unknown, revoked or expired).');
    if (!isFor(found, this.addresses.resource))
      return refused(`The access token is for another resource; this one is ${this.addresses.resource}.`);
    const user = await this.users.findById(found.accountId);
    if (user === null) return refused('The access token belongs to a user who no longer exists.');
    if (user.disabled) return refused(`The user '${user.name}' is disabled.`);
    return {
      principal: {
        userId: user.id,
        name: user.name,
        role: user.role,
        keyId: null,
        scopes: parseScopes(found.scope),
        grantId: found.grantId,
      },
      reason: 'The access token has expired: refresh it.',
      expiresAt: (found.exp ?? 0) * 1000,
    };
  }

  private remember(key: string, entry: Omit<CachedToken, 'until'>): CachedToken {
    const cached = { ...entry, until: Date.now() + KEY_CACHE_TTL_MS };
    this.cache.delete(key);
    if (this.cache.size >= TOKEN_CACHE_MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
    this.cache.set(key, cached);
    return cached;
  }

  private build(
    { default: OidcProvider, errors }: typeof import('oidc-provider'),
    signing: OAuthPayload,
    cookieKeys: string[],
  ): Provider {
    const { resource, issuer } = this.addresses;
    const { accessTokenTtlSeconds, refreshTokenTtlSeconds } = this.config.app.auth.oauth;
    const store = this.store;
    const users = this.users;
    const provider = new OidcProvider(issuer, {
      adapter: (model: string) => adapterFor(store, model),
      clients: [],
      findAccount: async (_context: unknown, id: string) => {
        const user = await users.findById(id);
        return user === null || user.disabled ? undefined : { accountId: id, claims: () => ({ sub: id }) };
      },
      scopes: ['openid', 'offline_access', ...SCOPES],
      claims: { openid: ['sub'] },
      responseTypes: ['code'],
      pkce: { required: () => true },
      clientDefaults: {
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        id_token_signed_response_alg: 'ES256',
      },
      features: providerFeatures(errors, resource, accessTokenTtlSeconds),
      // A browser-based client may call the token and revocation endpoints from its own redirect URIs' origins only.
      clientBasedCORS: (_context: unknown, origin: string, client: { redirectUris: string[] }) =>
        origin !== 'null' && client.redirectUris.some((uri) => URL.parse(uri)?.origin === origin),
      interactions: {
        url: (_context: unknown, interaction: { uid: string }) => `${INTERACTION_PATH}/${interaction.uid}`,
      },
      routes: OAUTH_ROUTES,
      ttl: providerTtl(accessTokenTtlSeconds, refreshTokenTtlSeconds),
      // MCP clients ask for no `offline_access`; a client registered for refresh tokens gets them, each used once.
      issueRefreshToken: (_context: unknown, client: { grantTypeAllowed(type: string): boolean }) =>
        client.grantTypeAllowed('refresh_token'),
      rotateRefreshToken: true,
      cookies: { keys: cookieKeys },
      jwks: { keys: [signing] },
      renderError: (context: { type: string; body: string }, out: Record<string, string>) => {
        context.type = 'html';
        context.body = renderOAuthError(out);
      },
    });
    // The provider revokes a grant itself too (a code used twice): its tokens stop working here at once.
    provider.on('grant.revoked', (_context: unknown, grantId: unknown) => this.forgetGrant(String(grantId)));
    provider.on('server_error', (_context: unknown, error: unknown) =>
      this.logger.error(`OAuth server error: ${error instanceof Error ? error.stack : String(error)}`),
    );
    return provider;
  }
}

/** The provider's features: open registration and client metadata documents, revocation, tokens for `/mcp` only. */
function providerFeatures(
  errors: typeof import('oidc-provider')['errors'],
  resource: string,
  accessTokenTtlSeconds: number,
) {
  return {
    devInteractions: { enabled: false },
    // Open registration (RFC 7591), as MCP clients expect: a client is only a name and its redirect URIs, and
    // nothing is granted to it until a person consents.
    registration: { enabled: true },
    // Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document-02, the MCP specification's
    // preferred registration): an https URL as `client_id`, fetched by the provider (2.5 s, no redirects, never
    // to a loopback, private or other special-use address) and cached; only public clients (no secrets).
    clientIdMetadataDocument: {
      enabled: true,
      ack: 'draft-02',
      allowFetch: (_context: unknown, clientId: string) => fetchableClientId(clientId),
    },
    // A client revokes its own tokens only (RFC 7009 §2.1); another's is left alone, answered as if revoked (§2.2).
    revocation: {
      enabled: true,
      allowedPolicy: (_context: unknown, client: { clientId: string }, token: { clientId?: string }) =>
        token.clientId === client.clientId,
    },
    userinfo: { enabled: false },
    rpInitiatedLogout: { enabled: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: (_context: unknown, _client: unknown, oneOf?: string) => oneOf ?? resource,
      useGrantedResource: () => true,
      getResourceServerInfo: (_context: unknown, indicator: string) => {
        if (indicator !== resource)
          throw new errors.InvalidTarget(`Skillhost issues tokens for ${resource} only, not for ${indicator}.`);
        return {
          scope: SCOPES.join(' '),
          audience: resource,
          accessTokenTTL: accessTokenTtlSeconds,
          accessTokenFormat: 'opaque',
        };
      },
    },
  };
}

/** How long each artifact lasts: codes and sign-in pages briefly, grants as long as their refresh tokens. */
function providerTtl(accessTokenTtlSeconds: number, refreshTokenTtlSeconds: number) {
  return {
    AccessToken: accessTokenTtlSeconds,
    AuthorizationCode: AUTHORIZATION_CODE_TTL_SECONDS,
    RefreshToken: refreshTokenTtlSeconds,
    Grant: refreshTokenTtlSeconds,
    Interaction: INTERACTION_TTL_SECONDS,
    Session: SESSION_TTL_SECONDS,
    IdToken: accessTokenTtlSeconds,
  };
}

/**
 * Whether a client ID metadata document may be fetched from this URL: never from an address literal or a `localhost`
 * name (a client naming this server's neighbours). A name that resolves to such an address is refused by the
 * provider when it connects.
 */
export function fetchableClientId(clientId: string): boolean {
  const host = URL.parse(clientId)
    ?.hostname.replace(/^\[(.*)\]$/, '$1')
    .toLowerCase();
  if (host === undefined || host === '') return false;
  return isIP(host) === 0 && host !== 'localhost' && !host.endsWith('.localhost') && host.includes('.');
}

function admit(entry: CachedToken): Principal {
  if (entry.principal === null) throw unauthenticated(entry.reason);
  if (entry.expiresAt <= Date.now()) throw unauthenticated(entry.reason);
  return entry.principal;
}

function isFor(token: AccessTokenInstance, resource: string): boolean {
  const audience = token.aud;
  return Array.isArray(audience) ? audience.length === 1 && audience[0] === resource : audience === resource;
}

/** The provider's one signing key (for ID tokens), made once and shared by every instance through the database. */
function makeSigningKey(): OAuthPayload {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { ...privateKey.export({ format: 'jwk' }), kid: randomBytes(8).toString('hex'), alg: 'ES256', use: 'sig' };
}

/** oidc-provider's adapter for one model, over the artifact store. */
function adapterFor(store: OAuthArtifactStore, model: string) {
  return {
    upsert: (id: string, payload: OAuthPayload, expiresIn?: number) => store.upsert(model, id, payload, expiresIn),
    find: async (id: string) => (await store.find(model, id)) ?? undefined,
    findByUid: async (uid: string) => (await store.findByUid(model, uid)) ?? undefined,
    findByUserCode: async (code: string) => (await store.findByUserCode(model, code)) ?? undefined,
    consume: (id: string) => store.consume(model, id),
    destroy: (id: string) => store.destroy(model, id),
    revokeByGrantId: (grantId: string) => store.revokeByGrantId(grantId),
  };
}
