import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { chromium } from 'playwright-core';
import { UsersService } from '../../src/domain/users/users.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { skillMd, tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { zipOf } from '../support/skill-archives.js';
import { storedState } from './http-client.js';
import type { WireJson } from '../support/wire-json.js';

/**
 * The HTTP edge a hostile client probes through the real door, on raw sockets where a client
 * library would hide it: keys checked before a byte of the body is read, slow bodies cut with 408,
 * a request line over 16 KiB answered rather than reset, /docs under a CSP, and a skill's files
 * never served as a page of this server.
 */

const CHROMIUM = process.env.SKILLHOST_CHROMIUM ?? '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium)
  console.warn(
    `Chromium not found at ${CHROMIUM} (apt-get install chromium, or set SKILLHOST_CHROMIUM): the /docs render ` +
      `test is skipped.`,
  );

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: WireJson;
}

/** One raw connection: bytes sent as given (all at once, or a byte at a time), and what comes back. */
class RawConnection {
  private received = Buffer.alloc(0);
  private onData: (() => void) | undefined;
  private trickling: NodeJS.Timeout | undefined;
  /** Settles when the server closes the connection (or resets it). */
  readonly closed: Promise<void>;

  private constructor(private readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.received = Buffer.concat([this.received, chunk]);
      this.onData?.();
    });
    this.closed = new Promise((resolve) => {
      socket.on('close', () => {
        clearInterval(this.trickling);
        this.onData?.();
        resolve();
      });
      socket.on('error', () => undefined);
    });
  }

  static open(port: number): Promise<RawConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  send(bytes: string | Buffer): void {
    if (!this.socket.destroyed) this.socket.write(bytes);
  }

  /** Sends `bytes` one byte every `everyMs`, until all are sent or the connection closes. */
  trickle(bytes: string, everyMs: number): void {
    let next = 0;
    this.trickling = setInterval(() => {
      if (next >= bytes.length || this.socket.destroyed) return clearInterval(this.trickling);
      this.send(bytes[next++]);
    }, everyMs);
  }

  /**
   * Sends `chunk` again and again as fast as the connection takes it, until the server closes it or
   * `limit` bytes are sent; resolves with how many were sent.
   */
  async flood(chunk: Buffer, limit: number): Promise<number> {
    let sent = 0;
    while (!this.socket.destroyed && sent < limit) {
      sent += chunk.length;
      if (!this.socket.write(chunk))
        await Promise.race([new Promise((resolve) => this.socket.once('drain', resolve)), this.closed]);
    }
    return sent;
  }

  /** The first answer, once its head and `Content-Length` bytes of body have come. */
  answer(): Promise<RawAnswer> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const parsed = parseAnswer(this.received);
        if (parsed !== undefined) {
          this.onData = undefined;
          resolve(parsed);
        } else if (this.socket.destroyed) {
          reject(
            new Error(
              `The connection closed without a whole answer; received: ${JSON.stringify(
                this.received.toString('latin1').slice(0, 200),
              )}`,
            ),
          );
        }
      };
      this.onData = check;
      check();
    });
  }

  close(): void {
    clearInterval(this.trickling);
    this.socket.destroy();
  }
}

function parseAnswer(bytes: Buffer): RawAnswer | undefined {
  const end = bytes.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const [statusLine, ...lines] = bytes.subarray(0, end).toString('latin1').split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  const body = bytes.subarray(end + 4);
  if (body.length < Number(headers['content-length'] ?? 0)) return undefined;
  const text = body.subarray(0, Number(headers['content-length'] ?? body.length)).toString('utf8');
  return {
    status: Number(statusLine.split(' ')[1]),
    headers,
    body: headers['content-type']?.includes('json') ? JSON.parse(text) : text,
  };
}

/** The `{code, message}` of an answer, or of the first GraphQL error (/graphql answers in its own shape). */
function errorOf(answer: RawAnswer): { code: string; message: string } {
  const first = answer.body.errors?.[0];
  return first === undefined
    ? { code: answer.body.code, message: answer.body.message }
    : { code: first.extensions.code, message: first.message };
}

/** A request's head, announcing a body of `length` bytes. */
function head(method: string, path: string, length: number, headers: Record<string, string> = {}): string {
  const lines = Object.entries({
    host: '127.0.0.1',
    'content-type': 'application/json',
    ...headers,
    'content-length': String(length),
  }).map(([name, value]) => `${name}: ${value}`);
  return `${method} ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`;
}

const chatBody = JSON.stringify({ title: 'sent slowly' });
const mcpBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });

async function listening(ctx: ChatTestContext): Promise<number> {
  await ctx.app.listen(0, '127.0.0.1');
  return (ctx.app.getHttpServer().address() as AddressInfo).port;
}

describe('keys and slow bodies (auth on, bodies given 2 s)', () => {
  let tree: TempTree;
  let ctx: ChatTestContext;
  let port: number;
  let key: string;
  const open = () => RawConnection.open(port);

  beforeAll(async () => {
    tree = tempTree();
    writeSkill(tree, 'skills', 'pdf', { description: 'Works with PDF files.' });
    ctx = await startChatApp([tree.path('skills')], {
      'app.auth.mode': 'api_key',
      'app.http.body_timeout_ms': 2000,
      'app.http.upload_timeout_ms': 2000,
    });
    port = await listening(ctx);
    const users = ctx.app.get(UsersService);
    key = (await users.createKey((await users.createUser('ann', 'admin')).id)).key;
  });
  afterAll(async () => {
    await ctx?.close();
    tree?.cleanup();
  });

  // Regression, fixed since this pass found it. Was: JSON routes read the whole body before checking the key (upload
  // routes answered 401 at once).
  it.each([
    ['POST', '/v1/chats', 'application/json', chatBody],
    ['POST', '/graphql', 'application/json', JSON.stringify({ query: 'mutation { createChat(title: "x") { id } }' })],
    ['POST', '/mcp', 'application/json', mcpBody],
    ['POST', '/v1/skills', 'application/zip', 'PK'],
  ])(
    'no key: %s %s answers 401 before a byte of the body is sent, and a body trickled after it is cut',
    async (method, path, type, body) => {
      const connection = await open();
      const before = await storedState(ctx.db.url);
      connection.send(head(method, path, body.length + 1000, { 'content-type': type }));
      const answer = await connection.answer();
      expect([answer.status, errorOf(answer).code]).toEqual([401, 'UNAUTHENTICATED']);
      expect(answer.headers['www-authenticate']).toMatch(
        /^Bearer realm="skillhost", error_description="An API key is required/,
      );
      // The unread body is still read and dropped (so a client sending it whole reads the 401), under the same
      // deadline.
      connection.trickle(body, 500);
      await connection.closed;
      expect(await storedState(ctx.db.url)).toEqual(before);
    },
  );

  it('a wrong key is refused before the body too, with invalid_token in the challenge', async () => {
    const connection = await open();
    connection.send(head('POST', '/v1/chats', chatBody.length, { authorization: `Bearer skh_${'x'.repeat(43)}` }));
    const answer = await connection.answer();
    expect([answer.status, answer.body.code, answer.headers['www-authenticate']]).toEqual([
      401,
      'UNAUTHENTICATED',
      'Bearer realm="skillhost", error="invalid_token", error_description="The API key is not valid."',
    ]);
    connection.close();
  });

  it('an upload with a wrong key reads its 401 rather than a reset', async () => {
    const answer = await fetch(`http://127.0.0.1:${port}/v1/skills`, {
      method: 'POST',
      headers: { 'content-type': 'application/zip', authorization: `Bearer skh_${'x'.repeat(43)}` },
      body: Buffer.alloc(8 * 1024 * 1024, 1),
    });
    expect([answer.status, ((await answer.json()) as { code: string }).code]).toEqual([401, 'UNAUTHENTICATED']);
  });

  // Regression, fixed since a review pass found it. Was: a body answered 401 (or 415) before it was read was read and
  // dropped whole, however large: one keyless client sent 2 GB in 6 s, four kept the server busy for 30 s.
  it.each([
    ['announced as 2 GB', head('POST', '/v1/chats', 2_000_000_000)],
    [
      'chunked, without end',
      'POST /v1/chats HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ntransfer-encoding: ' +
        'chunked\r\n\r\n',
    ],
  ])(
    "a keyless body %s is not read past the route's body limit: 401, then the connection closes",
    async (_, requestHead) => {
      const connection = await open();
      connection.send(requestHead);
      const chunk = Buffer.from(
        requestHead.includes('chunked') ? `10000\r\n${'x'.repeat(0x10000)}\r\n` : 'x'.repeat(0x10000),
      );
      const sent = connection.flood(chunk, 1024 * 1024 * 1024);
      const answer = await connection.answer();
      expect([answer.status, answer.body.code]).toEqual([401, 'UNAUTHENTICATED']);
      await connection.closed;
      // 1 MiB read and dropped at most, plus what the sockets' buffers took.
      expect(await sent).toBeLessThan(64 * 1024 * 1024);
    },
  );

  it('with a valid key, a body sent in pieces is read as before', async () => {
    const connection = await open();
    connection.send(head('POST', '/v1/chats', chatBody.length, { authorization: `Bearer ${key}` }));
    connection.send(chatBody.slice(0, 5));
    connection.trickle(chatBody.slice(5), 10);
    const answer = await connection.answer();
    expect([answer.status, answer.body.title]).toEqual([201, 'sent slowly']);
    connection.close();
  });

  it('a route that needs no key waits for its body as before (the OAuth probes MCP clients make)', async () => {
    const connection = await open();
    connection.send(head('POST', '/register', 2));
    connection.trickle('{}', 50);
    const answer = await connection.answer();
    expect([answer.status, answer.body.code]).toEqual([404, 'OAUTH_NOT_SUPPORTED']);
    connection.close();
  });

  // Regression, fixed since this pass found it. Was: a keyed body sent 1 byte per 2 s was still open after 200 s.
  it.each([
    ['POST', '/v1/chats', 'application/json', 'body_timeout_ms'],
    ['POST', '/graphql', 'application/json', 'body_timeout_ms'],
    ['POST', '/v1/skills', 'application/zip', 'upload_timeout_ms'],
  ])(
    'a keyed body sent 1 byte per 2 s to %s %s: 408 REQUEST_TIMEOUT at the deadline, the connection closed, ' +
      'nothing stored',
    async (method, path, type, setting) => {
      const before = await storedState(ctx.db.url);
      const connection = await open();
      connection.send(head(method, path, 1000, { authorization: `Bearer ${key}`, 'content-type': type }));
      connection.trickle('x'.repeat(1000), 2000);
      const answer = await connection.answer();
      expect({ status: answer.status, connection: answer.headers.connection, ...errorOf(answer) }).toEqual({
        status: 408,
        connection: 'close',
        code: 'REQUEST_TIMEOUT',
        message: expect.stringContaining(`within 2 s ([app.http] ${setting})`),
      });
      await connection.closed;
      expect(await storedState(ctx.db.url)).toEqual(before);
    },
  );

  it('the deadline holds for a body that keeps coming, not only for one that stalls', async () => {
    const connection = await open();
    const body = JSON.stringify({ title: 'x'.repeat(150) });
    connection.send(head('POST', '/v1/chats', body.length, { authorization: `Bearer ${key}` }));
    // 20 bytes a second: well within the 5 s grace of the minimum rate, never done within 2 s.
    connection.trickle(body, 50);
    const answer = await connection.answer();
    expect([answer.status, answer.body.code]).toEqual([408, 'REQUEST_TIMEOUT']);
    await connection.closed;
  });

  it('the server goes on answering after all that', async () => {
    const answer = await fetch(`http://127.0.0.1:${port}/v1/chats`, { headers: { authorization: `Bearer ${key}` } });
    expect(answer.status).toBe(200);
  });
});

describe('the minimum body rate (deadline 60 s, 1024 bytes a second after 5 s)', () => {
  let ctx: ChatTestContext;
  let port: number;

  beforeAll(async () => {
    ctx = await startChatApp([], { 'app.http.body_timeout_ms': 60_000, 'app.http.body_min_bytes_per_second': 1024 });
    port = await listening(ctx);
  });
  afterAll(async () => ctx?.close());

  it('a body that trickles is cut with 408 once the grace period is over, long before its deadline', async () => {
    const connection = await RawConnection.open(port);
    connection.send(head('POST', '/v1/chats', 1000));
    connection.trickle('x'.repeat(1000), 250);
    const answer = await connection.answer();
    expect(answer).toMatchObject({
      status: 408,
      body: {
        code: 'REQUEST_TIMEOUT',
        message: expect.stringContaining('under 1024 bytes a second ([app.http] body_min_bytes_per_second)'),
      },
    });
    await connection.closed;
  });
});

describe('the defaults (auth off on loopback)', () => {
  let ctx: ChatTestContext;
  let port: number;

  beforeAll(async () => {
    ctx = await startChatApp([]);
    port = await listening(ctx);
  });
  afterAll(async () => ctx?.close());

  it('without a key the body is read and the chat made', async () => {
    const connection = await RawConnection.open(port);
    connection.send(head('POST', '/v1/chats', chatBody.length));
    connection.trickle(chatBody, 5);
    expect((await connection.answer()).status).toBe(201);
    connection.close();
  });

  it('a key that is sent is still checked, before the body: a wrong one is 401 at once', async () => {
    const connection = await RawConnection.open(port);
    connection.send(head('POST', '/v1/chats', chatBody.length, { 'x-api-key': `skh_${'y'.repeat(43)}` }));
    const answer = await connection.answer();
    expect([answer.status, answer.body.code]).toEqual([401, 'UNAUTHENTICATED']);
    connection.close();
  });

  // Regression, fixed since this pass found it. Was: a request line over 16 KiB got a reset, not the documented answer.
  it('a URL over 16 KiB: 414 URI_TOO_LONG in the {code, message} shape', async () => {
    const connection = await RawConnection.open(port);
    connection.send(`GET /v1/skills-catalogue?query=${'q'.repeat(20_000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
    const answer = await connection.answer();
    expect(answer).toMatchObject({
      status: 414,
      headers: { connection: 'close', 'x-content-type-options': 'nosniff' },
      body: { code: 'URI_TOO_LONG', message: expect.stringContaining('send long input in a JSON body') },
    });
    await connection.closed;
  });

  it(
    'a URL of megabytes that the client is still sending when refused: the client reads the 414, not ' + 'a reset',
    async () => {
      const answer = await new Promise<{ status?: number; error?: string }>((resolve) => {
        const req = httpRequest(
          { host: '127.0.0.1', port, method: 'GET', path: `/${'a'.repeat(4 * 1024 * 1024)}` },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode }));
          },
        );
        req.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code }));
        req.end();
      });
      expect(answer).toEqual({ status: 414 });
    },
  );

  it('headers over 16 KiB: 431 HEADERS_TOO_LARGE', async () => {
    const connection = await RawConnection.open(port);
    connection.send(`GET /v1/chats HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(await connection.answer()).toMatchObject({ status: 431, body: { code: 'HEADERS_TOO_LARGE' } });
    connection.close();
  });
});

describe("/docs and a skill's files", () => {
  let tree: TempTree;
  let ctx: ChatTestContext;
  let base: string;
  const files = {
    'references/page.html': '<script>alert(1)</script>',
    'assets/logo.svg': '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>',
    'references/notes.txt': 'plain notes',
  };

  beforeAll(async () => {
    tree = tempTree();
    writeSkill(tree, 'skills', 'pages');
    for (const [path, content] of Object.entries(files)) tree.write(`skills/pages/${path}`, content);
    ctx = await startChatApp([tree.path('skills')]);
    base = `http://127.0.0.1:${await listening(ctx)}`;
  });
  afterAll(async () => {
    await ctx?.close();
    tree?.cleanup();
  });

  // Regression, fixed since this pass found it. Was: /docs had no CSP, frame-ancestors or nosniff.
  it(
    '/docs is served with a CSP that allows its own files and its one inline script only, never in a frame, and ' +
      'nosniff',
    async () => {
      const answer = await fetch(`${base}/docs`);
      const page = await answer.text();
      const inline = /<script>([^<]+)<\/script>/.exec(page)![1];
      const policy = answer.headers.get('content-security-policy')!.split('; ');
      expect(policy).toEqual(
        expect.arrayContaining([
          "default-src 'none'",
          `script-src 'self' 'sha256-${createHash('sha256').update(inline).digest('base64')}'`,
          "style-src 'self'",
          "connect-src 'self'",
          "frame-ancestors 'none'",
          "base-uri 'none'",
        ]),
      );
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      for (const asset of ['swagger-ui.css', 'swagger-ui-bundle.js'])
        expect((await fetch(`${base}/docs/${asset}`)).headers.get('x-content-type-options')).toBe('nosniff');
    },
  );

  (haveChromium ? it : it.skip)(
    '/docs renders the operations in Chromium with no CSP violation, and the policy does block a script it does ' +
      'not know',
    async () => {
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
      });
      try {
        const page = await browser.newPage();
        const errors: string[] = [];
        page.on('pageerror', (error) => errors.push(error.message));
        await page.addInitScript({
          content:
            "window.violations = []; document.addEventListener('securitypolicyviolation', (event) => " +
            "window.violations.push(event.violatedDirective + ' ' + event.blockedURI));",
        });
        const violations = () => page.evaluate('window.violations');
        await page.goto(`${base}/docs`);
        await page.locator('.opblock').first().waitFor();
        expect(await page.locator('.opblock').count()).toBeGreaterThan(20);
        // Expand an operation and run it: the request goes to this server under connect-src 'self'.
        await page.locator('.opblock-summary-path', { hasText: '/health/live' }).first().click();
        await page.locator('button.try-out__btn').first().click();
        await page.locator('button.execute').first().click();
        await page.locator('.live-responses-table .response-col_status', { hasText: '200' }).first().waitFor();
        expect(await violations()).toEqual([]);
        expect(errors).toEqual([]);
        // The listener does hear a violation: a script the policy does not name is blocked.
        await page.addScriptTag({ content: 'window.ran = true' }).catch(() => undefined);
        await page.waitForFunction('window.violations.length > 0');
        expect(await violations()).toEqual([expect.stringMatching(/^script-src/)]);
        expect(await page.evaluate('window.ran')).toBeUndefined();
      } finally {
        await browser.close();
      }
    },
  );

  // Regression, fixed since this pass found it. Was: the REST resource route served .html/.svg as text/plain without
  // nosniff.
  it.each([
    ['references/page.html', 'attachment'],
    ['assets/logo.svg', 'attachment'],
    ['references/notes.txt', null],
  ])(
    'GET /v1/skills/pages/resources/%s: text/plain, nosniff, a sandboxing CSP, and a download when a browser ' +
      'would run it',
    async (path, disposition) => {
      const answer = await fetch(`${base}/v1/skills/pages/resources/${path}`);
      expect(answer.status).toBe(200);
      expect(await answer.text()).toBe(files[path as keyof typeof files]);
      expect({
        type: answer.headers.get('content-type'),
        nosniff: answer.headers.get('x-content-type-options'),
        policy: answer.headers.get('content-security-policy'),
        disposition: answer.headers.get('content-disposition'),
      }).toEqual({
        type: 'text/plain; charset=utf-8',
        nosniff: 'nosniff',
        policy: "default-src 'none'; sandbox",
        disposition,
      });
    },
  );

  it.each(Object.keys(files))(
    'GET /.well-known/agent-skills/pages/%s: always a download, under the same policy',
    async (path) => {
      const answer = await fetch(`${base}/.well-known/agent-skills/pages/${path}`);
      expect(answer.status).toBe(200);
      expect([
        answer.headers.get('x-content-type-options'),
        answer.headers.get('content-security-policy'),
        answer.headers.get('content-disposition'),
      ]).toEqual(['nosniff', "default-src 'none'; sandbox", 'attachment']);
    },
  );

  it(
    'an upload of such files is still installable (the headers change how they are served, not what ' + 'is kept)',
    async () => {
      const archive = await zipOf({
        'SKILL.md': skillMd({ name: 'uploaded-pages' }),
        'references/page.html': files['references/page.html'],
      });
      const answer = await fetch(`${base}/v1/skills`, {
        method: 'POST',
        headers: { 'content-type': archive.contentType },
        body: archive.body,
      });
      expect(answer.status).toBe(201);
      const served = await fetch(`${base}/v1/skills/uploaded-pages/resources/references/page.html`);
      expect([served.status, served.headers.get('content-disposition'), await served.text()]).toEqual([
        200,
        'attachment',
        files['references/page.html'],
      ]);
    },
  );
});
