import { describe, expect, it } from '@jest/globals';
import {
  csrfTokenOf,
  isCsrfTokenOf,
  isSafeMethod,
  newSecretToken,
  serializeCookie,
  tokenCookie,
} from './web-session.js';

describe('web session secrets and cookies', () => {
  const token = newSecretToken();

  it('reads the one well-formed cookie of a name, and nothing from a repeated or malformed one', () => {
    expect(tokenCookie(`a=1; skillhost_session=${token}; b=2`, 'skillhost_session')).toBe(token);
    expect(tokenCookie(['a=1', `skillhost_session=${token}`], 'skillhost_session')).toBe(token);
    expect(tokenCookie(undefined, 'skillhost_session')).toBeUndefined();
    expect(tokenCookie('skillhost_session=short', 'skillhost_session')).toBeUndefined();
    expect(tokenCookie(`xskillhost_session=${token}`, 'skillhost_session')).toBeUndefined();
    // A second cookie of the name (planted for a parent domain or path): which one is ours cannot be told.
    const other = newSecretToken();
    expect(tokenCookie(`skillhost_session=${token}; skillhost_session=${other}`, 'skillhost_session')).toBeUndefined();
  });

  it("accepts only the session's own CSRF token, which is not the session token", () => {
    const csrf = csrfTokenOf(token);
    expect(csrf).not.toBe(token);
    expect(isCsrfTokenOf(token, csrf)).toBe(true);
    expect(isCsrfTokenOf(newSecretToken(), csrf)).toBe(false);
    expect(isCsrfTokenOf(token, undefined)).toBe(false);
    expect(isCsrfTokenOf(token, [csrf, csrf])).toBe(false);
    expect(isCsrfTokenOf(token, csrf.slice(1))).toBe(false);
  });

  it('treats only GET, HEAD and OPTIONS as reads', () => {
    expect(['GET', 'head', 'OPTIONS'].map(isSafeMethod)).toEqual([true, true, true]);
    expect(['POST', 'PUT', 'PATCH', 'DELETE', 'PROPFIND'].map(isSafeMethod)).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it('writes HttpOnly, SameSite=Lax cookies, Secure unless told the server is on loopback', () => {
    expect(serializeCookie('n', 'v', { path: '/', maxAge: 60, secure: true })).toBe(
      'n=v; Path=/; Max-Age=60; HttpOnly; SameSite=Lax; Secure',
    );
    expect(serializeCookie('n', '', { path: '/auth/oidc', maxAge: 0, secure: false })).toBe(
      'n=; Path=/auth/oidc; Max-Age=0; HttpOnly; SameSite=Lax',
    );
  });
});
