import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { UsersService } from '../../src/domain/users/users.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';

/**
 * The web chat page in a real browser (Debian's Chromium through playwright-core): sign
 * in with a key, create a chat, run `/skills-system-validation run the checks` against the scripted
 * model, see the cards collapsed, expand and copy one, reload and find everything still there.
 * Screenshots of the main views go to `test/artifacts/` (not committed). Without Chromium (`.ci/run`
 * installs it) the block is skipped, saying why. The tests of the first block are one visit, in
 * order: each goes on from where the one before left the page.
 */
const CHROMIUM = process.env.SKILLHOST_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = resolve('test/artifacts');
const REFERENCE_MARKER = 'REF-7f3c9a1e-skills-reference';
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium)
  console.warn(
    `Chromium not found at ${CHROMIUM} (apt-get install chromium, or set SKILLHOST_CHROMIUM): the web page's ` +
      `browser tests are skipped.`,
  );

(haveChromium ? describe : describe.skip)('the web chat page in Chromium', () => {
  let ctx: ChatTestContext;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let key: string;
  /** Script errors of the page: there should be none. */
  const pageErrors: string[] = [];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    ctx = await startChatApp([resolve('skills')], { 'app.auth.mode': 'api_key' });
    const users = ctx.app.get(UsersService);
    key = (await users.createKey((await users.createUser('alice', 'member')).id)).key;
    await ctx.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    page = await context.newPage();
    // A step that does not happen fails in seconds, naming what it waited for.
    page.setDefaultTimeout(10_000);
    page.on('pageerror', (error) => pageErrors.push(error.message));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await ctx?.close();
  });

  it('asks for a key, refuses a wrong one, and signs in with the right one', async () => {
    await page.goto(base);
    const dialog = page.getByRole('dialog', { name: 'Sign in' });
    await expect(dialog.isVisible()).resolves.toBe(true);
    await page.getByLabel('API key').fill('sk_wrong');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('That key was refused').waitFor();
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('Signed in as alice').waitFor();
    await page.screenshot({ path: resolve(ARTIFACTS, 'signed-in.png') });
  });

  it('suggests skills as you type /, keyboard first', async () => {
    const input = page.getByRole('textbox', { name: /Message/ });
    await input.fill('');
    await input.type('/skills-sys');
    const option = page.getByRole('option', { name: /\/skills-system-validation/ });
    await option.waitFor();
    await expect(option.getAttribute('aria-selected')).resolves.toBe('true');
    await input.press('Enter');
    await expect(input.inputValue()).resolves.toBe('/skills-system-validation ');
    await input.fill('');
  });

  it(
    'runs /skills-system-validation: the activate and readResource cards appear collapsed, expand to the marker, ' +
      'and copy',
    async () => {
      ctx.model.play(
        {
          toolCalls: [
            {
              name: 'skills_readResource',
              arguments: { name: 'skills-system-validation', path: 'references/REFERENCE.md' },
            },
          ],
        },
        {
          toolCalls: [
            { name: 'skills_readResource', arguments: { name: 'skills-system-validation', path: '../../config.toml' } },
          ],
        },
        { text: `STEP 1: PASS\nSTEP 2: PASS — ${REFERENCE_MARKER}\nSTEP 4: PASS — refused` },
      );
      await page.locator('#new-chat').click();
      await page.locator('#chat-list button[aria-current="page"]').waitFor();
      await page.getByRole('textbox', { name: /Message/ }).fill('/skills-system-validation run the checks');
      await page.getByRole('button', { name: 'Send' }).click();
      await page.getByText('STEP 4: PASS — refused').waitFor();

      const cards = page.locator('#messages article.card');
      await expect(
        cards.evaluateAll((nodes) =>
          nodes.map((node) => [node.getAttribute('data-tool'), node.getAttribute('data-status')]),
        ),
      ).resolves.toEqual([
        ['skills.activate', 'ok'],
        ['skills.readResource', 'ok'],
        ['skills.readResource', 'error'],
      ]);
      // Collapsed: the skill's body is not dumped into the conversation.
      const activation = cards.nth(0);
      await expect(cards.locator('details[open]').count()).resolves.toBe(0);
      await expect(activation.locator('pre.output').isVisible()).resolves.toBe(false);
      await expect(activation.locator('dd').allTextContents()).resolves.toEqual(
        expect.arrayContaining(['skills-system-validation', 'ok', 'no']),
      );
      const read = cards.nth(1);
      await expect(read.locator('dd').allTextContents()).resolves.toEqual(
        expect.arrayContaining(['references/REFERENCE.md']),
      );
      await read.locator('summary').click();
      await expect(read.locator('details').getAttribute('open')).resolves.toBe('');
      await expect(read.locator('pre.output').isVisible()).resolves.toBe(true);
      await expect(read.locator('pre.output').textContent()).resolves.toContain(REFERENCE_MARKER);
      await read.getByRole('button', { name: /Copy the output/ }).click();
      await read.locator('button.copy', { hasText: 'Copied' }).waitFor();
      await expect(page.evaluate('navigator.clipboard.readText()')).resolves.toContain(REFERENCE_MARKER);
      // The refused escape is an error card, in its own style, with its message shown.
      const refused = cards.nth(2);
      await expect(refused.getAttribute('class')).resolves.toContain('card-error');
      await expect(refused.locator('.card-message').textContent()).resolves.toMatch(/outside|leads out|refused/i);
      await expect(page.locator('#activated li.activation').allTextContents()).resolves.toEqual([
        expect.stringContaining('skills-system-validation'),
      ]);
      await page.screenshot({ path: resolve(ARTIFACTS, 'chat-with-cards.png'), fullPage: true });
    },
  );

  it(
    'a turn that fails (the model answers 500) is taken off the page, the message goes back in the box, and ' +
      'nothing is stored',
    async () => {
      ctx.model.play({ status: 500, body: '{"error":{"message":"the model is down"}}' });
      const input = page.getByRole('textbox', { name: /Message/ });
      await input.fill('this one fails');
      await input.press('Enter');
      await page.getByText(/^Not sent: .*Your message is back in the box\.$/).waitFor();
      await expect(input.inputValue()).resolves.toBe('this one fails');
      await expect(page.locator('#messages .message-user .content').allTextContents()).resolves.toEqual([
        '/skills-system-validation run the checks',
      ]);
      await input.fill('');
    },
  );

  it('suggests $ only when the server reads it, and commands only at the start', async () => {
    const input = page.getByRole('textbox', { name: /Message/ });
    await input.fill('$skills');
    await expect(page.locator('#suggestions').isVisible()).resolves.toBe(false);
    await input.fill('');
  });

  it('after a reload, the chat with its cards and activated skills is still there', async () => {
    await page.reload();
    await page.getByText('STEP 4: PASS — refused').waitFor();
    await expect(page.locator('#messages article.card').count()).resolves.toBe(3);
    await expect(page.locator('#activated li.activation').allTextContents()).resolves.toEqual([
      expect.stringMatching(/skills-system-validation\s+explicit, 1×/),
    ]);
    await expect(page.locator('#chat-list button.chat-open').count()).resolves.toBe(1);
    expect(pageErrors).toEqual([]);
  });

  it('browses skills: search, description, files and the instructions', async () => {
    await page.getByLabel('Search skills').fill('validate skills');
    const result = page.locator('#skill-results button', { hasText: 'skills-system-validation' });
    await result.waitFor();
    await result.click();
    await page.locator('#skill-detail h3', { hasText: 'skills-system-validation' }).waitFor();
    await expect(page.locator('#skill-detail .files li').allTextContents()).resolves.toEqual(
      expect.arrayContaining([expect.stringContaining('references/REFERENCE.md')]),
    );
    await page.locator('#skill-detail summary').click();
    await expect(page.locator('#skill-detail pre').textContent()).resolves.toContain('# Skills system validation');
    await page.screenshot({ path: resolve(ARTIFACTS, 'skills-browser.png') });
    // The details are a dialog: Close (or Escape) goes back to the page.
    await page.getByRole('dialog', { name: 'skills-system-validation' }).getByRole('button', { name: 'Close' }).click();
    await page.getByRole('dialog', { name: 'skills-system-validation' }).waitFor({ state: 'hidden' });
  });

  it(
    'has no accessibility violations that axe-core finds (labels, names, roles, contrast), wide or ' + 'narrow',
    async () => {
      // axe is injected as a script, which the page's own CSP refuses: a context of its own lets it in.
      const checking = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 860 } });
      try {
        const audited = await checking.newPage();
        audited.setDefaultTimeout(10_000);
        await audited.addInitScript({ content: `sessionStorage.setItem('skillhost.apiKey', ${JSON.stringify(key)})` });
        await audited.goto(page.url());
        await audited.locator('#messages article.card').first().waitFor();
        await audited
          .locator('#messages details')
          .first()
          .evaluate((details) => details.setAttribute('open', ''));
        const violationsOf = async () => {
          await audited.addScriptTag({ path: AXE });
          const result = (await audited.evaluate('axe.run(document, { resultTypes: ["violations"] })')) as {
            violations: { id: string; impact: string; nodes: { target: string[] }[] }[];
          };
          return result.violations.map(
            (violation) =>
              `${violation.impact} ${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
          );
        };
        await expect(violationsOf()).resolves.toEqual([]);
        await audited.setViewportSize({ width: 390, height: 844 });
        await expect(violationsOf()).resolves.toEqual([]);
      } finally {
        await checking.close();
      }
    },
  );

  it('is usable on a narrow screen, and deletes a chat', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await expect(page.getByRole('textbox', { name: /Message/ }).isVisible()).resolves.toBe(true);
    const width = (await page.evaluate('document.documentElement.scrollWidth')) as number;
    expect(width).toBeLessThanOrEqual(390);
    await page.screenshot({ path: resolve(ARTIFACTS, 'narrow.png'), fullPage: true });
    // One panel at a time: the chat list is behind its button.
    await page.locator('#views').getByRole('button', { name: 'Chats' }).click();
    page.once('dialog', (dialog) => void dialog.accept());
    await page
      .getByRole('button', { name: /^Delete / })
      .first()
      .click();
    await page.locator('#chat-list button.chat-open').first().waitFor({ state: 'detached' });
    await expect(page.locator('#messages li').count()).resolves.toBe(0);
  });
});

/**
 * For a block: the app with `overrides` (auth off: it listens on loopback) and Chromium; `open()`
 * gives a fresh page at `/`. Closed after the block.
 */
function usePageApp(overrides: Record<string, unknown>) {
  const app = {} as { ctx: ChatTestContext; browser: Browser };
  beforeAll(async () => {
    app.ctx = await startChatApp([resolve('skills')], overrides);
    await app.ctx.app.listen(0, '127.0.0.1');
    app.browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
    });
  }, 60_000);
  afterAll(async () => {
    await app.browser?.close();
    await app.ctx?.close();
  });
  return {
    get ctx() {
      return app.ctx;
    },
    async open(): Promise<Page> {
      const page = await app.browser.newPage();
      page.setDefaultTimeout(10_000);
      await page.goto(`http://127.0.0.1:${(app.ctx.app.getHttpServer().address() as AddressInfo).port}/`);
      return page;
    },
  };
}

(haveChromium ? describe : describe.skip)('the web chat page with auth off', () => {
  // On a loopback address with auth `auto`, no key is needed.
  const app = usePageApp({});

  it('opens without asking for a key, and offers the configured models', async () => {
    const page = await app.open();
    await page.getByText('(auth off)').waitFor();
    await expect(page.getByRole('dialog', { name: 'Sign in' }).isVisible()).resolves.toBe(false);
    await expect(page.getByLabel('Model').locator('option').allTextContents()).resolves.toEqual(['scripted']);
    await expect(page.getByRole('button', { name: 'Sign out' }).isVisible()).resolves.toBe(false);
  });
});

(haveChromium ? describe : describe.skip)('the web chat page with skills switched off', () => {
  const app = usePageApp({ 'app.skills.enabled': false });

  it('still opens, says why the skills are missing, and chats', async () => {
    app.ctx.model.play({ text: 'PLAIN-ANSWER' });
    const page = await app.open();
    await page.getByText(/SKILLS_DISABLED/).waitFor();
    await page.getByRole('textbox', { name: /Message/ }).fill('hello');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByText('PLAIN-ANSWER').waitFor();
    await expect(page.locator('#chat-list button.chat-open').count()).resolves.toBe(1);
  });
});
