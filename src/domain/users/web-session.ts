import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * The web session's secrets and cookies, as plain functions: a session token is 32 random bytes in base64url, kept
 * by the browser in an HttpOnly cookie; the database holds only its SHA-256. The CSRF token is derived from the
 * session token, so the server stores nothing more and a page of another origin, which cannot read the cookie nor
 * our answers, cannot know it.
 */
export const SESSION_COOKIE = 'skillhost_session';
/** Ties a sign-in under way to the browser that started it (against login CSRF and a forged callback). */
export const SIGN_IN_COOKIE = 'skillhost_sign_in';
/** Where the sign-in cookie is sent: only the sign-in routes need it. */
export const SIGN_IN_COOKIE_PATH = '/auth/oidc';
/** The header a cookie-authenticated write must carry, with the value `GET /v1/auth/session` gives. */
export const CSRF_HEADER = 'x-csrf-token';

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function newSecretToken(): string {
  return randomBytes(32).toString('base64url');
}

export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** The CSRF token of a session; a different domain-separated hash, so it reveals nothing of the session token. */
export function csrfTokenOf(sessionToken: string): string {
  return hash('sha256', `skillhost-csrf:${sessionToken}`, 'base64url');
}

/** Whether `presented` is the session's CSRF token, in constant time. */
export function isCsrfTokenOf(sessionToken: string, presented: string | string[] | undefined): boolean {
  if (typeof presented !== 'string') return false;
  const expected = Buffer.from(csrfTokenOf(sessionToken));
  const given = Buffer.from(presented);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Reads that change nothing need no CSRF token; every other method does. */
export function isSafeMethod(method: string): boolean {
  return SAFE_METHODS.has(method.toUpperCase());
}

/**
 * The value of cookie `name` in a `Cookie` header, when it has the shape of a token; undefined otherwise (a
 * malformed value is treated as no cookie, so it never reaches the database). A repeated cookie of that name (one
 * planted for a parent path or domain) makes it undefined too: the server cannot tell which is its own.
 */
export function tokenCookie(header: string | string[] | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  const found: string[] = [];
  for (const line of [header].flat()) {
    for (const pair of line.split(';')) {
      const equals = pair.indexOf('=');
      if (equals < 0 || pair.slice(0, equals).trim() !== name) continue;
      found.push(pair.slice(equals + 1).trim());
    }
  }
  if (found.length !== 1 || !TOKEN_PATTERN.test(found[0])) return undefined;
  return found[0];
}

export interface CookieOptions {
  path: string;
  /** Seconds; 0 deletes the cookie. */
  maxAge: number;
  /** False only while the server listens on a loopback address, where browsers have no TLS to offer. */
  secure: boolean;
}

/** A `Set-Cookie` value: always HttpOnly and SameSite=Lax (sent on a top-level navigation back from the provider). */
export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  const parts = [`${name}=${value}`, `Path=${options.path}`, `Max-Age=${options.maxAge}`, 'HttpOnly', 'SameSite=Lax'];
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}
