import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import { UsersService } from '../../src/domain/users/users.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { haveChromium, launchChromium, signedInPage } from '../support/web-browser.js';
import { query } from '../support/database.js';

/**
 * The admins' Skills dashboard in Chromium, over the usage the funnel stored (rows written straight into its table):
 * activations per day, the funnel's steps, the skills nothing activated, and error rates; members get no button.
 */

(haveChromium ? describe : describe.skip)('the Skills dashboard in Chromium', () => {
  let ctx: ChatTestContext;
  let browser: Browser;
  let base: string;
  const keys = { admin: '', member: '' };
  const pageErrors: string[] = [];
  const today = new Date().toISOString().slice(0, 10);
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);

  beforeAll(async () => {
    ctx = await startChatApp([resolve('skills')], { 'app.auth.mode': 'api_key' });
    const users = ctx.app.get(UsersService);
    keys.admin = (await users.createKey((await users.createUser('root', 'admin')).id)).key;
    keys.member = (await users.createKey((await users.createUser('ann', 'member')).id)).key;
    await ctx.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;
    await query(
      ctx.db.url,
      'INSERT INTO skill_usage_daily (day, skill, version, model, offered, activated_tool, activated_mcp, ' +
        'activated_api, resources_read, errors, turns) VALUES ' +
        "($1, 'git-commit', '', 'scripted', 40, 6, 2, 0, 2, 1, 6), ($2, 'git-commit', '', '', 10, 0, 2, 3, 0, 0, 0), " +
        "($1, 'code-review', '', 'scripted', 40, 1, 0, 0, 3, 2, 1)",
      [today, yesterday],
    );
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await ctx?.close();
  });

  const signIn = (key: string): Promise<Page> => signedInPage(browser, base, key, pageErrors);

  it("shows an admin the funnel's charts, the never-activated skills and the error rates", async () => {
    const page = await signIn(keys.admin);
    await page.getByRole('button', { name: 'Skills dashboard' }).click();
    const dialog = page.getByRole('dialog', { name: 'Skills dashboard' });
    await dialog.getByRole('img', { name: 'The funnel' }).waitFor();
    const funnel = await dialog
      .locator('[data-step]')
      .evaluateAll((bars) => bars.map((bar) => [bar.getAttribute('data-step'), bar.getAttribute('data-count')]));
    expect(funnel).toEqual([
      ['Offered', '90'],
      ['Activated', '14'],
      ['Resources read', '5'],
      ['Scripts run', '0'],
      ['Turns', '7'],
    ]);
    // The widest step is the whole bar; the others are as wide as their share.
    const widths = await dialog
      .locator('[data-step]')
      .evaluateAll((bars) => bars.map((bar) => bar.getAttribute('width')));
    expect(Number(widths[1]) / Number(widths[0])).toBeCloseTo(14 / 90, 2);
    const perDay = await dialog
      .locator('[data-day]')
      .evaluateAll((bars) => bars.map((bar) => [bar.getAttribute('data-day'), bar.getAttribute('data-activations')]));
    expect(perDay).toHaveLength(30);
    expect(perDay.slice(-2)).toEqual([
      [yesterday, '5'],
      [today, '9'],
    ]);
    await expect(dialog.locator('#usage-never li').allTextContents()).resolves.toEqual(['skills-system-validation']);
    const rates = await dialog
      .locator('.usage-errors tbody tr')
      .evaluateAll((rows) => rows.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent)));
    expect(rates).toEqual([
      ['code-review', '2', '4', '50%'],
      ['git-commit', '1', '15', '7%'],
    ]);
    expect(pageErrors).toEqual([]);
  });

  it('offers members no dashboard', async () => {
    const page = await signIn(keys.member);
    await expect(page.getByRole('button', { name: 'Skills dashboard' }).isVisible()).resolves.toBe(false);
    const refused = await page.evaluate(async () => (await fetch('/v1/admin/skills/usage')).status);
    expect(refused).toBe(401);
  });
});
