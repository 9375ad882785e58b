import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { OAuthBrowser } from '../auth/oauth-browser.js';
import { keysFor } from '../support/api-keys.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { query } from '../support/database.js';
import { freePort } from '../support/ports.js';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { startOAuthLogin } from './oauth-login-run.js';
import { type CliResult, run } from './run-cli.js';

interface StoredOAuth {
  issuer: string;
  clientId: string;
  tokenEndpoint: string;
  revocationEndpoint: string;
  resource: string;
  accessToken: string;
  refreshToken: string;
  expiresAt: string;
  scope: string;
}

/**
 * `skillhost login --oauth` against a live Skillhost with its OAuth server on: the CLI registers itself, prints the
 * sign-in address and waits on a loopback port; the person (OAuthBrowser, over HTTP) signs in with an API key and
 * consents; the CLI stores the tokens, `sync` uses and refreshes them, `logout` revokes them. Then what goes wrong:
 * a forged answer on the loopback port, a declined consent, a timeout, a server without OAuth, an ended grant.
 */
describe('skillhost login --oauth', () => {
  let tree: TempTree;
  let ctx: ChatTestContext;
  let base: string;
  const keys: Record<string, string> = {};
  let n = 0;
  let xdg: string;
  const env = () => ({ XDG_CONFIG_HOME: xdg });
  const file = () => join(xdg, 'skillhost', 'credentials.json');
  const storedLogin = () => JSON.parse(readFileSync(file(), 'utf8')).servers[base] as { oauth: StoredOAuth };
  const sync = (extra: Record<string, string> = {}) =>
    run(['sync', '--server', base, '--dir', join(xdg, 'out')], tree.root, { ...env(), ...extra }, tree.path('home'));
  const me = async (token: string) => fetch(`${base}/v1/me`, { headers: { authorization: `Bearer ${token}` } });

  /** Starts `login --oauth --no-browser`; `address` is the sign-in URL once the CLI prints it. */
  const startLogin = (...args: string[]) =>
    startOAuthLogin(base, { cwd: tree.root, env: env(), home: tree.path('home') }, ...args);

  /** The person's browser: sign in with `user`'s key, consent (or deny), and follow the redirect to the CLI. */
  async function signIn(address: string, user: string, decision: 'confirm' | 'deny' = 'confirm') {
    const back = await new OAuthBrowser(base).authorize(address, keys[user], decision);
    expect(back.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback\?/);
    const landing = await fetch(back.url);
    return { status: landing.status, text: await landing.text(), callback: back.url };
  }

  async function loginAs(user: string): Promise<CliResult> {
    const { address, result } = startLogin();
    await signIn(await address, user);
    return result;
  }

  beforeAll(async () => {
    tree = tempTree();
    writeSkill(tree, 'skills', 'pdf', { description: 'Works with PDF files.' });
    const port = await freePort();
    ctx = await startChatApp([tree.path('skills')], {
      'app.auth.mode': 'api_key',
      'app.auth.oauth.enabled': true,
      'app.port': port,
      'app.skills.store_directory': tree.path('store'),
    });
    Object.assign(keys, await keysFor(ctx.app, { ann: 'member', root: 'admin' }));
    writeSkill(tree, 'to-publish', 'team-notes', {
      description: 'Keeps the team notes. Use when notes are asked for.',
    });
    await ctx.app.listen(port, '127.0.0.1');
    base = `http://127.0.0.1:${port}`;
  });
  beforeEach(() => {
    xdg = tree.path(`xdg-${++n}`);
  });
  afterAll(async () => {
    await ctx?.close();
    tree?.cleanup();
  });

  it('signs in through the consent page and stores a refreshable token (0600) that sync uses', async () => {
    const { address, result } = startLogin();
    const url = new URL(await address);
    // A native client (RFC 8252): PKCE S256, a loopback redirect URI on an ephemeral port, the /mcp resource.
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('redirect_uri')).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
    expect(url.searchParams.get('resource')).toBe(`${base}/mcp`);
    const landing = await signIn(url.href, 'ann');
    expect(landing).toMatchObject({ status: 200, text: expect.stringContaining('Signed in to Skillhost') });
    const done = await result;
    expect(done.code).toBe(0);
    // A member asked for every scope; the consent page granted what her role allows.
    expect(done.out).toMatch(
      new RegExp(`^Logged in to ${base} as 'ann' \\(member\\) with scopes (chats skills:read|skills:read chats);`),
    );
    const { oauth } = storedLogin();
    expect(oauth).toMatchObject({
      issuer: base,
      tokenEndpoint: `${base}/oauth/token`,
      revocationEndpoint: `${base}/oauth/revoke`,
      resource: `${base}/mcp`,
    });
    expect(storedLogin()).not.toHaveProperty('apiKey');
    expect(Date.parse(oauth.expiresAt)).toBeGreaterThan(Date.now());
    expect(statSync(file()).mode & 0o777).toBe(0o600);
    for (const secret of [oauth.accessToken, oauth.refreshToken])
      expect(`${done.out}${done.err}`).not.toContain(secret);
    // The client the CLI registered is a native one, named for this machine, with the loopback redirect URI.
    const [client] = await query<{ payload: { application_type: string; client_name: string } }>(
      ctx.db.url,
      "SELECT payload FROM oauth_artifacts WHERE model = 'Client' AND id = $1",
      [oauth.clientId],
    );
    expect(client.payload).toMatchObject({
      application_type: 'native',
      client_name: expect.stringMatching(/^skillhost CLI on /),
    });

    const synced = await sync();
    expect([synced.code, synced.err]).toEqual([0, '']);
    expect(synced.out).toMatch(/^add pdf sha256:/m);
  });

  it('sync refreshes an expiring token, storing the rotated refresh token; two at once keep the login', async () => {
    expect((await loginAs('ann')).code).toBe(0);
    const first = storedLogin().oauth;
    const expire = () => {
      const stored = JSON.parse(readFileSync(file(), 'utf8'));
      stored.servers[base].oauth.expiresAt = new Date(Date.now() + 1000).toISOString();
      writeFileSync(file(), JSON.stringify(stored), { mode: 0o600 });
    };
    expire();
    expect((await sync()).code).toBe(0);
    const second = storedLogin().oauth;
    expect(second.accessToken).not.toBe(first.accessToken);
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect(Date.parse(second.expiresAt)).toBeGreaterThan(Date.now() + 60_000);
    expect((await me(second.accessToken)).status).toBe(200);

    // The server takes a spent refresh token as a stolen one and ends the grant: two syncs refreshing at once must
    // not both spend the same one.
    expire();
    const both = await Promise.all([sync(), sync()]);
    expect(both.map((result) => [result.code, result.err])).toEqual([
      [0, ''],
      [0, ''],
    ]);
    const third = storedLogin().oauth;
    expect(third.refreshToken).not.toBe(second.refreshToken);
    expect((await me(third.accessToken)).status).toBe(200);
  });

  it('logout revokes the login on the server: its token is refused at once', async () => {
    expect((await loginAs('ann')).code).toBe(0);
    const { accessToken, refreshToken, clientId } = storedLogin().oauth;
    expect((await me(accessToken)).status).toBe(200);
    const out = await run(['logout', '--server', base], tree.root, env());
    expect(out).toMatchObject({ code: 0, err: '' });
    expect(out.out).toMatch(/^Logged out of http:\/\/127\.0\.0\.1:\d+: its token is revoked there and removed from /);
    expect(JSON.parse(readFileSync(file(), 'utf8')).servers).toEqual({});
    expect((await me(accessToken)).status).toBe(401);
    const refreshed = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId }),
    });
    expect(((await refreshed.json()) as { error: string }).error).toBe('invalid_grant');
  });

  it('a new login replaces the stored API key, and revokes the OAuth login it replaces', async () => {
    const keyLogin = await run(['login', '--server', base, '--key-env', 'KEY'], tree.root, {
      ...env(),
      KEY: keys.root,
    });
    expect(keyLogin.code).toBe(0);
    expect((await loginAs('ann')).code).toBe(0);
    const replaced = storedLogin().oauth.accessToken;
    expect(storedLogin()).not.toHaveProperty('apiKey');
    expect((await loginAs('ann')).code).toBe(0);
    expect((await me(replaced)).status).toBe(401);
    expect((await me(storedLogin().oauth.accessToken)).status).toBe(200);
  });

  it('a revoked grant makes sync say to log in again', async () => {
    expect((await loginAs('ann')).code).toBe(0);
    const grants = (await (
      await fetch(`${base}/v1/me/oauth-grants`, { headers: { authorization: `Bearer ${keys.ann}` } })
    ).json()) as {
      items: { grantId: string; clientId: string }[];
    };
    const grant = grants.items.find((item) => item.clientId === storedLogin().oauth.clientId)!;
    const revoked = await fetch(`${base}/v1/me/oauth-grants/${grant.grantId}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${keys.ann}` },
    });
    expect(revoked.status).toBe(204);
    const refused = await sync();
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/answered 401/);
    // Once the access token is due for refresh, the refresh is refused too, saying what to do.
    const stored = JSON.parse(readFileSync(file(), 'utf8'));
    stored.servers[base].oauth.expiresAt = new Date(Date.now() - 1000).toISOString();
    writeFileSync(file(), JSON.stringify(stored), { mode: 0o600 });
    const ended = await sync();
    expect(ended.code).toBe(1);
    expect(ended.err).toContain(`The login stored for ${base} has ended`);
    expect(ended.err).toContain(`skillhost login --server ${base}`);
  });

  describe('the store commands with --server, as the person logged in', () => {
    const store = (...args: string[]) => run([...args, '--server', base], tree.root, env(), tree.path('home'));

    it("an admin's token installs, lists, switches and removes a shared skill on the server", async () => {
      expect((await loginAs('root')).code).toBe(0);
      const installed = await store('install', tree.path('to-publish/team-notes'));
      expect(installed).toMatchObject({ code: 0, err: '' });
      expect(installed.out).toMatch(
        /^Installed shared skill 'team-notes' version 1 \(sha256:[0-9a-f]{64}, 1 file\(s\)\)\.$/,
      );
      const again = await store('install', tree.path('to-publish/team-notes'));
      expect(again.out).toMatch(/^Already installed: shared skill 'team-notes' version 1 /);
      const versions = await store('versions', 'team-notes', '--json');
      expect(JSON.parse(versions.out)).toMatchObject({
        name: 'team-notes',
        scope: 'shared',
        current: 1,
        versions: [{ version: 1, installedBy: 'root', fileCount: 1 }],
      });
      const catalogue = async () =>
        (
          (await (await fetch(`${base}/v1/skills`, { headers: { authorization: `Bearer ${keys.ann}` } })).json()) as {
            skills: { name: string }[];
          }
        ).skills.map((skill) => skill.name);
      expect(await catalogue()).toContain('team-notes');
      expect((await store('disable', 'team-notes')).out).toBe(`Switched skill 'team-notes' off on ${base}.`);
      expect(await catalogue()).not.toContain('team-notes');
      expect((await store('enable', 'team-notes')).code).toBe(0);
      expect(await catalogue()).toContain('team-notes');
      expect((await store('uninstall', 'team-notes')).out).toBe(`Uninstalled shared skill 'team-notes' on ${base}.`);
      expect(await catalogue()).not.toContain('team-notes');
      // The audit log names the person behind the token, not "the CLI".
      const audit = await query<{ action: string; actor: string }>(
        ctx.db.url,
        "SELECT action, actor_name AS actor FROM audit_log WHERE target = 'skill:team-notes' ORDER BY at, id",
      );
      expect(audit).toEqual([
        { action: 'skill.install', actor: 'root' },
        { action: 'skill.switch', actor: 'root' },
        { action: 'skill.switch', actor: 'root' },
        { action: 'skill.uninstall', actor: 'root' },
      ]);
    });

    it("a member's token may not touch shared skills, but installs a personal one", async () => {
      expect((await loginAs('ann')).code).toBe(0);
      const shared = await store('install', tree.path('to-publish/team-notes'));
      expect(shared.code).toBe(1);
      expect(shared.err).toMatch(/\/v1\/admin\/skills answered 403: FORBIDDEN: /);
      const disable = await store('disable', 'pdf');
      expect(disable.code).toBe(1);
      expect(disable.err).toContain('answered 403');
      const personal = await store('install', tree.path('to-publish/team-notes'), '--personal');
      expect(personal.out).toMatch(/^Installed your personal skill 'team-notes' version 1 /);
      const versions = await store('versions', 'team-notes', '--personal');
      expect(versions.out.split('\n')[0]).toMatch(/^VERSION\s+DIGEST\s+INSTALLED\s+BY\s+FILES\s+BYTES$/);
      expect(versions.out).toMatch(/^1 \*\s+sha256:/m);
      expect((await store('uninstall', 'team-notes', '--personal')).code).toBe(0);
    });

    it('a token granted skills:read only is refused writes, saying to log in granting more', async () => {
      const { address, result } = startLogin('--scope', 'skills:read');
      await signIn(await address, 'root');
      expect((await result).out).toContain('with scopes skills:read;');
      const refused = await store('install', tree.path('to-publish/team-notes'));
      expect(refused.code).toBe(1);
      expect(refused.err).toContain('answered 403: INSUFFICIENT_SCOPE: ');
      expect(refused.err).toContain(
        `Log in again granting the scope it needs (skillhost login --server ${base} --oauth)`,
      );
    });

    it('with nobody logged in, says to log in; --user and --config do not go with --server', async () => {
      const anonymous = await store('versions', 'pdf');
      expect(anonymous.code).toBe(1);
      expect(anonymous.err).toContain(`answered 401`);
      expect(anonymous.err).toContain(`Log in first (skillhost login --server ${base})`);
      const user = await store('versions', 'pdf', '--personal', '--user', 'ann');
      expect([user.code, user.err]).toEqual([
        2,
        expect.stringContaining("with --server a personal skill is the logged-in person's"),
      ]);
      const keyEnv = await run(['versions', 'pdf', '--key-env', 'X'], tree.root, env());
      expect([keyEnv.code, keyEnv.err]).toEqual([2, expect.stringContaining('--key-env goes with --server')]);
    });
  });

  describe('what goes wrong', () => {
    it('a forged answer on the loopback port is refused and the login goes on waiting for the real one', async () => {
      const { address, result } = startLogin();
      const redirectUri = new URL(await address).searchParams.get('redirect_uri')!;
      const forged = await fetch(`${redirectUri}?code=attacker-code&state=not-this-login`);
      expect(forged.status).toBe(400);
      expect(await forged.text()).toContain('not for the sign-in');
      const elsewhere = await fetch(new URL('/', redirectUri));
      expect(elsewhere.status).toBe(404);
      await signIn(await address, 'ann');
      expect((await result).code).toBe(0);
    });

    it("another client cannot revoke the CLI's tokens (RFC 7009: a client revokes its own only)", async () => {
      expect((await loginAs('ann')).code).toBe(0);
      const { accessToken, refreshToken } = storedLogin().oauth;
      const registered = await fetch(`${base}/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ redirect_uris: ['http://127.0.0.1:1/cb'], token_endpoint_auth_method: 'none' }),
      });
      const other = ((await registered.json()) as { client_id: string }).client_id;
      for (const token of [refreshToken, accessToken]) {
        const revoke = await fetch(`${base}/oauth/revoke`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token, client_id: other }),
        });
        expect(revoke.status).toBe(200);
      }
      expect((await me(accessToken)).status).toBe(200);
      expect((await sync()).code).toBe(0);
    });

    it('declining on the consent page stores nothing', async () => {
      const { address, result } = startLogin();
      const landing = await signIn(await address, 'ann', 'deny');
      expect(landing.status).toBe(400);
      const done = await result;
      expect(done.code).toBe(1);
      expect(done.err).toContain('The sign-in was declined on the consent page; nothing stored.');
      expect(() => readFileSync(file())).toThrow(/ENOENT/);
    });

    it('gives up after --timeout, storing nothing', async () => {
      const { result } = startLogin('--timeout', '1');
      const done = await result;
      expect(done.code).toBe(1);
      expect(done.err).toContain('No sign-in within 1 s; nothing stored.');
    });

    it('a code taken from the answer and replayed on the loopback port after the login is refused', async () => {
      const { address, result } = startLogin();
      const { callback } = await signIn(await address, 'ann');
      expect((await result).code).toBe(0);
      // The listener is gone with the login: nothing answers there any more.
      await expect(fetch(callback)).rejects.toThrow();
    });

    it('refuses bad options before anything happens', async () => {
      const both = await run(['login', '--server', base, '--oauth', '--with-key'], tree.root, env());
      expect([both.code, both.err]).toEqual([2, expect.stringContaining('--oauth signs in through the server')]);
      const scope = await run(['login', '--server', base, '--oauth', '--scope', 'a"b'], tree.root, env());
      expect([scope.code, scope.err]).toEqual([2, expect.stringContaining('--scope takes space-separated scopes')]);
      const plain = await run(['login', '--server', 'http://skills.example.com', '--oauth'], tree.root, env());
      expect([plain.code, plain.err]).toEqual([2, expect.stringContaining('--oauth needs an https server')]);
      const noBrowser = await run(['login', '--server', base, '--no-browser', '--with-key'], tree.root, env());
      expect([noBrowser.code, noBrowser.err]).toEqual([2, expect.stringContaining('--no-browser goes with --oauth')]);
    });
  });
});

describe('skillhost login --oauth against a server without OAuth', () => {
  let tree: TempTree;
  let ctx: ChatTestContext;
  let base: string;

  beforeAll(async () => {
    tree = tempTree();
    ctx = await startChatApp([], { 'app.auth.mode': 'api_key' });
    await ctx.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await ctx?.close();
    tree?.cleanup();
  });

  it('says OAuth is off there and how to log in with a key instead', async () => {
    const result = await run(['login', '--server', base, '--oauth', '--no-browser'], tree.root, {
      XDG_CONFIG_HOME: tree.path('xdg'),
    });
    expect(result.code).toBe(1);
    expect(result.err).toContain(`${base} offers no OAuth sign-in (it is off there): log in with an API key instead`);
  });
});
