import { execSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { DataSource } from 'typeorm';
import { UsersService } from '../../src/domain/users/users.service.js';
import { DATA_SOURCE } from '../../src/infra/database/persistence.tokens.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { tarGzOf } from '../support/skill-archives.js';
import { skillMd, tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { type Answer, rpcBody, type Send, send } from '../support/mcp-http.js';

/**
 * Hostile pass over what `/mcp` gives clients without the Skills extension (every agent today):
 * `read_skill_file`, `search_skills` (partial catalogue), the catalogue in `activate_team_skill`'s
 * description and in the server's instructions, `resources/list` paging, `prompts/get`, the 401
 * challenge, the OAuth probe routes, and session limits and idling. Each scenario is what a hostile
 * client or a careless operator would try; a skill outside the caller's view (another user's
 * personal skill, a disabled one, one their filter leaves out) must never show.
 * Bugs this pass found (fixed in the tree since) stay as regression tests, each with a `// Regression` line above.
 */

const INIT = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'hostile-agents', version: '1' } };

async function startWithUsers(
  tree: TempTree,
  overrides: Record<string, unknown>,
  users: [string, 'admin' | 'member'][],
) {
  const ctx = await startChatApp([tree.path('skills')], {
    'app.auth.mode': 'api_key',
    'app.skills.store_directory': tree.path(`store-${Math.random()}`),
    ...overrides,
  });
  const service = ctx.app.get(UsersService);
  const keys: Record<string, string> = {};
  for (const [name, role] of users)
    keys[name] = (await service.createKey((await service.createUser(name, role)).id)).key;
  await ctx.app.listen(0, '127.0.0.1');
  return { ctx, keys, base: `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}` };
}

/** For a block: the app with API keys over a tree `populate` fills, `overrides` on top; closed after the block. */
function useApp(
  populate: (tree: TempTree) => void,
  overrides: Record<string, unknown>,
  users: [string, 'admin' | 'member'][],
) {
  const app = {} as {
    tree: TempTree;
    ctx: ChatTestContext;
    base: string;
    keys: Record<string, string>;
    clients: Client[];
  };
  beforeAll(async () => {
    app.tree = tempTree();
    app.clients = [];
    populate(app.tree);
    Object.assign(app, await startWithUsers(app.tree, overrides, users));
  });
  afterAll(async () => {
    await Promise.allSettled((app.clients ?? []).map((client) => client.close()));
    await app.ctx?.close();
    app.tree?.cleanup();
  });
  return app;
}

async function connectClient(base: string, key: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name: 'hostile-agents', version: '1' }, { versionNegotiation: { mode: 'legacy' } });
  await client.connect(transport);
  return client;
}

/** Installs a personal skill `name` for the key's user through the REST API. */
async function installPersonal(
  base: string,
  key: string,
  name: string,
  description: string,
  files: Record<string, string> = {},
): Promise<void> {
  const archive = await tarGzOf({
    [`${name}/SKILL.md`]: skillMd({ name, description, body: `${name.toUpperCase()}-BODY-MARKER` }),
    ...Object.fromEntries(Object.entries(files).map(([path, text]) => [`${name}/${path}`, text])),
  });
  const answer = await send(base, 'POST', '/v1/skills', { key, body: archive.body, contentType: archive.contentType });
  expect(answer.status).toBe(201);
}

const toolText = (answer: Answer): string => answer.json?.result?.content?.[0]?.text ?? '';

describe('MCP tools, catalogue and probes, attacked (complete catalogue)', () => {
  const app = useApp(
    (tree) => {
      tree.write('outside/secret.md', 'TOP-SECRET-MARKER\n');
      writeSkill(tree, 'skills', 'alpha', { description: 'Alpha does things. Use for alpha.', body: 'ALPHA-BODY' });
      tree.write('skills/alpha/references/guide.md', 'GUIDE\n');
      tree.write('skills/alpha/references/%2e%2e', 'LITERAL-NAME\n');
      tree.write(
        'skills/alpha/assets/logo.png',
        Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00, 0xff, 0xfe]) as unknown as string,
      );
      tree.write('skills/alpha/references/huge.txt', `${'h'.repeat(5000)}HUGE-TAIL-MARKER`);
      symlinkSync(tree.path('outside/secret.md'), tree.path('skills/alpha/references/leak.md'));
      symlinkSync(tree.path('outside'), tree.path('skills/alpha/outdir'));
      execSync(`mkfifo '${tree.path('skills/alpha/references/pipe.md')}'`);
      writeSkill(tree, 'skills', 'beta', { description: 'Beta. Use for beta.' });
      tree.write(
        'skills/weird/SKILL.md',
        '---\nname: weird\ndescription: |\n  Line one <script>"quoted" & \'single\'</script>\n  line two\\ with ' +
          'a backslash. Use for weird.\n---\nWEIRD-BODY\n',
      );
      writeSkill(tree, 'skills', 'off', { description: 'Switched off. Use never.', body: 'OFF-BODY-MARKER' });
      tree.write('skills/off/notes.md', 'OFF-NOTES-MARKER\n');
      writeSkill(tree, 'skills', 'hidden', {
        description: 'Filtered out for bob. Use for hidden.',
        body: 'HIDDEN-BODY-MARKER',
      });
      tree.write('skills/hidden/notes.md', 'HIDDEN-NOTES-MARKER\n');
      tree.write(
        'outside/outlink/SKILL.md',
        '---\nname: outlink\ndescription: Its SKILL.md lives outside. Use never.\n---\nOUTSIDE-BODY-MARKER\n',
      );
      tree.write('skills/outlink/.keep', '');
      symlinkSync(tree.path('outside/outlink/SKILL.md'), tree.path('skills/outlink/SKILL.md'));
    },
    {
      'app.skills.validation': 'lenient',
      'app.skills.disabled': ['off'],
      'app.mcp.page_size': 2,
      'app.skills.max_resource_bytes': 1024,
    },
    [
      ['root', 'admin'],
      ['ann', 'member'],
      ['bob', 'member'],
    ],
  );

  beforeAll(async () => {
    await installPersonal(app.base, app.keys.ann, 'annsecret', 'Ann only. Use for ann things.', {
      'notes.md': 'ANN-NOTES-MARKER\n',
    });
    const filter = await send(app.base, 'PUT', '/v1/me/skills', {
      key: app.keys.bob,
      body: JSON.stringify({ exclude: ['hidden'] }),
    });
    expect(filter.status).toBe(200);
  });

  const rpc = (method: string, params?: unknown, user = 'ann', id: unknown = 1) =>
    send(app.base, 'POST', '/mcp', { key: app.keys[user], body: rpcBody(method, params, id) });
  const readFile = (args: unknown, user = 'ann') =>
    rpc('tools/call', { name: 'read_skill_file', arguments: args }, user);
  /** What must never reach bob: another user's personal skill, a disabled one, one his filter leaves out. */
  const NOT_BOBS = [
    'annsecret',
    'ANNSECRET-BODY',
    'ANN-NOTES',
    'Ann only',
    'OFF-',
    'Switched off',
    'HIDDEN-',
    'Filtered out for bob',
  ];

  describe('read_skill_file', () => {
    it(
      'refuses traversal, absolute, backslash, NUL, surrogate, empty and 100 000-character paths as error results ' +
        'naming the problem, without leaking or echoing host paths',
      async () => {
        const paths = [
          '..',
          '../beta/SKILL.md',
          '../../outside/secret.md',
          'references/../../../outside/secret.md',
          '/etc/passwd',
          `${app.tree.path('outside/secret.md')}`,
          '%2e%2e/%2e%2e/outside/secret.md',
          '..\\..\\outside\\secret.md',
          'references\\..\\..\\..\\outside\\secret.md',
          'references/guide.md\0.png',
          '\0',
          'references/\ud800.md',
          '\udfff',
          '',
          '   ',
          'C:\\Windows\\win.ini',
          '~/.ssh/id_rsa',
          'file:///etc/passwd',
          `${'a/'.repeat(50_000)}x`,
          'references/leak.md',
          'outdir/secret.md',
          'outdir',
          'references',
          '.',
          './',
          'references/pipe.md',
          'assets/logo.png',
        ];
        for (const path of paths) {
          const started = Date.now();
          const answer = await readFile({ name: 'alpha', path });
          const text = toolText(answer);
          expect({
            path: path.slice(0, 40),
            status: answer.status,
            isError: answer.json?.result?.isError,
            problem: /^(Error \([A-Z_]+\)|Invalid arguments)/.test(text),
          }).toEqual({ path: path.slice(0, 40), status: 200, isError: true, problem: true });
          expect({
            path: path.slice(0, 40),
            leaked: /MARKER|root:|TOP-SECRET/.test(answer.text),
            host: answer.text.includes(app.tree.root) && !path.includes(app.tree.root),
          }).toEqual({ path: path.slice(0, 40), leaked: false, host: false });
          expect(text.length).toBeLessThan(6000);
          expect(Date.now() - started).toBeLessThan(3000);
        }
        // A file whose name is literally `%2e%2e` is just a file.
        expect(toolText(await readFile({ name: 'alpha', path: 'references/%2e%2e' }))).toBe('LITERAL-NAME\n');
      },
    );

    it('cuts a file over max_resource_bytes with a notice, never sending it whole', async () => {
      const answer = await readFile({ name: 'alpha', path: 'references/huge.txt' });
      const text = toolText(answer);
      expect(answer.json.result.isError).toBeUndefined();
      expect(text).not.toContain('HUGE-TAIL-MARKER');
      expect(text.length).toBeLessThan(1024 + 500);
      expect(text).toMatch(/1024/);
    });

    it(
      "never reads another user's personal skill, a disabled skill, or one the caller's filter leaves out; the " +
        'owner still can',
      async () => {
        const cases: [string, string, string, RegExp][] = [
          ['bob', 'annsecret', 'notes.md', /SKILL_NOT_FOUND/],
          ['bob', 'annsecret', 'SKILL.md', /SKILL_NOT_FOUND/],
          ['bob', 'off', 'notes.md', /SKILL_DISABLED/],
          ['ann', 'off', 'notes.md', /SKILL_DISABLED/],
          ['bob', 'hidden', 'notes.md', /SKILL_NOT_FOUND/],
          ['bob', 'HIDDEN', 'notes.md', /SKILL_NOT_FOUND/],
          ['bob', ' hidden ', 'notes.md', /SKILL_NOT_FOUND/],
          ['bob', 'outlink', 'SKILL.md', /RESOURCE_|SKILL_/],
        ];
        for (const [user, name, path, code] of cases) {
          const answer = await readFile({ name, path }, user);
          expect({
            user,
            name,
            isError: answer.json.result.isError,
            code: code.test(toolText(answer)),
            leaked: /MARKER/.test(answer.text),
          }).toEqual({ user, name, isError: true, code: true, leaked: false });
          if (user === 'bob')
            for (const secret of ['annsecret', 'ANN-NOTES'])
              if (name !== 'annsecret') expect(answer.text).not.toContain(secret);
        }
        expect(toolText(await readFile({ name: 'annsecret', path: 'notes.md' }, 'ann'))).toBe('ANN-NOTES-MARKER\n');
        // A store skill's unpacked folder is a folder like any other: nothing above it is readable.
        for (const path of ['..', '../annsecret/notes.md', '../../../outside/secret.md'])
          expect(toolText(await readFile({ name: 'annsecret', path }, 'ann'))).toMatch(
            /^Error \(RESOURCE_(OUTSIDE_SKILL|NOT_FOUND)\)/,
          );
        expect(toolText(await readFile({ name: 'hidden', path: 'notes.md' }, 'ann'))).toBe('HIDDEN-NOTES-MARKER\n');
      },
    );

    it(
      'wrong argument types, missing or extra arguments are error results naming the argument; non-object ' +
        'arguments are -32602, never -32603',
      async () => {
        const bad: [unknown, RegExp][] = [
          [{ name: 5, path: 'SKILL.md' }, /name/],
          [{ name: 'alpha', path: 5 }, /path/],
          [{ name: 'alpha', path: ['references', 'guide.md'] }, /path/],
          [{ name: 'alpha', path: null }, /path/],
          [{ name: 'alpha', path: { toString: 'x' } }, /path/],
          [{ name: 'alpha' }, /path/],
          [{ path: 'references/guide.md' }, /name/],
          [{}, /name|path/],
          [{ name: 'alpha', path: 'references/guide.md', extra: true }, /extra/],
          [{ name: 'x'.repeat(100_000), path: 'SKILL.md' }, /name/],
        ];
        for (const [args, names] of bad) {
          const answer = await readFile(args);
          expect({
            args: JSON.stringify(args).slice(0, 60),
            status: answer.status,
            isError: answer.json?.result?.isError,
            names: names.test(toolText(answer)),
          }).toEqual({ args: JSON.stringify(args).slice(0, 60), status: 200, isError: true, names: true });
          expect(toolText(answer).length).toBeLessThan(5000);
        }
        for (const args of [['alpha', 'SKILL.md'], 'alpha', 5, true]) {
          const answer = await readFile(args);
          expect({ args, code: answer.json?.error?.code }).toEqual({ args, code: -32602 });
        }
        // A body with a __proto__ key is refused by the JSON parser before it reaches a tool.
        const polluted = await send(app.base, 'POST', '/mcp', {
          key: app.keys.ann,
          body:
            '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_skill_file","arguments":' +
            '{"__proto__":{"isError":false},"name":"alpha","path":"references/guide.md"}}}',
        });
        expect([polluted.status, polluted.json?.code]).toEqual([400, 'VALIDATION_FAILED']);
        expect(({} as Record<string, unknown>).isError).toBeUndefined();
      },
    );
  });

  describe('the catalogue a client is shown (everything fits)', () => {
    it("tools/list never names a skill outside the caller's view, and is the same bytes on every call", async () => {
      const first = await rpc('tools/list', {}, 'bob');
      const second = await rpc('tools/list', {}, 'bob');
      expect(first.text).toBe(second.text);
      const names = first.json.result.tools.map((tool: { name: string }) => tool.name);
      expect(names).toEqual(['activate_team_skill', 'read_skill_file']);
      for (const secret of NOT_BOBS)
        expect({ secret, found: first.text.includes(secret) }).toEqual({ secret, found: false });
      const annTools = await rpc('tools/list', {}, 'ann');
      expect(annTools.text).toContain('annsecret');
      expect(annTools.text).toContain('Filtered out for bob');
      expect(annTools.text).not.toContain('Switched off');
    });

    it(
      'a description with newlines, <, " and \\ is one catalogue line, the same in the tool and the ' + 'instructions',
      async () => {
        const client = await connectClient(app.base, app.keys.bob);
        app.clients.push(client);
        const { tools } = await client.listTools();
        const description = tools[0].description ?? '';
        const line = description.split('\n').find((entry) => entry.startsWith('- weird: '));
        expect(line).toBe(
          '- weird: Line one <script>"quoted" & \'single\'</script> line two\\ with a backslash. Use for weird.',
        );
        const instructions = client.getInstructions() ?? '';
        expect(instructions.split('\n')).toContain(line);
        for (const secret of NOT_BOBS)
          expect({ secret, found: instructions.includes(secret) }).toEqual({ secret, found: false });
        expect(instructions.split('\n')[0].length).toBeLessThan(240);
        expect(instructions.length).toBeLessThanOrEqual(4096);
      },
    );
  });

  describe('resources/list paging', () => {
    const pages = async (user: string) => {
      const uris: string[] = [];
      const cursors: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await rpc('resources/list', cursor === undefined ? {} : { cursor }, user);
        expect(page.json.error).toBeUndefined();
        uris.push(...page.json.result.resources.map((resource: { uri: string }) => resource.uri));
        cursor = page.json.result.nextCursor;
        if (cursor !== undefined) cursors.push(cursor);
      } while (cursor !== undefined);
      return { uris, cursors };
    };

    it(
      "pages through the caller's files only; garbled cursors are -32602; another user's cursor shows nothing of " +
        'theirs',
      async () => {
        const bob = await pages('bob');
        for (const secret of ['annsecret', 'skill://off', 'skill://hidden', 'leak.md', 'pipe.md', 'outdir', 'outlink'])
          expect({ secret, found: bob.uris.some((uri) => uri.includes(secret)) }).toEqual({ secret, found: false });
        expect(bob.uris).toContain('skill://alpha/references/guide.md');
        const ann = await pages('ann');
        expect(ann.uris).toContain('skill://annsecret/notes.md');
        for (const cursor of ['!!!', '', '====', 'x'.repeat(50_001), 'YQ==', '%00']) {
          const answer = await rpc('resources/list', { cursor }, 'bob');
          expect({ cursor: cursor.slice(0, 10), code: answer.json?.error?.code }).toEqual({
            cursor: cursor.slice(0, 10),
            code: -32602,
          });
        }
        for (const cursor of [5, null, {}, ['a']])
          expect((await rpc('resources/list', { cursor }, 'bob')).json?.error?.code).toBe(-32602);
        // Ann's cursors (and forged ones naming her skill) page bob's own view.
        for (const cursor of [
          ...ann.cursors,
          Buffer.from('annsecret').toString('base64url'),
          Buffer.from('a').toString('base64url'),
          Buffer.from('\uffff').toString('base64url'),
        ]) {
          const answer = await rpc('resources/list', { cursor }, 'bob');
          expect(answer.json.error).toBeUndefined();
          for (const secret of ['annsecret', 'skill://hidden', 'skill://off'])
            expect(answer.text).not.toContain(secret);
        }
      },
    );

    it('a skill removed between pages: the next page goes on after its name, without an error', async () => {
      const first = await rpc('resources/list', {}, 'ann');
      const cursor = first.json.result.nextCursor;
      expect(cursor).toEqual(expect.any(String));
      const removed = await send(app.base, 'PUT', '/v1/admin/skills/alpha/enabled', {
        key: app.keys.root,
        body: JSON.stringify({ enabled: false }),
      });
      expect(removed.status).toBe(200);
      try {
        const next = await rpc('resources/list', { cursor }, 'ann');
        expect(next.json.error).toBeUndefined();
        expect(next.text).not.toContain('skill://alpha/');
        expect(toolText(await readFile({ name: 'alpha', path: 'references/guide.md' }))).toMatch(/SKILL_DISABLED/);
      } finally {
        await send(app.base, 'PUT', '/v1/admin/skills/alpha/enabled', {
          key: app.keys.root,
          body: JSON.stringify({ enabled: true }),
        });
      }
    });
  });

  describe('prompts/get', () => {
    it(
      'the request argument: missing asks for one; odd or huge text is echoed as the user typed it; a non-string ' +
        'is -32602',
      async () => {
        const missing = await rpc('prompts/get', { name: 'alpha' });
        expect(missing.json.result.messages[0].content.text).toContain('Then ask me what to do with it');
        const empty = await rpc('prompts/get', { name: 'alpha', arguments: {} });
        expect(empty.json.result.messages[0].content.text).toContain('Then ask me what to do with it');
        for (const request of [
          '!`rm -rf ~` $1 $ARGUMENTS ${HOME}',
          '<script>"x"</script>',
          'line\r\nbreak',
          'r'.repeat(200_000),
        ]) {
          const answer = await rpc('prompts/get', { name: 'alpha', arguments: { request } });
          expect(answer.json.result.messages[0].content.text).toContain(request.trim());
          expect(answer.text).not.toContain('ALPHA-BODY');
        }
        for (const args of [
          { request: 5 },
          { request: null },
          { request: ['a'] },
          { request: { a: 1 } },
          'text',
          ['a'],
        ]) {
          expect({
            args,
            code: (await rpc('prompts/get', { name: 'alpha', arguments: args })).json?.error?.code,
          }).toEqual({ args, code: -32602 });
        }
      },
    );

    it(
      "an unknown, disabled, filtered-out, another user's or symlinked-out skill is -32602 without " + 'its text',
      async () => {
        for (const [name, user] of [
          ['nope', 'bob'],
          ['off', 'bob'],
          ['hidden', 'bob'],
          ['annsecret', 'bob'],
          ['outlink', 'ann'],
        ]) {
          const answer = await rpc('prompts/get', { name, arguments: { request: 'go' } }, user);
          expect({ name, code: answer.json?.error?.code, leaked: /MARKER/.test(answer.text) }).toEqual({
            name,
            code: -32602,
            leaked: false,
          });
        }
        const list = await rpc('prompts/list', {}, 'bob');
        for (const secret of NOT_BOBS) expect(list.text).not.toContain(secret);
      },
    );
  });

  describe('the 401 challenge', () => {
    it(
      'a disabled user gets a 401 with one valid WWW-Authenticate header; a name that could break it (quotes, ' +
        'CR/LF, non-ASCII) cannot be stored',
      async () => {
        const users = app.ctx.app.get(UsersService);
        const user = await users.createUser('z.o_e-1', 'member');
        const { key } = await users.createKey(user.id);
        const database = app.ctx.app.get<DataSource>(DATA_SOURCE);
        for (const name of ['zoë', 'a"b', 'a\\b', 'a\r\nInjected: yes', 'a b']) {
          await expect(database.query('UPDATE users SET name = $1 WHERE id = $2', [name, user.id])).rejects.toThrow(
            /ck_users_name/,
          );
        }
        expect(
          (
            await send(app.base, 'PATCH', `/v1/admin/users/${user.id}`, {
              key: app.keys.root,
              body: JSON.stringify({ disabled: true }),
            })
          ).status,
        ).toBe(200);
        for (const path of ['/mcp', '/v1/me']) {
          const answer = await send(app.base, path === '/mcp' ? 'POST' : 'GET', path, {
            key,
            ...(path === '/mcp' ? { body: rpcBody('tools/list', {}) } : {}),
          });
          expect({ path, status: answer.status }).toEqual({ path, status: 401 });
          const challenge = answer.headers.get('www-authenticate') ?? '';
          expect(challenge).toMatch(
            /^Bearer realm="skillhost", error="invalid_token", error_description="[\x20\x21\x23-\x5b\x5d-\x7e]*"$/,
          );
          expect(challenge).toContain("The user 'z.o_e-1' is disabled.");
        }
      },
    );

    it(
      'odd Authorization headers (huge, non-ASCII via x-api-key, many spaces) are 401 with a valid challenge, ' +
        'never 500',
      async () => {
        const variants: Record<string, string>[] = [
          { authorization: `Bearer skh_${'A'.repeat(8000)}` },
          { authorization: 'Bearer     ' },
          { authorization: 'Basic dXNlcjpwYXNz' },
          { authorization: 'bearer skh_nope' },
          { 'x-api-key': 'skh_ÿÿÿ' },
          { authorization: 'Bearer skh_a, Bearer skh_b' },
        ];
        for (const headers of variants) {
          const answer = await send(app.base, 'POST', '/mcp', { headers, body: rpcBody('tools/list', {}) });
          expect({ headers: Object.keys(headers), status: answer.status }).toEqual({
            headers: Object.keys(headers),
            status: 401,
          });
          expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer realm="skillhost"/);
        }
      },
    );
  });

  describe('OAuth probe routes', () => {
    const probes = [
      ['GET', '/.well-known/oauth-protected-resource'],
      ['GET', '/.well-known/oauth-protected-resource/mcp'],
      ['GET', '/.well-known/oauth-protected-resource/mcp/'],
      ['GET', '/.well-known/oauth-protected-resource?resource=x'],
      ['GET', '/.well-known/oauth-authorization-server'],
      ['GET', '/.well-known/oauth-authorization-server/'],
      ['GET', '/.well-known/oauth-authorization-server/mcp?x=%00'],
      ['GET', '/.well-known/openid-configuration'],
      ['GET', '/.well-known/openid-configuration/mcp'],
      ['GET', '/mcp/.well-known/openid-configuration'],
      ['GET', '/mcp/.well-known/oauth-authorization-server'],
      ['GET', '/authorize'],
      ['GET', '/authorize/'],
      [
        'GET',
        `/authorize?response_type=code&client_id=x&redirect_uri=${encodeURIComponent(
          'http://127.0.0.1:1/cb',
        )}&state=${'s'.repeat(4000)}`,
      ],
      ['POST', '/register'],
      ['POST', '/register/'],
      ['POST', '/token'],
      ['POST', '/token/'],
      ['POST', '/token?grant_type=x'],
    ] as const;

    // Regression, fixed since this pass found it. Was: OAUTH_PROBES (src/api/http/oauth-probes.controller.ts:24-26)
    // registers `authorize`, `register` and `token` without a trailing-slash form (the discovery routes have `/*`), so
    // `/authorize/`, `/register/` and `/token/` answered a bare ROUTE_NOT_FOUND, not the OAuth error naming API keys.
    it('every GET/POST variant answers 404 OAUTH_NOT_SUPPORTED as an OAuth error, with or without a key', async () => {
      const wrong: unknown[] = [];
      for (const [method, path] of probes) {
        for (const key of [undefined, app.keys.ann, 'skh_wrong']) {
          const answer = await send(app.base, method, path, {
            key,
            ...(method === 'POST'
              ? { body: JSON.stringify({ client_name: 'x', redirect_uris: ['http://127.0.0.1/cb'] }) }
              : {}),
          });
          const got = {
            method,
            path: path.slice(0, 60),
            key: key?.slice(0, 6),
            status: answer.status,
            code: answer.json?.code,
            error: answer.json?.error,
          };
          if (got.status !== 404 || got.code !== 'OAUTH_NOT_SUPPORTED' || got.error !== 'invalid_request')
            wrong.push(got);
        }
      }
      expect(wrong).toEqual([]);
    });

    it(
      'HEAD and OPTIONS are answered without a 500; a huge, form-encoded or broken body to /register or /token is ' +
        'never a 500',
      async () => {
        for (const [, path] of probes) {
          for (const method of ['HEAD', 'OPTIONS']) {
            const answer = await send(app.base, method, path);
            expect({ method, path: path.slice(0, 60), server: answer.status >= 500 }).toEqual({
              method,
              path: path.slice(0, 60),
              server: false,
            });
          }
        }
        const bodies: [string, Send][] = [
          ['/register', { body: JSON.stringify({ client_name: 'x'.repeat(3 * 1024 * 1024) }) }],
          ['/register', { body: '{"client_name":' }],
          ['/register', { body: `${'['.repeat(10_000)}${']'.repeat(10_000)}` }],
          ['/register', { body: 'client_name=x', contentType: 'application/x-www-form-urlencoded' }],
          [
            '/token',
            { body: 'grant_type=authorization_code&code=x', contentType: 'application/x-www-form-urlencoded' },
          ],
          ['/token', { body: 'x', contentType: 'text/plain' }],
          ['/token', { body: '' }],
        ];
        for (const [path, options] of bodies) {
          const answer = await send(app.base, 'POST', path, options);
          expect({ path, type: options.contentType, status: answer.status >= 500 ? answer.status : 'not 5xx' }).toEqual(
            {
              path,
              type: options.contentType,
              status: 'not 5xx',
            },
          );
          expect(answer.status).toBeGreaterThanOrEqual(400);
        }
        // Other methods on a probe route are the framework's 404, not a 500.
        for (const method of ['PUT', 'DELETE', 'PATCH'])
          expect((await send(app.base, method, '/register', { body: '{}' })).status).toBe(404);
      },
    );
  });
});

describe('MCP catalogue attacked: partial (catalogue_budget_tokens 120, instructions_max_chars 1024)', () => {
  const app = useApp(
    (tree) => {
      for (let i = 0; i < 30; i++)
        writeSkill(tree, 'skills', `s${String(i).padStart(2, '0')}`, {
          description: `Skill number ${i} about topic ${i}. ${'Long words here. '.repeat(6)}Use for topic ${i}.`,
        });
      writeSkill(tree, 'skills', 'aaa-off', { description: 'Switched off. Use for pdf invoices.' });
      writeSkill(tree, 'skills', 'aaa-hidden', { description: 'Filtered out for bob. Use for pdf invoices.' });
      writeSkill(tree, 'skills', 'pdf-tools', { description: 'Team pdf invoices. Use for pdf invoices.' });
    },
    {
      'app.skills.disabled': ['aaa-off'],
      'app.mcp.catalogue_budget_tokens': 120,
      'app.mcp.instructions_max_chars': 1024,
    },
    [
      ['root', 'admin'],
      ['ann', 'member'],
      ['bob', 'member'],
    ],
  );
  const NOT_BOBS = ['aaa-off', 'aaa-hidden', 'aaa-ann', 'Switched off', 'Filtered out for bob', 'Ann only'];

  beforeAll(async () => {
    await installPersonal(app.base, app.keys.ann, 'aaa-ann', 'Ann only pdf invoices. Use for pdf invoices.');
    expect(
      (
        await send(app.base, 'PUT', '/v1/me/skills', {
          key: app.keys.bob,
          body: JSON.stringify({ exclude: ['aaa-hidden'] }),
        })
      ).status,
    ).toBe(200);
  });

  const rpc = (method: string, params?: unknown, user = 'bob') =>
    send(app.base, 'POST', '/mcp', { key: app.keys[user], body: rpcBody(method, params) });
  const search = (args: unknown, user = 'bob') => rpc('tools/call', { name: 'search_skills', arguments: args }, user);

  it(
    'offers search_skills; the description, the enum and the instructions name nothing outside the caller view, ' +
      'whole entries only, within instructions_max_chars',
    async () => {
      const first = await rpc('tools/list', {});
      expect(first.text).toBe((await rpc('tools/list', {})).text);
      expect(first.json.result.tools.map((tool: { name: string }) => tool.name)).toEqual([
        'activate_team_skill',
        'read_skill_file',
        'search_skills',
      ]);
      for (const secret of NOT_BOBS)
        expect({ secret, found: first.text.includes(secret) }).toEqual({ secret, found: false });
      const description: string = first.json.result.tools[0].description;
      expect(description).toContain('search_skills');
      const client = await connectClient(app.base, app.keys.bob);
      app.clients.push(client);
      const instructions = client.getInstructions() ?? '';
      expect(instructions.length).toBeLessThanOrEqual(1024);
      expect(instructions.split('\n')[0].length).toBeLessThan(240);
      for (const secret of NOT_BOBS)
        expect({ secret, found: instructions.includes(secret) }).toEqual({ secret, found: false });
      // Every entry line of the instructions is a whole entry of the tool's description.
      const entries = instructions.split('\n').filter((line) => line.startsWith('- '));
      expect(entries.length).toBeGreaterThan(0);
      for (const entry of entries) expect(description.split('\n')).toContain(entry);
      expect(instructions).toMatch(/search_skills/);
    },
  );

  // Regression, fixed since this pass found it. Was: activateSkillTool (packages/core/src/tools/style-tools.ts:22)
  // names the chat's search tool in the partial catalogue's `name` parameter ("a name from the catalogue or from
  // skills_search"), a tool /mcp does not have (its is search_skills).
  it('every tool name the model reads in tools/list is one this server offers: no skills_search', async () => {
    const listed = await rpc('tools/list', {});
    const offered = listed.json.result.tools.map((tool: { name: string }) => tool.name);
    expect(listed.text).not.toContain('skills_search');
    expect(listed.json.result.tools[0].inputSchema.properties.name.description).toBe(
      'The skill to activate: a name from the catalogue or from search_skills.',
    );
    expect(offered).toContain('search_skills');
  });

  it('search_skills never returns a skill outside the caller view, whatever the query', async () => {
    for (const query of [
      'pdf invoices',
      'Switched off',
      'Filtered out for bob',
      'Ann only',
      'aaa',
      'aaa-ann',
      'aaa-off',
      'aaa-hidden',
    ]) {
      const answer = await search({ query, limit: 20 });
      expect(answer.json.result.isError).toBeUndefined();
      // No match echoes the query; a match is JSON whose results are the caller's skills.
      const text = toolText(answer);
      const found = text.startsWith('{') ? (JSON.parse(text).results as { name: string; description: string }[]) : [];
      for (const result of found)
        expect({
          query,
          name: result.name,
          secret: NOT_BOBS.some((secret) => `${result.name} ${result.description}`.includes(secret)),
        }).toEqual({ query, name: result.name, secret: false });
    }
    const ann = JSON.parse(toolText(await search({ query: 'pdf invoices', limit: 20 }, 'ann'))).results.map(
      (result: { name: string }) => result.name,
    );
    expect(ann).toContain('aaa-ann');
    expect(ann).not.toContain('aaa-off');
    // A skill search finds but the catalogue does not list is activated by name.
    const activated = await rpc('tools/call', { name: 'activate_team_skill', arguments: { name: 's29' } });
    expect(toolText(activated)).toContain('<skill_content name="s29">');
  });

  it('odd queries and limits are results or error results naming the argument, never -32603 or a crash', async () => {
    const fine = ['x', 'q'.repeat(400), '.*(', '\u0000', '\ud800', '🙂'.repeat(50), '<script>', '   pdf   '];
    for (const query of fine) {
      const answer = await search({ query });
      expect({ query: query.slice(0, 10), status: answer.status, error: answer.json?.error }).toEqual({
        query: query.slice(0, 10),
        status: 200,
        error: undefined,
      });
    }
    const bad: [unknown, RegExp][] = [
      [{ query: '' }, /query/],
      [{ query: '   ' }, /query/],
      [{ query: 'q'.repeat(100_000) }, /query/],
      [{ query: 5 }, /query/],
      [{}, /query/],
      [{ query: 'pdf', limit: 0 }, /limit/],
      [{ query: 'pdf', limit: -1 }, /limit/],
      [{ query: 'pdf', limit: 1e9 }, /limit/],
      [{ query: 'pdf', limit: '5' }, /limit/],
      [{ query: 'pdf', limit: 1.5 }, /limit/],
      [{ query: 'pdf', limit: null }, /limit/],
      [{ query: 'pdf', extra: 1 }, /extra/],
    ];
    for (const [args, names] of bad) {
      const answer = await search(args);
      const text = toolText(answer);
      expect({
        args: JSON.stringify(args).slice(0, 50),
        isError: answer.json?.result?.isError,
        names: names.test(text),
      }).toEqual({ args: JSON.stringify(args).slice(0, 50), isError: true, names: true });
      expect(text.length).toBeLessThan(5000);
    }
    const one = JSON.parse(toolText(await search({ query: 'pdf invoices', limit: 1 })));
    expect(one.results).toHaveLength(1);
    for (const args of [['pdf'], 'pdf']) expect((await search(args)).json?.error?.code).toBe(-32602);
  });
});

describe('MCP catalogue attacked: a budget no entry fits (catalogue_budget_tokens 1)', () => {
  const app = useApp(
    (tree) => {
      writeSkill(tree, 'skills', 'alpha', { description: 'Alpha. Use for alpha.' });
      writeSkill(tree, 'skills', 'beta', { description: 'Beta. Use for beta.' });
    },
    { 'app.mcp.catalogue_budget_tokens': 1 },
    [['ann', 'member']],
  );

  it('lists no entry, points to search_skills, and search finds the skills', async () => {
    const client = await connectClient(app.base, app.keys.ann);
    app.clients.push(client);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['activate_team_skill', 'read_skill_file', 'search_skills']);
    expect(tools[0].description).toContain('search_skills');
    const instructions = client.getInstructions() ?? '';
    expect(instructions).toContain('search_skills');
    expect(instructions.split('\n')[0].length).toBeLessThan(240);
    const found = await client.callTool({ name: 'search_skills', arguments: { query: 'alpha' } });
    expect((found.content as { text: string }[])[0].text).toContain('alpha');
  });
});

describe('MCP sessions attacked (max_sessions 3, 2 a user, session_idle_seconds 10)', () => {
  const app = useApp(
    (tree) => writeSkill(tree, 'skills', 'alpha', { description: 'Alpha. Use for alpha.' }),
    { 'app.mcp.max_sessions': 3, 'app.mcp.max_sessions_per_user': 2, 'app.mcp.session_idle_seconds': 10 },
    [
      ['root', 'admin'],
      ['ann', 'member'],
      ['bob', 'member'],
    ],
  );

  const openCount = async () => (await send(app.base, 'GET', '/v1/admin/mcp', { key: app.keys.root })).json.sessions;
  const initialize = (user: string) =>
    send(app.base, 'POST', '/mcp', { key: app.keys[user], body: rpcBody('initialize', INIT) });
  const closeAll = (user: string, sessions: (string | null)[]) =>
    Promise.all(
      sessions
        .filter((id): id is string => id !== null)
        .map((session) => send(app.base, 'DELETE', '/mcp', { key: app.keys[user], session })),
    );

  async function listen(
    user: string,
    session: string,
  ): Promise<{ response: Promise<Response>; abort: () => Promise<void> }> {
    await send(app.base, 'POST', '/mcp', {
      key: app.keys[user],
      session,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    const aborted = new AbortController();
    const response = fetch(`${app.base}/mcp`, {
      headers: { authorization: `Bearer ${app.keys[user]}`, accept: 'text/event-stream', 'mcp-session-id': session },
      signal: aborted.signal,
    });
    expect((await response).status).toBe(200);
    return {
      response,
      abort: async () => {
        aborted.abort();
        await response.catch(() => undefined);
      },
    };
  }

  it(
    'forty initializes with one key, in sequence and at once, never hold more than the user may; the last ones ' +
      'work',
    async () => {
      const ids: (string | null)[] = [];
      for (let i = 0; i < 20; i++) {
        const answer = await initialize('ann');
        expect(answer.status).toBe(200);
        ids.push(answer.headers.get('mcp-session-id'));
        expect(await openCount()).toBeLessThanOrEqual(2);
      }
      const burst = await Promise.all(Array.from({ length: 20 }, () => initialize('ann')));
      expect(burst.every((answer) => answer.status === 200)).toBe(true);
      ids.push(...burst.map((answer) => answer.headers.get('mcp-session-id')));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(await openCount()).toBeLessThanOrEqual(2);
      // Bob is not locked out by ann's flood.
      const bob = await initialize('bob');
      expect(bob.status).toBe(200);
      await closeAll('ann', ids);
      await closeAll('bob', [bob.headers.get('mcp-session-id')]);
      expect(await openCount()).toBe(0);
    },
  );

  it(
    'a notification stream the client dropped no longer counts as listening: that idle session makes room for ' +
      "another user's",
    async () => {
      const ann = (await initialize('ann')).headers.get('mcp-session-id')!;
      const dropped = await listen('ann', ann);
      await dropped.abort();
      await new Promise((resolve) => setTimeout(resolve, 300));
      const annSecond = (await initialize('ann')).headers.get('mcp-session-id')!;
      const annStream = await listen('ann', annSecond);
      const bob = (await initialize('bob')).headers.get('mcp-session-id')!;
      const bobStream = await listen('bob', bob);
      try {
        expect(await openCount()).toBe(3);
        // The instance is full; ann's first session has no stream open any more: it is the one to go.
        const bobSecond = await initialize('bob');
        expect([bobSecond.status, bobSecond.json?.code]).toEqual([200, undefined]);
        await closeAll('bob', [bobSecond.headers.get('mcp-session-id')]);
      } finally {
        await annStream.abort();
        await bobStream.abort();
        await closeAll('ann', [ann, annSecond]);
        await closeAll('bob', [bob]);
      }
    },
  );

  it('a session whose GET stream stays open but sends nothing is closed after session_idle_seconds, and its stream ' +
    'ends', async () => {
    const session = (await initialize('ann')).headers.get('mcp-session-id')!;
    const stream = await listen('ann', session);
    try {
      const ended = (await stream.response).body!.getReader();
      const done = (async () => {
        while (!(await ended.read()).done);
      })();
      const until = Date.now() + 20_000;
      let gone = false;
      while (!gone && Date.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        gone = (await openCount()) === 0;
      }
      expect(gone).toBe(true);
      const reused = await send(app.base, 'POST', '/mcp', {
        key: app.keys.ann,
        session,
        body: rpcBody('tools/list', {}),
      });
      expect([reused.status, reused.json.code]).toEqual([404, 'MCP_SESSION_NOT_FOUND']);
      let timer: NodeJS.Timeout | undefined;
      const finished = await Promise.race([
        done.then(
          () => true,
          () => true,
        ),
        new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 3000))),
      ]);
      clearTimeout(timer);
      expect(finished).toBe(true);
    } finally {
      await stream.abort();
    }
  }, 30_000);
});
