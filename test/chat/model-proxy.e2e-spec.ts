import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { createProxy, type ProxyServer } from 'proxy';
import request from 'supertest';
import { configWith } from '../../src/config/config-loader.js';
import { modelDispatcher, modelFetch } from '../../src/infra/llm/model-fetch.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { freePort } from '../support/ports.js';

/**
 * Model calls through an operator's proxy (`[app.proxy]`, HTTP_PROXY, HTTPS_PROXY, NO_PROXY): a real HTTP proxy on
 * 127.0.0.1 (the `proxy` package) in front of the scripted model, each request it relays recorded.
 */
describe('model calls through a proxy', () => {
  let proxy: ProxyServer;
  let proxyUrl: string;
  const relayed: string[] = [];

  beforeAll(async () => {
    proxy = createProxy(createServer());
    proxy.on('request', (req) => relayed.push(`${req.method} ${req.url}`));
    proxy.on('connect', (req) => relayed.push(`CONNECT ${req.url}`));
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  });
  afterEach(() => {
    relayed.length = 0;
    proxy.authenticate = undefined;
  });
  afterAll(async () => {
    proxy.closeAllConnections();
    await new Promise((resolve) => proxy.close(resolve));
  });

  async function turn(ctx: ChatTestContext): Promise<request.Response> {
    const http = request(ctx.app.getHttpServer());
    const chat = (await http.post('/v1/chats').send({}).expect(201)).body.id as string;
    ctx.model.play({ text: 'Answered through whatever was in between.' });
    return http.post(`/v1/chats/${chat}/messages`).send({ content: 'hello' });
  }

  it.each([
    ['[app.proxy] http in the file', (url: string) => [{ 'app.proxy.http': url }, {}] as const],
    ['HTTP_PROXY in the environment', (url: string) => [{}, { HTTP_PROXY: url }] as const],
    ['http_proxy in the environment', (url: string) => [{}, { http_proxy: url }] as const],
  ])('a turn reaches the model through the proxy set by %s', async (_, settings) => {
    const [overrides, env] = settings(proxyUrl);
    const ctx = await startChatApp([], overrides, undefined, env);
    try {
      const reply = await turn(ctx);

      expect(reply.status).toBe(201);
      expect(reply.body.assistantMessage.content).toBe('Answered through whatever was in between.');
      expect(relayed).toEqual([`POST ${ctx.model.url}/chat/completions`]);
    } finally {
      await ctx.close();
    }
  });

  it('NO_PROXY naming the model host sends the call directly', async () => {
    const ctx = await startChatApp([], {}, undefined, { HTTP_PROXY: proxyUrl, NO_PROXY: 'localhost, 127.0.0.1' });
    try {
      expect((await turn(ctx)).status).toBe(201);
      expect(relayed).toEqual([]);
    } finally {
      await ctx.close();
    }
  });

  it("sends the proxy URL's credentials; a proxy that refuses them fails the turn as the model's error", async () => {
    const seen: (string | undefined)[] = [];
    proxy.authenticate = (req) => {
      seen.push(req.headers['proxy-authorization']);
      return req.headers['proxy-authorization'] === `Basic ${Buffer.from('team:s3cret').toString('base64')}`;
    };
    const withCredentials = proxyUrl.replace('http://', 'http://team:s3cret@');
    const ctx = await startChatApp([], { 'app.proxy.http': withCredentials });
    try {
      expect((await turn(ctx)).status).toBe(201);
      expect(seen).toEqual([`Basic ${Buffer.from('team:s3cret').toString('base64')}`]);
    } finally {
      await ctx.close();
    }

    const refused = await startChatApp([], { 'app.proxy.http': proxyUrl.replace('http://', 'http://team:wrong@') });
    try {
      const reply = await turn(refused);

      expect(reply.status).toBe(502);
      expect(reply.body.code).toBe('MODEL_ERROR');
      expect(JSON.stringify(reply.body)).not.toContain('wrong');
    } finally {
      await refused.close();
    }
  });

  it('reaches an https:// provider through the proxy with CONNECT (TLS stays with the provider)', async () => {
    const dispatcher = modelDispatcher({ http: '', https: proxyUrl, noProxy: '' });
    const target = `127.0.0.1:${await freePort()}`;
    try {
      // Nothing speaks TLS there: the call fails after the proxy was asked for the tunnel.
      const error = await modelFetch(dispatcher)(`https://${target}/v1/chat/completions`, {
        method: 'POST',
        body: '{}',
      }).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(TypeError);
      expect(relayed).toEqual([`CONNECT ${target}`]);
    } finally {
      await dispatcher.destroy();
    }
  });

  it.each([
    ['another scheme', 'socks5://user:pw@127.0.0.1:1080'],
    ['credentials that do not decode', 'http://user:pw%zz@127.0.0.1:3128'],
  ])('a proxy URL with %s is refused at start-up, without echoing it', (_, url) => {
    const load = () => configWith({ 'app.proxy.https': url });

    expect(load).toThrow(/app\.proxy\.https.*expected an http:\/\/ or https:\/\/ URL/);
    expect(load).not.toThrow(/pw/);
  });

  it('reads host:port alone as an http:// proxy, as curl does', () => {
    const config = configWith({}, undefined, undefined, { HTTPS_PROXY: 'proxy.corp:3128', NO_PROXY: '.corp' });

    expect(config.app.proxy).toEqual({ http: '', https: 'http://proxy.corp:3128/', noProxy: '.corp' });
  });

  it('sends a Request object, read into bytes, through the same dispatcher and its proxy', async () => {
    const dispatcher = modelDispatcher({ http: proxyUrl, https: '', noProxy: '' });
    const model = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('relayed'));
    await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(model.address() as AddressInfo).port}/v1/r`;
    try {
      const response = await modelFetch(dispatcher)(new Request(url, { method: 'POST', body: 'hi' }));

      expect(await response.text()).toBe('relayed');
      expect(relayed).toEqual([`POST ${url}`]);
    } finally {
      await dispatcher.destroy();
      model.closeAllConnections();
      await new Promise((resolve) => model.close(resolve));
    }
  });
});
