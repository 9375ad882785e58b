import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { MAX_BUFFERED_BYTES, nodeFetch } from '../../src/infra/llm/node-fetch.js';

/** The providers' fetch against a real HTTP server on 127.0.0.1, case by case. */
describe('nodeFetch', () => {
  let server: Server;
  let base: string;
  let handler: (req: IncomingMessage, res: ServerResponse, body: string) => void;
  const connections = new Set<unknown>();

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => handler(req, res, Buffer.concat(chunks).toString('utf8')));
    });
    server.on('connection', (socket) => connections.add(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(() => server.closeAllConnections());
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends method, headers and body, and answers status, headers and body like fetch', async () => {
    let seen: { method?: string; auth?: string; type?: string; body?: string } = {};
    handler = (req, res, body) => {
      seen = { method: req.method, auth: req.headers.authorization, type: req.headers['content-type'], body };
      res
        .writeHead(201, 'Made', { 'content-type': 'application/json', 'x-one': 'a' })
        .end(JSON.stringify({ ok: true }));
    };
    const response = await nodeFetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body: JSON.stringify({ q: 'é' }),
    });
    expect(seen).toEqual({ method: 'POST', auth: 'Bearer k', type: 'application/json', body: '{"q":"é"}' });
    expect([response.status, response.statusText, response.ok]).toEqual([201, 'Made', true]);
    expect(response.headers.get('x-one')).toBe('a');
    expect(await response.json()).toEqual({ ok: true });
  });

  it('reuses one keep-alive connection for consecutive calls', async () => {
    handler = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    connections.clear();
    for (let i = 0; i < 3; i++) await (await nodeFetch(new URL('/x', base), { method: 'POST', body: '{}' })).text();
    expect(connections.size).toBe(1);
  });

  it('a kept-alive connection the server dropped is retried once on a new one; a fresh one is not', async () => {
    const served = new WeakMap<object, number>();
    handler = (req, res) => {
      const count = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, count);
      if (count === 2 || req.url === '/drop') req.socket.destroy();
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"n":1}');
    };
    connections.clear();
    await (await nodeFetch(`${base}/a`, { method: 'POST', body: '{}' })).text();
    // The second request goes out on the kept-alive socket, which the server drops unanswered.
    expect(await (await nodeFetch(`${base}/b`, { method: 'POST', body: '{}' })).json()).toEqual({ n: 1 });
    expect(connections.size).toBe(2);
    server.closeAllConnections();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const error = (await nodeFetch(`${base}/drop`, { method: 'POST', body: '{}' }).catch(
      (e: unknown) => e,
    )) as TypeError;
    expect(error.message).toBe('fetch failed');
    expect((error.cause as NodeJS.ErrnoException).code).toBe('ECONNRESET');
  });

  it('hands an event stream over as it arrives, before the server has finished', async () => {
    let finish: () => void = () => undefined;
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
      finish = () => res.end('data: two\n\n');
    };
    const response = await nodeFetch(`${base}/s`, { method: 'POST', body: '{}' });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    expect(decoder.decode((await reader.read()).value)).toBe('data: one\n\n');
    finish();
    let rest = '';
    for (let part = await reader.read(); !part.done; part = await reader.read()) rest += decoder.decode(part.value);
    expect(rest).toBe('data: two\n\n');
  });

  it('answers 204 with no body and 4xx/5xx as not ok with their body', async () => {
    handler = (req, res) =>
      req.url === '/empty'
        ? res.writeHead(204).end()
        : res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":{"message":"busy"}}');
    const empty = await nodeFetch(`${base}/empty`);
    expect([empty.status, empty.body]).toEqual([204, null]);
    const failed = await nodeFetch(`${base}/busy`, { method: 'POST', body: '{}' });
    expect([failed.status, failed.ok]).toEqual([503, false]);
    expect(await failed.json()).toEqual({ error: { message: 'busy' } });
  });

  it('a refused connection rejects as fetch does: TypeError "fetch failed" with the cause', async () => {
    const error = await nodeFetch('http://127.0.0.1:9/v1', { method: 'POST', body: '{}' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TypeError);
    expect((error as TypeError).message).toBe('fetch failed');
    expect(((error as TypeError).cause as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
  });

  it('an abort rejects with an AbortError, before the answer and in the middle of its body', async () => {
    handler = (req, res) => {
      if (req.url === '/half')
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' }).write('{"par');
    };
    for (const path of ['/hang', '/half']) {
      const controller = new AbortController();
      const pending = nodeFetch(`${base}${path}`, { method: 'POST', body: '{}', signal: controller.signal });
      setTimeout(() => controller.abort(new Error('timeout')), 50);
      const error = await pending.catch((e: unknown) => e);
      expect((error as Error).name).toBe('AbortError');
    }
    expect(
      ((await nodeFetch(`${base}/hang`, { signal: AbortSignal.abort() }).catch((e: unknown) => e)) as Error).name,
    ).toBe('AbortError');
  });

  it('an answer that breaks off or exceeds the buffer limit rejects with what happened', async () => {
    handler = (req, res) => {
      if (req.url === '/cut') {
        res
          .writeHead(200, { 'content-type': 'application/json', 'content-length': '100' })
          .write('{"par', () => res.destroy());
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(1024 * 1024, 0x61);
      for (let i = 0; i <= MAX_BUFFERED_BYTES / chunk.length; i++) res.write(chunk);
      res.end();
    };
    const cut = (await nodeFetch(`${base}/cut`, { method: 'POST', body: '{}' }).catch((e: unknown) => e)) as Error;
    expect(cut.message).toMatch(/^(aborted|the connection closed before the response was complete)$/);
    const big = (await nodeFetch(`${base}/big`, { method: 'POST', body: '{}' }).catch((e: unknown) => e)) as Error;
    expect(big.message).toBe(`the response body is larger than ${MAX_BUFFERED_BYTES} bytes`);
  });

  it('a Request object goes to the global fetch unchanged', async () => {
    handler = (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('via fetch');
    const response = await nodeFetch(new Request(`${base}/r`));
    expect(await response.text()).toBe('via fetch');
  });
});
