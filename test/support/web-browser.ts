import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

/** The system's Chromium (Debian's package), driven by playwright-core: no browser download. */
export const CHROMIUM = process.env.SKILLHOST_CHROMIUM ?? '/usr/bin/chromium';

/** Whether the web page's Chromium suites can run here (they are skipped where Chromium is not installed). */
export const haveChromium = existsSync(CHROMIUM);

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
}

/**
 * A new browser context on the web page at `base`, signed in with an API key through the page's own dialog; the
 * page's uncaught errors are pushed to `pageErrors`.
 */
export async function signedInPage(browser: Browser, base: string, key: string, pageErrors: string[]): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
  page.setDefaultTimeout(10_000);
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(base);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText(/Signed in as/).waitFor();
  return page;
}
