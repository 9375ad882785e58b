import { createHash, randomBytes } from 'node:crypto';

/**
 * A person's browser in the OAuth flow, over plain HTTP: it keeps cookies per path, follows redirects on this server
 * by hand (stopping at the client's redirect URI), and fills in the sign-in and consent forms as a person would.
 */
export class OAuthBrowser {
  private readonly cookies = new Map<string, { value: string; path: string }>();
  /** Every page the browser was shown, with its headers (for the CSP and the forms). */
  readonly pages: { url: string; status: number; headers: Headers; html: string }[] = [];

  constructor(private readonly base: string) {}

  /** GET `url` and follow this server's redirects; answers the first response that is not one (or leaves it). */
  async open(url: string, init: RequestInit = {}): Promise<{ response: Response; url: string; html: string }> {
    let current = url;
    let request = init;
    for (let hop = 0; hop < 10; hop++) {
      const response = await fetch(current, {
        ...request,
        redirect: 'manual',
        headers: this.headersFor(current, request),
      });
      this.remember(response, current);
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location !== null) {
        const next = new URL(location, current).toString();
        if (!next.startsWith(this.base)) return { response, url: next, html: '' };
        current = next;
        request = {};
        continue;
      }
      const html = await response.text();
      this.pages.push({ url: current, status: response.status, headers: response.headers, html });
      return { response, url: current, html };
    }
    throw new Error(`Too many redirects from ${url}`);
  }

  /** Posts the form of the last page whose action ends with `/suffix`, with `fields` added. */
  async submit(html: string, suffix: string, fields: Record<string, string> = {}) {
    const form = [...html.matchAll(/<form method="post" action="([^"]+)">(.*?)<\/form>/gs)].find(([, action]) =>
      action.endsWith(suffix),
    );
    if (form === undefined) throw new Error(`No form posting to …${suffix} on the page:\n${html}`);
    const body = new URLSearchParams();
    for (const [, name, value] of form[2].matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
      body.set(name, value);
    for (const [name, value] of Object.entries(fields)) body.set(name, value);
    return this.open(new URL(form[1].replace(/&amp;/g, '&'), this.base).toString(), {
      method: 'POST',
      body: body.toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: this.base },
    });
  }

  /** Signs in with `apiKey` and answers the consent screen; the redirect to the client (or the page it stopped on). */
  async authorize(authorizationUrl: string, apiKey: string, decision: 'confirm' | 'deny' = 'confirm') {
    const signIn = await this.open(authorizationUrl);
    if (signIn.html === '') return signIn;
    const consent = await this.submit(signIn.html, '/login', { api_key: apiKey });
    if (consent.html === '') return consent;
    return this.submit(consent.html, `/${decision}`);
  }

  /** A cookie this browser holds already (a web session the person signed in with earlier). */
  setCookie(name: string, value: string, path = '/'): void {
    this.cookies.set(name, { value, path });
  }

  private headersFor(url: string, init: RequestInit): Headers {
    const headers = new Headers(init.headers);
    const path = new URL(url).pathname;
    const cookie = [...this.cookies]
      .filter(([, { path: scope }]) => path.startsWith(scope))
      .map(([name, { value }]) => `${name}=${value}`)
      .join('; ');
    if (cookie !== '') headers.set('cookie', cookie);
    return headers;
  }

  private remember(response: Response, url: string): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';').map((part) => part.trim());
      const [name, ...value] = pair.split('=');
      const path = attributes.find((item) => item.toLowerCase().startsWith('path='))?.slice(5) ?? new URL(url).pathname;
      const expired = attributes.some((item) => /^max-age=0$|^expires=Thu, 01 Jan 1970/i.test(item));
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, { value: value.join('='), path });
    }
  }
}

/** A PKCE verifier and its S256 challenge (RFC 7636). */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** The redirect URI test clients register: nothing listens there, and the browser stops before following it. */
export const TEST_REDIRECT = 'http://127.0.0.1:1/callback';

/** A token endpoint's answer, with the client it was issued to. */
export interface IssuedTokens {
  clientId: string;
  access_token: string;
  refresh_token?: string;
  scope: string;
  expires_in: number;
}

/**
 * An OAuth client of the server at `base` driven by hand, as a hostile or a careful one would: it registers, sends a
 * person through the authorization with PKCE, exchanges the code, and revokes tokens (RFC 7591, 6749, 7636, 7009).
 */
export class OAuthTestClient {
  constructor(private readonly base: string) {}

  /** Registers a public client for the authorization code and refresh grants: its client_id. */
  async register(name = 'E2E client', redirectUri = TEST_REDIRECT): Promise<string> {
    const response = await fetch(`${this.base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: name,
        redirect_uris: [redirectUri],
        grant_types: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_method: 'none',
      }),
    });
    if (response.status !== 201) throw new Error(`Registration answered ${response.status}: ${await response.text()}`);
    return ((await response.json()) as { client_id: string }).client_id;
  }

  /**
   * The authorization URL for `client` asking for `skills:read chats` on `/mcp` (to TEST_REDIRECT, S256 when `extra`
   * has a `code_challenge`); `extra` adds or replaces fields (`redirect_uri` for a client registered with another).
   */
  authorizeUrl(client: string, extra: Record<string, string>): string {
    const params = new URLSearchParams({
      response_type: 'code',
      client_id: client,
      redirect_uri: TEST_REDIRECT,
      scope: 'skills:read chats',
      state: 'st',
      code_challenge_method: 'S256',
      resource: `${this.base}/mcp`,
      ...extra,
    });
    if (extra.code_challenge === undefined) params.delete('code_challenge_method');
    if (extra.code_challenge_method !== undefined) params.set('code_challenge_method', extra.code_challenge_method);
    return `${this.base}/oauth/authorize?${params}`;
  }

  /** A form post to the token endpoint: its status and JSON body. */
  async tokenRequest(fields: Record<string, string>) {
    return this.formPost('/oauth/token', fields);
  }

  /** Revokes `token` at the revocation endpoint (RFC 7009), as the public client `client`. */
  async revoke(client: string, token: string, hint: 'access_token' | 'refresh_token') {
    return this.formPost('/oauth/revoke', { token, token_type_hint: hint, client_id: client });
  }

  /** A new client's whole flow, the person signing in with `apiKey` and consenting to `scope`: the tokens. */
  async tokens(apiKey: string, scope: string): Promise<IssuedTokens> {
    const clientId = await this.register();
    const { verifier, challenge } = pkcePair();
    const back = await new OAuthBrowser(this.base).authorize(
      this.authorizeUrl(clientId, { code_challenge: challenge, scope }),
      apiKey,
    );
    const code = URL.parse(back.url)?.searchParams.get('code');
    if (code === null || code === undefined) throw new Error(`The authorization gave no code: ${back.url}`);
    const answer = await this.tokenRequest({
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: TEST_REDIRECT,
      client_id: clientId,
      resource: `${this.base}/mcp`,
    });
    if (answer.status !== 200) throw new Error(`The token endpoint answered ${answer.status}: ${answer.text}`);
    return { ...(answer.body as unknown as Omit<IssuedTokens, 'clientId'>), clientId };
  }

  private async formPost(path: string, fields: Record<string, string>) {
    const response = await fetch(`${this.base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    });
    const text = await response.text();
    // The revocation endpoint answers 200 with an empty body.
    const body = (text === '' ? {} : JSON.parse(text)) as Record<string, string>;
    return { status: response.status, body, text };
  }
}
