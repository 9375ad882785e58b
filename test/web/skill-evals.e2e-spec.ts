import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import request from 'supertest';
import { SKILL_USAGE_RECORDER, type UsageRecorder } from '../../src/domain/skills/usage/skill-usage.js';
import { UsersService } from '../../src/domain/users/users.service.js';
import { CatalogueEvalFollowerService } from '../../src/domain/skills/evals/catalogue-eval-follower.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { haveChromium, launchChromium, signedInPage } from '../support/web-browser.js';
import { query } from '../support/database.js';
import { skillMd } from '../support/files/skill-tree.js';
import { zipOf } from '../support/skill-archives.js';

/**
 * A skill's trigger evals in its dialog, in Chromium: its owner (an editor) sees the file's cases read-only, adds a
 * case (a hostile one shown as text), is told why a refused one was refused, runs both levels and sees their results
 * kept per version, level and model, and deletes a kept case; an editor who does not own it and a member see nothing
 * of it.
 */

const DESCRIPTION =
  'Co-authors technical specs, design proposals and decision records with the user. Use when asked to write or ' +
  'draft a spec, a proposal or an RFC.';
const FILE_CASES = [
  { query: 'put together an RFC on the billing service with me', should_trigger: true },
  { query: 'make an animated GIF of our logo for Slack', should_trigger: false },
];
const HOSTILE = '<img src=x onerror="window.__pwned = 1">';

(haveChromium ? describe : describe.skip)("a skill's trigger evals on the web page, in Chromium", () => {
  let ctx: ChatTestContext;
  let browser: Browser;
  let base: string;
  const keys: Record<string, string> = {};
  const pageErrors: string[] = [];
  const keptRows = async () =>
    (await query<{ n: number }>(ctx.db.url, 'SELECT count(*)::int AS n FROM skill_eval_cases')).at(0)?.n;

  beforeAll(async () => {
    ctx = await startChatApp([resolve('skills')], { 'app.auth.mode': 'api_key' });
    const users = ctx.app.get(UsersService);
    for (const [name, role] of [
      ['root', 'admin'],
      ['ed', 'editor'],
      ['eve', 'editor'],
      ['ann', 'member'],
    ] as const)
      keys[name] = (await users.createKey((await users.createUser(name, role)).id)).key;
    // ed publishes spec-writer, so ed owns it.
    const archive = await zipOf({
      'spec-writer/SKILL.md': skillMd({ name: 'spec-writer', description: DESCRIPTION }),
      'spec-writer/evals/triggers.json': JSON.stringify(FILE_CASES),
    });
    await request(ctx.app.getHttpServer())
      .post('/v1/admin/skills')
      .set('authorization', `Bearer ${keys.ed}`)
      .set('content-type', archive.contentType)
      .send(archive.body)
      .expect(201);
    // The catalogue level runs by itself after the install: its run is kept before the page is opened.
    await ctx.app.get(CatalogueEvalFollowerService).settled();
    await ctx.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await ctx?.close();
  });

  const signIn = (key: string): Promise<Page> => signedInPage(browser, base, key, pageErrors);

  async function openSpecWriter(page: Page): Promise<void> {
    await page
      .locator('#skill-results')
      .getByRole('button', { name: /^spec-writer/ })
      .click();
    await page.getByRole('dialog').getByRole('heading', { name: 'spec-writer' }).waitFor();
  }

  it('lets the owner add cases (a hostile one shown as text), see a refusal, run both levels and delete', async () => {
    const page = await signIn(keys.ed);
    await openSpecWriter(page);
    const evals = page.getByRole('region', { name: 'Trigger evals' });
    const cases = evals.getByRole('list', { name: 'Trigger eval cases of spec-writer' });
    // The section comes after the dialog opens.
    await cases.waitFor();
    await expect(cases.locator('li').allTextContents()).resolves.toEqual([
      `${FILE_CASES[0].query} — should lead here · from evals/triggers.json`,
      `${FILE_CASES[1].query} — should not lead here · from evals/triggers.json`,
    ]);
    // The file's cases are changed in the file: no Delete button.
    await expect(cases.getByRole('button').count()).resolves.toBe(0);
    // The run kept after the install, on the file's two cases.
    // Regression, fixed since the first CI run after the merge found it. Was: expected 'No run yet.', which held only
    // while the run after the install had not yet finished.
    const kept = evals.getByRole('table', { name: 'Eval results' }).locator('tbody tr');
    await kept.first().waitFor();
    await expect(
      kept.evaluateAll((rows) =>
        rows.map((row) => [...row.querySelectorAll('td')].slice(1, 6).map((td) => td.textContent)),
      ),
    ).resolves.toEqual([['catalogue', '—', '100%', '100%', '2/2']]);

    const form = evals.getByRole('form', { name: 'Add a case' });
    await form.getByLabel('Request', { exact: true }).fill(HOSTILE);
    await form.getByLabel('Expectation').selectOption('false');
    await form.getByRole('button', { name: 'Add case' }).click();
    const hostile = cases.locator('li[data-source="kept"]');
    await hostile.waitFor();
    await expect(hostile.locator('.eval-query').textContent()).resolves.toBe(HOSTILE);
    await expect(hostile.locator('.eval-origin').textContent()).resolves.toMatch(/^ · added by ed, /);
    await expect(evals.locator('img').count()).resolves.toBe(0);
    await expect(page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).resolves.toBeUndefined();
    await expect(form.getByLabel('Request', { exact: true }).inputValue()).resolves.toBe('');

    // The same request as a file case, the other way: refused, said in the section; the text stays in the form.
    await form.getByLabel('Request', { exact: true }).fill(FILE_CASES[0].query);
    await form.getByLabel('Expectation').selectOption('false');
    await form.getByRole('button', { name: 'Add case' }).click();
    const alert = evals.getByRole('alert');
    await alert.filter({ hasText: 'VALIDATION_FAILED' }).waitFor();
    await expect(alert.textContent()).resolves.toBe(
      "VALIDATION_FAILED: The trigger eval cases for 'spec-writer' are not valid, so none was kept: body: case 1 " +
        '("put together an RFC on the billing servi…"): the same request is listed as should_trigger true too in ' +
        'evals/triggers.json; keep one. See docs/trigger-evals.md for the form of a case.',
    );
    await expect(form.getByLabel('Request', { exact: true }).inputValue()).resolves.toBe(FILE_CASES[0].query);
    expect(await keptRows()).toBe(1);

    await evals.getByRole('button', { name: 'Run catalogue level' }).click();
    await evals
      .getByRole('status')
      .filter({ hasText: /^Catalogue level: 3\/3 passed/ })
      .waitFor();
    ctx.model.answerWith(() => ({ text: 'No skill needed.' }));
    await evals.getByRole('button', { name: 'Run model level' }).click();
    await evals
      .getByRole('status')
      .filter({ hasText: /^Model level \(scripted\): 2\/3 passed/ })
      .waitFor();
    const rows = evals.getByRole('table', { name: 'Eval results' }).locator('tbody tr');
    await rows.nth(1).waitFor();
    const runs = await rows.evaluateAll((rows) =>
      rows.map((row) => [...row.querySelectorAll('td')].slice(0, 6).map((td) => td.textContent)),
    );
    expect(runs).toEqual([
      [expect.stringMatching(/^[0-9a-f]{12}$/), 'model', 'scripted', '—', '0%', '2/3'],
      [expect.stringMatching(/^[0-9a-f]{12}$/), 'catalogue', '—', '100%', '100%', '3/3'],
    ]);

    await hostile.getByRole('button', { name: `Delete case: ${HOSTILE}` }).click();
    await hostile.waitFor({ state: 'detached' });
    expect(await keptRows()).toBe(0);
    expect(pageErrors).toEqual([]);
  });

  it('shows an admin the evals of a skill they do not own, and of a skill of the folders', async () => {
    const page = await signIn(keys.root);
    await openSpecWriter(page);
    const evals = page.getByRole('region', { name: 'Trigger evals' });
    await evals.getByRole('button', { name: 'Run catalogue level' }).waitFor();
    await page.keyboard.press('Escape');
    await page
      .locator('#skill-results')
      .getByRole('button', { name: /^git-commit/ })
      .click();
    await evals.getByText('No case yet.').waitFor();
    // Looking at a skill is not using it: the page asks for a preview, which the usage funnel does not count.
    await ctx.app.get<UsageRecorder>(SKILL_USAGE_RECORDER).flush();
    const used = await query<{ n: number }>(
      ctx.db.url,
      'SELECT count(*)::int AS n FROM skill_usage_daily WHERE activated_api > 0',
    );
    expect(used[0].n).toBe(0);
    expect(pageErrors).toEqual([]);
  });

  it('shows an editor who does not own the skill, and a member, nothing of its evals', async () => {
    for (const user of ['eve', 'ann']) {
      const page = await signIn(keys[user]);
      const asked: string[] = [];
      page.on('response', (response) => {
        if (response.url().includes('/evals')) asked.push(`${response.status()} ${new URL(response.url()).pathname}`);
      });
      const refused =
        user === 'eve' ? page.waitForResponse((response) => response.url().endsWith('/evals/cases')) : undefined;
      await openSpecWriter(page);
      if (refused !== undefined) expect((await refused).status()).toBe(403);
      await expect(page.getByRole('region', { name: 'Trigger evals' }).count()).resolves.toBe(0);
      // The member's page does not ask; the editor's is refused and shows nothing (no error either).
      expect(asked.every((line) => line.startsWith('403 '))).toBe(true);
      if (user === 'ann') expect(asked).toEqual([]);
      await expect(page.locator('#skill-detail [role="alert"]').count()).resolves.toBe(0);
    }
    expect(pageErrors).toEqual([]);
  });
});
