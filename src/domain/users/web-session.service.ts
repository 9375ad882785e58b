import type { IncomingMessage } from 'node:http';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppError, ErrorCode } from '@skillhost/core';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { isLoopbackHost } from './auth-mode.js';
import type { Principal } from './principal.js';
import { type SessionOwner, WEB_SESSION_STORE, type WebSessionStore } from './web-session-store.js';
import {
  CSRF_HEADER,
  csrfTokenOf,
  hashToken,
  isCsrfTokenOf,
  isSafeMethod,
  newSecretToken,
  SESSION_COOKIE,
  serializeCookie,
  tokenCookie,
} from './web-session.js';

/** `last_seen_at` is written at most this often per session: enough for an idle timeout counted in minutes. */
const TOUCH_INTERVAL_MS = 60_000;
/** Ended sessions and abandoned sign-ins are swept at most this often per instance, at a sign-in. */
const SWEEP_INTERVAL_MS = 10 * 60_000;

/** The headers a web session is read from. */
export interface SessionHeaders {
  cookie?: string | string[];
  [CSRF_HEADER]?: string | string[];
}

/**
 * A sign-in of its own that a browser keeps on this server beside the web session (the OAuth server's, whose session
 * lets a person consent again without signing in): logging out of the web page ends it too.
 */
export interface BrowserSignIn {
  /** Ends the sign-in of the browser that sent `request`, if it has one: the `Set-Cookie` lines that clear it. */
  endFor(request: IncomingMessage): Promise<string[]>;
}

/** A new session: the token for the cookie (never stored), and its `Set-Cookie`. */
export interface StartedSession {
  token: string;
  setCookie: string;
}

/**
 * Web sessions in PostgreSQL: made at sign-in (always a new token, so a token planted before sign-in is worth
 * nothing), checked on each request that carries the cookie (expiry, idle time, the user's state, and the CSRF
 * token on writes), and ended at logout. No cache: logging out or disabling a user ends the session at once
 * everywhere.
 */
@Injectable()
export class WebSessionService {
  private readonly logger = new Logger('WebSessions');
  private readonly maxAgeMs: number;
  private readonly idleMs: number;
  private sweptAt = 0;
  private readonly browserSignIns: BrowserSignIn[] = [];
  readonly secureCookies: boolean;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(WEB_SESSION_STORE) private readonly store: WebSessionStore,
  ) {
    const { oidc } = config.app.auth;
    this.maxAgeMs = oidc.sessionMaxAgeMinutes * 60_000;
    this.idleMs = oidc.sessionIdleMinutes * 60_000;
    this.secureCookies = !isLoopbackHost(config.app.host);
  }

  /**
   * The principal of the request's session cookie; undefined when the request carries none (then the API key
   * rules apply). A write (any method but GET, HEAD, OPTIONS) must carry the session's CSRF token: without it
   * 403 CSRF_TOKEN_MISSING, before the session is even looked up.
   */
  authenticate(headers: SessionHeaders, method: string): Promise<Principal> | undefined {
    const token = tokenCookie(headers.cookie, SESSION_COOKIE);
    if (token === undefined) return undefined;
    if (!isSafeMethod(method) && !isCsrfTokenOf(token, headers[CSRF_HEADER]))
      throw new AppError(
        ErrorCode.CSRF_TOKEN_MISSING,
        `A write signed in by the session cookie needs the \`${CSRF_HEADER}\` header that GET /v1/auth/session ` +
          'gives (or an API key instead of the cookie).',
      );
    return this.store.findSession(hashToken(token)).then((owner) => this.admit(owner, token));
  }

  private admit(owner: SessionOwner | null, token: string): Principal {
    const now = Date.now();
    if (owner === null) throw sessionEnded('The sign-in session is unknown or has been logged out.');
    if (owner.expiresAt.getTime() <= now) throw sessionEnded('The sign-in session has expired.');
    if (now - owner.lastSeenAt.getTime() > this.idleMs) {
      this.forget(token);
      throw sessionEnded('The sign-in session ended after being idle.');
    }
    if (owner.disabled) throw sessionEnded(`The user '${owner.userName}' is disabled.`);
    if (now - owner.lastSeenAt.getTime() >= TOUCH_INTERVAL_MS) this.touch(owner.sessionId);
    return { userId: owner.userId, name: owner.userName, role: owner.role, keyId: null, sessionId: owner.sessionId };
  }

  /** A new session for the user, and the cookie that carries it. */
  async start(userId: string): Promise<StartedSession> {
    this.sweepNowAndThen();
    const token = newSecretToken();
    await this.store.createSession({
      tokenHash: hashToken(token),
      userId,
      expiresAt: new Date(Date.now() + this.maxAgeMs),
    });
    const setCookie = serializeCookie(SESSION_COOKIE, token, {
      path: '/',
      maxAge: Math.floor(this.maxAgeMs / 1000),
      secure: this.secureCookies,
    });
    return { token, setCookie };
  }

  /** Ends the request's session (if it has one) and answers the `Set-Cookie` that clears the cookie. */
  async end(headers: SessionHeaders): Promise<string> {
    const token = tokenCookie(headers.cookie, SESSION_COOKIE);
    if (token !== undefined) await this.store.deleteSession(hashToken(token));
    return serializeCookie(SESSION_COOKIE, '', { path: '/', maxAge: 0, secure: this.secureCookies });
  }

  /** Another sign-in the browser keeps on this server, to end at logout with the web session. */
  endAtLogout(signIn: BrowserSignIn): void {
    this.browserSignIns.push(signIn);
  }

  /**
   * Logs the browser that sent `request` out: its web session, and the other sign-ins it keeps here. Answers the
   * `Set-Cookie` lines that clear all of their cookies.
   */
  async logOut(request: IncomingMessage): Promise<string[]> {
    const cleared = await Promise.all([
      this.end(request.headers).then((line) => [line]),
      ...this.browserSignIns.map((signIn) => signIn.endFor(request)),
    ]);
    return cleared.flat();
  }

  /** The CSRF token of the request's session, for the page (undefined without a session cookie). */
  csrfToken(headers: SessionHeaders): string | undefined {
    const token = tokenCookie(headers.cookie, SESSION_COOKIE);
    return token === undefined ? undefined : csrfTokenOf(token);
  }

  /** Ended sessions and abandoned sign-ins are removed now and then, off the sign-in's path. */
  private sweepNowAndThen(): void {
    if (Date.now() - this.sweptAt < SWEEP_INTERVAL_MS) return;
    this.sweptAt = Date.now();
    this.store
      .sweep(new Date(Date.now() - this.idleMs))
      .catch((error: unknown) => this.warn('remove ended sessions', error));
  }

  private touch(sessionId: string): void {
    this.store
      .touchSession(sessionId)
      .catch((error: unknown) => this.warn(`record the use of session ${sessionId}`, error));
  }

  private forget(token: string): void {
    this.store.deleteSession(hashToken(token)).catch((error: unknown) => this.warn('delete an idle session', error));
  }

  private warn(what: string, error: unknown): void {
    this.logger.warn(`Could not ${what}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function sessionEnded(message: string): AppError {
  return new AppError(ErrorCode.UNAUTHENTICATED, `${message} Sign in again.`);
}
