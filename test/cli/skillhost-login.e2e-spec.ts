import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { CliInput } from '../../src/cli/cli-io.js';
import { UsersService } from '../../src/domain/users/users.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { type CliResult, run } from './run-cli.js';

const piped = (text: string): CliInput => Readable.from([Buffer.from(text)]);

/** `skillhost login` / `logout` against a live Skillhost, and `sync` with the key login stored. */
describe('skillhost login / logout', () => {
  let tree: TempTree;
  let ctx: ChatTestContext;
  let base: string;
  let devKey: string;
  let n = 0;
  /** A fresh configuration folder per test: what is stored in one does not leak into the next. */
  let xdg: string;
  const env = () => ({ XDG_CONFIG_HOME: xdg });
  const file = () => join(xdg, 'skillhost', 'credentials.json');
  const stored = () => JSON.parse(readFileSync(file(), 'utf8'));
  const login = (stdin: CliInput | undefined, extra: Record<string, string> = {}, ...args: string[]) =>
    run(['login', '--server', base, ...args], tree.root, { ...env(), ...extra }, tree.path('home'), stdin);
  const sync = (extra: Record<string, string> = {}) =>
    run(['sync', '--server', base, '--dir', join(xdg, 'out')], tree.root, { ...env(), ...extra }, tree.path('home'));
  const neverShowsKey = (...results: CliResult[]) => {
    for (const result of results) expect(`${result.out}\n${result.err}`).not.toContain(devKey);
  };

  beforeAll(async () => {
    tree = tempTree();
    writeSkill(tree, 'skills', 'pdf', { description: 'Works with PDF files.' });
    ctx = await startChatApp([tree.path('skills')], { 'app.auth.mode': 'api_key' });
    const users = ctx.app.get(UsersService);
    devKey = (await users.createKey((await users.createUser('dev', 'member')).id)).key;
    await ctx.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;
  });
  beforeEach(() => {
    xdg = tree.path(`xdg-${++n}`);
  });
  afterAll(async () => {
    await ctx?.close();
    tree?.cleanup();
  });

  it('stores a key from stdin the server takes, 0600 in a 0700 folder; sync uses it with no env', async () => {
    const unauthenticated = await sync();
    expect(unauthenticated.code).toBe(1);
    expect(unauthenticated.err).toMatch(/answered 401 .*skillhost login/);
    const loggedIn = await login(piped(`${devKey}\n`));
    expect(loggedIn).toMatchObject({ code: 0, err: '' });
    expect(loggedIn.out).toMatch(new RegExp(`^Logged in to ${base} as 'dev' \\(member\\); the key is stored in `));
    expect(stored()).toEqual({ version: 1, servers: { [base]: { apiKey: devKey } } });
    expect(statSync(file()).mode & 0o777).toBe(0o600);
    expect(statSync(join(xdg, 'skillhost')).mode & 0o777).toBe(0o700);
    expect(readdirSync(join(xdg, 'skillhost'))).toEqual(['credentials.json']);
    const synced = await sync();
    expect([synced.code, synced.err]).toEqual([0, '']);
    expect(synced.out).toMatch(/^add pdf sha256:/m);
    neverShowsKey(loggedIn, synced);
  });

  it('refuses a wrong key (401), storing nothing; SKILLHOST_API_KEY wins over a stored key', async () => {
    const wrong = await login(piped('sk_live_wrongwrongwrongwrongwrong\n'));
    expect(wrong.code).toBe(1);
    expect(wrong.err).toMatch(/refused this API key \(401: unknown, revoked or expired\); nothing stored/);
    expect(existsSync(file())).toBe(false);
    expect((await login(piped(devKey))).code).toBe(0);
    const envWins = await sync({ SKILLHOST_API_KEY: 'sk_live_wrongwrongwrongwrongwrong' });
    expect(envWins.code).toBe(1);
    expect(envWins.err).toMatch(/answered 401/);
    expect((await login(piped(''))).code).toBe(2);
    expect((await login(undefined)).code).toBe(2);
  });

  it('takes the key from --key-env, and stores under ~/.config when XDG_CONFIG_HOME is unset or relative', async () => {
    const home = tree.path(`home-${n}`);
    const result = await run(
      ['login', '--server', `${base}/`, '--key-env', 'MY_KEY'],
      tree.root,
      { MY_KEY: devKey, XDG_CONFIG_HOME: 'relative/dir' },
      home,
    );
    expect(result.code).toBe(0);
    const path = join(home, '.config', 'skillhost', 'credentials.json');
    expect(JSON.parse(readFileSync(path, 'utf8')).servers[base]).toEqual({ apiKey: devKey });
    const unset = await run(['login', '--server', base, '--key-env', 'NOT_SET'], tree.root, {}, home);
    expect(unset.code).toBe(2);
    expect(unset.err).toMatch(/--key-env NOT_SET: that variable is not set/);
  });

  it('reads a key typed at a terminal without echo (Backspace erases), with --with-key', async () => {
    const terminal = Object.assign(new PassThrough(), {
      isTTY: true,
      raw: [] as boolean[],
      setRawMode(this: { raw: boolean[] }, on: boolean) {
        this.raw.push(on);
      },
    });
    // At a terminal the default is the browser sign-in (OAuth); --with-key asks for a key instead.
    const pending = login(terminal, {}, '--with-key');
    terminal.write(`${devKey.slice(0, 5)}x\u007f`);
    terminal.write(`${devKey.slice(5)}\r`);
    const result = await pending;
    expect(result.code).toBe(0);
    expect(result.err).toMatch(/^API key for http:\/\/127\.0\.0\.1:\d+ \(not shown; Enter when done\):$/);
    expect(terminal.raw).toEqual([true, false]);
    expect(stored().servers[base].apiKey).toBe(devKey);
    neverShowsKey(result);
  });

  it('logs out: the entry is gone, other servers’ entries and unknown fields stay', async () => {
    expect((await login(piped(devKey))).code).toBe(0);
    // What a later skillhost (OIDC device login) may have written beside it.
    const other = { 'https://other.example': { accessToken: 'opaque', expiresAt: '2030-01-01T00:00:00Z' } };
    writeFileSync(file(), JSON.stringify({ ...stored(), servers: { ...stored().servers, ...other }, extra: 1 }));
    const out = await run(['logout', '--server', base], tree.root, env());
    expect(out.code).toBe(0);
    expect(out.out).toMatch(/^Logged out of http:\/\/127\.0\.0\.1:\d+: its key is removed from /);
    expect(stored()).toEqual({ version: 1, servers: other, extra: 1 });
    expect(statSync(file()).mode & 0o777).toBe(0o600);
    expect((await sync()).code).toBe(1);
    const again = await run(['logout', '--server', base], tree.root, env());
    expect(again).toMatchObject({ code: 0, out: expect.stringMatching(/^No login stored for /) });
  });

  it('refuses a credentials file others may read, or a symbolic link, saying why; nothing is overwritten', async () => {
    expect((await login(piped(devKey))).code).toBe(0);
    chmodSync(file(), 0o644);
    const open = await sync();
    expect(open.code).toBe(1);
    expect(open.err).toMatch(
      /Refusing to use the credentials file .*credentials\.json: its mode is 0644, so other users/,
    );
    expect(open.err).toMatch(/chmod 600/);
    expect((await login(piped(devKey))).code).toBe(1);
    expect(statSync(file()).mode & 0o777).toBe(0o644);
    // The environment's key needs no file: the unsafe one is not read at all.
    expect((await sync({ SKILLHOST_API_KEY: devKey })).code).toBe(0);

    const real = join(xdg, 'elsewhere.json');
    writeFileSync(real, readFileSync(file()), { mode: 0o600 });
    rmSync(file());
    symlinkSync(real, file());
    const linked = await sync();
    expect(linked.code).toBe(1);
    expect(linked.err).toMatch(/credentials\.json: it is a symbolic link/);
    // A FIFO would block a plain open until someone writes to it: opened without waiting, and refused.
    rmSync(file());
    execFileSync('mkfifo', ['-m', '600', file()]);
    const fifo = await sync();
    expect(fifo.code).toBe(1);
    expect(fifo.err).toMatch(/credentials\.json: it is not a regular file/);
    neverShowsKey(open, linked);
  });

  it('refuses a file that is not a credentials file without quoting it', async () => {
    expect((await login(piped(devKey))).code).toBe(0);
    writeFileSync(file(), `{"version": 1, "servers": {"${base}": {"apiKey": "${devKey}"}`, { mode: 0o600 });
    const broken = await sync();
    expect(broken.code).toBe(1);
    expect(broken.err).toMatch(/it is not valid JSON/);
    writeFileSync(file(), JSON.stringify({ version: 2, servers: {} }));
    expect((await sync()).err).toMatch(/it has version 2, which this skillhost does not know/);
    neverShowsKey(broken);
  });
});
