import { existsSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { UsersService } from '../../src/domain/users/users.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import type { ScriptStep } from '../support/scripted-model-server.js';
import { tempTree, writeSkill } from '../support/files/skill-tree.js';
import type { WireJson } from '../support/wire-json.js';

/**
 * A hostile pass over the web chat page (web/, served by src/api/http/web-page.ts): markup in every
 * string the page shows, the static file server, models that fail, keys that stop working, big and
 * odd input, keyboard-only use, two tabs and other users' chats. The bugs it found are fixed and kept as regressions.
 */
const CHROMIUM = process.env.SKILLHOST_CHROMIUM ?? '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
const KEY_ITEM = 'skillhost.apiKey';
/**
 * Sets `window.__pwned` if it ever runs; the browser test context bypasses the CSP so only the page's own escaping
 * stands in the way.
 */
const PAYLOAD =
  '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script><a ' +
  'href="javascript:window.__pwned=3">link</a>';
const INJECTED = 'body img, body script, body iframe, body a[href^="javascript:" i], body [onerror]';
const BIG_MARKER = 'BIG-END-5d1e';
const BIG_TEXT = `${'0123456789'.repeat(9)}abcdefgh\n`.repeat(10_000) + BIG_MARKER;

(haveChromium ? describe : describe.skip)('the web chat page, attacked', () => {
  let ctx: ChatTestContext;
  let browser: Browser;
  let base = '';
  let port = 0;
  let users: UsersService;
  let alice = { id: '', key: '' };
  const contexts: BrowserContext[] = [];
  const tree = tempTree('skillhost-web-hostile-');
  const newUser = async (name: string) => (await users.createKey((await users.createUser(name, 'member')).id)).key;

  beforeAll(async () => {
    const description = `'${PAYLOAD.replaceAll("'", "''")} javascript:window.__pwned=4'`;
    writeSkill(tree, 'skills', 'xss-skill', {
      description,
      body: `# Evil <script>window.__pwned=5</script>\n\n<img src=x onerror="window.__pwned=6">\n`,
    });
    tree.write('skills/xss-skill/references/evil.md', `${PAYLOAD}\n`);
    writeSkill(tree, 'skills', 'big-skill', {
      description: 'Has one very big reference file. Use when testing output size.',
    });
    tree.write('skills/big-skill/references/big.md', BIG_TEXT);
    tree.write(
      'commands/evil-cmd.md',
      `---\ndescription: '<img src=x onerror="window.__pwned=7"> a command'\n---\n\nDo $ARGUMENTS\n`,
    );
    ctx = await startChatApp(
      [resolve('skills'), tree.path('skills')],
      {
        'app.auth.mode': 'api_key',
        'app.commands.directories': [tree.path('commands')],
        'app.limits.requests_per_minute': 100_000,
        'app.limits.turns_per_minute': 10_000,
      },
      // A short model timeout: a hanging model ends the turn in 1.5 s.
      (url) => ({
        scripted: {
          provider: 'openai-compatible',
          base_url: url,
          model: 'scripted-1',
          timeout_ms: 1500,
          max_retries: 0,
        },
      }),
    );
    users = ctx.app.get(UsersService);
    const aliceUser = await users.createUser('alice', 'member');
    alice = { id: aliceUser.id, key: (await users.createKey(aliceUser.id)).key };
    await ctx.app.listen(0, '127.0.0.1');
    port = (ctx.app.getHttpServer().address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  }, 60_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await ctx?.close();
    tree.cleanup();
  });

  /** A new tab of its own (own session storage) holding `key`, at `path`; collects the page's script errors. */
  async function openPage(
    path = '/',
    key: string | null = alice.key,
    bypassCSP = false,
    setup?: (context: BrowserContext) => Promise<unknown>,
  ): Promise<{ page: Page; errors: string[] }> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, bypassCSP });
    contexts.push(context);
    await setup?.(context);
    if (key !== null)
      await context.addInitScript({
        content:
          `sessionStorage.getItem(${JSON.stringify(KEY_ITEM)}) ?? ` +
          `sessionStorage.setItem(${JSON.stringify(KEY_ITEM)}, ${JSON.stringify(key)})`,
      });
    const page = await context.newPage();
    page.setDefaultTimeout(10_000);
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.goto(base + path);
    return { page, errors };
  }

  async function signedIn(page: Page): Promise<void> {
    await page.getByText(/Signed in as/).waitFor();
    await page.locator('#model option').first().waitFor({ state: 'attached' });
  }

  /** Signed in and, for `/?chat=`, that chat open (its activated skills shown): see the bug below for why both. */
  async function ready(path = '/', key = alice.key) {
    const opened = await openPage(path, key);
    await signedIn(opened.page);
    if (path.includes('chat=')) await opened.page.locator('#activated li').first().waitFor({ state: 'attached' });
    return opened;
  }
  const say = async (page: Page, text: string) => {
    await composer(page).fill(text);
    await composer(page).press('Enter');
  };

  async function call(
    method: string,
    path: string,
    key = alice.key,
    body?: unknown,
  ): Promise<{ status: number; body: WireJson }> {
    const response = await fetch(base + path, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
  }

  const chatCount = async (key = alice.key) => (await call('GET', '/v1/chats?limit=1', key)).body.total as number;
  const newChat = async (key = alice.key, title?: string) =>
    (await call('POST', '/v1/chats', key, title === undefined ? {} : { title })).body.id as string;
  const composer = (page: Page) => page.locator('#composer-input');
  const status = (page: Page) => page.locator('#status');
  const lastAnswer = (page: Page) => page.locator('#messages .message-assistant .content').last();

  /** Any markup that was turned into elements, or ran. */
  const injected = async (page: Page) => ({
    pwned: await page.evaluate('window.__pwned'),
    elements: await page.locator(INJECTED).count(),
  });

  function raw(
    method: string,
    path: string,
  ): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
    return new Promise((done, fail) => {
      const req = httpRequest({ host: '127.0.0.1', port, method, path }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        res.on('end', () => done({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('error', fail).end();
    });
  }

  describe('the static server', () => {
    it('serves no file by a path it does not know: traversal, encodings, sources, other names', async () => {
      const paths = [
        '/app/../../package.json',
        '/app/%2e%2e/package.json',
        '/app/%2e%2e%2f%2e%2e%2fpackage.json',
        '/app/..%2f..%2fpackage.json',
        '/app/..%5c..%5cpackage.json',
        '/app/unknown.js',
        '/app/main.ts',
        '/app/main.js.map',
        '/app/',
        '/app/.',
        '/index.html',
        '/web/src/main.ts',
        '/web/index.html',
        '/dist/web/index.html',
        '/app/main.js%00.ts',
        '/styles.css/..',
        '/%2e%2e/package.json',
        '/vendor/../package.json',
        '/vendor/%2e%2e/package.json',
        '/vendor/marked.js.map',
        '/vendor/purify.es.mjs',
        '/vendor/',
        '/node_modules/marked/package.json',
      ];
      for (const path of paths) {
        const answer = await raw('GET', path);
        expect([path, answer.status]).toEqual([path, 404]);
        expect(answer.body).not.toMatch(/"name": "skillhost"|import \{|<!doctype/i);
      }
    });

    it('sends CSP and nosniff with every page file, for GET, HEAD and a query string', async () => {
      const files = [
        ['/', 'text/html'],
        ['/?chat=x', 'text/html'],
        ['/styles.css', 'text/css'],
        ['/styles.css?x', 'text/css'],
        ...['api', 'cards', 'composer', 'dom', 'main', 'markdown'].map((name) => [
          `/app/${name}.js`,
          'text/javascript',
        ]),
        ...['marked', 'purify'].map((name) => [`/vendor/${name}.js`, 'text/javascript']),
      ];
      for (const [path, type] of files) {
        for (const method of ['GET', 'HEAD']) {
          const answer = await raw(method, path);
          expect([method, path, answer.status]).toEqual([method, path, 200]);
          expect(answer.headers['content-type']).toContain(type);
          expect(answer.headers['x-content-type-options']).toBe('nosniff');
          expect(answer.headers['content-security-policy']).toMatch(
            /default-src 'self'.*script-src 'self'.*frame-ancestors 'none'/,
          );
          expect(method === 'HEAD' ? answer.body : 'skip').toBe(method === 'HEAD' ? '' : 'skip');
          if (method === 'GET') expect(answer.body.length).toBeGreaterThan(100);
        }
      }
    });
  });

  it(
    'shows markup from skills, commands, titles, messages, tool outputs and the model as text, and ' +
      'runs none of it',
    async () => {
      const chat = await newChat(alice.key, PAYLOAD);
      const calls = [
        { name: 'skills_readResource', arguments: { name: 'xss-skill', path: 'references/evil.md' } },
        { name: 'skills_activate', arguments: { name: PAYLOAD }, id: 'x"]<img src=x onerror="window.__pwned=8">' },
      ];
      ctx.model.play({ toolCalls: calls }, { text: PAYLOAD });
      const { page, errors } = await openPage(`/?chat=${chat}`, alice.key, true);
      await expect(page.locator('#chat-list button.chat-open[aria-current="page"]').textContent()).resolves.toBe(
        PAYLOAD,
      );
      // The suggestions: skill and command descriptions.
      await composer(page).press('/');
      await page.locator('#suggestions').waitFor();
      const descriptions = await page.locator('#suggestions .description').allTextContents();
      expect(descriptions).toEqual(
        expect.arrayContaining([
          `${PAYLOAD} javascript:window.__pwned=4`,
          '<img src=x onerror="window.__pwned=7"> a command',
        ]),
      );
      await composer(page).press('Escape');
      await say(page, `/xss-skill ${PAYLOAD}`);
      await page.locator('#messages li.message-assistant:not([aria-busy])').waitFor();
      await expect(lastAnswer(page).textContent()).resolves.toBe(PAYLOAD);
      // The skills browser: description and instructions.
      await page.getByLabel('Search skills').fill('xss');
      await page.locator('#skill-results button', { hasText: 'xss-skill' }).click();
      await expect(page.locator('#skill-detail p').first().textContent()).resolves.toBe(
        `${PAYLOAD} javascript:window.__pwned=4`,
      );
      await expect(page.locator('#skill-detail pre').textContent()).resolves.toContain(
        '<script>window.__pwned=5</script>',
      );

      const check = async () => {
        await page.locator('#messages details').evaluateAll((all) => {
          for (const details of all) details.setAttribute('open', '');
        });
        await expect(page.locator('#messages .message-user .content').last().textContent()).resolves.toBe(
          `/xss-skill ${PAYLOAD}`,
        );
        const outputs = (await page.locator('#messages pre.output').allTextContents()).join('\n');
        expect(outputs).toContain('<script>window.__pwned=5</script>'); // the activated SKILL.md
        expect(outputs).toContain(PAYLOAD); // evil.md
        await expect(page.locator('#messages article.card-error').count()).resolves.toBe(1);
        await expect(injected(page)).resolves.toEqual({ pwned: undefined, elements: 0 });
      };
      await check();
      await page.reload();
      await page.locator('#messages article.card').first().waitFor();
      await expect(lastAnswer(page).textContent()).resolves.toBe(PAYLOAD);
      await check();
      expect(errors).toEqual([]);
    },
  );

  /** Waits until the turn is over (the status no longer says it is running) and returns what #status says. */
  async function turnOver(page: Page): Promise<string> {
    await status(page)
      .filter({ hasText: /\S/ })
      .filter({ hasNotText: /answering/i })
      .waitFor();
    return (await status(page).textContent()) ?? '';
  }

  describe('a model that fails', () => {
    it.each([
      [
        'answers 500 after a tool call',
        [
          {
            toolCalls: [{ name: 'skills_readResource', arguments: { name: 'xss-skill', path: 'references/evil.md' } }],
          },
          { status: 500 },
        ],
      ],
      ['sends garbage', [{ garbage: '{"choices": [ this is not json' }]],
      ['hangs (the model timeout ends it)', [{ hang: true }]],
    ] as const)(
      '%s: an error in #status, the message back in the box, Send enabled, and nothing half-stored after a reload',
      async (_name, steps) => {
        ctx.model.play(...(steps as unknown as ScriptStep[]));
        const chat = await newChat();
        const { page, errors } = await ready(`/?chat=${chat}`);
        await say(page, '/xss-skill please remember this');
        if ('hang' in steps[0]) {
          await expect(page.locator('#send').isDisabled()).resolves.toBe(true);
          await composer(page).press('Enter'); // nothing more is sent while the turn runs
        }
        await expect(turnOver(page)).resolves.toMatch(/not sent|fail|error|time/i);
        await expect(composer(page).inputValue()).resolves.toBe('/xss-skill please remember this');
        await expect(page.locator('#send').isEnabled()).resolves.toBe(true);
        expect(ctx.model.requests).toHaveLength(steps.length);
        await page.reload();
        await signedIn(page);
        await page.locator('#activated li').first().waitFor();
        await expect(page.locator('#messages li').count()).resolves.toBe(0);
        await expect(page.locator('#activated').textContent()).resolves.toBe('None yet.');
        expect((await call('GET', `/v1/chats/${chat}/messages`)).body.total).toBe(0);
        expect(errors).toEqual([]);
      },
    );

    // Regression, fixed since this pass found it. Was: `MODEL_ERROR: Model 'scripted' failed: <b>Upstream
    // 10.20.30.40:8443</b> refused key sk-live-…` in a member's #status.
    it(
      "a model answering 500 with markup, an address and a key: a member's #status names a request id and none of " +
        "it; an admin's adds the reason, as text",
      async () => {
        const leaky = '<b>Upstream 10.20.30.40:8443</b> refused key sk-live-LEAKED0123456789abcdef';
        const fail = () => ctx.model.play({ status: 500, body: JSON.stringify({ error: { message: leaky } }) });
        fail();
        const member = await ready(`/?chat=${await newChat()}`);
        await say(member.page, 'hello');
        const shown = await turnOver(member.page);
        expect(shown).toMatch(
          new RegExp(
            "^Not sent: MODEL_ERROR: Model 'scripted' could not answer \\(request id [0-9a-f-]{36}\\); " +
              "an admin can find the reason in the server's log\\. Your message is back in the box\\.$",
          ),
        );
        for (const leak of ['<b>', '10.20.30.40', 'sk-live-LEAKED']) expect(shown).not.toContain(leak);
        const root = await users.createUser('root-web', 'admin');
        const rootKey = (await users.createKey(root.id)).key;
        fail();
        const admin = await ready(`/?chat=${await newChat(rootKey)}`, rootKey);
        await say(admin.page, 'hello');
        await expect(turnOver(admin.page)).resolves.toContain(
          `; an admin can find the reason in the server's log. Reason: ${leaky} Your message is back in the box.`,
        );
        await expect(injected(admin.page)).resolves.toEqual({ pwned: undefined, elements: 0 });
      },
    );

    // Regression, fixed since this pass found it. Was: when the user types a follow-up while a turn runs and the turn
    // fails, the failed message is taken off the page and not put back (`if (input.value.trim() === '') input.value =
    // content`, web/src/main.ts send()): it is lost.
    it('a follow-up typed while a failing turn runs does not make the failed message vanish', async () => {
      ctx.model.play({ status: 500, delayMs: 600 });
      const { page } = await ready(`/?chat=${await newChat()}`);
      await say(page, 'the first, long message');
      await composer(page).fill('and a follow-up');
      await turnOver(page);
      const shown = `${await composer(page).inputValue()} ${await page.locator('#messages').textContent()}`;
      expect(shown).toContain('the first, long message');
    });

    // Regression, fixed since this pass found it. Was: until the chat in the address has loaded, state.chatId is null,
    // so a message sent meanwhile (a slow network, a quick user) goes to a brand-new chat (web/src/main.ts send(): `if
    // (state.chatId === null) await newChat()`).
    it('a message sent while /?chat= is still loading goes to that chat, not to a new one', async () => {
      const chat = await newChat(alice.key, 'linked chat');
      const before = await chatCount();
      ctx.model.play({ text: 'answered' });
      const slow = (context: BrowserContext) =>
        context.route(`**/v1/chats/${chat}`, (route) => setTimeout(() => void route.continue(), 1500));
      const { page } = await openPage(`/?chat=${chat}`, alice.key, false, slow);
      await signedIn(page);
      await say(page, 'for the linked chat');
      await turnOver(page);
      expect([(await call('GET', `/v1/chats/${chat}/messages`)).body.total, await chatCount()]).toEqual([2, before]);
    });

    it('switching chats while a turn streams: the answer lands in its own chat, not in the one now open', async () => {
      const [first, second] = [await newChat(alice.key, 'first of two'), await newChat(alice.key, 'second of two')];
      ctx.model.play({ text: 'the answer for the first chat', delayMs: 800 });
      const { page, errors } = await ready(`/?chat=${first}`);
      await say(page, 'slow question');
      await page.locator('#chat-list button.chat-open', { hasText: 'second of two' }).click();
      await page.locator('#chat-list button.chat-open[aria-current="page"]', { hasText: 'second of two' }).waitFor();
      await turnOver(page);
      await expect(page.locator('#messages').textContent()).resolves.not.toMatch(
        /slow question|the answer for the first chat/,
      );
      await page.locator('#chat-list button.chat-open', { hasText: 'first of two' }).click();
      await page.getByText('the answer for the first chat').waitFor();
      expect((await call('GET', `/v1/chats/${second}/messages`)).body.total).toBe(0);
      expect(errors).toEqual([]);
    });
  });

  describe('keys that stop working', () => {
    const revokable = async (label: string) => {
      const created = await users.createKey(alice.id, { label });
      return {
        key: created.key,
        revoke: async () =>
          expect((await call('DELETE', `/v1/me/keys/${created.apiKey.id}`, created.key)).status).toBe(204),
      };
    };

    it(
      'a key revoked mid-session: sending asks to sign in again, keeps the message, and sends it ' + 'after signing in',
      async () => {
        const { key, revoke } = await revokable('revoked before a send');
        const chat = await newChat(key);
        const { page, errors } = await openPage(`/?chat=${chat}`, key);
        await page.locator('#chat-list button.chat-open[aria-current="page"]').waitFor();
        await revoke();
        ctx.model.play({ text: 'sent after signing in again' });
        await say(page, 'after the revocation');
        await page.getByRole('dialog', { name: 'Sign in' }).waitFor();
        await expect(composer(page).inputValue()).resolves.toBe('after the revocation');
        await page.getByLabel('API key').fill(alice.key);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('dialog', { name: 'Sign in' }).waitFor({ state: 'hidden' });
        await page.locator('#send').click();
        await page.getByText('sent after signing in again').waitFor();
        expect((await call('GET', `/v1/chats/${chat}/messages`)).body.total).toBe(2);
        expect(errors).toEqual([]);
      },
    );

    it(
      'a key revoked mid-session: New chat, opening a chat and searching skills each ask to sign in again, ' +
        'without a script error',
      async () => {
        const actions: [string, (page: Page) => Promise<void>][] = [
          ['new chat', (page) => page.locator('#new-chat').click()],
          ['open a chat', (page) => page.locator('#chat-list button.chat-open').first().click()],
          ['search skills', (page) => page.getByLabel('Search skills').fill('pdf')],
        ];
        for (const [name, act] of actions) {
          const { key, revoke } = await revokable(`revoked before ${name}`);
          await newChat(key);
          const { page, errors } = await ready('/', key);
          await page.locator('#chat-list button.chat-open').first().waitFor();
          await revoke();
          await act(page);
          await page.getByRole('dialog', { name: 'Sign in' }).waitFor();
          await expect([name, await page.locator('#sign-in-error').textContent()]).toEqual([
            name,
            expect.stringMatching(/refused|sign in/i),
          ]);
          expect([name, errors]).toEqual([name, []]);
        }
      },
    );

    it(
      'garbage in session storage: asks to sign in, shows a refused odd key in the dialog, then ' + 'signs in',
      async () => {
        const { page, errors } = await openPage('/', 'not-a-key');
        await page.getByText('That key was refused').waitFor();
        await page.keyboard.press('Escape'); // no way around the dialog to a blank page
        await expect(page.getByRole('dialog', { name: 'Sign in' }).isVisible()).resolves.toBe(true);
        await page.getByLabel('API key').fill('ключ🔑');
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.locator('#sign-in-error', { hasText: /\S/ }).waitFor();
        await expect(page.getByRole('dialog', { name: 'Sign in' }).isVisible()).resolves.toBe(true);
        await page.getByLabel('API key').fill(alice.key);
        await page.getByRole('button', { name: 'Sign in' }).click();
        await signedIn(page);
        expect(errors).toEqual([]);
      },
    );

    // Regression, fixed since this pass found it. Was: a stored key fetch() cannot put in a header (non-Latin-1) makes
    // fetch throw a TypeError, not a 401; enter() shows it in #status inside the still-hidden <main id="app">
    // (web/src/main.ts enter()): a blank page, no sign-in.
    it('garbage in session storage that is not Latin-1: still asks to sign in', async () => {
      const { page } = await openPage('/', 'ключ🔑');
      await page.getByRole('dialog', { name: 'Sign in' }).waitFor({ timeout: 3000 });
    });
  });

  it('a 1 MB tool output: the card says how long it is, stays collapsed, and expands to all of it', async () => {
    ctx.model.play(
      { toolCalls: [{ name: 'skills_readResource', arguments: { name: 'big-skill', path: 'references/big.md' } }] },
      { text: 'I read the big file.' },
    );
    const { page, errors } = await ready(`/?chat=${await newChat()}`);
    await say(page, 'read the big file');
    await page.getByText('I read the big file.').waitFor();
    const card = page.locator('#messages article.card[data-tool="skills.readResource"]');
    await expect(card.locator('summary').textContent()).resolves.toBe(`Output (${BIG_TEXT.length} characters)`);
    await expect(card.locator('pre.output').isVisible()).resolves.toBe(false);
    await expect(card.locator('dd').allTextContents()).resolves.toEqual(
      expect.arrayContaining(['references/big.md', 'ok', 'no']),
    );
    await card.locator('summary').click();
    await expect(
      card
        .locator('pre.output')
        .evaluate((pre) => [
          pre.textContent?.length,
          pre.textContent?.endsWith('BIG-END-5d1e'),
          pre.clientHeight < 600,
        ]),
    ).resolves.toEqual([BIG_TEXT.length, true, true]);
    expect(errors).toEqual([]);
  });

  describe('many chats', () => {
    let many = '';
    const ids: string[] = [];

    beforeAll(async () => {
      many = await newUser('many');
      for (let i = 0; i < 205; i += 41)
        ids.push(
          ...(await Promise.all(
            Array.from({ length: 41 }, (_, j) => newChat(many, `chat ${String(i + j).padStart(3, '0')}`)),
          )),
        );
    }, 30_000);

    it('205 chats: the page loads, and a link to one opens it', async () => {
      const { page, errors } = await ready(`/?chat=${ids[0]}`, many);
      await page.locator('#chat-list button.chat-open').nth(199).waitFor();
      await expect(page.locator('#chat-title').textContent()).resolves.toBe(
        await call('GET', `/v1/chats/${ids[0]}`, many).then((answer) => answer.body.title),
      );
      expect(errors).toEqual([]);
    });

    // Regression, fixed since this pass found it. Was: the list asks for `/v1/chats?limit=200` once and offers no more
    // (web/src/main.ts loadChats): chats past the 200 newest cannot be reached from the page.
    it('205 chats: every chat can be reached from the list', async () => {
      const { page } = await ready('/', many);
      await page.locator('#chat-list button.chat-open').first().waitFor();
      const titles = await page.locator('#chat-list button.chat-open').allTextContents();
      const older = page.getByRole('button', { name: /more|older/i });
      expect(titles.length === 205 || (await older.count()) > 0).toBe(true);
    });
  });

  describe('odd messages', () => {
    it(
      'a 100,000-character message is sent and kept; one character more is refused, stays in the box, and stores ' +
        'nothing',
      async () => {
        ctx.model.play({ text: 'got the long one' });
        const chat = await newChat();
        const { page, errors } = await ready(`/?chat=${chat}`);
        const longest = `${'lorem ipsum '.repeat(8333)}end.`;
        expect(longest.length).toBe(100_000);
        await say(page, longest);
        await page.getByText('got the long one').waitFor();
        await page.reload();
        await page.getByText('got the long one').waitFor();
        await expect(page.locator('#messages .message-user .content').textContent()).resolves.toBe(longest);
        await say(page, `${longest}x`);
        await page.locator('#status', { hasText: 'VALIDATION_FAILED' }).waitFor();
        await expect(composer(page).inputValue()).resolves.toBe(`${longest}x`);
        expect((await call('GET', `/v1/chats/${chat}/messages`)).body.total).toBe(2);
        expect(errors).toEqual([]);
      },
    );

    it('unicode, RTL, emoji, combining marks and bidi controls survive streaming and a reload exactly', async () => {
      const text = 'مرحبا بالعالم — שלום 👋🏽 👨‍👩‍👧 日本語 e\u0301 \u202Eevil.exe\u202C 𝔘𝔫𝔦';
      ctx.model.play({ text: `echo: ${text}` });
      const { page } = await ready(`/?chat=${await newChat()}`);
      await say(page, text);
      await page.locator('#messages li.message-assistant:not([aria-busy])').waitFor();
      await expect(lastAnswer(page).textContent()).resolves.toBe(`echo: ${text}`);
      await page.reload();
      await page.locator('#messages .message-user').waitFor();
      await expect(page.locator('#messages .content').allTextContents()).resolves.toEqual([text, `echo: ${text}`]);
    });

    it('empty and whitespace-only messages send nothing, by Enter or by Send', async () => {
      ctx.model.play({ text: 'should never be asked' });
      const before = await chatCount();
      const { page } = await ready('/');
      await composer(page).focus();
      await page.keyboard.press('Enter');
      for (const blank of ['   ', '\n\n\t ', '\u00a0\u3000']) {
        await composer(page).fill(blank);
        await page.locator('#send').click();
        await composer(page).press('Enter');
      }
      await page.waitForTimeout(300);
      await expect(page.locator('#messages li').count()).resolves.toBe(0);
      await expect(status(page).textContent()).resolves.toBe('');
      expect(ctx.model.requests).toHaveLength(0);
      expect(await chatCount()).toBe(before);
    });

    it('a double Enter with no chat open sends the message once, into one new chat', async () => {
      ctx.model.play({ text: 'answered once', delayMs: 200 }, { text: 'answered twice' });
      const before = await chatCount();
      const { page } = await ready('/');
      await composer(page).fill('only once please');
      await page.evaluate(
        "for (let i = 0; i < 2; i++) document.getElementById('composer-input').dispatchEvent(new " +
          "KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true }))",
      );
      await page.getByText('answered once').waitFor();
      await page.waitForTimeout(500);
      await expect(page.locator('#messages .message-user').count()).resolves.toBe(1);
      expect(await chatCount()).toBe(before + 1);
    });

    // Regression, fixed since this pass found it. Was: `.message .content` has `white-space: pre-wrap` but no
    // `overflow-wrap` (web/styles.css), so a long URL or token in a message widens the conversation: it scrolls
    // sideways.
    it('a long unbroken word in an answer wraps instead of making the conversation scroll sideways', async () => {
      ctx.model.play({ text: `see https://example.com/${'a'.repeat(2000)}` });
      const { page } = await ready(`/?chat=${await newChat()}`);
      await say(page, 'a long link please');
      await page.locator('#messages li.message-assistant:not([aria-busy])').waitFor();
      await expect(page.locator('#messages').evaluate((list) => list.scrollWidth <= list.clientWidth)).resolves.toBe(
        true,
      );
    });
  });

  it(
    'keyboard only: skip link first, then the chat list, the composer and Send; suggestions move with arrows and ' +
      'close with Escape',
    async () => {
      const kim = await newUser('kim');
      await newChat(kim);
      ctx.model.play({ text: 'should never be asked' });
      const { page } = await ready('/', kim);
      await page.locator('#chat-list button.chat-open').first().waitFor();
      const focused = () =>
        page.evaluate('document.activeElement.id || document.activeElement.className') as Promise<string>;
      await page.keyboard.press('Tab');
      await expect(focused()).resolves.toBe('skip');
      const box = await page.locator('a.skip').boundingBox();
      expect(box !== null && box.x >= 0 && box.y >= 0).toBe(true);
      await page.keyboard.press('Enter');
      await expect(focused()).resolves.toBe('composer-input');
      await page.locator('a.skip').focus();
      // The bar's model, API keys and Sign out come before the panels.
      const order: string[] = [];
      for (let i = 0; i < 10; i++) {
        await page.keyboard.press('Tab');
        order.push(await focused());
      }
      const at = (name: string) => order.indexOf(name);
      expect(
        [at('new-chat'), at('chat-open'), at('composer-input'), at('send')].every(
          (index, i, all) => index >= 0 && (i === 0 || index > all[i - 1]),
        ),
      ).toBe(true);
      // The suggestion list, by keyboard.
      await composer(page).focus();
      await page.waitForTimeout(150); // the list closes 100 ms after a blur: the Tab walk above left the box
      await page.keyboard.type('/');
      const options = page.locator('#suggestions [role="option"]');
      await options.first().waitFor();
      const count = await options.count();
      expect(count).toBeGreaterThan(2);
      const selected = () =>
        options.evaluateAll((all) => all.findIndex((option) => option.getAttribute('aria-selected') === 'true'));
      await page.keyboard.press('ArrowDown');
      await expect(selected()).resolves.toBe(1);
      await expect(composer(page).getAttribute('aria-activedescendant')).resolves.toBe('suggestion-1');
      await page.keyboard.press('ArrowUp');
      await page.keyboard.press('ArrowUp');
      await expect(selected()).resolves.toBe(count - 1);
      await page.keyboard.press('Escape');
      await expect(page.locator('#suggestions').isHidden()).resolves.toBe(true);
      await expect(composer(page).getAttribute('aria-activedescendant')).resolves.toBeNull();
      await expect(composer(page).inputValue()).resolves.toBe('/');
      await expect(focused()).resolves.toBe('composer-input');
      await page.keyboard.press('Backspace');
      await page.keyboard.press('Enter');
      await page.waitForTimeout(200);
      await expect(page.locator('#messages li').count()).resolves.toBe(0);
      expect(ctx.model.requests).toHaveLength(0);
    },
  );

  describe('two tabs, deleted chats and chats that are not yours', () => {
    it(
      'two tabs on one chat both send; after a reload both show the same four messages; deleting it in one leaves ' +
        'the other with a clear error',
      async () => {
        ctx.model.answerWith((request) => {
          const last = request.body.messages.filter((message) => message.role === 'user').at(-1)?.content;
          return { text: `answer to ${JSON.stringify(last)}`, delayMs: 400 };
        });
        const chat = await newChat();
        const [a, b] = [await ready(`/?chat=${chat}`), await ready(`/?chat=${chat}`)];
        await composer(a.page).fill('from tab A');
        await composer(b.page).fill('from tab B');
        await Promise.all([composer(a.page).press('Enter'), composer(b.page).press('Enter')]);
        await Promise.all([
          a.page.getByText('answer to "from tab A"').waitFor(),
          b.page.getByText('answer to "from tab B"').waitFor(),
        ]);
        for (const tab of [a, b]) await tab.page.reload().then(() => tab.page.locator('#messages li').nth(3).waitFor());
        const contents = await a.page.locator('#messages .content').allTextContents();
        expect(contents).toHaveLength(4);
        await expect(b.page.locator('#messages .content').allTextContents()).resolves.toEqual(contents);

        a.page.once('dialog', (dialog) => void dialog.accept());
        await a.page.locator('#chat-list button.chat-open[aria-current="page"] + button.chat-delete').click();
        await a.page.locator('#chat-list button.chat-open[aria-current="page"]').waitFor({ state: 'detached' });
        await expect(a.page.locator('#messages li').count()).resolves.toBe(0);
        expect(new URL(a.page.url()).search).toBe('');

        await say(b.page, 'into a deleted chat');
        await b.page.locator('#status', { hasText: 'CHAT_NOT_FOUND' }).waitFor();
        await expect(composer(b.page).inputValue()).resolves.toBe('into a deleted chat');
        await expect(b.page.locator('#send').isEnabled()).resolves.toBe(true);
        expect([...a.errors, ...b.errors]).toEqual([]);
      },
    );

    it(
      "/?chat= with another user's chat, a random id or junk shows an error, leaks nothing, and the page still " +
        'works',
      async () => {
        const bob = await newUser('bob');
        const bobChat = await newChat(bob, 'bob secret plans');
        ctx.model.play({ text: 'bob never sees this' });
        await call('POST', `/v1/chats/${bobChat}/messages`, bob, { content: 'bob private message' });
        for (const wanted of [
          bobChat,
          '00000000-0000-4000-8000-000000000000',
          'not-an-id',
          encodeURIComponent('../../v1/me'),
          encodeURIComponent(PAYLOAD),
        ]) {
          const { page, errors } = await openPage(`/?chat=${wanted}`);
          await page.locator('#status', { hasText: /NOT_FOUND|VALIDATION_FAILED/ }).waitFor();
          await expect(page.locator('body').textContent()).resolves.not.toMatch(/bob secret plans|bob private message/);
          await expect(page.locator('#messages li').count()).resolves.toBe(0);
          await expect(page.locator('#chat-list [aria-current="page"]').count()).resolves.toBe(0);
          await expect(injected(page)).resolves.toEqual({ pwned: undefined, elements: 0 });
          expect(errors).toEqual([]);
          if (wanted !== bobChat) continue;
          // A message then goes to a new chat of alice's, not to bob's.
          ctx.model.play({ text: 'a fresh chat for alice' });
          await say(page, 'hello');
          await page.getByText('a fresh chat for alice').waitFor();
          expect(new URL(page.url()).searchParams.get('chat')).not.toBe(bobChat);
          expect((await call('GET', `/v1/chats/${bobChat}/messages`, bob)).body.total).toBe(2);
        }
      },
    );
  });
});
