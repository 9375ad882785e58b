import { existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { createTestApp } from '../support/app.js';
import { freePort } from '../support/ports.js';

/** Chromium for the browser suites; without it they are skipped, saying why. */
export const CHROMIUM = process.env.SKILLHOST_CHROMIUM ?? '/usr/bin/chromium';
export const haveChromium = existsSync(CHROMIUM);
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-sync',
];

export const IDP_CLIENT_ID = 'skillhost-test';
export const IDP_CLIENT_SECRET = 'a-client-secret-of-the-test-provider';

/** A person of the test provider: the claims it vouches for, by the login typed into its form. */
export type People = Record<string, Record<string, unknown>>;

export interface TestIdentityProvider {
  issuer: string;
  /** Skillhost's `[app.auth.oidc]` for this provider. */
  config: Record<string, unknown>;
  /** Starts answering as a provider with Skillhost at `base` as its one client, and `people` as its users. */
  serve(base: string, people: People): void;
  close(): Promise<void>;
}

/**
 * A real OpenID provider (the certified `oidc-provider`, with its development login form) on 127.0.0.1. Its address
 * must be known before the app is configured, and the app's before the provider is made (its client's redirect
 * URI): it listens first and is given its handler by `serve`.
 */
export async function listenIdentityProvider(): Promise<TestIdentityProvider> {
  let handler: (request: IncomingMessage, response: ServerResponse) => void = (_q, response) =>
    response.writeHead(503).end();
  const server = createServer((request, response) => handler(request, response));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    config: {
      'app.auth.oidc.issuer': issuer,
      'app.auth.oidc.display_name': 'Test IdP',
      'app.auth.oidc.client_id': IDP_CLIENT_ID,
      'app.auth.oidc.client_secret': IDP_CLIENT_SECRET,
      'app.auth.oidc.scopes': ['openid', 'profile', 'email', 'groups'],
      'app.auth.oidc.groups_claim': 'groups',
    },
    serve(base, people) {
      const provider = new Provider(issuer, {
        clients: [
          {
            client_id: IDP_CLIENT_ID,
            client_secret: IDP_CLIENT_SECRET,
            redirect_uris: [`${base}/auth/oidc/callback`],
            grant_types: ['authorization_code'],
            response_types: ['code'],
          },
        ],
        claims: {
          openid: ['sub'],
          profile: ['preferred_username'],
          email: ['email', 'email_verified'],
          groups: ['groups'],
        },
        scopes: ['openid', 'profile', 'email', 'groups'],
        findAccount: (_ctx: unknown, id: string) =>
          people[id] === undefined ? undefined : { accountId: id, claims: () => ({ sub: id, ...people[id] }) },
        features: { devInteractions: { enabled: true } },
        cookies: { keys: ['a-cookie-key-of-the-test-provider'] },
        pkce: { required: () => true },
      });
      handler = provider.callback();
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * A fresh browser context that goes to `path` on Skillhost at `base`, follows "Sign in with Test IdP" and signs in
 * at the provider as `login` (a cookie `planted` beforehand, if given), back on Skillhost.
 */
export async function signInThroughProvider(
  browser: Browser,
  base: string,
  login: string,
  path = '/',
  planted?: string,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  if (planted !== undefined) await context.addCookies([{ name: 'skillhost_session', value: planted, url: base }]);
  const page = await context.newPage();
  page.setDefaultTimeout(10_000);
  await page.goto(base + path);
  await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
  await page.locator('input[name=login]').fill(login);
  await page.locator('input[name=password]').fill('any password');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL((url) => url.origin === base);
  return { context, page };
}

/**
 * Skillhost with sign-in through `idp` and its OAuth server on, serving the skills in `skillsDir`, listening on
 * 127.0.0.1; the provider serves `people` with it as its client.
 */
export async function startAppWithProvider(
  idp: TestIdentityProvider,
  skillsDir: string,
  people: People,
): Promise<{ app: NestFastifyApplication; base: string }> {
  const port = await freePort();
  const app = await createTestApp({
    'app.auth.mode': 'api_key',
    ...idp.config,
    'app.auth.oauth.enabled': true,
    'app.port': port,
    'app.skills.enabled': true,
    'app.skills.directories': [skillsDir],
  });
  await app.listen(port, '127.0.0.1');
  const base = `http://127.0.0.1:${port}`;
  idp.serve(base, people);
  return { app, base };
}
