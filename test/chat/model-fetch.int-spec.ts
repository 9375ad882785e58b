import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { Dispatcher } from 'undici';
import { MAX_BUFFERED_BYTES, type ModelFetch, modelDispatcher, modelFetch } from '../../src/infra/llm/model-fetch.js';

/** The providers' fetch against a real HTTP server on 127.0.0.1, case by case. */
describe('modelFetch', () => {
  const dispatcher: Dispatcher = modelDispatcher({ http: '', https: '', noProxy: '' });
  const callModel: ModelFetch = modelFetch(dispatcher);
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
    await dispatcher.close();
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
    const response = await callModel(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
      body: JSON.stringify({ q: 'é' }),
    });
    expect(seen).toEqual({ method: 'POST', auth: 'Bearer k', type: 'application/json', body: '{"q":"é"}' });
    expect([response.status, response.statusText, response.ok]).toEqual([201, 'Made', true]);
    expect(response.headers.get('x-one')).toBe('a');
    expect(await response.json()).toEqual({ ok: true });
  });

  it('reuses kept-alive connections for consecutive calls', async () => {
    handler = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    connections.clear();
    for (let i = 0; i < 20; i++) await (await callModel(new URL('/x', base), { method: 'POST', body: '{}' })).text();
    // undici hands a call the body's end a moment before it counts the connection free again, so a call made at
    // once may open a second one; from then on the two are reused.
    expect(connections.size).toBeLessThanOrEqual(2);
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
    await (await callModel(`${base}/a`, { method: 'POST', body: '{}' })).text();
    // The second request goes out on the kept-alive socket, which the server drops unanswered.
    expect(await (await callModel(`${base}/b`, { method: 'POST', body: '{}' })).json()).toEqual({ n: 1 });
    expect(connections.size).toBe(2);
    server.closeAllConnections();
    await new Promise((resolve) => setTimeout(resolve, 20));
    const error = (await callModel(`${base}/drop`, { method: 'POST', body: '{}' }).catch(
      (e: unknown) => e,
    )) as TypeError;
    expect(error.message).toBe('fetch failed');
    expect((error.cause as NodeJS.ErrnoException).code).toBe('UND_ERR_SOCKET');
  });

  it('hands an event stream over as it arrives, before the server has finished', async () => {
    let finish: () => void = () => undefined;
    handler = (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
      finish = () => res.end('data: two\n\n');
    };
    const response = await callModel(`${base}/s`, { method: 'POST', body: '{}' });
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
    const empty = await callModel(`${base}/empty`);
    expect([empty.status, empty.body]).toEqual([204, null]);
    const failed = await callModel(`${base}/busy`, { method: 'POST', body: '{}' });
    expect([failed.status, failed.ok]).toEqual([503, false]);
    expect(await failed.json()).toEqual({ error: { message: 'busy' } });
  });

  it('a refused connection rejects as fetch does: TypeError "fetch failed" with the cause', async () => {
    const error = await callModel('http://127.0.0.1:9/v1', { method: 'POST', body: '{}' }).catch((e: unknown) => e);
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
      const pending = callModel(`${base}${path}`, { method: 'POST', body: '{}', signal: controller.signal });
      setTimeout(() => controller.abort(new Error('timeout')), 50);
      const error = await pending.catch((e: unknown) => e);
      expect((error as Error).name).toBe('AbortError');
    }
    expect(
      ((await callModel(`${base}/hang`, { signal: AbortSignal.abort() }).catch((e: unknown) => e)) as Error).name,
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
    const cut = (await callModel(`${base}/cut`, { method: 'POST', body: '{}' }).catch((e: unknown) => e)) as Error;
    expect(cut.message).toMatch(/^(aborted|other side closed|Response body length does not match content-length)/i);
    const big = (await callModel(`${base}/big`, { method: 'POST', body: '{}' }).catch((e: unknown) => e)) as Error;
    expect(big.message).toBe(`the response body is larger than ${MAX_BUFFERED_BYTES} bytes`);
  });

  it('a Request object is read into bytes and sent the same way', async () => {
    handler = (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('via fetch');
    const response = await callModel(new Request(`${base}/r`));
    expect(await response.text()).toBe('via fetch');
  });
});
