import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { freePort } from '../support/ports.js';

/**
 * The OAuth server's routes sit outside Nest's guards: its writes (registration, tokens, the sign-in and consent
 * forms) count against the client address's `requests_per_minute` there.
 */
describe('OAuth server writes are rate limited', () => {
  let ctx: ChatTestContext;
  let base: string;
  const LIMIT = 3;

  beforeAll(async () => {
    const port = await freePort();
    ctx = await startChatApp([], {
      'app.auth.mode': 'api_key',
      'app.auth.oauth.enabled': true,
      'app.port': port,
      'app.limits.requests_per_minute': LIMIT,
    });
    await ctx.app.listen(port, '127.0.0.1');
    base = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => ctx?.close());

  const register = () =>
    fetch(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: 'flood',
        redirect_uris: ['http://127.0.0.1:1/callback'],
        token_endpoint_auth_method: 'none',
      }),
    });

  // Regression, fixed since the OAuth work's own report found it. Was: /oauth/register and /oauth/token had no limit,
  // so one address could register clients without end.
  it('registrations past the limit get 429 with Retry-After and an OAuth error, and no client is stored', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT; i++) statuses.push((await register()).status);
    expect(statuses).toEqual(Array(LIMIT).fill(201));
    const refused = await register();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await refused.json()).toMatchObject({ error: 'rate_limited' });
    // Reads are not writes: discovery still answers.
    expect((await fetch(`${base}/.well-known/oauth-authorization-server`)).status).toBe(200);
  });
});
