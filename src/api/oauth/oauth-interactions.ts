import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { InteractionDetails } from 'oidc-provider';
import { AppError, ErrorCode } from '@skillhost/core';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { providerDisplayName } from '../../domain/sign-in/sign-in.service.js';
import { API_KEY_PATTERN } from '../../domain/users/api-key.js';
import { AuthService } from '../../domain/users/auth.service.js';
import { type Scope, scopesOfRole, SCOPES } from '../../domain/users/scopes.js';
import { UsersService } from '../../domain/users/users.service.js';
import { WebSessionService } from '../../domain/users/web-session.service.js';
import { INTERACTION_PATH, OAuthServerService } from './oauth-server.service.js';
import { pageSecurityPolicy, renderConsent, renderOAuthError, renderSignIn } from './oauth-pages.js';

const FORM_LIMIT_BYTES = 16 * 1024;
const SCOPE_MEANINGS: Record<Scope, string> = {
  'skills:read': 'read the skills you may use (catalogue, /mcp, the discovery index)',
  chats: 'hold chats and use the model gateway as you',
  admin: 'administer this Skillhost server (users, keys, skills)',
};

/**
 * The person's part of the OAuth flow, at `/oauth/interaction/UID`: sign in with an API key, then consent (or deny).
 *
 * A person already signed in to the web page (a Skillhost web session, from the team's identity provider) skips the
 * sign-in page and goes straight to consent. Forms carry a token bound to the interaction (HMAC of its uid), the
 * interaction itself is bound to the browser by the provider's cookie, and a cross-origin `Origin` is refused.
 */
@Injectable()
export class OAuthInteractions {
  private readonly logger = new Logger('OAuth');

  constructor(
    private readonly server: OAuthServerService,
    private readonly auth: AuthService,
    private readonly users: UsersService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Optional() private readonly sessions?: WebSessionService,
  ) {}

  /** Serves one request under `/oauth/interaction/` (GET the page, POST `/login`, `/confirm`, `/deny`). */
  async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    try {
      await this.route(request, response);
    } catch (error) {
      const known = AppError.isInstance(error) || (error as { name?: string }).name === 'SessionNotFound';
      if (!known) this.logger.error(`OAuth interaction failed: ${(error as Error).stack ?? String(error)}`);
      const message = known
        ? (error as Error).message || 'This sign-in has expired or was opened in another browser.'
        : 'The sign-in could not be completed.';
      sendPage(response, known ? 400 : 500, renderOAuthError({ error_description: message }), []);
    }
  }

  private async route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = new URL(request.url ?? '/', 'http://skillhost.invalid').pathname;
    const match = new RegExp(`^${INTERACTION_PATH}/([A-Za-z0-9_-]{1,64})(?:/(login|confirm|deny))?$`).exec(path);
    if (match === null) return sendPage(response, 404, renderOAuthError({ error_description: 'No such page.' }), []);
    const [, uid, action] = match;
    const details = await this.server.oidc.interactionDetails(request, response);
    if (details.uid !== uid)
      throw new AppError(ErrorCode.VALIDATION_FAILED, 'This sign-in page belongs to another request.');
    if (action === undefined) {
      if (request.method !== 'GET' && request.method !== 'HEAD')
        return sendPage(response, 405, renderOAuthError({ error_description: 'Use GET.' }), []);
      return this.show(request, response, details);
    }
    if (request.method !== 'POST')
      return sendPage(response, 405, renderOAuthError({ error_description: 'Use POST.' }), []);
    const form = await readForm(request);
    if (!this.sameOrigin(request) || !this.csrfValid(uid, form.get('csrf')))
      return sendPage(
        response,
        403,
        renderOAuthError({ error_description: 'The form was not sent from this page.' }),
        [],
      );
    if (action === 'login') return this.signIn(request, response, details, form.get('api_key') ?? '');
    if (details.prompt.name !== 'consent')
      throw new AppError(ErrorCode.VALIDATION_FAILED, 'This sign-in is not waiting for consent.');
    if (action === 'deny')
      return this.server.oidc.interactionFinished(
        request,
        response,
        { error: 'access_denied', error_description: 'The person declined to give this client access.' },
        { mergeWithLastSubmission: false },
      );
    return this.consent(request, response, details);
  }

  /**
   * The person this browser's web session names (read as a GET: nothing is written with it here), or undefined when
   * there is none or it has ended: then the page asks for an API key.
   */
  private async signedInUser(request: IncomingMessage): Promise<string | undefined> {
    try {
      return (await this.sessions?.authenticate({ cookie: request.headers.cookie }, 'GET'))?.userId;
    } catch (error) {
      if (AppError.isInstance(error)) return undefined;
      throw error;
    }
  }

  private async show(request: IncomingMessage, response: ServerResponse, details: InteractionDetails): Promise<void> {
    const client = await this.server.oidc.Client.find(String(details.params.client_id));
    const clientName = client?.clientName ?? String(details.params.client_id);
    const targets = formTargets(details);
    if (details.prompt.name === 'login') {
      const userId = await this.signedInUser(request);
      if (userId !== undefined)
        return this.server.oidc.interactionFinished(request, response, { login: { accountId: userId } });
      return sendPage(response, 200, renderSignIn(this.signInView(details, clientName)), targets);
    }
    const user = await this.users.getUser(String(details.session?.accountId));
    const { granted, refused } = splitScopes(requestedScopes(details), user.role);
    const base = `${INTERACTION_PATH}/${details.uid}`;
    return sendPage(
      response,
      200,
      renderConsent({
        confirm: `${base}/confirm`,
        deny: `${base}/deny`,
        csrf: this.csrf(details.uid),
        clientName,
        clientId: String(details.params.client_id),
        redirectUri: String(details.params.redirect_uri),
        userName: user.name,
        granted: granted.map((scope) => ({ scope, meaning: SCOPE_MEANINGS[scope] })),
        refused,
      }),
      targets,
    );
  }

  private signInView(details: InteractionDetails, clientName: string, error?: string) {
    const here = `${INTERACTION_PATH}/${details.uid}`;
    // With the team's identity provider configured, a person signs in there and comes back here with a web session,
    // which this page then takes (show()); the API key form stays for those without one.
    const provider = providerDisplayName(this.config);
    const providerSignIn =
      provider === undefined
        ? undefined
        : { name: provider, href: `/auth/oidc/start?returnTo=${encodeURIComponent(here)}` };
    return { action: `${here}/login`, csrf: this.csrf(details.uid), clientName, error, providerSignIn };
  }

  private async signIn(
    request: IncomingMessage,
    response: ServerResponse,
    details: InteractionDetails,
    key: string,
  ): Promise<void> {
    const refuse = async (message: string) => {
      const client = await this.server.oidc.Client.find(String(details.params.client_id));
      const view = this.signInView(details, client?.clientName ?? String(details.params.client_id), message);
      sendPage(response, 401, renderSignIn(view), formTargets(details));
    };
    if (details.prompt.name !== 'login') return refuse('You are signed in already; reload the page.');
    if (!API_KEY_PATTERN.test(key.trim())) return refuse('That is not an API key: keys look like skh_ and 43 more.');
    try {
      const principal = await this.auth.authenticate({ 'x-api-key': key.trim() });
      await this.server.oidc.interactionFinished(
        request,
        response,
        { login: { accountId: principal.userId } },
        { mergeWithLastSubmission: false },
      );
    } catch (error) {
      if (!AppError.isInstance(error)) throw error;
      return refuse(error.message);
    }
  }

  /** Grants what was asked and the person's role allows; the rest is recorded as refused, so it is not asked again. */
  private async consent(request: IncomingMessage, response: ServerResponse, details: InteractionDetails) {
    const oidc = this.server.oidc;
    const accountId = String(details.session?.accountId);
    const user = await this.users.getUser(accountId);
    const clientId = String(details.params.client_id);
    const grant =
      (details.grantId === undefined ? undefined : await oidc.Grant.find(details.grantId)) ??
      new oidc.Grant({ accountId, clientId });
    const asked = details.prompt.details as {
      missingOIDCScope?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (asked.missingOIDCScope !== undefined) grant.addOIDCScope(asked.missingOIDCScope.join(' '));
    const allowed = new Set<string>(scopesOfRole(user.role));
    for (const [resource, scopes] of Object.entries(asked.missingResourceScopes ?? {})) {
      const granted = scopes.filter((scope) => allowed.has(scope));
      const refused = scopes.filter((scope) => !allowed.has(scope));
      if (granted.length > 0) grant.addResourceScope(resource, granted.join(' '));
      if (refused.length > 0) grant.rejectResourceScope(resource, refused.join(' '));
    }
    const grantId = await grant.save();
    await oidc.interactionFinished(request, response, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  private csrf(uid: string): string {
    return createHmac('sha256', this.server.formSecret).update(`oauth-interaction:${uid}`).digest('base64url');
  }

  private csrfValid(uid: string, sent: string | null): boolean {
    const expected = Buffer.from(this.csrf(uid));
    const got = Buffer.from(sent ?? '');
    return got.length === expected.length && timingSafeEqual(got, expected);
  }

  /** A browser says where a form came from; another origin is a cross-site post. */
  private sameOrigin(request: IncomingMessage): boolean {
    const origin = request.headers.origin;
    return origin === undefined || origin === new URL(this.server.addresses.issuer).origin;
  }
}

/** The scopes the client asked for, Skillhost's only (the resource's, else the `scope` parameter). */
function requestedScopes(details: InteractionDetails): string[] {
  const asked = details.prompt.details as { missingResourceScopes?: Record<string, string[]> };
  const scopes = new Set<string>(Object.values(asked.missingResourceScopes ?? {}).flat());
  if (scopes.size === 0) for (const scope of String(details.params.scope ?? '').split(' ')) scopes.add(scope);
  return SCOPES.filter((scope) => scopes.has(scope));
}

function splitScopes(scopes: string[], role: Parameters<typeof scopesOfRole>[0]) {
  const allowed = new Set<string>(scopesOfRole(role));
  return {
    granted: scopes.filter((scope): scope is Scope => allowed.has(scope)),
    refused: scopes.filter((scope) => !allowed.has(scope)),
  };
}

/** The client's redirect URI's origin, where the form's answer redirects (see pageSecurityPolicy). */
function formTargets(details: InteractionDetails): string[] {
  const origin = URL.parse(String(details.params.redirect_uri ?? ''))?.origin;
  return origin === undefined || origin === 'null' ? [] : [origin];
}

function sendPage(response: ServerResponse, status: number, html: string, targets: readonly string[]): void {
  response.statusCode = status;
  response.setHeader('content-type', 'text/html; charset=utf-8');
  response.setHeader('cache-control', 'no-store');
  response.setHeader('content-security-policy', pageSecurityPolicy(targets));
  response.setHeader('x-frame-options', 'DENY');
  response.setHeader('x-content-type-options', 'nosniff');
  // No referrer to the client (the page's address names the interaction), but the forms' own posts keep their
  // `Origin`: under `no-referrer` Chromium sends `Origin: null`, which sameOrigin() refuses.
  response.setHeader('referrer-policy', 'same-origin');
  response.end(html);
}

/** An `application/x-www-form-urlencoded` body of at most 16 KiB. */
async function readForm(request: IncomingMessage): Promise<URLSearchParams> {
  const type = request.headers['content-type'] ?? '';
  if (!type.toLowerCase().startsWith('application/x-www-form-urlencoded'))
    throw new AppError(ErrorCode.VALIDATION_FAILED, 'The form must be sent as application/x-www-form-urlencoded.');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > FORM_LIMIT_BYTES) throw new AppError(ErrorCode.VALIDATION_FAILED, 'The form is too large.');
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}
