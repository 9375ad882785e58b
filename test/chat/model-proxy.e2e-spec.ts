import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { createProxy, type ProxyServer } from 'proxy';
import request from 'supertest';
import { configWith } from '../../src/config/config-loader.js';
import { modelDispatcher, modelFetch } from '../../src/infra/llm/model-fetch.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';

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

  it('an https:// provider is reached through the proxy with CONNECT (the TLS session is with the provider)', async () => {
    const dispatcher = modelDispatcher({ http: '', https: proxyUrl, noProxy: '' });
    const target = `127.0.0.1:${(proxy.address() as AddressInfo).port + 1}`;
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

  it('a proxy URL that is not http(s) is refused at start-up, without echoing it', () => {
    const load = () => configWith({ 'app.proxy.https': 'socks5://user:pw@127.0.0.1:1080' });

    expect(load).toThrow(/app\.proxy\.https.*expected an http:\/\/ or https:\/\/ URL/);
    expect(load).not.toThrow(/pw@/);
  });
});
