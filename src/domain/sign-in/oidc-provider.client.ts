import { Inject, Injectable, Logger } from '@nestjs/common';
import * as oidc from 'openid-client';
import { AppError, ErrorCode } from '@skillhost/core';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { isLoopbackHost } from '../users/auth-mode.js';

/** How long the provider may take to answer one request (discovery, token, userinfo). */
const PROVIDER_TIMEOUT_SECONDS = 10;
/** After a failed discovery, the next sign-in tries again (a provider down at start-up must not need a restart). */
const DISCOVERY_RETRY_MS = 5000;

/** What the sign-in asks of the provider: a redirect to it, and the claims its answer proves. */
export interface AuthorizationRequest {
  redirectUri: string;
  state: string;
  nonce: string;
  codeChallenge: string;
}

/**
 * The identity provider through `openid-client`: discovery from the issuer's metadata (once, kept), the
 * authorization URL with PKCE (S256), state and nonce, and the code exchange, which checks the state, the
 * `iss` of the answer, the ID token's signature, audience, nonce and times. Plain `http://` is allowed for a
 * loopback issuer only (a provider on the same machine, as in tests).
 */
@Injectable()
export class OidcProviderClient {
  private readonly logger = new Logger('SignIn');
  private discovered: Promise<oidc.Configuration> | undefined;
  private failedAt = 0;
  readonly issuer: string;
  readonly enabled: boolean;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    const settings = config.app.auth.oidc;
    this.issuer = settings.issuer.trim();
    this.enabled = this.issuer !== '';
    if (this.enabled) checkSettings(this.issuer, settings.clientId);
  }

  /** The URL to send the browser to. */
  async authorizationUrl(request: AuthorizationRequest): Promise<URL> {
    const configuration = await this.configuration();
    const scopes = new Set(['openid', ...this.config.app.auth.oidc.scopes]);
    return oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: request.redirectUri,
      scope: [...scopes].join(' '),
      state: request.state,
      nonce: request.nonce,
      code_challenge: request.codeChallenge,
      code_challenge_method: 'S256',
    });
  }

  /**
   * The claims of the person who signed in: the ID token's, with the userinfo endpoint's added (many providers
   * put `email` or groups there only). Refused answers are SIGN_IN_FAILED; an unreachable provider
   * SIGN_IN_PROVIDER_UNAVAILABLE.
   */
  async exchange(
    callbackUrl: URL,
    checks: { codeVerifier: string; state: string; nonce: string },
  ): Promise<Record<string, unknown>> {
    const configuration = await this.configuration();
    let tokens: Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>;
    try {
      tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: checks.codeVerifier,
        expectedState: checks.state,
        expectedNonce: checks.nonce,
        idTokenExpected: true,
      });
    } catch (error) {
      throw providerError(error, 'The identity provider refused the sign-in');
    }
    const idClaims = tokens.claims();
    if (idClaims === undefined) throw new AppError(ErrorCode.SIGN_IN_FAILED, 'The provider sent no ID token.');
    if (configuration.serverMetadata().userinfo_endpoint === undefined) return { ...idClaims };
    try {
      const userinfo = await oidc.fetchUserInfo(configuration, tokens.access_token, idClaims.sub);
      // The ID token's claims win: they are signed.
      return { ...userinfo, ...idClaims };
    } catch (error) {
      throw providerError(error, "The identity provider's userinfo answer was refused");
    }
  }

  private configuration(): Promise<oidc.Configuration> {
    if (!this.enabled)
      return Promise.reject(
        new AppError(ErrorCode.SIGN_IN_NOT_CONFIGURED, 'Sign-in is off: set [app.auth.oidc] issuer and client_id.'),
      );
    if (this.discovered === undefined || (this.failedAt > 0 && Date.now() - this.failedAt > DISCOVERY_RETRY_MS)) {
      this.failedAt = 0;
      this.discovered = this.discover().catch((error: unknown) => {
        this.failedAt = Date.now();
        this.logger.warn(`Discovery of ${this.issuer} failed: ${error instanceof Error ? error.message : error}`);
        throw providerError(error, `The identity provider ${this.issuer} could not be discovered`);
      });
    }
    return this.discovered;
  }

  private discover(): Promise<oidc.Configuration> {
    const { clientId, clientSecret } = this.config.app.auth.oidc;
    const issuer = new URL(this.issuer);
    const insecure = issuer.protocol === 'http:';
    return oidc.discovery(
      issuer,
      clientId,
      undefined,
      clientSecret === '' ? oidc.None() : oidc.ClientSecretBasic(clientSecret),
      { timeout: PROVIDER_TIMEOUT_SECONDS, execute: insecure ? [oidc.allowInsecureRequests] : [] },
    );
  }
}

function checkSettings(issuer: string, clientId: string): void {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new Error(`[app.auth.oidc] issuer must be a URL, such as https://login.example.com; got '${issuer}'.`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname)))
    throw new Error(`[app.auth.oidc] issuer must be an https:// URL (http:// only on a loopback address): ${issuer}`);
  if (clientId.trim() === '')
    throw new Error('[app.auth.oidc] client_id is empty: set the client id Skillhost has at the identity provider.');
}

/** A refusal by the provider (or a check of its answer) is the sign-in's failure; anything else an outage. */
function providerError(error: unknown, what: string): AppError {
  if (AppError.isInstance(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  const refused =
    error instanceof oidc.ResponseBodyError ||
    error instanceof oidc.AuthorizationResponseError ||
    (error instanceof oidc.ClientError && !/fetch|network|timeout|abort/i.test(message));
  return refused
    ? new AppError(ErrorCode.SIGN_IN_FAILED, `${what}: ${message.slice(0, 300)}. Sign in again.`)
    : new AppError(
        ErrorCode.SIGN_IN_PROVIDER_UNAVAILABLE,
        `${what}: ${message.slice(0, 300)}. Try again shortly; if it persists, check [app.auth.oidc] issuer.`,
      );
}
