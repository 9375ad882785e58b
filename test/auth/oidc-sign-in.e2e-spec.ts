import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { APP_CONFIG, type AppConfig } from '../../src/config/app-config.js';
import { keysFor } from '../support/api-keys.js';
import { createTestApp } from '../support/app.js';
import { query } from '../support/database.js';
import {
  CHROMIUM,
  CHROMIUM_ARGS,
  haveChromium,
  listenIdentityProvider,
  type People,
  signInThroughProvider,
  type TestIdentityProvider,
} from './identity-provider.js';

/**
 * Sign-in with a real OpenID provider (the certified `oidc-provider`, on 127.0.0.1 with its development login
 * form) driven in Chromium through the web page, then the REST API used with the session cookie: the cookie's
 * flags, CSRF refused, logout, a replayed or forged answer refused, an answer taken to another browser refused,
 * open redirects in `returnTo` refused, a person not allowed refused, linking by verified email, oversized claims.
 * Without Chromium the block is skipped, saying why.
 */
if (!haveChromium)
  console.warn(`Chromium not found at ${CHROMIUM} (apt-get install chromium): the sign-in browser tests are skipped.`);

/** The provider's people, by the login typed into its form. */
const PEOPLE: People = {
  alice: { preferred_username: 'Alice', email: 'alice@example.com', email_verified: true, groups: ['eng', 'ops'] },
  bob: { preferred_username: 'bob', email: 'BOB@example.com', email_verified: true },
  // Claims the same email as bob but the provider does not vouch for it: no link, and not allowed either.
  eve: { preferred_username: 'eve', email: 'bob@example.com', email_verified: false },
  mallory: { preferred_username: 'mallory', email: 'mallory@example.com', email_verified: true },
  huge: {
    preferred_username: 'huge',
    email: 'huge@example.com',
    email_verified: true,
    groups: Array.from({ length: 5000 }, (_, i) => `group-${i}`),
  },
};

(haveChromium ? describe : describe.skip)('sign-in with an OpenID provider, in Chromium', () => {
  let idp: TestIdentityProvider;
  let issuer: string;
  let app: NestFastifyApplication;
  let base: string;
  let browser: Browser;
  let adminKey: string;
  /** Alice's browser, signed in by the first test. */
  let alice: { context: BrowserContext; page: Page };

  beforeAll(async () => {
    idp = await listenIdentityProvider();
    issuer = idp.issuer;
    app = await createTestApp({
      'app.auth.mode': 'api_key',
      ...idp.config,
      'app.auth.oidc.allowed_users': ['alice', 'bob@example.com', 'huge'],
    });
    await app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
    idp.serve(base, PEOPLE);
    ({ root: adminKey } = await keysFor(app, { root: 'admin' }));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await idp?.close();
  });

  const signIn = (login: string, path = '/', planted?: string) =>
    signInThroughProvider(browser, base, login, path, planted);

  const sessionCookie = async (context: BrowserContext) =>
    (await context.cookies(base)).find((cookie) => cookie.name === 'skillhost_session');

  it('signs in through the provider from the page, back where it started, with a new session cookie', async () => {
    // A session id planted before sign-in (session fixation) is replaced, not adopted.
    const planted = 'p'.repeat(43);
    alice = await signIn('alice', '/?chat=somewhere', planted);
    const { page, context: aliceContext } = alice;
    await page.getByText('Signed in as alice').waitFor();
    expect(new URL(page.url()).pathname + new URL(page.url()).search).toBe('/?chat=somewhere');
    const cookie = await sessionCookie(aliceContext);
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', secure: false, path: '/' });
    expect(cookie?.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(cookie?.value).not.toBe(planted);
    const plantedMe = await fetch(`${base}/v1/me`, { headers: { cookie: `skillhost_session=${planted}` } });
    expect(plantedMe.status).toBe(401);
    // Only the hash of the session id is stored.
    const rows = await query<{ token_hash: string }>(
      dbUrl(app),
      "SELECT s.token_hash FROM web_sessions s JOIN users u ON u.id = s.user_id WHERE u.name = 'alice'",
    );
    expect(rows).toHaveLength(1);
    expect(rows[0].token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0].token_hash).not.toContain(cookie!.value);
    const linked = await query<{ issuer: string; subject: string; email: string; role: string }>(
      dbUrl(app),
      'SELECT i.issuer, i.subject, u.email, u.role FROM user_identities i JOIN users u ON u.id = i.user_id ' +
        "WHERE u.name = 'alice'",
    );
    expect(linked).toEqual([{ issuer, subject: 'alice', email: 'alice@example.com', role: 'member' }]);
    // The provider's groups claim made her provider groups.
    const groups = await query<{ name: string; source: string }>(
      dbUrl(app),
      'SELECT g.name, g.source FROM group_members m JOIN groups g ON g.id = m.group_id JOIN users u ON ' +
        "u.id = m.user_id WHERE u.name = 'alice' ORDER BY g.name",
    );
    expect(groups).toEqual([
      { name: 'eng', source: 'provider' },
      { name: 'ops', source: 'provider' },
    ]);
  });

  it('a signed-in person makes, lists and revokes their own API key on the page', async () => {
    const { page } = alice;
    await page.getByRole('button', { name: 'API keys' }).click();
    await page.getByText('No keys yet.').waitFor();
    await page.getByLabel('Label').fill('laptop');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.locator('#new-key-value', { hasText: 'skh_' }).waitFor();
    const key = (await page.locator('#new-key-value').textContent()) ?? '';
    expect(key).toMatch(/^skh_/);
    await page.getByRole('button', { name: 'Revoke laptop' }).waitFor();
    const me = await fetch(`${base}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
    expect(await me.json()).toMatchObject({ name: 'alice' });
    await page.getByRole('button', { name: 'Revoke laptop' }).click();
    await page.getByText('No keys yet.').waitFor();
    const refused = await fetch(`${base}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
    expect(refused.status).toBe(401);
    await page.getByRole('button', { name: 'Close' }).click();
  });

  it('the cookie works on the REST API as a key does; writes need the CSRF token, reads do not', async () => {
    const cookie = `skillhost_session=${(await sessionCookie(alice.context))!.value}`;
    const me = await fetch(`${base}/v1/me`, { headers: { cookie } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ name: 'alice', role: 'member' });
    const session = (await (await fetch(`${base}/v1/auth/session`, { headers: { cookie } })).json()) as {
      csrfToken: string;
      user: { name: string };
    };
    expect(session.user.name).toBe('alice');
    expect(session.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const write = (headers: Record<string, string>) =>
      fetch(`${base}/v1/me/keys`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ label: 'csrf' }),
      });
    for (const headers of [{}, { 'x-csrf-token': 'x'.repeat(43) }, { 'x-csrf-token': '' }] as Record<
      string,
      string
    >[]) {
      const refused = await write(headers);
      expect(refused.status).toBe(403);
      expect(await refused.json()).toMatchObject({ code: 'CSRF_TOKEN_MISSING' });
    }
    // GraphQL writes too: a mutation with the cookie and without the token is refused before it runs.
    const graphql = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'mutation { createChat { id } }' }),
    });
    expect(graphql.status).toBe(403);
    // A GET carries no token, so a mutation may not ride on one.
    const viaGet = await fetch(`${base}/graphql?query=${encodeURIComponent('mutation { createChat { id } }')}`, {
      headers: { cookie },
    });
    expect(viaGet.status).not.toBe(200);
    expect(await query(dbUrl(app), 'SELECT 1 FROM chats')).toEqual([]);
    expect(await query(dbUrl(app), "SELECT 1 FROM api_keys WHERE label = 'csrf'")).toEqual([]);
    const allowed = await write({ 'x-csrf-token': session.csrfToken });
    expect(allowed.status).toBe(201);
    // An admin-only route stays closed to a member's cookie.
    const admin = await fetch(`${base}/v1/admin/users`, { headers: { cookie } });
    expect(admin.status).toBe(403);
  });

  it('refuses a replayed answer, a forged state, and an answer carried to another browser', async () => {
    // Alice's answer from the first test, sent again: the attempt was used, and the code with it.
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    let caught: (url: string) => void = () => undefined;
    const answered = new Promise<string>((resolve) => (caught = resolve));
    // The provider's answer comes as the last of its redirects, which Playwright does not route: the form's POST
    // (the first request of the chain) is fetched here up to the redirect to the callback, which is kept, not
    // followed.
    await page.route(`${issuer}/interaction/**`, async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      const response = await route.fetch({ maxRedirects: 0 });
      const resume = response.headers().location ?? '';
      const next = await page.request.get(resume, { maxRedirects: 0 });
      const location = next.headers().location ?? '';
      if (!location.startsWith(`${base}/auth/oidc/callback`)) return route.fulfill({ response: next });
      caught(location);
      return route.abort();
    });
    await page.goto(base);
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
    await page.locator('input[name=login]').fill('alice');
    await page.locator('input[name=password]').fill('x');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click({ noWaitAfter: true });
    const answer = await answered;
    expect(answer).toContain('code=');
    await page.unrouteAll({ behavior: 'ignoreErrors' });

    // Another browser (no sign-in cookie) gets nowhere with it.
    const other = await browser.newContext();
    const otherPage = await other.newPage();
    await otherPage.goto(answer);
    expect(new URL(otherPage.url()).search).toBe('?sign_in_error=SIGN_IN_STATE_INVALID');
    await otherPage.getByText('too old, used already or started elsewhere').waitFor();
    expect(await sessionCookie(other)).toBeUndefined();
    // The attempt is spent even so: the right browser, second, is refused too.
    await page.goto(answer);
    expect(new URL(page.url()).search).toBe('?sign_in_error=SIGN_IN_STATE_INVALID');
    expect(await sessionCookie(context)).toBeUndefined();
    // A made-up state.
    await page.goto(`${base}/auth/oidc/callback?code=forged&state=${'s'.repeat(43)}`);
    expect(new URL(page.url()).search).toBe('?sign_in_error=SIGN_IN_STATE_INVALID');
    await Promise.all([context.close(), other.close()]);
  });

  it.each([
    '//evil.example/',
    'https://evil.example/',
    '/\\evil.example',
    'javascript:alert(1)',
    '/%0d%0aSet-Cookie:x',
  ])('refuses returnTo %s: only a path on this server', async (returnTo) => {
    const answer = await fetch(`${base}/auth/oidc/start?returnTo=${encodeURIComponent(returnTo)}`, {
      redirect: 'manual',
    });
    if (returnTo.startsWith('/%0d')) {
      // Percent-encoded stays encoded: a path on this server, no header split.
      expect(answer.status).toBe(302);
      return;
    }
    expect(answer.status).toBe(400);
    expect(await answer.json()).toMatchObject({ code: 'SIGN_IN_RETURN_TO_INVALID' });
  });

  it('logs out: the session ends at once and the cookie is cleared', async () => {
    const cookie = `skillhost_session=${(await sessionCookie(alice.context))!.value}`;
    const { csrfToken } = (await (await fetch(`${base}/v1/auth/session`, { headers: { cookie } })).json()) as {
      csrfToken: string;
    };
    const refused = await fetch(`${base}/v1/auth/logout`, { method: 'POST', headers: { cookie } });
    expect(refused.status).toBe(403);
    await alice.page.getByRole('button', { name: 'Sign out' }).click();
    await alice.page.getByRole('dialog', { name: 'Sign in' }).waitFor();
    expect(await sessionCookie(alice.context)).toBeUndefined();
    const after = await fetch(`${base}/v1/me`, { headers: { cookie, 'x-csrf-token': csrfToken } });
    expect(after.status).toBe(401);
    expect(await query(dbUrl(app), 'SELECT 1 FROM web_sessions')).toEqual([]);
    await alice.context.close();
  });

  it('refuses a person not in allowed_users, and one whose email the provider does not vouch for', async () => {
    for (const login of ['mallory', 'eve']) {
      const { context, page } = await signIn(login);
      expect(new URL(page.url()).search).toBe('?sign_in_error=SIGN_IN_NOT_ALLOWED');
      await page.getByText('may not sign in to this server').waitFor();
      expect(await sessionCookie(context)).toBeUndefined();
      await context.close();
    }
    expect(await query(dbUrl(app), "SELECT 1 FROM users WHERE name IN ('mallory', 'eve')")).toEqual([]);
  });

  it('links a person to the existing user with their verified email (set by an admin)', async () => {
    const robert = await (
      await fetch(`${base}/v1/admin/users`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'robert' }),
      })
    ).json();
    const mapped = await fetch(`${base}/v1/admin/users/${(robert as { id: string }).id}/sign-in`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'Bob@Example.com' }),
    });
    expect(await mapped.json()).toEqual({ email: 'Bob@Example.com' });
    const { context, page } = await signIn('bob');
    await page.getByText('Signed in as robert').waitFor();
    expect(await query(dbUrl(app), "SELECT 1 FROM users WHERE name = 'bob'")).toEqual([]);
    await context.close();
  });

  it('ends a session left idle, one past its age, and those of a disabled user', async () => {
    const sessionOf = async (login: string) => {
      const { context } = await signIn(login);
      const cookie = `skillhost_session=${(await sessionCookie(context))!.value}`;
      await context.close();
      return cookie;
    };
    const me = async (cookie: string) => (await fetch(`${base}/v1/me`, { headers: { cookie } })).status;
    const idle = await sessionOf('alice');
    expect(await me(idle)).toBe(200);
    await query(dbUrl(app), "UPDATE web_sessions SET last_seen_at = now() - interval '61 minutes'");
    expect(await me(idle)).toBe(401);
    const old = await sessionOf('alice');
    await query(dbUrl(app), "UPDATE web_sessions SET expires_at = now() - interval '1 second'");
    expect(await me(old)).toBe(401);
    const disabled = await sessionOf('alice');
    await query(dbUrl(app), "UPDATE users SET disabled = true WHERE name = 'alice'");
    expect(await me(disabled)).toBe(401);
    await query(dbUrl(app), "UPDATE users SET disabled = false WHERE name = 'alice'");
    expect(await me(disabled)).toBe(200);
  });

  it('refuses oversized claims cleanly, making no user', async () => {
    const { context, page } = await signIn('huge');
    expect(new URL(page.url()).search).toBe('?sign_in_error=SIGN_IN_CLAIMS_INVALID');
    await page.getByText('did not say who you are').waitFor();
    expect(await query(dbUrl(app), "SELECT 1 FROM users WHERE name = 'huge'")).toEqual([]);
    await context.close();
  });
});

/** The test database's URL, as the app was configured with it. */
function dbUrl(app: NestFastifyApplication): string {
  return app.get<symbol, AppConfig>(APP_CONFIG).app.database.url;
}
