import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { type Browser, chromium } from 'playwright-core';
import { startOAuthLogin } from '../cli/oauth-login-run.js';
import { run } from '../cli/run-cli.js';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import {
  CHROMIUM,
  CHROMIUM_ARGS,
  haveChromium,
  listenIdentityProvider,
  startAppWithProvider,
  type TestIdentityProvider,
} from './identity-provider.js';

/**
 * `skillhost login --oauth` as a person does it: the CLI prints the server's sign-in address, Chromium opens it,
 * the person signs in through the team's real OpenID provider (oidc-provider on 127.0.0.1) from the OAuth sign-in
 * page, consents, and the browser lands on the CLI's loopback port; the CLI stores a token of that person (made on
 * this first sign-in) and `sync` uses it.
 */
if (!haveChromium)
  console.warn(`Chromium not found at ${CHROMIUM} (apt-get install chromium): the CLI browser login test is skipped.`);

(haveChromium ? describe : describe.skip)('skillhost login --oauth through the identity provider, in Chromium', () => {
  let idp: TestIdentityProvider;
  let tree: TempTree;
  let app: NestFastifyApplication;
  let base: string;
  let browser: Browser;

  beforeAll(async () => {
    idp = await listenIdentityProvider();
    tree = tempTree();
    writeSkill(tree, 'skills', 'alpha', { description: 'Alpha does the first thing. Use when a test needs alpha.' });
    ({ app, base } = await startAppWithProvider(idp, tree.path('skills'), {
      carol: { preferred_username: 'carol', email: 'carol@example.com', email_verified: true },
    }));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await idp?.close();
    tree?.cleanup();
  });

  it('signs in at the provider from the OAuth page, consents, and the CLI stores a token sync uses', async () => {
    const where = { cwd: tree.root, env: { XDG_CONFIG_HOME: tree.path('xdg') }, home: tree.path('home') };
    const { address, result } = startOAuthLogin(base, where);
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(await address);
    await page.getByRole('heading', { name: 'Sign in to Skillhost' }).waitFor();
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
    await page.locator('input[name=login]').fill('carol');
    await page.locator('input[name=password]').fill('any password');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    // Back on Skillhost's consent page, signed in now: it names the CLI's client and the person.
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    expect(await page.content()).toMatch(/skillhost CLI on /);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.getByText('Signed in to Skillhost. You can close this tab').waitFor();
    expect(new URL(page.url()).hostname).toBe('127.0.0.1');
    await context.close();

    const done = await result;
    expect(done.code).toBe(0);
    expect(done.out).toMatch(new RegExp(`^Logged in to ${base} as 'carol' \\(member\\) with scopes `));
    const stored = JSON.parse(readFileSync(join(tree.path('xdg'), 'skillhost', 'credentials.json'), 'utf8'));
    const token = stored.servers[base].oauth.accessToken as string;
    const me = await (await fetch(`${base}/v1/me`, { headers: { authorization: `Bearer ${token}` } })).json();
    expect(me).toMatchObject({ name: 'carol', role: 'member', keyId: null });

    const synced = await run(['sync', '--server', base, '--dir', tree.path('out')], tree.root, where.env, where.home);
    expect([synced.code, synced.err]).toEqual([0, '']);
    expect(synced.out).toMatch(/^add alpha sha256:/m);
  });
});
