import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import WebSocket from 'ws';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { RecordingLogger, storedState } from './http-client.js';
import type { WireJson } from '../support/wire-json.js';

/** Sends raw bytes on a new connection and returns all the server writes back until it closes. */
async function rawExchange(
  port: number,
  bytes: string | Buffer,
  options: { endAfterMs?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('connect', () => {
      socket.write(bytes);
      if (options.endAfterMs !== undefined) setTimeout(() => socket.destroy(), options.endAfterMs);
    });
    setTimeout(() => reject(new Error('no answer within 5 s')), 5000).unref();
  });
}

/** The status line and JSON body of a raw HTTP answer. */
function parseRaw(answer: string): { status: number; body: WireJson } {
  const [head, body] = answer.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), body: JSON.parse(body) };
}

/** Whether a graphql-ws connection to /graphql with this Host header is accepted (connection_ack) or refused. */
function websocketWith(port: number, host: string): Promise<{ acknowledged: boolean; status?: number }> {
  return new Promise((resolve) => {
    const socket = new WebSocket(`ws://127.0.0.1:${port}/graphql`, 'graphql-transport-ws', { headers: { host } });
    socket.on('open', () => socket.send(JSON.stringify({ type: 'connection_init', payload: {} })));
    socket.on('message', (data) => {
      resolve({ acknowledged: JSON.parse(String(data)).type === 'connection_ack' });
      socket.close();
    });
    socket.on('unexpected-response', (_request, response) => {
      resolve({ acknowledged: false, status: response.statusCode });
      socket.terminate();
    });
    socket.on('error', () => resolve({ acknowledged: false }));
  });
}

describe('Host header with auth off (DNS rebinding)', () => {
  let ctx: ChatTestContext;
  let port: number;
  const http = () => request(ctx.app.getHttpServer());

  beforeAll(async () => {
    ctx = await startChatApp([], { 'app.http.allowed_hosts': ['skillhost.internal'] });
    await ctx.app.listen(0, '127.0.0.1');
    port = (ctx.app.getHttpServer().address() as AddressInfo).port;
  });
  afterAll(async () => ctx?.close());

  it.each([
    ['GET', '/v1/chats'],
    ['GET', '/v1/me'],
    ['GET', '/health'],
    ['GET', '/openapi.json'],
    ['GET', '/no-such-route'],
    ['POST', '/graphql'],
  ])('a rebinding name on %s %s → 421 MISDIRECTED_REQUEST', async (method, path) => {
    const answer = await (method === 'GET'
      ? http().get(path)
      : http().post(path).send({ query: '{ chats { total } }' })
    ).set('host', `rebind.evil.example:${port}`);
    expect(answer.status).toBe(421);
    const refusal = { code: 'MISDIRECTED_REQUEST', message: expect.stringContaining("Host 'rebind.evil.example:") };
    // GraphQL answers in its own shape, with the same code and status.
    if (path === '/graphql')
      expect(answer.body.errors).toEqual([
        { message: refusal.message, extensions: { code: refusal.code, status: 421 } },
      ]);
    else expect(answer.body).toEqual(refusal);
  });

  it('a rebinding page cannot post a chat: 421, nothing stored', async () => {
    const before = await storedState(ctx.db.url);
    expect((await http().post('/v1/chats').set('host', 'evil.example').send({ title: 'x' })).status).toBe(421);
    expect(await storedState(ctx.db.url)).toEqual(before);
  });

  it.each([`127.0.0.1:PORT`, 'localhost:PORT', 'LOCALHOST', '[::1]:PORT', '127.0.0.2', 'skillhost.internal:PORT'])(
    'Host %s is answered',
    async (host) => {
      expect(
        (
          await http()
            .get('/v1/chats')
            .set('host', host.replace('PORT', String(port)))
        ).status,
      ).toBe(200);
    },
  );

  it('a WebSocket upgrade must pass the same check', async () => {
    expect(await websocketWith(port, `127.0.0.1:${port}`)).toEqual({ acknowledged: true });
    expect(await websocketWith(port, `evil.example:${port}`)).toEqual({ acknowledged: false, status: 421 });
  });
});

describe('Host header with API keys required', () => {
  let ctx: ChatTestContext;
  beforeAll(async () => {
    ctx = await startChatApp([], { 'app.auth.mode': 'api_key' });
  });
  afterAll(async () => ctx?.close());

  it('is not checked: keys protect the server, and a proxy may use any name', async () => {
    const answer = await request(ctx.app.getHttpServer()).get('/v1/chats').set('host', 'skillhost.example.com');
    expect(answer.status).toBe(401);
  });
});

describe('CORS', () => {
  describe('by default (no cors_origins)', () => {
    let ctx: ChatTestContext;
    beforeAll(async () => {
      ctx = await startChatApp([]);
    });
    afterAll(async () => ctx?.close());

    it('answers no CORS header, to a request or a preflight', async () => {
      const http = () => request(ctx.app.getHttpServer());
      const get = await http().get('/v1/chats').set('origin', 'https://evil.example');
      expect(get.headers['access-control-allow-origin']).toBeUndefined();
      const preflight = await http()
        .options('/v1/chats')
        .set('origin', 'https://evil.example')
        .set('access-control-request-method', 'POST')
        .set('access-control-request-headers', 'content-type');
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
      expect(preflight.headers['access-control-allow-methods']).toBeUndefined();
    });
  });

  describe('with cors_origins', () => {
    let ctx: ChatTestContext;
    beforeAll(async () => {
      ctx = await startChatApp([], { 'app.http.cors_origins': ['https://chat.example.com/'] });
    });
    afterAll(async () => ctx?.close());
    const http = () => request(ctx.app.getHttpServer());

    it('answers a preflight from a configured origin, for JSON and keys', async () => {
      const preflight = await http()
        .options('/v1/chats')
        .set('origin', 'https://chat.example.com')
        .set('access-control-request-method', 'POST')
        .set('access-control-request-headers', 'content-type, authorization');
      expect(preflight.status).toBe(204);
      expect(preflight.headers).toMatchObject({
        'access-control-allow-origin': 'https://chat.example.com',
        vary: expect.stringContaining('Origin'),
      });
      expect(preflight.headers['access-control-allow-methods']).toContain('POST');
      expect(preflight.headers['access-control-allow-headers']).toMatch(/content-type/);
      expect(preflight.headers['access-control-allow-headers']).toMatch(/authorization/);
    });

    it('names the configured origin on its requests, and no other', async () => {
      expect(
        (await http().get('/v1/chats').set('origin', 'https://chat.example.com')).headers[
          'access-control-allow-origin'
        ],
      ).toBe('https://chat.example.com');
      expect(
        (await http().get('/v1/chats').set('origin', 'https://evil.example')).headers['access-control-allow-origin'],
      ).toBeUndefined();
      const preflight = await http()
        .options('/v1/chats')
        .set('origin', 'https://evil.example')
        .set('access-control-request-method', 'POST');
      expect(preflight.headers['access-control-allow-origin']).toBeUndefined();
    });
  });
});

describe("Node's and Fastify's own refusals", () => {
  let ctx: ChatTestContext;
  let port: number;
  const logger = new RecordingLogger();

  beforeAll(async () => {
    ctx = await startChatApp([], {}, undefined, {}, logger);
    await ctx.app.listen(0, '127.0.0.1');
    port = (ctx.app.getHttpServer().address() as AddressInfo).port;
  });
  afterAll(async () => ctx?.close());

  it('headers over 16 KiB → 431 in the {code, message} shape', async () => {
    const answer = parseRaw(
      await rawExchange(port, `GET /v1/chats HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
    );
    expect(answer).toEqual({
      status: 431,
      body: { code: 'HEADERS_TOO_LARGE', message: expect.stringContaining('headers are too large') },
    });
  });

  it.each([
    ['a malformed request line', 'THIS IS NOT HTTP\r\n\r\n'],
    [
      'a Content-Length that is no number',
      'POST /v1/chats HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: abc\r\n\r\n{}',
    ],
    [
      'two different Content-Lengths',
      'POST /v1/chats HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ' +
        '2\r\nContent-Length: 3\r\n\r\n{}',
    ],
  ])('%s → 400 VALIDATION_FAILED in the {code, message} shape', async (_label, bytes) => {
    const answer = parseRaw(await rawExchange(port, bytes));
    expect(answer).toEqual({
      status: 400,
      body: { code: 'VALIDATION_FAILED', message: expect.stringContaining('Malformed HTTP request') },
    });
  });

  it('a client that goes away in the middle of its body is not an error in the log, and stores nothing', async () => {
    const before = await storedState(ctx.db.url);
    const head =
      `POST /v1/chats HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: ` +
      `1000\r\n\r\n{"title":"`;
    await rawExchange(port, head, { endAfterMs: 100 });
    // The server notices the reset and answers nobody; give it the moment it takes.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(logger.errors).toEqual([]);
    expect(logger.lines.filter((line) => line.level === 'debug').map((line) => line.message)).toContainEqual(
      expect.stringContaining('The client went away before its request was read'),
    );
    expect(await storedState(ctx.db.url)).toEqual(before);
    // And the server goes on answering.
    expect((await request(ctx.app.getHttpServer()).get('/v1/chats')).status).toBe(200);
  });
});
