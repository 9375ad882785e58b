import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  auth,
  Client,
  type OAuthClientProvider,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { UsersService } from '../../src/domain/users/users.service.js';
import { keysFor } from '../support/api-keys.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { freePort } from '../support/ports.js';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { SESSION_COOKIE } from '../../src/domain/users/web-session.js';
import { WebSessionService } from '../../src/domain/users/web-session.service.js';
import {
  authorizationUrl,
  OAuthBrowser,
  pkcePair,
  registerClient,
  tokenRequest as requestTokens,
} from './oauth-browser.js';

/**
 * Issue 30, OAuth for MCP clients: Skillhost as the authorization server for its own `/mcp`, driven by the official
 * MCP SDK's OAuth client (`OAuthClientProvider`, `auth()`, the transport's `authProvider`) against the live app, the
 * person's part (sign-in with an API key, consent) done over HTTP as a browser would; then what a hostile client
 * tries.
 */

const REDIRECT = 'http://127.0.0.1:1/callback';

interface GrantList {
  items: { grantId: string; clientId: string; clientName: string | null; scopes: string[]; resources: string[] }[];
}

/** What an MCP client keeps between runs (Claude Code keeps it in its keychain), in memory. */
class MemoryOAuthClient implements OAuthClientProvider {
  client: Awaited<ReturnType<OAuthClientProvider['clientInformation']>>;
  saved: Awaited<ReturnType<OAuthClientProvider['tokens']>>;
  verifier = '';
  authorizationUrl: URL | undefined;
  discovery: Parameters<NonNullable<OAuthClientProvider['saveDiscoveryState']>>[0] | undefined;

  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return {
      client_name: 'E2E Agent <b>',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(information: typeof this.client) {
    this.client = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: typeof this.saved) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
  saveDiscoveryState(state: NonNullable<typeof this.discovery>) {
    this.discovery = state;
  }
  discoveryState() {
    return this.discovery;
  }
}

describe('OAuth for MCP clients', () => {
  let tree: TempTree;
  let ctx: ChatTestContext;
  let base: string;
  const keys: Record<string, string> = {};
  const clients: Client[] = [];

  beforeAll(async () => {
    tree = tempTree();
    writeSkill(tree, 'skills', 'alpha', { description: 'Alpha does the first thing. Use when a test needs alpha.' });
    const port = await freePort();
    ctx = await startChatApp([tree.path('skills')], {
      'app.auth.mode': 'api_key',
      'app.auth.oauth.enabled': true,
      'app.port': port,
      'app.skills.store_directory': tree.path('store'),
    });
    Object.assign(keys, await keysFor(ctx.app, { root: 'admin', ann: 'member' }));
    await ctx.app.listen(port, '127.0.0.1');
    base = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    await ctx?.close();
    tree?.cleanup();
  });

  /** Connects the SDK client; on its first 401 the person signs in and consents, then it connects again. */
  async function signInWithSdk(user: string, provider = new MemoryOAuthClient()) {
    const first = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
    await expect(new Client({ name: 'e2e', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    expect(provider.authorizationUrl).toBeDefined();
    const browser = new OAuthBrowser(base);
    const back = await browser.authorize(provider.authorizationUrl!.toString(), keys[user]);
    expect(back.url.startsWith(REDIRECT)).toBe(true);
    await first.finishAuth(new URL(back.url).searchParams);
    return { provider, browser, client: await connect(provider) };
  }

  async function connect(provider: MemoryOAuthClient) {
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider }));
    clients.push(client);
    return client;
  }

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const apiKey = (user: string) => ({ authorization: `Bearer ${keys[user]}` });

  async function mcpStatus(token: string): Promise<number> {
    const response = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...bearer(token), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    await response.body?.cancel();
    return response.status;
  }

  it(
    'a 401 from /mcp points to the protected resource metadata, which names Skillhost as the ' + 'authorization server',
    async () => {
      const response = await fetch(`${base}/mcp`, { method: 'POST' });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toContain(
        `resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
      );
      for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
        const metadata = await (await fetch(`${base}${path}`)).json();
        expect(metadata).toMatchObject({
          resource: `${base}/mcp`,
          authorization_servers: [base],
          scopes_supported: ['skills:read', 'chats', 'admin'],
        });
      }
      const server = await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json();
      expect(server).toMatchObject({
        issuer: base,
        authorization_endpoint: `${base}/oauth/authorize`,
        token_endpoint: `${base}/oauth/token`,
        registration_endpoint: `${base}/oauth/register`,
        revocation_endpoint: `${base}/oauth/revoke`,
        code_challenge_methods_supported: ['S256'],
        response_types_supported: ['code'],
      });
    },
  );

  it(
    'the SDK registers, the person signs in and consents, and the token lists skills on /mcp; ' + 'refresh rotates',
    async () => {
      const { provider, browser, client } = await signInWithSdk('ann');
      const { tools } = await client.listTools();
      const names = (tools[0].inputSchema.properties as Record<string, { enum?: string[] }>).name.enum;
      expect(names).toContain('alpha');
      // The pages: the client's name escaped, a strict CSP, no script.
      const consent = browser.pages.find((page) => page.html.includes('Allow'))!;
      expect(consent.html).toContain('E2E Agent &lt;b&gt;');
      expect(consent.headers.get('content-security-policy')).toMatch(/^default-src 'none'; style-src 'sha256-/);
      expect(consent.headers.get('content-security-policy')).toContain("form-action 'self' http://127.0.0.1:1");
      expect(consent.html).not.toContain('<script');
      // A member asked for every scope; `admin` is not hers to give.
      const first = provider.saved!;
      expect(first.scope?.split(' ').sort()).toEqual(['chats', 'skills:read']);
      expect(first.expires_in).toBeLessThanOrEqual(600);
      expect(first.refresh_token).toBeDefined();
      // The token acts as ann on REST too.
      const me = await (await fetch(`${base}/v1/me`, { headers: bearer(first.access_token) })).json();
      expect(me).toMatchObject({ name: 'ann', role: 'member', keyId: null });

      // Refresh (the SDK refreshes when it holds a refresh token): a new pair; the old refresh token is spent.
      expect(await auth(provider, { serverUrl: new URL(`${base}/mcp`) })).toBe('AUTHORIZED');
      const second = provider.saved!;
      expect(second.access_token).not.toBe(first.access_token);
      expect(second.refresh_token).not.toBe(first.refresh_token);
      expect(await mcpStatus(second.access_token)).toBe(200);
      const replayed = await tokenRequest({
        grant_type: 'refresh_token',
        refresh_token: first.refresh_token!,
        client_id: provider.client!.client_id,
      });
      expect([replayed.status, replayed.body.error]).toEqual([400, 'invalid_grant']);
    },
  );

  it('the person lists their grant and revokes it: its tokens stop working at once', async () => {
    const { provider } = await signInWithSdk('ann');
    const token = provider.saved!.access_token;
    expect(await mcpStatus(token)).toBe(200);
    const listed = (await (await fetch(`${base}/v1/me/oauth-grants`, { headers: apiKey('ann') })).json()) as GrantList;
    const grant = listed.items.find((item) => item.clientId === provider.client!.client_id)!;
    expect(grant).toMatchObject({
      clientName: 'E2E Agent <b>',
      scopes: ['chats', 'skills:read'],
      resources: [`${base}/mcp`],
    });
    // Another person neither sees nor revokes it.
    const others = (await (await fetch(`${base}/v1/me/oauth-grants`, { headers: apiKey('root') })).json()) as GrantList;
    expect(others.items.map((item) => item.grantId)).not.toContain(grant.grantId);
    const foreign = await fetch(`${base}/v1/me/oauth-grants/${grant.grantId}`, {
      method: 'DELETE',
      headers: apiKey('root'),
    });
    expect([foreign.status, ((await foreign.json()) as { code: string }).code]).toEqual([404, 'OAUTH_GRANT_NOT_FOUND']);
    expect(await mcpStatus(token)).toBe(200);

    const revoked = await fetch(`${base}/v1/me/oauth-grants/${grant.grantId}`, {
      method: 'DELETE',
      headers: apiKey('ann'),
    });
    expect(revoked.status).toBe(204);
    expect(await mcpStatus(token)).toBe(401);
    const refresh = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: provider.saved!.refresh_token!,
      client_id: provider.client!.client_id,
    });
    expect(refresh.body.error).toBe('invalid_grant');
  });

  it('a token with fewer scopes can do no more through MCP, GraphQL or the gateway than through REST', async () => {
    const issued = await tokensFor('root', 'skills:read');
    const token = issued.access_token;
    expect(issued.scope).toBe('skills:read');
    expect(await mcpStatus(token)).toBe(200);
    expect((await fetch(`${base}/v1/skills`, { headers: bearer(token) })).status).toBe(200);
    const refused = [
      await fetch(`${base}/v1/chats`, { headers: bearer(token) }),
      await fetch(`${base}/v1/admin/users`, { headers: bearer(token) }),
      await fetch(`${base}/openai/v1/models`, { headers: bearer(token) }),
      // Minting a key would turn a narrow token into a full one.
      await fetch(`${base}/v1/me/keys`, {
        method: 'POST',
        headers: { ...bearer(token), 'content-type': 'application/json' },
        body: '{}',
      }),
    ];
    for (const response of refused) expect(response.status).toBe(403);
    expect(((await refused[0].json()) as { code: string }).code).toBe('INSUFFICIENT_SCOPE');
    const graphql = (await (
      await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { ...bearer(token), 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ chats { items { id } } }' }),
      })
    ).json()) as { errors?: { extensions?: { code?: string } }[] };
    expect(graphql.errors?.[0]?.extensions?.code).toBe('INSUFFICIENT_SCOPE');
    // And the other way round: a chats-only token cannot read skills over MCP or REST.
    const chatsOnly = (await tokensFor('ann', 'chats')).access_token;
    expect(await mcpStatus(chatsOnly)).toBe(403);
    const stepUp = await fetch(`${base}/v1/skills`, { headers: bearer(chatsOnly) });
    expect(stepUp.headers.get('www-authenticate')).toBe(
      'Bearer realm="skillhost", error="insufficient_scope", scope="skills:read"',
    );
    expect((await fetch(`${base}/v1/skills`, { headers: bearer(chatsOnly) })).status).toBe(403);
    expect((await fetch(`${base}/v1/chats`, { headers: bearer(chatsOnly) })).status).toBe(200);
    // An admin's key still does everything.
    expect((await fetch(`${base}/v1/admin/users`, { headers: apiKey('root') })).status).toBe(200);
  });

  it('a person signed in to the web page goes straight to consent, with no API key asked for', async () => {
    const ann = (await ctx.app.get(UsersService).listUsers()).items.find((user) => user.name === 'ann')!;
    const session = await ctx.app.get(WebSessionService).start(ann.id);
    const provider = new MemoryOAuthClient();
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: provider });
    await expect(new Client({ name: 'e2e', version: '1.0.0' }).connect(transport)).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    const browser = new OAuthBrowser(base);
    browser.setCookie(SESSION_COOKIE, session.token);
    const page = await browser.open(provider.authorizationUrl!.toString());
    expect(page.html).not.toContain('name="api_key"');
    const back = await browser.submit(page.html, '/confirm');
    expect(back.url.startsWith(REDIRECT)).toBe(true);
    await transport.finishAuth(new URL(back.url).searchParams);
    const client = await connect(provider);
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
    // An ended session is no sign-in: the page asks for a key again (in a browser without the provider's own
    // sign-in cookie, which the first browser keeps).
    await ctx.app.get(WebSessionService).end({ cookie: `${SESSION_COOKIE}=${session.token}` });
    const again = new MemoryOAuthClient();
    const next = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { authProvider: again });
    await expect(new Client({ name: 'e2e', version: '1.0.0' }).connect(next)).rejects.toBeInstanceOf(UnauthorizedError);
    const ended = new OAuthBrowser(base);
    ended.setCookie(SESSION_COOKIE, session.token);
    const asked = await ended.open(again.authorizationUrl!.toString());
    expect(asked.html).toContain('name="api_key"');
  });

  it('deny sends the client access_denied and issues nothing', async () => {
    const client = await register();
    const { challenge } = pkcePair();
    const browser = new OAuthBrowser(base);
    const back = await browser.authorize(authorizeUrl(client, { code_challenge: challenge }), keys.ann, 'deny');
    const params = new URL(back.url).searchParams;
    expect([params.get('error'), params.get('code')]).toEqual(['access_denied', null]);
  });

  describe('hostile clients', () => {
    it('an unregistered redirect_uri is refused on the page, never redirected to', async () => {
      const client = await register();
      const { challenge } = pkcePair();
      const browser = new OAuthBrowser(base);
      const page = await browser.open(
        authorizeUrl(client, { code_challenge: challenge, redirect_uri: 'https://evil.example/callback' }),
      );
      expect(page.response.status).toBe(400);
      expect(page.url.startsWith(base)).toBe(true);
      expect(page.html).toContain('redirect_uri');
    });

    it('PKCE is required, S256 only', async () => {
      const client = await register();
      const attempts: Record<string, string>[] = [
        {},
        { code_challenge: pkcePair().verifier, code_challenge_method: 'plain' },
      ];
      for (const extra of attempts) {
        const back = await new OAuthBrowser(base).open(authorizeUrl(client, extra));
        const params = new URL(back.url).searchParams;
        expect([params.get('error'), params.get('code')]).toEqual(['invalid_request', null]);
      }
    });

    it('a code is good once: replayed, it is refused and the tokens it gave are revoked', async () => {
      const client = await register();
      const { verifier, challenge } = pkcePair();
      const back = await new OAuthBrowser(base).authorize(
        authorizeUrl(client, { code_challenge: challenge }),
        keys.ann,
      );
      const code = new URL(back.url).searchParams.get('code')!;
      const exchange = () =>
        tokenRequest({
          grant_type: 'authorization_code',
          code,
          code_verifier: verifier,
          redirect_uri: REDIRECT,
          client_id: client,
          resource: `${base}/mcp`,
        });
      const first = await exchange();
      expect(first.status).toBe(200);
      expect(await mcpStatus(first.body.access_token)).toBe(200);
      const again = await exchange();
      expect([again.status, again.body.error]).toEqual([400, 'invalid_grant']);
      expect(await mcpStatus(first.body.access_token)).toBe(401);
    });

    it('a code without its verifier, or with another, is refused', async () => {
      const client = await register();
      const { challenge } = pkcePair();
      const back = await new OAuthBrowser(base).authorize(
        authorizeUrl(client, { code_challenge: challenge }),
        keys.ann,
      );
      const code = new URL(back.url).searchParams.get('code')!;
      const wrong = await tokenRequest({
        grant_type: 'authorization_code',
        code,
        code_verifier: pkcePair().verifier,
        redirect_uri: REDIRECT,
        client_id: client,
      });
      expect([wrong.status, wrong.body.error]).toEqual([400, 'invalid_grant']);
    });

    it('no token for another resource: the authorization request is refused', async () => {
      const client = await register();
      const { challenge } = pkcePair();
      const back = await new OAuthBrowser(base).open(
        authorizeUrl(client, { code_challenge: challenge, resource: 'https://other.example/mcp' }),
      );
      expect(new URL(back.url).searchParams.get('error')).toBe('invalid_target');
      // Nor at the token endpoint, for a code given for /mcp.
      const { verifier, challenge: bound } = pkcePair();
      const granted = await new OAuthBrowser(base).authorize(authorizeUrl(client, { code_challenge: bound }), keys.ann);
      const exchanged = await tokenRequest({
        grant_type: 'authorization_code',
        code: new URL(granted.url).searchParams.get('code')!,
        code_verifier: verifier,
        redirect_uri: REDIRECT,
        client_id: client,
        resource: 'https://other.example/mcp',
      });
      expect([exchanged.status, exchanged.body.error]).toEqual([400, 'invalid_target']);
    });

    it("a disabled user's token stops working within the seconds a key takes", async () => {
      const users = ctx.app.get(UsersService);
      const cy = await users.createUser('cy', 'member');
      keys.cy = (await users.createKey(cy.id)).key;
      const token = (await tokensFor('cy', 'skills:read')).access_token;
      expect(await mcpStatus(token)).toBe(200);
      await users.updateUser(cy.id, { disabled: true });
      const deadline = Date.now() + 6000;
      while ((await mcpStatus(token)) !== 401) {
        if (Date.now() > deadline) throw new Error("A disabled user's token still works after 6 s");
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    });

    it('a login or consent form posted without its CSRF token, or from another origin, is refused', async () => {
      const client = await register();
      const browser = new OAuthBrowser(base);
      const signIn = await browser.open(authorizeUrl(client, { code_challenge: pkcePair().challenge }));
      const action = /action="([^"]+\/login)"/.exec(signIn.html)![1];
      const forged = await browser.open(`${base}${action}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
        body: new URLSearchParams({ api_key: keys.ann, csrf: 'forged' }).toString(),
      });
      expect(forged.response.status).toBe(403);
      const csrf = /name="csrf" value="([^"]+)"/.exec(signIn.html)![1];
      const crossSite = await browser.open(`${base}${action}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
        body: new URLSearchParams({ api_key: keys.ann, csrf }).toString(),
      });
      expect(crossSite.response.status).toBe(403);
      // A wrong key is refused on the page, which stays usable.
      const wrongKey = await browser.submit(signIn.html, '/login', { api_key: `skh_${'x'.repeat(43)}` });
      expect([wrongKey.response.status, wrongKey.html.includes('not valid')]).toEqual([401, true]);
    });

    it('a client ID metadata document is fetched from a public https URL only: never from this host', async () => {
      const server = await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json();
      expect(server).toMatchObject({ client_id_metadata_document_supported: true });
      const refusals: Record<string, string> = {
        [`https://127.0.0.1:${new URL(base).port}/client.json`]: 'client_id metadata document fetch not allowed',
        'https://localhost/client.json': 'client_id metadata document fetch not allowed',
        'https://[::1]/client.json': 'client_id metadata document fetch not allowed',
        'http://example.com/client.json': 'client is invalid',
      };
      for (const [clientId, reason] of Object.entries(refusals)) {
        const page = await new OAuthBrowser(base).open(
          authorizeUrl(clientId, { code_challenge: pkcePair().challenge }),
        );
        expect([page.url.startsWith(base), page.response.status]).toEqual([true, 400]);
        expect(page.html).toContain(reason);
      }
    });

    it('a made-up bearer token is refused on /mcp with invalid_token', async () => {
      const response = await fetch(`${base}/mcp`, { method: 'POST', headers: bearer('x'.repeat(43)) });
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"');
    });
  });

  /** A client's whole flow by hand, asking for `scope`: the token response. */
  async function tokensFor(user: string, scope: string) {
    const client = await register();
    const { verifier, challenge } = pkcePair();
    const back = await new OAuthBrowser(base).authorize(
      authorizeUrl(client, { code_challenge: challenge, scope }),
      keys[user],
    );
    const answer = await tokenRequest({
      grant_type: 'authorization_code',
      code: new URL(back.url).searchParams.get('code')!,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      client_id: client,
      resource: `${base}/mcp`,
    });
    expect(answer.status).toBe(200);
    return answer.body;
  }

  async function register(): Promise<string> {
    return registerClient(base, 'hostile', REDIRECT);
  }

  function authorizeUrl(client: string, extra: Record<string, string>): string {
    return authorizationUrl(base, client, REDIRECT, extra);
  }

  function tokenRequest(fields: Record<string, string>) {
    return requestTokens(base, fields);
  }
});
