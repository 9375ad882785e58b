import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { APP_CONFIG, type AppConfig } from '../../src/config/app-config.js';
import { keysFor } from '../support/api-keys.js';
import { query } from '../support/database.js';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import {
  CHROMIUM,
  CHROMIUM_ARGS,
  haveChromium,
  listenIdentityProvider,
  startAppWithProvider,
  signInThroughProvider,
  type TestIdentityProvider,
} from './identity-provider.js';
import { OAuthTestClient, pkcePair } from './oauth-browser.js';

/**
 * The person's OAuth grants on the web page, in Chromium: signed in through a real OpenID provider, they let an MCP
 * client in on the consent page, see it in the "MCP clients" panel (its self-chosen name shown as text), revoke it
 * (its token is refused on /mcp at once), and see a failed revoke said. Then logging out of the page ends the OAuth
 * server's own sign-in in that browser: the next authorization asks who is signing in again.
 */
if (!haveChromium)
  console.warn(`Chromium not found at ${CHROMIUM} (apt-get install chromium): the grants panel tests are skipped.`);

/** A client name chosen to run script if the page ever put it in as HTML. */
const HOSTILE_NAME = `<img src=x onerror="document.title='pwned'">`;

(haveChromium ? describe : describe.skip)('OAuth grants on the web page, in Chromium', () => {
  let idp: TestIdentityProvider;
  let tree: TempTree;
  let app: NestFastifyApplication;
  let base: string;
  let oauth: OAuthTestClient;
  /** Where clients are sent back to: a page that answers, so Chromium shows the code in its address. */
  let callbackServer: Server;
  let redirect: string;
  let browser: Browser;
  let alice: { context: BrowserContext; page: Page };

  beforeAll(async () => {
    idp = await listenIdentityProvider();
    tree = tempTree();
    writeSkill(tree, 'skills', 'alpha', { description: 'Alpha does the first thing. Use when a test needs alpha.' });
    ({ app, base } = await startAppWithProvider(idp, tree.path('skills'), {
      alice: { preferred_username: 'alice', email: 'alice@example.com', email_verified: true },
    }));
    oauth = new OAuthTestClient(base);
    callbackServer = createServer((_request, response) => response.end('back at the client'));
    await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
    redirect = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/callback`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    alice = await signInThroughProvider(browser, base, 'alice');
    await alice.page.getByText('Signed in as alice').waitFor();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await idp?.close();
    await new Promise((resolve) => callbackServer?.close(resolve));
    tree?.cleanup();
  });

  /**
   * In the person's browser: the client asks to be let in; signed in to the page already, the person sees consent
   * straight away and allows it. The client's tokens, from the code it got back.
   */
  async function allowInBrowser(page: Page, client: string): Promise<{ access_token: string }> {
    const { verifier, challenge } = pkcePair();
    await page.goto(oauth.authorizeUrl(client, { code_challenge: challenge, redirect_uri: redirect }));
    expect(await page.locator('input[name=api_key]').count()).toBe(0);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((url) => url.href.startsWith(redirect));
    return exchange(client, new URL(page.url()).searchParams.get('code')!, verifier);
  }

  async function exchange(client: string, code: string, verifier: string) {
    const answer = await oauth.tokenRequest({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: redirect,
      client_id: client,
      resource: `${base}/mcp`,
    });
    expect(answer.status).toBe(200);
    return answer.body as { access_token: string };
  }

  async function mcp(token: string): Promise<{ status: number; challenge: string | null }> {
    const response = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    await response.body?.cancel();
    return { status: response.status, challenge: response.headers.get('www-authenticate') };
  }

  async function openGrantsPanel(page: Page): Promise<void> {
    await page.goto(base);
    await page.getByRole('button', { name: 'MCP clients' }).click();
    await page.getByRole('dialog', { name: 'MCP clients you let act as you' }).waitFor();
  }

  it('lists the grant with its hostile name as text, and revokes it: its token is refused on /mcp', async () => {
    const { page } = alice;
    const client = await oauth.register(HOSTILE_NAME, redirect);
    const { access_token: token } = await allowInBrowser(page, client);
    expect((await mcp(token)).status).toBe(200);

    await openGrantsPanel(page);
    const row = page.locator('#grant-list li', { hasText: HOSTILE_NAME });
    await row.waitFor();
    expect(await row.locator('strong').textContent()).toBe(HOSTILE_NAME);
    expect(await row.textContent()).toContain(`· chats, skills:read · granted `);
    expect(await row.textContent()).toContain(`client ${client}`);
    expect(await page.locator('#grant-list img').count()).toBe(0);
    expect(await page.title()).toBe('Skillhost');

    await page.getByRole('button', { name: `Revoke ${HOSTILE_NAME}` }).click();
    await page.getByText('No MCP client acts as you.').waitFor();
    expect(await page.locator('#grants-error').textContent()).toBe('');
    const refused = await mcp(token);
    expect(refused.status).toBe(401);
    expect(refused.challenge).toContain('error="invalid_token"');
    expect(await query(dbUrl(app), "SELECT 1 FROM oauth_artifacts WHERE model = 'Grant'")).toEqual([]);
    await page.getByRole('button', { name: 'Close' }).click();
  });

  it('says why a revoke failed (the grant was revoked elsewhere meanwhile), and shows the list as it is', async () => {
    const { page } = alice;
    const client = await oauth.register('Gone Agent', redirect);
    await allowInBrowser(page, client);
    await openGrantsPanel(page);
    await page.getByRole('button', { name: 'Revoke Gone Agent' }).waitFor();
    // Revoked from another tab (the REST API with the same session) while this panel still shows it.
    const cookie = (await alice.context.cookies(base)).map((item) => `${item.name}=${item.value}`).join('; ');
    const { csrfToken } = (await (await fetch(`${base}/v1/auth/session`, { headers: { cookie } })).json()) as {
      csrfToken: string;
    };
    const { items } = (await (await fetch(`${base}/v1/me/oauth-grants`, { headers: { cookie } })).json()) as {
      items: { grantId: string; clientId: string }[];
    };
    const grant = items.find((item) => item.clientId === client)!;
    const elsewhere = await fetch(`${base}/v1/me/oauth-grants/${grant.grantId}`, {
      method: 'DELETE',
      headers: { cookie, 'x-csrf-token': csrfToken },
    });
    expect(elsewhere.status).toBe(204);

    await page.getByRole('button', { name: 'Revoke Gone Agent' }).click();
    await page.locator('#grants-error', { hasText: 'OAUTH_GRANT_NOT_FOUND' }).waitFor();
    expect(await page.locator('#grants-error').textContent()).toBe(
      `You gave no OAuth grant with id '${grant.grantId}': GET /v1/me/oauth-grants lists yours. ` +
        `(OAUTH_GRANT_NOT_FOUND)`,
    );
    await page.getByRole('button', { name: 'Revoke Gone Agent' }).waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Close' }).click();
  });

  it('logging out of the page ends the OAuth sign-in too: the next authorization asks who is signing in', async () => {
    const { page, context } = alice;
    const client = await oauth.register('Returning Agent', redirect);
    await allowInBrowser(page, client);
    const providerSession = async () =>
      (await context.cookies(base)).find((cookie) => cookie.name === '_session')?.value;
    expect(await providerSession()).toBeDefined();
    // Signed in to the OAuth server and consented already, the client's next request comes straight back with a
    // code: no page at all.
    const { verifier, challenge } = pkcePair();
    await page.goto(oauth.authorizeUrl(client, { code_challenge: challenge, redirect_uri: redirect }));
    expect(page.url().startsWith(redirect)).toBe(true);
    await exchange(client, new URL(page.url()).searchParams.get('code')!, verifier);

    await page.goto(base);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('dialog', { name: 'Sign in' }).waitFor();
    expect(await providerSession()).toBeUndefined();
    expect(await query(dbUrl(app), "SELECT 1 FROM oauth_artifacts WHERE model = 'Session'")).toEqual([]);

    // The same client, the same browser: the sign-in page, and no code until someone signs in.
    await page.goto(oauth.authorizeUrl(client, { code_challenge: pkcePair().challenge, redirect_uri: redirect }));
    expect(page.url().startsWith(`${base}/oauth/interaction/`)).toBe(true);
    await page.getByRole('heading', { name: 'Sign in to Skillhost' }).waitFor();
    expect(await page.locator('input[name=api_key]').count()).toBe(1);
  });

  it('signed in to the page with a key, Sign out ends the OAuth sign-in made with that key too', async () => {
    const { bob: key } = await keysFor(app, { bob: 'member' });
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const client = await oauth.register('Key Agent', redirect);
    await page.goto(oauth.authorizeUrl(client, { code_challenge: pkcePair().challenge, redirect_uri: redirect }));
    await page.locator('input[name=api_key]').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL((url) => url.href.startsWith(redirect));
    const providerSession = async () =>
      (await context.cookies(base)).find((cookie) => cookie.name === '_session')?.value;
    expect(await providerSession()).toBeDefined();

    await page.goto(base);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByText('Signed in as bob').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('dialog', { name: 'Sign in' }).waitFor();
    expect(await providerSession()).toBeUndefined();
    await page.goto(oauth.authorizeUrl(client, { code_challenge: pkcePair().challenge, redirect_uri: redirect }));
    await page.getByRole('heading', { name: 'Sign in to Skillhost' }).waitFor();
    // The key itself stays good: signing out of a browser revokes nothing.
    expect((await fetch(`${base}/v1/me`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    await context.close();
  });
});

/** The test database's URL, as the app was configured with it. */
function dbUrl(app: NestFastifyApplication): string {
  return app.get<symbol, AppConfig>(APP_CONFIG).app.database.url;
}
