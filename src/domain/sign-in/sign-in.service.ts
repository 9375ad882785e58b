import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import * as oidc from 'openid-client';
import { AppError, ErrorCode } from '@skillhost/core';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import type { User } from '../users/user.types.js';
import { isUuid } from '../shared/uuid.js';
import { OidcProviderClient } from './oidc-provider.client.js';
import { PROVIDER_GROUPS, type ProviderGroupsSink } from '../users/provider-groups.js';
import { checkedReturnTo } from './return-to.js';
import { type PersonClaims, readPersonClaims, userNameFrom } from './sign-in-claims.js';
import { SIGN_IN_STORE, type SignInStore } from './sign-in-store.js';
import { WebSessionService } from '../users/web-session.service.js';
import {
  hashToken,
  newSecretToken,
  serializeCookie,
  SIGN_IN_COOKIE,
  SIGN_IN_COOKIE_PATH,
  tokenCookie,
} from '../users/web-session.js';

/** How long a person has at the provider between leaving and coming back. */
const ATTEMPT_TTL_MS = 10 * 60_000;
/** The callback path; the redirect URL registered at the provider ends with it. */
export const CALLBACK_PATH = `${SIGN_IN_COOKIE_PATH}/callback`;

/** A sign-in started: where to send the browser, and the cookie that ties the answer to this browser. */
export interface StartedSignIn {
  location: string;
  setCookie: string;
}

/** A sign-in finished: the new session's cookie, the cookie clearing the attempt's, and where to go. */
export interface FinishedSignIn {
  setCookies: string[];
  returnTo: string;
  user: User;
}

/**
 * Sign-in with the team's identity provider: the authorization code flow with PKCE, state and nonce, each attempt
 * stored (hashed state, single use) and bound to the browser that started it; then the person is matched to a user
 * (the provider's subject as linked before, else a verified email when `link_by_email`, else a new member when
 * `create_users`), checked against `allowed_users`, and given a new web session.
 */
@Injectable()
export class SignInService {
  private readonly logger = new Logger('SignIn');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SIGN_IN_STORE) private readonly store: SignInStore,
    private readonly provider: OidcProviderClient,
    private readonly sessions: WebSessionService,
    @Optional() @Inject(PROVIDER_GROUPS) private readonly groups?: ProviderGroupsSink,
  ) {}

  get enabled(): boolean {
    return this.provider.enabled;
  }

  /** The provider's name for the "Sign in with …" button; undefined when sign-in is off. */
  get displayName(): string | undefined {
    return providerDisplayName(this.config);
  }

  /** The callback URL: the configured one, else this server as the browser reached it. */
  redirectUri(requestOrigin: string): string {
    const configured = this.config.app.auth.oidc.redirectUrl.trim();
    return configured !== '' ? configured : `${requestOrigin}${CALLBACK_PATH}`;
  }

  async start(returnTo: string | undefined, requestOrigin: string): Promise<StartedSignIn> {
    const checkedPath = checkedReturnTo(returnTo);
    const [state, nonce, browser, codeVerifier] = [
      newSecretToken(),
      newSecretToken(),
      newSecretToken(),
      newSecretToken(),
    ];
    const location = await this.provider.authorizationUrl({
      redirectUri: this.redirectUri(requestOrigin),
      state,
      nonce,
      codeChallenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    });
    await this.store.saveAttempt({
      stateHash: hashToken(state),
      browserHash: hashToken(browser),
      codeVerifier,
      nonce,
      returnTo: checkedPath,
      expiresAt: new Date(Date.now() + ATTEMPT_TTL_MS),
    });
    const setCookie = serializeCookie(SIGN_IN_COOKIE, browser, {
      path: SIGN_IN_COOKIE_PATH,
      maxAge: ATTEMPT_TTL_MS / 1000,
      secure: this.sessions.secureCookies,
    });
    return { location: location.href, setCookie };
  }

  /**
   * The provider's answer: `query` is the callback's query string. The attempt is taken (deleted) first, so an
   * answer is used once whatever happens next.
   */
  async finish(query: URLSearchParams, cookieHeader: string | string[] | undefined, requestOrigin: string) {
    const state = query.get('state');
    const attempt = state === null || state.length > 200 ? null : await this.store.takeAttempt(hashToken(state));
    const browser = tokenCookie(cookieHeader, SIGN_IN_COOKIE);
    if (attempt === null || attempt.expiresAt.getTime() <= Date.now())
      throw stateInvalid('This sign-in answer is unknown, used already or expired.');
    if (browser === undefined || hashToken(browser) !== attempt.browserHash)
      throw stateInvalid('This sign-in was started in another browser (or its cookie is gone).');
    const callback = new URL(this.redirectUri(requestOrigin));
    callback.search = query.toString();
    const claims = await this.provider.exchange(callback, {
      codeVerifier: attempt.codeVerifier,
      state: state!,
      nonce: attempt.nonce,
    });
    const person = readPersonClaims(claims, this.config.app.auth.oidc);
    const user = await this.userFor(person);
    if (person.groups !== undefined && this.groups !== undefined)
      await this.groups.setProviderGroups(user.id, person.groups);
    const session = await this.sessions.start(user.id);
    const clearAttempt = serializeCookie(SIGN_IN_COOKIE, '', {
      path: SIGN_IN_COOKIE_PATH,
      maxAge: 0,
      secure: this.sessions.secureCookies,
    });
    this.logger.log(`'${user.name}' signed in through ${this.provider.issuer}`);
    return { setCookies: [session.setCookie, clearAttempt], returnTo: attempt.returnTo, user } satisfies FinishedSignIn;
  }

  /**
   * An admin's mapping: the user's email (null clears it), and/or a subject of the configured issuer linked to the
   * user. A subject linked to another user, or an email another user has, is SIGN_IN_USER_CONFLICT.
   */
  async mapUser(
    userId: string,
    changes: { email?: string | null; subject?: string },
  ): Promise<{ email: string | null }> {
    if (changes.subject !== undefined && !this.enabled)
      throw new AppError(ErrorCode.SIGN_IN_NOT_CONFIGURED, 'Set [app.auth.oidc] issuer before linking subjects.');
    const email = changes.email === undefined || changes.email === null ? changes.email : changes.email.trim();
    if (email !== undefined && email !== null && !/^[^\s@]+@[^\s@]+$/.test(email))
      throw new AppError(ErrorCode.VALIDATION_FAILED, `'${email.slice(0, 100)}' is not an email address.`);
    const mapped = isUuid(userId)
      ? await this.store.mapUser(userId, { email, subject: changes.subject, issuer: this.provider.issuer })
      : null;
    if (mapped === null) throw new AppError(ErrorCode.USER_NOT_FOUND, `User '${userId}' not found.`, { id: userId });
    if (mapped === 'taken')
      throw new AppError(ErrorCode.SIGN_IN_USER_CONFLICT, 'That email or subject belongs to another user already.');
    return mapped;
  }

  /** The user this person signs in as, linking or creating one as the settings allow. */
  private async userFor(person: PersonClaims): Promise<User> {
    const settings = this.config.app.auth.oidc;
    const issuer = this.provider.issuer;
    if (!this.isAllowed(person))
      throw notAllowed(`'${person.name}' is not in [app.auth.oidc] allowed_users; ask an admin to add them.`);
    let user = await this.store.findLinkedUser(issuer, person.subject);
    if (user === null && settings.linkByEmail && person.verifiedEmail !== null) {
      user = await this.store.findUserByEmail(person.verifiedEmail);
      if (user !== null) await this.linkOrFind(issuer, person.subject, user);
    }
    if (user === null) user = await this.createUser(person);
    if (user.disabled) throw notAllowed(`The user '${user.name}' is disabled; an admin can enable them.`);
    return user;
  }

  private isAllowed(person: PersonClaims): boolean {
    const allowed = this.config.app.auth.oidc.allowedUsers.map((entry) => entry.trim().toLowerCase());
    if (allowed.length === 0) return true;
    return (
      allowed.includes(person.name.toLowerCase()) ||
      (person.verifiedEmail !== null && allowed.includes(person.verifiedEmail))
    );
  }

  private async createUser(person: PersonClaims): Promise<User> {
    const issuer = this.provider.issuer;
    if (!this.config.app.auth.oidc.createUsers)
      throw notAllowed(
        `No user is linked to '${person.name}' and [app.auth.oidc] create_users is false; an admin links them ` +
          '(PUT /v1/admin/users/{id}/sign-in).',
      );
    const name = userNameFrom(person.name);
    if (name === undefined)
      throw new AppError(
        ErrorCode.SIGN_IN_CLAIMS_INVALID,
        `No user name can be made of '${person.name.slice(0, 64)}' (claim ${this.config.app.auth.oidc.userClaim}).`,
      );
    const created = await this.store.createMember(name, person.verifiedEmail);
    if (created === null)
      throw new AppError(
        ErrorCode.SIGN_IN_USER_CONFLICT,
        `A user named '${name}' (or with that email) exists and is not linked to this sign-in; an admin links ` +
          `them with PUT /v1/admin/users/{id}/sign-in.`,
        { name },
      );
    return this.linkOrFind(issuer, person.subject, created);
  }

  /** Links the subject to `user`; if a sign-in at the same moment linked it first, that link wins. */
  private async linkOrFind(issuer: string, subject: string, user: User): Promise<User> {
    if (await this.store.link(issuer, subject, user.id)) return user;
    const linked = await this.store.findLinkedUser(issuer, subject);
    if (linked === null) throw new AppError(ErrorCode.SIGN_IN_FAILED, 'The sign-in could not be linked; try again.');
    return linked;
  }
}

function stateInvalid(message: string): AppError {
  return new AppError(ErrorCode.SIGN_IN_STATE_INVALID, `${message} Start the sign-in again from the page.`);
}

function notAllowed(message: string): AppError {
  return new AppError(ErrorCode.SIGN_IN_NOT_ALLOWED, message);
}

/** The identity provider's name for "Sign in with …": the configured one, else the issuer's host; none when off. */
export function providerDisplayName(config: AppConfig): string | undefined {
  const { issuer, displayName } = config.app.auth.oidc;
  if (issuer.trim() === '') return undefined;
  const configured = displayName.trim();
  return configured !== '' ? configured : (URL.parse(issuer.trim())?.hostname ?? issuer.trim());
}
