import { execSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { symlinkSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { UsersService } from '../../src/domain/users/users.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { type Answer, rpcBody, send } from '../support/mcp-http.js';

/**
 * Hostile pass over the MCP front door (`/mcp`, both protocol eras), the Agent Skills discovery
 * index (`/.well-known/agent-skills/...`) and `GET /v1/admin/mcp`:
 * - raw JSON-RPC bodies: wrong content types, non-JSON, 5 MB, deep nesting, missing Accept, odd ids, batches;
 * - sessions: DELETE then reuse, another user's session id, random ids, GET without a session, re-initialize;
 * - `skill://` URIs: traversal, %2F, %00, backslashes, query/fragment, empty segments, long URIs, non-canonical
 *   aliases;
 * - the files of a skill: symlinks leading outside (file, folder, SKILL.md), a FIFO, a dangling link, files changed
 *   after a listing;
 * - frontmatter the extension refuses (lenient mode), garbage cursors, bad tool and prompt arguments;
 * - catalogue scoping: `[app.skills] disabled`, a user's filter (PUT /v1/me/skills), over MCP and the index;
 * - operations: max_sessions (also under concurrent initializes), shutdown with open streams, app.mcp.enabled = false.
 * Bugs this pass found (fixed in the tree since) stay as regression tests, each with a `// Regression` line above.
 */

const INIT = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'hostile', version: '1' } };
const sha256 = (bytes: Uint8Array | string) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
const call = (client: Client, method: string, params: Record<string, unknown>) =>
  client.request({ method, params } as never, z.looseObject({}));

/** Whether `promise` settles within `ms`. */
async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  return Promise.race([
    promise.then(
      () => true,
      () => true,
    ),
    timeout,
  ]).finally(() => clearTimeout(timer));
}

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

/**
 * For a block: the app with API keys, one skill `alpha` in a temp tree, `overrides` on top, and
 * `users` with a key each; closed and removed after the block.
 */
function useMcpApp(overrides: Record<string, unknown>, users: [string, 'admin' | 'member'][]) {
  const app = {} as { tree: TempTree; ctx: ChatTestContext; base: string; keys: Record<string, string> };
  beforeAll(async () => {
    app.tree = tempTree();
    writeSkill(app.tree, 'skills', 'alpha', { description: 'Alpha. Use for alpha.' });
    Object.assign(app, await startWithUsers(app.tree, overrides, users));
  });
  afterAll(async () => {
    await app.ctx?.close();
    app.tree?.cleanup();
  });
  return app;
}

function connectClient(base: string, key: string, era: 'legacy' | 'auto', onChanged?: () => void): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  const client = new Client(
    { name: 'hostile', version: '1' },
    {
      versionNegotiation: { mode: era },
      ...(onChanged === undefined
        ? {}
        : { listChanged: { resources: { autoRefresh: false, debounceMs: 0, onChanged } } }),
    },
  );
  return client.connect(transport).then(() => client);
}

describe('MCP and the discovery index, attacked', () => {
  let tree: TempTree;
  let ctx: ChatTestContext;
  let base: string;
  let keys: Record<string, string>;
  const clients: Client[] = [];

  beforeAll(async () => {
    tree = tempTree();
    tree.write('outside/secret.md', 'TOP-SECRET-MARKER\n');
    tree.write('outside/folder/inner.md', 'OUTSIDE-FOLDER-MARKER\n');
    tree.write(
      'outside/outlink/SKILL.md',
      '---\nname: outlink\ndescription: Its SKILL.md lives outside. Use never.\n---\nOUTSIDE-BODY-MARKER\n',
    );
    writeSkill(tree, 'skills', 'alpha', { description: 'Alpha does things. Use for alpha.', body: 'ALPHA-BODY' });
    tree.write('skills/alpha/references/guide.md', 'GUIDE\n');
    symlinkSync(tree.path('skills/alpha/references/guide.md'), tree.path('skills/alpha/references/alias.md'));
    symlinkSync(tree.path('outside/secret.md'), tree.path('skills/alpha/references/leak.md'));
    symlinkSync('../../outside/secret.md', tree.path('skills/alpha/relative-leak.md'));
    symlinkSync(tree.path('outside/folder'), tree.path('skills/alpha/linkdir'));
    symlinkSync(tree.path('skills/alpha/missing.md'), tree.path('skills/alpha/gone.md'));
    execSync(`mkfifo '${tree.path('skills/alpha/pipe.txt')}'`);
    writeSkill(tree, 'skills', 'beta', { description: 'Beta changes on disk. Use for beta.' });
    tree.write('skills/beta/data.txt', 'AAAA\n');
    writeSkill(tree, 'skills', 'gamma', { description: 'Gamma changes on disk too. Use for gamma.' });
    tree.write('skills/gamma/data.txt', 'first\n');
    tree.write(
      'skills/meta/SKILL.md',
      '---\nname: meta\ndescription: Numeric metadata. Use never.\nmetadata:\n  version: 2\n---\nMETA-BODY\n',
    );
    writeSkill(tree, 'skills', 'long', { description: `Too long. ${'x'.repeat(1100)}` });
    writeSkill(tree, 'skills', 'off', { description: 'Switched off. Use never.', body: 'OFF-BODY' });
    writeSkill(tree, 'skills', 'hidden', { description: 'Filtered out for bob. Use for hidden.', body: 'HIDDEN-BODY' });
    tree.write('skills/outlink/.keep', '');
    symlinkSync(tree.path('outside/outlink/SKILL.md'), tree.path('skills/outlink/SKILL.md'));
    ({ ctx, keys, base } = await startWithUsers(
      tree,
      { 'app.skills.validation': 'lenient', 'app.skills.disabled': ['off'], 'app.mcp.page_size': 2 },
      [
        ['root', 'admin'],
        ['ann', 'member'],
        ['bob', 'member'],
      ],
    ));
    const filter = await send(base, 'PUT', '/v1/me/skills', {
      key: keys.bob,
      body: JSON.stringify({ exclude: ['hidden'] }),
    });
    expect(filter.status).toBe(200);
  });

  afterAll(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    await ctx?.close();
    tree?.cleanup();
  });

  /** One JSON-RPC request outside any session (answered statelessly), as `user`. */
  const rpc = (method: string, params?: unknown, user = 'ann', id: unknown = 1) =>
    send(base, 'POST', '/mcp', { key: keys[user], body: rpcBody(method, params, id) });
  const errorOf = (answer: Answer) => answer.json?.error?.code;
  const connect = async (user: string, era: 'legacy' | 'auto') => {
    const client = await connectClient(base, keys[user], era);
    clients.push(client);
    return client;
  };
  async function openSession(user: string): Promise<string> {
    const opened = await send(base, 'POST', '/mcp', { key: keys[user], body: rpcBody('initialize', INIT) });
    expect(opened.status).toBe(200);
    const session = opened.headers.get('mcp-session-id')!;
    const initialized = await send(base, 'POST', '/mcp', {
      key: keys[user],
      session,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    expect(initialized.status).toBe(202);
    return session;
  }

  describe('raw request bodies', () => {
    it(
      'refuses bodies that are not JSON before the SDK sees them: wrong or missing type, malformed, 5 MB, nested ' +
        '200 deep',
      async () => {
        const body = rpcBody('tools/list', {});
        const plain = await send(base, 'POST', '/mcp', { key: keys.ann, body, contentType: 'text/plain' });
        expect([plain.status, plain.json.code]).toEqual([415, 'UNSUPPORTED_MEDIA_TYPE']);
        const untyped = await send(base, 'POST', '/mcp', { key: keys.ann, body, contentType: null });
        expect(untyped.status).toBe(415);
        const form = await send(base, 'POST', '/mcp', {
          key: keys.ann,
          body: 'a=1',
          contentType: 'application/x-www-form-urlencoded',
        });
        expect(form.status).toBe(415);
        const latin = await send(base, 'POST', '/mcp', {
          key: keys.ann,
          body,
          contentType: 'application/json; charset=latin1',
        });
        expect(latin.status).toBe(415);
        const broken = await send(base, 'POST', '/mcp', { key: keys.ann, body: '{"jsonrpc":"2.0",' });
        expect([broken.status, broken.json.code]).toEqual([400, 'VALIDATION_FAILED']);
        const empty = await send(base, 'POST', '/mcp', { key: keys.ann, body: '' });
        expect(empty.status).toBeGreaterThanOrEqual(400);
        expect(empty.status).toBeLessThan(500);
        const huge = await send(base, 'POST', '/mcp', {
          key: keys.ann,
          body: rpcBody('tools/list', { pad: 'x'.repeat(5 * 1024 * 1024) }),
        });
        expect([huge.status, huge.json.code]).toEqual([413, 'PAYLOAD_TOO_LARGE']);
        const deep = await send(base, 'POST', '/mcp', {
          key: keys.ann,
          body: `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":${'{"a":'.repeat(200)}1${'}'.repeat(200)}}`,
        });
        expect([deep.status, deep.json.code]).toEqual([400, 'VALIDATION_FAILED']);
        // Still answering afterwards.
        expect((await rpc('tools/list', {})).json.result.tools).toHaveLength(2);
      },
    );

    it('answers 406 to a client that does not accept both JSON and an event stream', async () => {
      for (const accept of [null, 'application/json', 'text/event-stream', '*/*;q=0']) {
        const answer = await send(base, 'POST', '/mcp', { key: keys.ann, body: rpcBody('tools/list', {}), accept });
        expect(answer.status).toBe(406);
        expect(answer.json.error.code).toBe(-32000);
      }
    });

    it(
      'refuses ids JSON-RPC does not allow (null, object, fraction, 1e400) with 400 -32600, and echoes a 100 ' +
        '000-character string id',
      async () => {
        for (const id of ['null', '{"a":1}', '1.5', '1e400', '[1]', 'true']) {
          const answer = await send(base, 'POST', '/mcp', {
            key: keys.ann,
            body: `{"jsonrpc":"2.0","id":${id},"method":"tools/list","params":{}}`,
          });
          expect(answer.status).toBe(400);
          expect(answer.json.error.code).toBe(-32600);
        }
        const longId = 'i'.repeat(100_000);
        const echoed = await rpc('tools/list', {}, 'ann', longId);
        expect(echoed.status).toBe(200);
        expect(echoed.json.id).toBe(longId);
        const negative = await rpc('tools/list', {}, 'ann', -9007199254740991);
        expect(negative.json.id).toBe(-9007199254740991);
      },
    );

    it('answers each message of a batch (the SDK still accepts them); an empty batch is 400 -32600', async () => {
      const batch = await send(base, 'POST', '/mcp', {
        key: keys.ann,
        body: `[${rpcBody('tools/list', {}, 1)},${rpcBody('prompts/list', {}, 2)}]`,
      });
      expect(batch.status).toBe(200);
      expect(batch.messages.map((message) => message.id).sort()).toEqual([1, 2]);
      const empty = await send(base, 'POST', '/mcp', { key: keys.ann, body: '[]' });
      expect([empty.status, empty.json.error.code]).toEqual([400, -32600]);
    });

    it('answers an unknown method -32601 and an unknown HTTP method on /mcp 404', async () => {
      expect(errorOf(await rpc('nope/nope', {}))).toBe(-32601);
      expect(errorOf(await rpc('resources/subscribe', { uri: 'skill://alpha/SKILL.md' }))).toBe(-32601);
      const put = await send(base, 'PUT', '/mcp', { key: keys.ann });
      expect([put.status, put.json.code]).toEqual([404, 'ROUTE_NOT_FOUND']);
    });
  });

  describe('sessions', () => {
    it('a DELETEd session is gone: reusing it (POST, GET, DELETE) answers 404 MCP_SESSION_NOT_FOUND', async () => {
      const session = await openSession('ann');
      expect(
        (await send(base, 'POST', '/mcp', { key: keys.ann, session, body: rpcBody('tools/list', {}, 2) })).json.result
          .tools,
      ).toHaveLength(2);
      expect((await send(base, 'DELETE', '/mcp', { key: keys.ann, session })).status).toBe(200);
      for (const method of ['POST', 'GET', 'DELETE']) {
        const reused = await send(base, method, '/mcp', {
          key: keys.ann,
          session,
          ...(method === 'POST' ? { body: rpcBody('tools/list', {}, 3) } : {}),
        });
        expect([reused.status, reused.json.code]).toEqual([404, 'MCP_SESSION_NOT_FOUND']);
      }
    });

    it("another user cannot use, listen on or close ann's session; it keeps working for ann", async () => {
      const session = await openSession('ann');
      for (const method of ['POST', 'GET', 'DELETE']) {
        const stolen = await send(base, method, '/mcp', {
          key: keys.bob,
          session,
          ...(method === 'POST' ? { body: rpcBody('skills/list', {}, 2) } : {}),
        });
        expect([stolen.status, stolen.json.code]).toEqual([404, 'MCP_SESSION_NOT_FOUND']);
      }
      const still = await send(base, 'POST', '/mcp', { key: keys.ann, session, body: rpcBody('tools/list', {}, 4) });
      expect(still.json.result.tools).toHaveLength(2);
      expect((await send(base, 'DELETE', '/mcp', { key: keys.ann, session })).status).toBe(200);
    });

    it(
      'random or malformed session ids are 404; a GET stream or DELETE without a session is 405; re-initializing ' +
        'a session is 400',
      async () => {
        for (const session of ['nope', '00000000-0000-0000-0000-000000000000', 'x'.repeat(4000), '../../etc']) {
          const answer = await send(base, 'POST', '/mcp', { key: keys.ann, session, body: rpcBody('tools/list', {}) });
          expect([answer.status, answer.json.code]).toEqual([404, 'MCP_SESSION_NOT_FOUND']);
        }
        const stream = await send(base, 'GET', '/mcp', { key: keys.ann, accept: 'text/event-stream' });
        expect([stream.status, stream.json.error.code]).toEqual([405, -32000]);
        const close = await send(base, 'DELETE', '/mcp', { key: keys.ann });
        expect(close.status).toBe(405);
        const session = await openSession('ann');
        const again = await send(base, 'POST', '/mcp', {
          key: keys.ann,
          session,
          body: rpcBody('initialize', INIT, 9),
        });
        expect(again.status).toBe(400);
        expect(again.json.error.code).toBe(-32600);
        await send(base, 'DELETE', '/mcp', { key: keys.ann, session });
      },
    );
  });

  describe('skill:// URIs', () => {
    const refused = [
      'skill://alpha/../beta/SKILL.md',
      'skill://alpha/%2e%2e/%2e%2e/outside/secret.md',
      'skill://alpha/..%2F..%2Foutside/secret.md',
      'skill://alpha%2F..%2Fbeta/SKILL.md',
      'skill://alpha/SKILL.md%00',
      'skill://alpha\\SKILL.md',
      'skill://alpha/references\\guide.md',
      'skill://alpha/references%5Cguide.md',
      'skill://alpha/SKILL.md?raw=1',
      'skill://alpha/SKILL.md#top',
      'skill://alpha//SKILL.md',
      'skill://alpha/%C0%AE%C0%AE/SKILL.md',
      'skill://alpha/%FF',
      'skill://ALPHA/SKILL.md',
      'skill://alpha/skill.md',
      'skill://alpha/SKILL.md\u0301',
      'skill:///etc/passwd',
      'skill://',
      'file:///etc/passwd',
      `skill://alpha/${'a/'.repeat(100_000)}SKILL.md`,
    ];

    it(
      'refuses traversal, NUL, backslashes, query, fragment, empty segments, bad UTF-8, case and unicode variants ' +
        'and 200 kB URIs with -32602 on skills/get, resources/read and directory reads',
      async () => {
        for (const uri of refused) {
          for (const method of ['skills/get', 'resources/read', 'resources/directory/read']) {
            const answer = await rpc(method, { uri });
            expect({ uri: uri.slice(0, 60), method, status: answer.status, code: errorOf(answer) }).toEqual({
              uri: uri.slice(0, 60),
              method,
              status: 200,
              code: -32602,
            });
          }
        }
      },
    );

    it('an upper-case scheme names the same resource (RFC 3986): read at its canonical URI', async () => {
      const answer = await rpc('resources/read', { uri: 'SKILL://alpha/SKILL.md' });
      expect(answer.json.result.contents[0]).toMatchObject({
        uri: 'skill://alpha/SKILL.md',
        text: expect.stringContaining('ALPHA-BODY'),
      });
    });

    // Regression, fixed since this pass found it. Was: parseSkillUri (src/api/mcp/skill-uri.ts:26) strips trailing
    // slashes and decodes every segment, so skillAt accepts aliases; the SDK then finds the entry's URI differs from
    // the one asked for and answers -32603 InternalError.
    it(
      'skills/get with a non-canonical alias of a SKILL.md URI (trailing slash, %-encoded letters) answers ' +
        '-32602, not -32603',
      async () => {
        for (const uri of ['skill://alpha/SKILL.md/', 'skill://%61lpha/SKILL.md', 'skill://alpha/SKILL%2Emd']) {
          expect({ uri, code: errorOf(await rpc('skills/get', { uri })) }).toEqual({ uri, code: -32602 });
        }
      },
    );

    // Regression, fixed since this pass found it. Was: parseSkillUri (src/api/mcp/skill-uri.ts:26-27) decodes %2F
    // inside a segment into a path separator and drops trailing slashes, so resources/read serves files at URIs no
    // listing publishes (and no digest covers).
    it('resources/read serves a file only at its published URI: no %2F-joined or trailing-slash aliases', async () => {
      for (const uri of [
        'skill://alpha/references%2Fguide.md',
        'skill://alpha/SKILL.md/',
        'skill://alpha/references/guide.md//',
      ]) {
        expect({ uri, code: errorOf(await rpc('resources/read', { uri })) }).toEqual({ uri, code: -32602 });
      }
    });
  });

  describe("a skill folder's files", () => {
    it(
      'never lists or serves symlinks leading outside (file, relative, folder), a FIFO or a dangling link, over ' +
        'MCP, the index or activate_team_skill',
      async () => {
        const got = await rpc('skills/get', { uri: 'skill://alpha/SKILL.md' });
        const uris = got.json.result.skill.resources.map((resource: { uri: string }) => resource.uri).sort();
        // A link to a file inside the skill is a file of the skill.
        expect(uris).toEqual([
          'skill://alpha/SKILL.md',
          'skill://alpha/references/alias.md',
          'skill://alpha/references/guide.md',
        ]);
        const listed = await rpc('skills/list', {});
        const alpha = listed.json.result.skills.find(
          (skill: { uri: string }) => skill.uri === 'skill://alpha/SKILL.md',
        );
        expect(alpha.resources).toHaveLength(3);
        const root = await rpc('resources/directory/read', { uri: 'skill://alpha' });
        expect(root.json.result.resources.map((child: { name: string }) => child.name).sort()).toEqual([
          'SKILL.md',
          'references',
        ]);
        const references = await rpc('resources/directory/read', { uri: 'skill://alpha/references' });
        expect(references.json.result.resources.map((child: { name: string }) => child.name).sort()).toEqual([
          'alias.md',
          'guide.md',
        ]);
        for (const path of ['references/leak.md', 'relative-leak.md', 'linkdir/inner.md', 'pipe.txt', 'gone.md']) {
          const started = Date.now();
          const read = await rpc('resources/read', { uri: `skill://alpha/${path}` });
          expect({ path, code: errorOf(read), leaked: read.text.includes('MARKER') }).toEqual({
            path,
            code: -32602,
            leaked: false,
          });
          expect(Date.now() - started).toBeLessThan(2000);
          const file = await send(base, 'GET', `/.well-known/agent-skills/alpha/${path}`, { key: keys.ann });
          expect({ path, status: file.status, code: file.json?.code }).toEqual({
            path,
            status: 404,
            code: 'RESOURCE_NOT_FOUND',
          });
        }
        expect(errorOf(await rpc('resources/directory/read', { uri: 'skill://alpha/linkdir' }))).toBe(-32602);
        const index = await send(base, 'GET', '/.well-known/agent-skills/index.json', { key: keys.ann });
        const entry = index.json.skills.find((skill: { name: string }) => skill.name === 'alpha');
        expect(entry.files.map((file: { path: string }) => file.path)).toEqual([
          'SKILL.md',
          'references/alias.md',
          'references/guide.md',
        ]);
        const alias = await send(base, 'GET', '/.well-known/agent-skills/alpha/references/alias.md', { key: keys.ann });
        expect([alias.status, alias.text]).toEqual([200, 'GUIDE\n']);
        const activated = await rpc('tools/call', { name: 'activate_team_skill', arguments: { name: 'alpha' } });
        const text: string = activated.json.result.content[0].text;
        expect(text).toContain('ALPHA-BODY');
        for (const hidden of ['leak.md', 'relative-leak.md', 'linkdir', 'pipe.txt', 'gone.md', 'MARKER'])
          expect(text).not.toContain(hidden);
      },
    );

    it(
      'leaves out a skill whose SKILL.md is a symlink leading outside its folder, and says so in the ' + 'admin report',
      async () => {
        expect(errorOf(await rpc('skills/get', { uri: 'skill://outlink/SKILL.md' }))).toBe(-32602);
        const read = await rpc('resources/read', { uri: 'skill://outlink/SKILL.md' });
        expect([errorOf(read), read.text.includes('OUTSIDE-BODY-MARKER')]).toEqual([-32602, false]);
        const file = await send(base, 'GET', '/.well-known/agent-skills/outlink/SKILL.md', { key: keys.ann });
        expect([file.status, file.text.includes('OUTSIDE-BODY-MARKER')]).toEqual([404, false]);
        const report = await send(base, 'GET', '/v1/admin/mcp', { key: keys.root });
        expect(report.json.leftOut).toContainEqual({ name: 'outlink', owner: null, reason: expect.any(String) });
      },
    );

    // Regression, fixed since this pass found it. Was: activation reads skill.skillFile as is
    // (packages/core/src/registry/skill-resources.ts:279, no resolveInside), so activate_skill and prompts/get over
    // /mcp serve a SKILL.md symlinked outside the folder that skills/get, resources/read and the index refuse.
    it(
      'activate_team_skill and prompts/get never serve a SKILL.md that is a symlink leading outside ' + 'its folder',
      async () => {
        const tool = await rpc('tools/call', { name: 'activate_team_skill', arguments: { name: 'outlink' } });
        const prompt = await rpc('prompts/get', { name: 'outlink' });
        expect([tool.text.includes('OUTSIDE-BODY-MARKER'), prompt.text.includes('OUTSIDE-BODY-MARKER')]).toEqual([
          false,
          false,
        ]);
        expect([tool.json.result?.isError, errorOf(prompt)]).toEqual([true, -32602]);
      },
    );

    it(
      'a file changed after the listing: skills/get gives the new digest, and resources/read and the index file ' +
        'route serve bytes matching it',
      async () => {
        const before = await rpc('skills/get', { uri: 'skill://beta/SKILL.md' });
        const digestOf = (answer: Answer, uri: string) =>
          answer.json.result.skill.resources.find((resource: { uri: string }) => resource.uri === uri);
        expect(digestOf(before, 'skill://beta/data.txt')).toMatchObject({ digest: sha256('AAAA\n'), size: 5 });
        // Same size, so only the times and content differ.
        tree.write('skills/beta/data.txt', 'BBBB\n');
        tree.write(
          'skills/beta/SKILL.md',
          '---\nname: beta\ndescription: Beta changed on disk. Use for beta.\n---\nNEW-BETA-BODY\n',
        );
        await settleRecheck();
        const after = await rpc('skills/get', { uri: 'skill://beta/SKILL.md' });
        expect(after.json.result.skill.frontmatter.description).toBe('Beta changed on disk. Use for beta.');
        const data = digestOf(after, 'skill://beta/data.txt');
        expect(data).toEqual({ uri: 'skill://beta/data.txt', digest: sha256('BBBB\n'), size: 5 });
        const read = await rpc('resources/read', { uri: 'skill://beta/data.txt' });
        expect(sha256(read.json.result.contents[0].text)).toBe(data.digest);
        const skillMd = await rpc('resources/read', { uri: 'skill://beta/SKILL.md' });
        expect(sha256(skillMd.json.result.contents[0].text)).toBe(digestOf(after, 'skill://beta/SKILL.md').digest);
        const file = await send(base, 'GET', '/.well-known/agent-skills/beta/data.txt', { key: keys.ann });
        expect([file.status, file.text, file.headers.get('etag')]).toEqual([200, 'BBBB\n', `"${data.digest}"`]);
        // A file removed after the listing is no resource any more.
        tree.write('skills/beta/extra.md', 'EXTRA\n');
        await settleRecheck();
        expect(
          digestOf(await rpc('skills/get', { uri: 'skill://beta/SKILL.md' }), 'skill://beta/extra.md'),
        ).toBeDefined();
        execSync(`rm '${tree.path('skills/beta/extra.md')}'`);
        expect(errorOf(await rpc('resources/read', { uri: 'skill://beta/extra.md' }))).toBe(-32602);
      },
    );

    // Regression, fixed since this pass found it. Was: index.json lists the manifests of the last scan
    // (agent-skills-index.controller.ts:37, published.all → publish(record) without `fresh`) while the file route
    // re-reads the disk (publish(record, true)): after an edit on disk, the index's digest does not match the bytes it
    // points to, so a verifying client rejects the file.
    it(
      'a file changed on disk: its url serves the new bytes with their digest as ETag, the server rescans, and ' +
        'index.json then lists that digest',
      async () => {
        tree.write('skills/gamma/data.txt', 'second, longer\n');
        await settleRecheck();
        const index = await send(base, 'GET', '/.well-known/agent-skills/index.json', { key: keys.ann });
        const listedOf = (answer: Answer) =>
          answer.json.skills
            .find((skill: { name: string }) => skill.name === 'gamma')
            .files.find((file: { path: string }) => file.path === 'data.txt');
        const file = await send(base, 'GET', listedOf(index).url, { key: keys.ann });
        expect([file.status, file.text, file.headers.get('etag')]).toEqual([
          200,
          'second, longer\n',
          `"${sha256('second, longer\n')}"`,
        ]);
        const until = Date.now() + 5000;
        let listed = listedOf(index);
        while (listed.digest !== sha256(file.text) && Date.now() < until) {
          await new Promise((resolve) => setTimeout(resolve, 100));
          listed = listedOf(await send(base, 'GET', '/.well-known/agent-skills/index.json', { key: keys.ann }));
        }
        expect({ digest: listed.digest, size: listed.size }).toEqual({
          digest: sha256(file.text),
          size: Buffer.byteLength(file.text),
        });
      },
    );
  });

  describe('frontmatter the extension refuses (lenient validation)', () => {
    it(
      'a non-string metadata value and a description over 1024 characters are left out of skills/list, ' +
        'skills/get, reads and the index, and reported to admins',
      async () => {
        const names: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await rpc('skills/list', cursor === undefined ? {} : { cursor });
          names.push(
            ...page.json.result.skills.map((skill: { frontmatter: { name: string } }) => skill.frontmatter.name),
          );
          cursor = page.json.result.nextCursor;
        } while (cursor !== undefined);
        expect(names).toEqual(['alpha', 'beta', 'gamma', 'hidden']);
        for (const name of ['meta', 'long']) {
          expect(errorOf(await rpc('skills/get', { uri: `skill://${name}/SKILL.md` }))).toBe(-32602);
          expect(errorOf(await rpc('resources/read', { uri: `skill://${name}/SKILL.md` }))).toBe(-32602);
          expect(errorOf(await rpc('resources/directory/read', { uri: `skill://${name}` }))).toBe(-32602);
          expect(
            (await send(base, 'GET', `/.well-known/agent-skills/${name}/SKILL.md`, { key: keys.ann })).status,
          ).toBe(404);
        }
        const index = await send(base, 'GET', '/.well-known/agent-skills/index.json', { key: keys.ann });
        expect(index.json.skills.map((skill: { name: string }) => skill.name)).toEqual([
          'alpha',
          'beta',
          'gamma',
          'hidden',
        ]);
        expect((await send(base, 'GET', '/v1/admin/mcp', { key: keys.ann })).status).toBe(403);
        const report = await send(base, 'GET', '/v1/admin/mcp', { key: keys.root });
        expect(report.json.leftOut).toEqual(
          expect.arrayContaining([
            { name: 'meta', owner: null, reason: expect.stringMatching(/refuses it: .*metadata/) },
            { name: 'long', owner: null, reason: expect.stringMatching(/refuses it: .*description/) },
          ]),
        );
        expect(report.json.published).toBe(report.json.skills - report.json.leftOut.length);
      },
    );
  });

  describe('cursors and arguments', () => {
    it('garbage string cursors are -32602 on skills/list, prompts/list and resources/directory/read', async () => {
      const offset = (value: string) => Buffer.from(value).toString('base64url');
      for (const cursor of ['!!!', 'zzzz', '', '====', 'x'.repeat(50_001), '%00', 'YQ==']) {
        for (const method of ['skills/list', 'prompts/list'])
          expect({ method, cursor: cursor.slice(0, 9), code: errorOf(await rpc(method, { cursor })) }).toEqual({
            method,
            cursor: cursor.slice(0, 9),
            code: -32602,
          });
      }
      // Directory pages are offsets: a well-formed cursor that is no offset is refused too.
      for (const cursor of [
        '!!!',
        '',
        offset('-1'),
        offset('Infinity'),
        offset('1.5'),
        offset('abc'),
        offset('9'.repeat(30)),
      ]) {
        expect({
          cursor,
          code: errorOf(await rpc('resources/directory/read', { uri: 'skill://alpha', cursor })),
        }).toEqual({ cursor, code: -32602 });
      }
      // Non-string cursors, where the extension's schema checks them.
      for (const cursor of [5, null, {}, ['a']]) {
        expect(errorOf(await rpc('skills/list', { cursor }))).toBe(-32602);
        expect(errorOf(await rpc('resources/directory/read', { uri: 'skill://alpha', cursor }))).toBe(-32602);
      }
    });

    it('garbage cursors are -32602 for a 2026-07-28 client too', async () => {
      const client = await connect('ann', 'auto');
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      await expect(call(client, 'skills/list', { cursor: '!!!' })).rejects.toMatchObject({ code: -32602 });
      await expect(call(client, 'prompts/list', { cursor: 'zzzz' })).rejects.toMatchObject({ code: -32602 });
      await expect(
        call(client, 'resources/directory/read', { uri: 'skill://alpha', cursor: '!!!' }),
      ).rejects.toMatchObject({ code: -32602 });
      await expect(call(client, 'skills/get', { uri: 'skill://alpha/%00' })).rejects.toMatchObject({ code: -32602 });
    });

    // Regression, fixed since this pass found it. Was: prompts/list and prompts/get are registered with the SDK's
    // 2-argument setRequestHandler (src/api/mcp/mcp-server.factory.ts:124,137), whose request-schema failure is a plain
    // Error (SDK src-*.mjs setRequestHandler), i.e. -32603 InternalError.
    it('wrongly typed prompts/list and prompts/get params are -32602 (invalid params), not -32603', async () => {
      expect(errorOf(await rpc('prompts/list', { cursor: 5 }))).toBe(-32602);
      expect(errorOf(await rpc('prompts/get', { name: 5 }))).toBe(-32602);
      expect(errorOf(await rpc('prompts/get', { name: 'alpha', arguments: { request: 7 } }))).toBe(-32602);
    });

    it(
      'activate_team_skill with wrong types or extra arguments is an error result naming the problem; a ' +
        'non-object is -32602; an unknown tool -32602',
      async () => {
        for (const args of [
          { name: 5 },
          { name: ['alpha'] },
          { name: 'alpha', extra: true },
          {},
          { name: 'off' },
          { name: 'nope' },
          { name: 'x'.repeat(100_000) },
        ]) {
          const answer = await rpc('tools/call', { name: 'activate_team_skill', arguments: args });
          expect(answer.json.result.isError).toBe(true);
          expect(answer.json.result.content[0].text).toMatch(/Invalid arguments for activate_team_skill/);
          expect(answer.json.result.content[0].text.length).toBeLessThan(5000);
        }
        for (const args of [['alpha'], 'alpha', 5])
          expect(errorOf(await rpc('tools/call', { name: 'activate_team_skill', arguments: args }))).toBe(-32602);
        expect(errorOf(await rpc('tools/call', { name: 'run_script', arguments: {} }))).toBe(-32602);
        expect(errorOf(await rpc('tools/call', { name: '__proto__', arguments: {} }))).toBe(-32602);
      },
    );

    it('prompts/get for unknown, disabled, odd names is -32602 without echoing host paths', async () => {
      for (const name of ['nope', 'off', '', '../alpha', 'ALPHA', 'constructor', '__proto__', 'x'.repeat(10_000)]) {
        const answer = await rpc('prompts/get', { name });
        expect({ name: name.slice(0, 20), code: errorOf(answer) }).toEqual({ name: name.slice(0, 20), code: -32602 });
        expect(answer.text).not.toContain(tree.root);
      }
    });
  });

  describe("a user's catalogue", () => {
    it(
      'a disabled skill is in no listing and readable nowhere: skills/list, get, read, prompts, the tool enum, ' +
        'the index',
      async () => {
        for (const era of ['legacy', 'auto'] as const) {
          const client = await connect('ann', era);
          const listed = (await call(client, 'skills/list', {})) as { skills: { uri: string }[]; nextCursor?: string };
          expect(JSON.stringify(listed)).not.toContain('skill://off');
          await expect(call(client, 'skills/get', { uri: 'skill://off/SKILL.md' })).rejects.toMatchObject({
            code: -32602,
          });
          await expect(client.readResource({ uri: 'skill://off/SKILL.md' })).rejects.toMatchObject({ code: -32602 });
          await expect(client.getPrompt({ name: 'off' })).rejects.toMatchObject({ code: -32602 });
          const { tools } = await client.listTools();
          expect((tools[0].inputSchema.properties as { name: { enum: string[] } }).name.enum).not.toContain('off');
          const resources = await client.listResources();
          expect(resources.resources.map((resource) => resource.uri)).not.toContain('skill://off/SKILL.md');
        }
        const index = await send(base, 'GET', '/.well-known/agent-skills/index.json', { key: keys.ann });
        expect(index.text).not.toContain('"off"');
        const file = await send(base, 'GET', '/.well-known/agent-skills/off/SKILL.md', { key: keys.ann });
        expect([file.status, file.json.code, file.text.includes('OFF-BODY')]).toEqual([403, 'SKILL_DISABLED', false]);
      },
    );

    it(
      "a skill bob's filter excludes is out of his index and his MCP catalogue (both eras), and " + "still in ann's",
      async () => {
        const bobIndex = await send(base, 'GET', '/.well-known/agent-skills/index.json', { key: keys.bob });
        expect(bobIndex.json.skills.map((skill: { name: string }) => skill.name)).toEqual(['alpha', 'beta', 'gamma']);
        const annIndex = await send(base, 'GET', '/.well-known/agent-skills/index.json', { key: keys.ann });
        expect(annIndex.json.skills.map((skill: { name: string }) => skill.name)).toContain('hidden');
        const file = await send(base, 'GET', '/.well-known/agent-skills/hidden/SKILL.md', { key: keys.bob });
        expect([file.status, file.json.code, file.text.includes('HIDDEN-BODY')]).toEqual([
          404,
          'SKILL_NOT_FOUND',
          false,
        ]);
        for (const era of ['legacy', 'auto'] as const) {
          const client = await connect('bob', era);
          expect(JSON.stringify(await call(client, 'skills/list', {}))).not.toContain('skill://hidden');
          await expect(call(client, 'skills/get', { uri: 'skill://hidden/SKILL.md' })).rejects.toMatchObject({
            code: -32602,
          });
          await expect(client.readResource({ uri: 'skill://hidden/SKILL.md' })).rejects.toMatchObject({ code: -32602 });
          await expect(call(client, 'resources/directory/read', { uri: 'skill://hidden' })).rejects.toMatchObject({
            code: -32602,
          });
          await expect(client.getPrompt({ name: 'hidden' })).rejects.toMatchObject({ code: -32602 });
          const refused = await client.callTool({ name: 'activate_team_skill', arguments: { name: 'hidden' } });
          expect(refused.isError).toBe(true);
          expect(JSON.stringify(refused)).not.toContain('HIDDEN-BODY');
        }
        const annRead = await rpc('resources/read', { uri: 'skill://hidden/SKILL.md' }, 'ann');
        expect(annRead.json.result.contents[0].text).toContain('HIDDEN-BODY');
      },
    );
  });
});

describe('MCP sessions: limits and shutdown (max_sessions 3, 2 a user)', () => {
  const app = useMcpApp({ 'app.mcp.max_sessions': 3, 'app.mcp.max_sessions_per_user': 2 }, [
    ['root', 'admin'],
    ['ann', 'member'],
    ['bob', 'member'],
  ]);

  const initialize = () => send(app.base, 'POST', '/mcp', { key: app.keys.ann, body: rpcBody('initialize', INIT) });
  const closeAll = (sessions: (string | null)[]) =>
    Promise.all(
      sessions
        .filter((id): id is string => id !== null)
        .map((session) => send(app.base, 'DELETE', '/mcp', { key: app.keys.ann, session })),
    );
  const openCount = async () => (await send(app.base, 'GET', '/v1/admin/mcp', { key: app.keys.root })).json.sessions;

  /** A session of `user` with its GET notification stream open (a listening client); `stop()` ends the stream. */
  async function listening(user: string): Promise<{ session: string; stop: () => Promise<void> }> {
    const opened = await send(app.base, 'POST', '/mcp', { key: app.keys[user], body: rpcBody('initialize', INIT) });
    expect(opened.status).toBe(200);
    const session = opened.headers.get('mcp-session-id')!;
    await send(app.base, 'POST', '/mcp', {
      key: app.keys[user],
      session,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    const aborted = new AbortController();
    const stream = fetch(`${app.base}/mcp`, {
      headers: { authorization: `Bearer ${app.keys[user]}`, accept: 'text/event-stream', 'mcp-session-id': session },
      signal: aborted.signal,
    });
    expect((await stream).status).toBe(200);
    return {
      session,
      stop: async () => {
        aborted.abort();
        await stream.catch(() => undefined);
        await send(app.base, 'DELETE', '/mcp', { key: app.keys[user], session });
      },
    };
  }

  it(
    "at a user's limit, a new session replaces that user's least recently used idle one (clients that never end " +
      'theirs do not lock their user out)',
    async () => {
      const first = await initialize();
      const second = await initialize();
      const third = await initialize();
      expect([first.status, second.status, third.status]).toEqual([200, 200, 200]);
      expect(await openCount()).toBe(2);
      const gone = await send(app.base, 'POST', '/mcp', {
        key: app.keys.ann,
        session: first.headers.get('mcp-session-id')!,
        body: rpcBody('tools/list', {}),
      });
      expect([gone.status, gone.json.code]).toEqual([404, 'MCP_SESSION_NOT_FOUND']);
      const kept = await send(app.base, 'POST', '/mcp', {
        key: app.keys.ann,
        session: second.headers.get('mcp-session-id')!,
        body: rpcBody('tools/list', {}),
      });
      expect(kept.status).toBe(200);
      await closeAll([second.headers.get('mcp-session-id'), third.headers.get('mcp-session-id')]);
      expect(await openCount()).toBe(0);
    },
  );

  it(
    "at a user's limit with every session of theirs listening, their least recently used makes room (agents " +
      "re-initialise and leave streams open); at the instance's, 503 BUSY and another user is never evicted",
    async () => {
      const ann = [await listening('ann'), await listening('ann')];
      try {
        const annThird = await initialize();
        expect(annThird.status).toBe(200);
        expect(await openCount()).toBe(2);
        const gone = await send(app.base, 'POST', '/mcp', {
          key: app.keys.ann,
          session: ann[0].session,
          body: rpcBody('tools/list', {}),
        });
        expect([gone.status, gone.json.code]).toEqual([404, 'MCP_SESSION_NOT_FOUND']);
        await closeAll([annThird.headers.get('mcp-session-id')]);
        const bob = await listening('bob');
        const annAgain = await listening('ann');
        try {
          // Three sessions, each listening: bob's second finds no room, and none of ann's is closed for it.
          const bobSecond = await send(app.base, 'POST', '/mcp', {
            key: app.keys.bob,
            body: rpcBody('initialize', INIT),
          });
          expect([bobSecond.status, bobSecond.json.code, bobSecond.json.message]).toEqual([
            503,
            'BUSY',
            expect.stringContaining('[app.mcp] max_sessions)'),
          ]);
          expect(await openCount()).toBe(3);
          expect(
            (
              await send(app.base, 'POST', '/mcp', {
                key: app.keys.ann,
                session: ann[1].session,
                body: rpcBody('tools/list', {}),
              })
            ).status,
          ).toBe(200);
        } finally {
          await bob.stop();
          await annAgain.stop();
        }
        // Stateless requests need no slot.
        expect(
          (await send(app.base, 'POST', '/mcp', { key: app.keys.ann, body: rpcBody('tools/list', {}) })).json.result
            .tools,
        ).toHaveLength(2);
      } finally {
        for (const session of ann) await session.stop();
      }
      expect(await openCount()).toBe(0);
    },
  );

  it(
    "an initialize the SDK refuses (no event-stream in accept) closes none of the user's listening " + 'sessions',
    async () => {
      const ann = [await listening('ann'), await listening('ann')];
      try {
        const refused = await send(app.base, 'POST', '/mcp', {
          key: app.keys.ann,
          body: rpcBody('initialize', INIT),
          accept: 'application/json',
        });
        expect(refused.status).toBe(406);
        for (const session of ann)
          expect(
            (
              await send(app.base, 'POST', '/mcp', {
                key: app.keys.ann,
                session: session.session,
                body: rpcBody('tools/list', {}),
              })
            ).status,
          ).toBe(200);
        expect(await openCount()).toBe(2);
      } finally {
        for (const session of ann) await session.stop();
      }
    },
  );

  it('holds no more than the instance may when several users initialize at once: the rest are 503 BUSY', async () => {
    const answers = await Promise.all([
      ...['ann', 'ann', 'ann', 'bob', 'bob', 'bob'].map((user) =>
        send(app.base, 'POST', '/mcp', { key: app.keys[user], body: rpcBody('initialize', INIT) }),
      ),
    ]);
    try {
      for (const answer of answers) expect([200, 503]).toContain(answer.status);
      expect(answers.filter((answer) => answer.status === 503).every((answer) => answer.json.code === 'BUSY')).toBe(
        true,
      );
      expect(await openCount()).toBeLessThanOrEqual(3);
    } finally {
      await Promise.all(
        answers.map((answer, index) => {
          const session = answer.headers.get('mcp-session-id');
          return session === null
            ? undefined
            : send(app.base, 'DELETE', '/mcp', { key: app.keys[index < 3 ? 'ann' : 'bob'], session });
        }),
      );
    }
  });

  it('never holds more than a user may under concurrent initializes', async () => {
    const answers = await Promise.all(Array.from({ length: 6 }, () => initialize()));
    try {
      expect(answers.every((answer) => answer.status === 200)).toBe(true);
      expect(await openCount()).toBeLessThanOrEqual(2);
    } finally {
      await closeAll(answers.map((answer) => answer.headers.get('mcp-session-id')));
    }
  });

  // Regression, fixed since this pass found it. Was: McpController.serve (src/api/mcp/mcp.controller.ts:52) hands the
  // SDK's streaming Response to reply.send without flushing headers: the 200 of a GET notification stream reaches the
  // client only with the first event or the SDK's 15 s keep-alive.
  it('a GET notification stream answers 200 text/event-stream at once, not after the first keep-alive', async () => {
    const opened = await initialize();
    const session = opened.headers.get('mcp-session-id')!;
    await send(app.base, 'POST', '/mcp', {
      key: app.keys.ann,
      session,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    const aborted = new AbortController();
    const stream = fetch(`${app.base}/mcp`, {
      headers: { authorization: `Bearer ${app.keys.ann}`, accept: 'text/event-stream', 'mcp-session-id': session },
      signal: aborted.signal,
    });
    try {
      expect(await within(stream, 2000)).toBe(true);
      expect((await stream).status).toBe(200);
    } finally {
      aborted.abort();
      await stream.catch(() => undefined);
      await closeAll([session]);
    }
  });

  it(
    'closes within seconds while clients hold a 2025-era GET stream (raw and SDK client) and a 2026-07-28 listen ' +
      'stream open',
    async () => {
      const opened = await initialize();
      const session = opened.headers.get('mcp-session-id')!;
      await send(app.base, 'POST', '/mcp', {
        key: app.keys.ann,
        session,
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      });
      const raw = fetch(`${app.base}/mcp`, {
        headers: { authorization: `Bearer ${app.keys.ann}`, accept: 'text/event-stream', 'mcp-session-id': session },
      }).then(async (response) => {
        const reader = response.body!.getReader();
        while (!(await reader.read()).done);
      });
      const legacy = await connectClient(app.base, app.keys.ann, 'legacy', () => undefined);
      const modern = await connectClient(app.base, app.keys.ann, 'auto', () => undefined);
      expect(modern.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(await openCount()).toBe(2);
      const started = Date.now();
      const closed = await within(app.ctx.closeApp(), 5000);
      expect({ closed, fast: Date.now() - started < 5000 }).toEqual({ closed: true, fast: true });
      // The stream the raw client held ends (or fails) rather than hanging.
      expect(await within(raw, 2000)).toBe(true);
      await Promise.allSettled([legacy.close(), modern.close()]);
    },
  );
});

describe('MCP notification streams after a drop', () => {
  const app = useMcpApp({}, [
    ['root', 'admin'],
    ['ann', 'member'],
  ]);

  /** A session of ann's, initialized. */
  async function openSession(): Promise<string> {
    const opened = await send(app.base, 'POST', '/mcp', { key: app.keys.ann, body: rpcBody('initialize', INIT) });
    expect(opened.status).toBe(200);
    const session = opened.headers.get('mcp-session-id')!;
    await send(app.base, 'POST', '/mcp', {
      key: app.keys.ann,
      session,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    return session;
  }

  /**
   * A GET notification stream of `session`, its events collected as they come; `drop()` aborts it as a lost connection
   * would.
   */
  async function listen(session: string, lastEventId?: string) {
    const aborted = new AbortController();
    const response = await fetch(`${app.base}/mcp`, {
      headers: {
        authorization: `Bearer ${app.keys.ann}`,
        accept: 'text/event-stream',
        'mcp-session-id': session,
        ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }),
      },
      signal: aborted.signal,
    });
    const events: { id?: string; method: string }[] = [];
    let ended = false;
    const reading = (async () => {
      if (response.body === null) return;
      const decoder = new TextDecoder();
      let buffered = '';
      try {
        for await (const chunk of response.body) {
          buffered += decoder.decode(chunk as Uint8Array, { stream: true });
          let end: number;
          while ((end = buffered.indexOf('\n\n')) >= 0) {
            const lines = buffered.slice(0, end).split('\n');
            buffered = buffered.slice(end + 2);
            const data = lines.find((line) => line.startsWith('data: '));
            if (data !== undefined && data.length > 6)
              events.push({
                id: lines.find((line) => line.startsWith('id: '))?.slice(4),
                method: JSON.parse(data.slice(6)).method,
              });
          }
        }
      } catch {
        // Aborted by drop().
      }
      ended = true;
    })();
    return {
      status: response.status,
      events,
      ended: () => ended,
      drop: async () => {
        aborted.abort();
        await reading;
      },
      finished: reading,
    };
  }

  /** Changes ann's catalogue (her filter leaves `alpha` out, or lets it in): her sessions are told. */
  const changeCatalogue = async (exclude: string[]) =>
    expect(
      (await send(app.base, 'PUT', '/v1/me/skills', { key: app.keys.ann, body: JSON.stringify({ exclude }) })).status,
    ).toBe(200);

  async function until(check: () => boolean): Promise<void> {
    for (let waited = 0; !check() && waited < 5000; waited += 25)
      await new Promise((resolve) => setTimeout(resolve, 25));
  }

  const CHANGED = [
    'notifications/resources/list_changed',
    'notifications/tools/list_changed',
    'notifications/prompts/list_changed',
  ];

  /** Ann's catalogue changes (`alpha` left out), and `stream` hears the three list_changed notifications. */
  async function hearsTheNextChange(stream: { events: { method: string }[] }): Promise<void> {
    await changeCatalogue(['alpha']);
    await until(() => stream.events.length >= 3);
    expect(stream.events.map((event) => event.method)).toEqual(CHANGED);
  }

  /** After a test: its stream dropped, ann's catalogue whole again, the session closed. */
  async function endListening(stream: { drop(): Promise<void> }, session: string): Promise<void> {
    await stream.drop();
    await changeCatalogue([]);
    await send(app.base, 'DELETE', '/mcp', { key: app.keys.ann, session });
  }

  // Regression, fixed since this pass found it. Was: McpController.serve piped the SDK's stream into the socket without
  // cancelling it when the client went away, so the SDK still counted the session's GET stream as open: every later GET
  // with the session id answered 409 "Only one SSE stream is allowed per session", for good.
  it('a session whose notification stream dropped opens another, and hears the next change on it', async () => {
    const session = await openSession();
    const first = await listen(session);
    expect(first.status).toBe(200);
    await first.drop();
    const second = await listen(session);
    try {
      expect(second.status).toBe(200);
      await hearsTheNextChange(second);
    } finally {
      await endListening(second, session);
    }
  });

  it('a client reconnecting with Last-Event-ID is sent the notifications it missed while it was away', async () => {
    const session = await openSession();
    const first = await listen(session);
    await changeCatalogue(['alpha']);
    await until(() => first.events.length >= 3);
    const lastSeen = first.events.at(-1)!.id;
    expect(lastSeen).toMatch(/^\d+$/);
    await first.drop();
    // While no stream is open, the catalogue changes back.
    await changeCatalogue([]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = await listen(session, lastSeen);
    try {
      expect(second.status).toBe(200);
      await until(() => second.events.length >= 3);
      expect(second.events.map((event) => event.method)).toEqual(CHANGED);
      expect(Number(second.events[0].id)).toBeGreaterThan(Number(lastSeen));
    } finally {
      await endListening(second, session);
    }
  });

  // Regression, fixed since a review pass found it. Was: any second GET accepting an event stream closed the session's
  // open stream before the SDK checked it, so one it then refused (400) left the session deaf.
  it('a GET the SDK refuses (an unknown protocol version or event id) leaves the open stream working', async () => {
    const session = await openSession();
    const open = await listen(session);
    try {
      const headers = {
        authorization: `Bearer ${app.keys.ann}`,
        accept: 'text/event-stream',
        'mcp-session-id': session,
      };
      const refusedHeaders: Record<string, string>[] = [
        { 'mcp-protocol-version': '1999-01-01' },
        { 'last-event-id': '999' },
        { 'last-event-id': 'x' },
      ];
      for (const extra of refusedHeaders) {
        const refused = await fetch(`${app.base}/mcp`, { headers: { ...headers, ...extra } });
        expect(refused.status).toBe(400);
        await refused.text();
      }
      expect(open.ended()).toBe(false);
      await hearsTheNextChange(open);
    } finally {
      await endListening(open, session);
    }
  });

  it(
    'a stream the server still holds (its client lost it unseen) is released when the session listens again: the ' +
      'new one gets the notifications',
    async () => {
      const session = await openSession();
      const stale = await listen(session);
      const fresh = await listen(session);
      try {
        expect([stale.status, fresh.status]).toEqual([200, 200]);
        await stale.finished;
        expect(stale.ended()).toBe(true);
        await hearsTheNextChange(fresh);
        expect(stale.events).toEqual([]);
      } finally {
        await endListening(fresh, session);
      }
    },
  );
});

describe('MCP sessions idle out (session_idle_seconds 10)', () => {
  const app = useMcpApp({ 'app.mcp.session_idle_seconds': 10 }, [
    ['root', 'admin'],
    ['ann', 'member'],
  ]);

  it('closes a session without requests after the idle time, its notification stream open or not; one that sent a ' +
    'request stays', async () => {
    const idle = await send(app.base, 'POST', '/mcp', { key: app.keys.ann, body: rpcBody('initialize', INIT) });
    const listening = await send(app.base, 'POST', '/mcp', { key: app.keys.ann, body: rpcBody('initialize', INIT) });
    const active = await send(app.base, 'POST', '/mcp', { key: app.keys.ann, body: rpcBody('initialize', INIT) });
    const [idleId, listeningId, activeId] = [
      idle.headers.get('mcp-session-id')!,
      listening.headers.get('mcp-session-id')!,
      active.headers.get('mcp-session-id')!,
    ];
    await send(app.base, 'POST', '/mcp', {
      key: app.keys.ann,
      session: listeningId,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    const aborted = new AbortController();
    const stream = fetch(`${app.base}/mcp`, {
      headers: { authorization: `Bearer ${app.keys.ann}`, accept: 'text/event-stream', 'mcp-session-id': listeningId },
      signal: aborted.signal,
    });
    expect((await stream).status).toBe(200);
    try {
      // Idle for 10 s, looked for every 5 s: gone within 15 s. The active session calls every 4 s.
      for (let waited = 0; waited < 16_000; waited += 4000) {
        await new Promise((resolve) => setTimeout(resolve, 4000));
        expect(
          (
            await send(app.base, 'POST', '/mcp', {
              key: app.keys.ann,
              session: activeId,
              body: rpcBody('tools/list', {}),
            })
          ).status,
        ).toBe(200);
      }
      for (const id of [idleId, listeningId]) {
        const gone = await send(app.base, 'POST', '/mcp', {
          key: app.keys.ann,
          session: id,
          body: rpcBody('tools/list', {}),
        });
        expect([gone.status, gone.json.code]).toEqual([404, 'MCP_SESSION_NOT_FOUND']);
      }
      // The stream of the closed session ended rather than hanging.
      expect(
        await within(
          stream.then(async (response) => {
            const reader = response.body!.getReader();
            while (!(await reader.read()).done);
          }),
          2000,
        ),
      ).toBe(true);
    } finally {
      aborted.abort();
      await stream.catch(() => undefined);
    }
  }, 30_000);
});

describe('app.mcp.enabled = false', () => {
  const app = useMcpApp({ 'app.mcp.enabled': false }, [['root', 'admin']]);

  it(
    'answers 404 MCP_DISABLED on every /mcp method, the index, its files and the admin view; skills still work ' +
      'elsewhere',
    async () => {
      const answers = [
        await send(app.base, 'POST', '/mcp', { key: app.keys.root, body: rpcBody('initialize', INIT) }),
        await send(app.base, 'POST', '/mcp', { key: app.keys.root, body: rpcBody('tools/list', {}) }),
        await send(app.base, 'GET', '/mcp', { key: app.keys.root, accept: 'text/event-stream' }),
        await send(app.base, 'DELETE', '/mcp', { key: app.keys.root, session: 'x' }),
        await send(app.base, 'GET', '/.well-known/agent-skills/index.json', { key: app.keys.root }),
        await send(app.base, 'GET', '/.well-known/agent-skills/alpha/SKILL.md', { key: app.keys.root }),
        await send(app.base, 'GET', '/v1/admin/mcp', { key: app.keys.root }),
      ];
      for (const answer of answers) expect([answer.status, answer.json.code]).toEqual([404, 'MCP_DISABLED']);
      // Without a key it is still 401 first: a disabled feature says nothing to strangers.
      const anonymous = await send(app.base, 'GET', '/.well-known/agent-skills/index.json');
      expect(anonymous.status).toBe(401);
      const skills = await send(app.base, 'GET', '/v1/skills', { key: app.keys.root });
      expect(skills.status).toBe(200);
    },
  );
});

/** A disk skill's files are looked at once a second at most: a change is seen after that. */
function settleRecheck(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 1100));
}
