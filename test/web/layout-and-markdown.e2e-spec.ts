import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { tempTree, writeSkill } from '../support/files/skill-tree.js';
import type { WireJson } from '../support/wire-json.js';

/**
 * The web page as a newcomer meets it, in Debian's Chromium: a server with 50 skills, at a laptop's
 * 1280×900 and a phone's 390×844. The conversation and the message box fit the window (the page
 * itself never scrolls), a skill's details open in view, answers are Markdown rendered safely,
 * chats are titled from their first message, and a server without a model says so before anyone
 * types. Screenshots go to test/artifacts/ (not committed).
 */
const CHROMIUM = process.env.SKILLHOST_CHROMIUM ?? '/usr/bin/chromium';
const LAUNCH_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const ARTIFACTS = resolve('test/artifacts');
const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium)
  console.warn(
    `Chromium not found at ${CHROMIUM} (apt-get install chromium, or set SKILLHOST_CHROMIUM): the web page's ` +
      `layout and Markdown tests are skipped.`,
  );

const SKILL_COUNT = 50;
const WIDE = { name: 'wide', width: 1280, height: 900 };
const PHONE = { name: 'phone', width: 390, height: 844 };
type Viewport = typeof WIDE;

const LAST_MARK = 'LAST-ANSWER-7c2e';
const CODE = 'npm run build && echo "COPY-ME-7e1"';
const MARKDOWN_ANSWER = [
  '# Release plan',
  '',
  'Steps, **in order**:',
  '',
  '1. Build',
  '2. Test',
  '',
  '- alpha',
  '- beta',
  '',
  '| Name | Size |',
  '|------|-----:|',
  '| a.txt | 12 |',
  '| b.txt | 345 |',
  '',
  '```bash',
  CODE,
  '```',
  '',
  'See [the docs](https://example.com/docs) and `inline code`.',
].join('\n');

/** Each line would set `window.__pwned` (or open a dialog) if the page let it run. */
const HOSTILE_ANSWER = [
  'HOSTILE-MARK-5b1',
  '<script>window.__pwned = 1</script>',
  '<img src=x onerror="window.__pwned = 2">',
  '[click me](javascript:window.__pwned=3)',
  '<iframe src="javascript:window.__pwned=4"></iframe>',
  '<svg><script>window.__pwned=5</script></svg>',
  '<svg onload="window.__pwned=6"></svg>',
  '<a href="javascript:window.__pwned=7">raw link</a>',
  '![pic](javascript:window.__pwned=8)',
  '<math><mtext><table><mglyph><style><img src=x onerror="window.__pwned=9">',
  '[data link](data:text/html,<script>alert(10)</script>)',
  '<details open ontoggle="window.__pwned=11">toggle</details>',
  '<form action="javascript:window.__pwned=12"><button>go</button></form>',
  '[safe link](https://example.com/safe)',
].join('\n\n');
/** What must never be in a rendered answer: elements that run or load things, handlers, and script URLs. */
const DANGEROUS =
  ':is(script, iframe, frame, object, embed, svg, math, img, style, link, meta, form, input, button:not(.copy), ' +
  'details, base), [onerror], [onload], [ontoggle], [onclick], [style], a[href^="javascript:" i], ' +
  'a[href^="data:" i]';

/** The app listening on a free port of 127.0.0.1, and a browser to visit it. */
async function serveAndLaunch(ctx: ChatTestContext): Promise<{ base: string; browser: Browser }> {
  await ctx.app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;
  return { base, browser: await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS }) };
}

(haveChromium ? describe : describe.skip)(`the web page with ${SKILL_COUNT} skills, wide and on a phone`, () => {
  const tree = tempTree('skillhost-web-layout-');
  let ctx: ChatTestContext;
  let browser: Browser;
  let base = '';

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    for (let i = 1; i <= SKILL_COUNT; i++) {
      const name = `team-skill-${String(i).padStart(2, '0')}`;
      const description =
        `Handles task number ${i} for the ` +
        `team${
          i % 3 === 0 ? ', with a longer description that wraps over more than one line in the skills panel' : ''
        }. ` +
        `Use when a test needs skill ${i}.`;
      writeSkill(tree, 'skills', name, {
        description,
        body: `# ${name}\n\n${'Step by step instructions for this skill. '.repeat(40)}\n`,
      });
      tree.write(`skills/${name}/references/notes.md`, `Notes of ${name}.\n`);
    }
    ctx = await startChatApp([tree.path('skills')], {
      'app.limits.requests_per_minute': 100_000,
      'app.limits.turns_per_minute': 10_000,
    });
    ({ base, browser } = await serveAndLaunch(ctx));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await ctx?.close();
    tree.cleanup();
  });

  async function call(method: string, path: string, body?: unknown): Promise<WireJson> {
    const response = await fetch(base + path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return text === '' ? undefined : JSON.parse(text);
  }

  /** A chat with ten turns of answers long enough that the messages overflow; the last answer holds LAST_MARK. */
  async function chatWithHistory(): Promise<string> {
    const id = (await call('POST', '/v1/chats', {})).id as string;
    const turns = 10;
    ctx.model.play(
      ...Array.from({ length: turns }, (_, i) => ({
        text:
          `Answer ${i}.\n\n${'Some words of this answer. '.repeat(10)}\n\n- first point\n- second ` +
          `point${i === turns - 1 ? `\n\n${LAST_MARK}` : ''}`,
      })),
    );
    for (let i = 0; i < turns; i++)
      await call('POST', `/v1/chats/${id}/messages`, {
        content: i === 0 ? 'Plan the layout of the page' : `Question ${i}`,
      });
    return id;
  }

  /**
   * A fresh tab at `path`, with its script errors and dialogs collected; signed in (auth off) and the skills listed.
   */
  async function open(viewport: Viewport, path = '/', bypassCSP = false) {
    const context = await browser.newContext({
      viewport: { width: viewport.width, height: viewport.height },
      bypassCSP,
    });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const errors: string[] = [];
    const dialogs: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await page.goto(base + path);
    await page.getByText('(auth off)').waitFor();
    await page
      .locator('#skill-results button')
      .nth(SKILL_COUNT - 1)
      .waitFor({ state: 'attached' });
    return { page, errors, dialogs, close: () => context.close() };
  }

  /** Whether the element's box lies wholly inside the window. */
  async function inViewport(page: Page, locator: Locator): Promise<boolean> {
    const box = await locator.boundingBox();
    const size = page.viewportSize()!;
    return (
      box !== null &&
      box.width > 0 &&
      box.height > 0 &&
      box.x >= 0 &&
      box.y >= 0 &&
      box.x + box.width <= size.width + 0.5 &&
      box.y + box.height <= size.height + 0.5
    );
  }

  /** How far the document itself could scroll, each way, and where it is after trying. */
  const documentScroll = (page: Page) =>
    page.evaluate(
      `(() => {
      const root = document.scrollingElement;
      window.scrollTo(10000, 10000);
      return { overflowY: root.scrollHeight - root.clientHeight, overflowX: root.scrollWidth - root.clientWidth, ` +
        `scrolledTo: [window.scrollX, window.scrollY] };
    })()`,
    );
  const FITS = { overflowY: 0, overflowX: 0, scrolledTo: [0, 0] };

  const composer = (page: Page) => page.locator('#composer-input');
  const view = (page: Page, name: string) => page.locator('#views').getByRole('button', { name });
  const lastAnswer = (page: Page) => page.locator('#messages .message-assistant .content').last();
  const answered = (page: Page) => page.locator('#messages li.message-assistant:not([aria-busy])').last().waitFor();

  describe.each([WIDE, PHONE])('at $width×$height', (viewport) => {
    it(
      'the message box and the last message are in the window, the document does not scroll, and the panels ' +
        'scroll on their own',
      async () => {
        const id = await chatWithHistory();
        const { page, errors, close } = await open(viewport, `/?chat=${id}`);
        await page.getByText(LAST_MARK).waitFor();
        expect(await inViewport(page, composer(page))).toBe(true);
        expect(await inViewport(page, page.getByRole('button', { name: 'Send' }))).toBe(true);
        expect(await inViewport(page, page.getByText(LAST_MARK))).toBe(true);
        expect(await inViewport(page, page.locator('#chat-title'))).toBe(true);
        await expect(documentScroll(page)).resolves.toEqual(FITS);
        // The messages overflow and scroll inside their own box.
        await expect(
          page.locator('#messages').evaluate((list) => list.scrollHeight > list.clientHeight && list.scrollTop > 0),
        ).resolves.toBe(true);
        await page.screenshot({ path: resolve(ARTIFACTS, `layout-${viewport.name}-conversation.png`) });
        if (viewport === PHONE) {
          // One panel at a time; the way back to the message box is always on screen.
          for (const [button, panel] of [
            ['Chats', '#chats-panel'],
            ['Skills', '#skills-panel'],
          ] as const) {
            await view(page, button).click();
            await expect(page.locator(panel).isVisible()).resolves.toBe(true);
            await expect(composer(page).isVisible()).resolves.toBe(false);
            expect(await inViewport(page, view(page, 'Conversation'))).toBe(true);
            await expect(documentScroll(page)).resolves.toEqual(FITS);
            await page.screenshot({ path: resolve(ARTIFACTS, `layout-phone-${button.toLowerCase()}.png`) });
          }
          await view(page, 'Conversation').click();
          expect(await inViewport(page, composer(page))).toBe(true);
          // Opening a chat from the list brings the conversation back.
          await view(page, 'Chats').click();
          await page.locator('#chat-list button.chat-open[aria-current="page"]').click();
          await composer(page).waitFor();
          expect(await inViewport(page, composer(page))).toBe(true);
        } else {
          await expect(
            page.locator('#skills-panel').evaluate((panel) => panel.scrollHeight > panel.clientHeight),
          ).resolves.toBe(true);
          expect(await inViewport(page, page.locator('#chats-panel'))).toBe(true);
          expect(await inViewport(page, page.locator('#skills-panel'))).toBe(true);
        }
        expect(errors).toEqual([]);
        await close();
      },
    );

    it("a skill's details, even the last of 50, open within the window, and close again", async () => {
      const { page, errors, close } = await open(viewport);
      if (viewport === PHONE) await view(page, 'Skills').click();
      const last = `team-skill-${SKILL_COUNT}`;
      await page.locator('#skill-results button', { hasText: last }).click();
      const heading = page.locator('#skill-detail h3', { hasText: last });
      await heading.waitFor();
      const dialog = page.getByRole('dialog', { name: last });
      await expect(dialog.isVisible()).resolves.toBe(true);
      for (const part of [
        heading,
        page.locator('#skill-detail p').first(),
        page.locator('#skill-detail .files li').first(),
        page.locator('#skill-detail summary'),
        dialog.getByRole('button', { name: 'Close' }),
      ]) {
        expect(await inViewport(page, part)).toBe(true);
      }
      await page.locator('#skill-detail summary').click();
      const instructions = page.locator('#skill-detail pre');
      await expect(instructions.textContent()).resolves.toContain(`# ${last}`);
      await instructions.scrollIntoViewIfNeeded();
      expect(await inViewport(page, instructions)).toBe(true);
      await expect(documentScroll(page)).resolves.toEqual(FITS);
      await page.screenshot({ path: resolve(ARTIFACTS, `layout-${viewport.name}-skill-details.png`) });
      await page.keyboard.press('Escape');
      await dialog.waitFor({ state: 'hidden' });
      // Back where the reader was: the skill's button in the list has the focus again.
      await expect(page.evaluate('document.activeElement.textContent')).resolves.toContain(last);
      expect(errors).toEqual([]);
      await close();
    });
  });

  it(
    'renders a Markdown answer as it streams: heading, lists, table, a code block whose Copy button copies it, a ' +
      'safe link',
    async () => {
      ctx.model.play({ text: MARKDOWN_ANSWER, pieceDelayMs: 15 });
      const { page, errors, close } = await open(WIDE);
      // What the answer looked like at each change while it streamed.
      await page.evaluate(
        `(() => {
      const seen = (window.__renders = []);
      new MutationObserver(() => {
        const answer = document.querySelector('#messages li.message-assistant:last-child');
        if (answer === null) return;
        seen.push({ busy: answer.hasAttribute('aria-busy'), headings: answer.querySelectorAll('.markdown ` +
          `h3').length, dangerous: ` +
          `answer.querySelectorAll(${JSON.stringify(`.markdown :is(${DANGEROUS})`)}).length });
      }).observe(document.getElementById('messages'), { childList: true, subtree: true, characterData: true, ` +
          `attributes: true });
    })()`,
      );
      await composer(page).fill('How do we release?');
      await composer(page).press('Enter');
      await answered(page);
      const renders = (await page.evaluate('window.__renders')) as {
        busy: boolean;
        headings: number;
        dangerous: number;
      }[];
      // Rendered while it streamed, not only at the end; never anything but Markdown's elements.
      expect(renders.filter((render) => render.busy && render.headings === 1).length).toBeGreaterThan(1);
      expect(renders.every((render) => render.dangerous === 0)).toBe(true);

      const check = async () => {
        const answer = lastAnswer(page);
        await expect(answer.locator('h3').textContent()).resolves.toBe('Release plan');
        await expect(answer.locator('strong').textContent()).resolves.toBe('in order');
        await expect(answer.locator('ol > li').allTextContents()).resolves.toEqual(['Build', 'Test']);
        await expect(answer.locator('ul > li').allTextContents()).resolves.toEqual(['alpha', 'beta']);
        await expect(answer.locator('table th').allTextContents()).resolves.toEqual(['Name', 'Size']);
        await expect(answer.locator('table td').allTextContents()).resolves.toEqual(['a.txt', '12', 'b.txt', '345']);
        await expect(answer.locator('table td').nth(1).getAttribute('align')).resolves.toBe('right');
        await expect(answer.locator('pre code').textContent()).resolves.toBe(`${CODE}\n`);
        await expect(answer.locator('pre code').getAttribute('class')).resolves.toBe('language-bash');
        await expect(answer.locator(':not(pre) > code').textContent()).resolves.toBe('inline code');
        const link = answer.getByRole('link', { name: 'the docs' });
        await expect(Promise.all(['href', 'target', 'rel'].map((name) => link.getAttribute(name)))).resolves.toEqual([
          'https://example.com/docs',
          '_blank',
          'noopener noreferrer',
        ]);
        await answer.getByRole('button', { name: 'Copy the code' }).click();
        await answer.locator('.code-bar button.copy', { hasText: 'Copied' }).waitFor();
        await expect(page.evaluate('navigator.clipboard.readText()')).resolves.toBe(CODE);
        // The user's message stays plain text.
        await expect(
          page
            .locator('#messages .message-user .content')
            .last()
            .evaluate((node) => [node.textContent, node.children.length]),
        ).resolves.toEqual(['How do we release?', 0]);
      };
      await check();
      await page.screenshot({ path: resolve(ARTIFACTS, 'markdown-answer.png') });
      await page.reload();
      await lastAnswer(page).locator('h3').waitFor();
      await check();
      expect(errors).toEqual([]);
      await close();
    },
  );

  it(
    'hostile HTML and Markdown in an answer run nothing and show as inert text, streamed and after a ' + 'reload',
    async () => {
      ctx.model.play({ text: HOSTILE_ANSWER, pieceDelayMs: 5 });
      // Without the CSP, so only the page's own rendering stands between the answer and the page.
      const { page, errors, dialogs, close } = await open(WIDE, '/', true);
      await composer(page).fill('say something nasty');
      await composer(page).press('Enter');
      await answered(page);
      const check = async () => {
        const answer = lastAnswer(page);
        await expect(answer.locator('p').first().textContent()).resolves.toBe('HOSTILE-MARK-5b1');
        await expect(answer.locator(DANGEROUS).count()).resolves.toBe(0);
        const text = (await answer.textContent()) ?? '';
        // Raw HTML is shown as the text it is.
        expect(text).toContain('<script>window.__pwned = 1</script>');
        expect(text).toContain('<img src=x onerror="window.__pwned = 2">');
        expect(text).toContain('<iframe src="javascript:window.__pwned=4"></iframe>');
        // Every link that kept a target is http(s) and opens safely.
        const links = await answer
          .locator('a[href]')
          .evaluateAll((all) =>
            all.map((a) => [a.getAttribute('href'), a.getAttribute('target'), a.getAttribute('rel')]),
          );
        expect(links).toEqual([['https://example.com/safe', '_blank', 'noopener noreferrer']]);
        await answer.getByText('click me').click();
        await expect(page.evaluate('window.__pwned')).resolves.toBeUndefined();
        expect(dialogs).toEqual([]);
      };
      await check();
      await page.reload();
      await lastAnswer(page).getByText('HOSTILE-MARK-5b1').waitFor();
      await check();
      await page.screenshot({ path: resolve(ARTIFACTS, 'markdown-hostile.png'), fullPage: true });
      expect(errors).toEqual([]);
      await close();
    },
  );

  it('a chat is titled from its first message, in the list and the header; until then it is "New chat"', async () => {
    ctx.model.play({ text: 'Sure.' }, { text: 'Again.' });
    const { page, errors, close } = await open(WIDE);
    await page.locator('#new-chat').click();
    const current = page.locator('#chat-list button.chat-open[aria-current="page"]');
    await expect(current.textContent()).resolves.toBe('New chat');
    await expect(page.locator('#chat-title').textContent()).resolves.toBe('New chat');
    await composer(page).fill(
      'Plan the offsite in May\nwith the whole team, and book the rooms for everyone who is coming',
    );
    await composer(page).press('Enter');
    await answered(page);
    const title = 'Plan the offsite in May with the whole team, and book the…';
    await page.locator('#chat-title', { hasText: title }).waitFor();
    await expect(current.textContent()).resolves.toBe(title);
    await expect(page.title()).resolves.toBe(`${title} · Skillhost`);
    await composer(page).fill('a second message changes nothing');
    await composer(page).press('Enter');
    await page.getByText('Again.').waitFor();
    await expect(current.textContent()).resolves.toBe(title);
    await page.screenshot({ path: resolve(ARTIFACTS, 'chat-titled.png') });
    expect(errors).toEqual([]);
    await close();
  });

  it('an error after sending is shown prominently, with its code and message, next to the message box', async () => {
    ctx.model.play({ status: 500 });
    const { page, errors, close } = await open(PHONE);
    await composer(page).fill('this one fails');
    await composer(page).press('Enter');
    const status = page.locator('#status.status-error');
    await status.waitFor();
    await expect(status.locator('strong').textContent()).resolves.toMatch(/^[A-Z][A-Z_]+$/);
    await expect(status.textContent()).resolves.toMatch(
      /^Not sent: [A-Z_]+: .*scripted failure 500.* Your message is back in the box\.$/,
    );
    expect(await inViewport(page, status)).toBe(true);
    await expect(
      status.evaluate((node) => node.ownerDocument.defaultView!.getComputedStyle(node).backgroundColor),
    ).resolves.not.toBe('rgba(0, 0, 0, 0)');
    await expect(composer(page).inputValue()).resolves.toBe('this one fails');
    await page.screenshot({ path: resolve(ARTIFACTS, 'error-phone.png') });
    expect(errors).toEqual([]);
    await close();
  });

  it(
    'has no accessibility violations that axe-core finds, with Markdown answers and 50 skills, wide ' +
      'and on a phone',
    async () => {
      ctx.model.play({ text: MARKDOWN_ANSWER });
      const id = (await call('POST', '/v1/chats', {})).id as string;
      await call('POST', `/v1/chats/${id}/messages`, { content: 'How do we release?' });
      // axe is injected as a script, which the page's own CSP refuses: a context of its own lets it in.
      const { page, close } = await open(WIDE, `/?chat=${id}`, true);
      await lastAnswer(page).locator('h3').waitFor();
      await expect(violations(page)).resolves.toEqual([]);
      await page.setViewportSize({ width: PHONE.width, height: PHONE.height });
      await expect(violations(page)).resolves.toEqual([]);
      await page.locator('#skill-results button').first().dispatchEvent('click');
      await page.locator('#skill-detail h3').waitFor();
      await expect(violations(page)).resolves.toEqual([]);
      await close();
    },
  );
});

(haveChromium ? describe : describe.skip)('the web page with no model configured', () => {
  let ctx: ChatTestContext;
  let browser: Browser;
  let base = '';

  beforeAll(async () => {
    ctx = await startChatApp([resolve('skills')], {}, () => ({}));
    ({ base, browser } = await serveAndLaunch(ctx));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await ctx?.close();
  });

  it.each([WIDE, PHONE])(
    'says so before anyone types, with the setting to use, and sends nothing ($width×$height)',
    async (viewport) => {
      // What the note says is what the API does.
      const chat = (await (
        await fetch(`${base}/v1/chats`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
      ).json()) as { id: string };
      const refused = await fetch(`${base}/v1/chats/${chat.id}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"content":"hi"}',
      });
      expect([refused.status, ((await refused.json()) as { code: string }).code]).toEqual([
        503,
        'MODEL_NOT_CONFIGURED',
      ]);

      const context = await browser.newContext({
        viewport: { width: viewport.width, height: viewport.height },
        bypassCSP: true,
      });
      const page = await context.newPage();
      page.setDefaultTimeout(10_000);
      const errors: string[] = [];
      page.on('pageerror', (error) => errors.push(error.message));
      await page.goto(base);
      const banner = page.locator('#no-model');
      await banner.waitFor();
      const text = (await banner.textContent())!.replace(/\s+/g, ' ');
      for (const part of [
        'No model configured',
        '503',
        'MODEL_NOT_CONFIGURED',
        'SKILLHOST_MODEL',
        'OPENAI_BASE_URL',
        'OPENAI_API_KEY',
        '[app.models.NAME]',
        'config.toml',
        'Models in docs/configuration.md',
      ])
        expect(text).toContain(part);
      const box = (await banner.boundingBox())!;
      expect(box.y >= 0 && box.y + box.height <= viewport.height).toBe(true);
      await expect(page.getByRole('button', { name: 'Send' }).isDisabled()).resolves.toBe(true);
      await expect(page.locator('#composer-input').getAttribute('aria-describedby')).resolves.toBe('no-model');
      await page.locator('#composer-input').fill('hello');
      await page.locator('#composer-input').press('Enter');
      const status = page.locator('#status.status-error');
      await status.waitFor();
      await expect(status.textContent()).resolves.toMatch(
        /^Not sent: MODEL_NOT_CONFIGURED: .*Your message stays in the box\.$/,
      );
      await expect(page.locator('#composer-input').inputValue()).resolves.toBe('hello');
      await expect(page.locator('#messages li').count()).resolves.toBe(0);
      expect(ctx.model.requests).toHaveLength(0);
      await page.screenshot({ path: resolve(ARTIFACTS, `no-model-${viewport.name}.png`) });
      await expect(violations(page)).resolves.toEqual([]);
      expect(errors).toEqual([]);
      await context.close();
    },
  );
});

/** What axe-core finds on the page as it is (the page must allow injected scripts: bypassCSP). */
async function violations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: AXE });
  const result = (await page.evaluate('axe.run(document, { resultTypes: ["violations"] })')) as {
    violations: { id: string; impact: string; nodes: { target: string[] }[] }[];
  };
  return result.violations.map(
    (violation) =>
      `${violation.impact} ${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`,
  );
}
