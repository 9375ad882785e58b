import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { type Skill, SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import request from 'supertest';
import { z } from 'zod';
import { UsersService } from '../../src/domain/users/users.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { tarGzOf } from '../support/skill-archives.js';
import { skillMd, tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';

/**
 * Issue 14: the team's skills for every agent over MCP (`/mcp`, the MCP Skills extension with the
 * official TypeScript client, both protocol eras) and the Agent Skills discovery index.
 */

/** A request by method name, its result read as it comes (extension methods have no schema in the client). */
const call = (client: Client, method: string, params: Record<string, unknown>) =>
  client.request({ method, params } as never, z.looseObject({}));
const sha256 = (bytes: Uint8Array | string) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
/** A PNG's first bytes and a NUL: binary by any reading. */
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0xff, 0xfe]);

type Era = 'legacy' | 'auto';

describe('skills over MCP and the discovery index', () => {
  let tree: TempTree;
  let ctx: ChatTestContext;
  let base: string;
  const keys: Record<string, string> = {};
  const clients: Client[] = [];

  beforeAll(async () => {
    tree = tempTree();
    writeSkill(tree, 'skills', 'alpha', {
      description: 'Alpha does the first thing. Use when a test needs alpha.',
      body: 'ALPHA-BODY-MARKER\n\nSee references/guide.md.',
    });
    tree.write('skills/alpha/references/guide.md', 'ALPHA-GUIDE-MARKER\n');
    tree.write('skills/alpha/references/deep/more.md', 'deeper\n');
    tree.write('skills/alpha/scripts/run.sh', '#!/bin/sh\necho alpha\n');
    tree.write('skills/alpha/assets/logo.png', PNG);
    // Frontmatter the MCP client reads with YAML 1.2 types: a number, a boolean, a nested map.
    tree.write(
      'skills/typed/SKILL.md',
      '---\nname: typed\ndescription: "Typed frontmatter: a colon, quotes."\nlicense: MIT\nmetadata:\n  ' +
        'version: "2.1"\n  owner: team\n---\nTYPED-BODY\n',
    );
    for (const name of ['delta', 'epsilon', 'gamma', 'zeta'])
      writeSkill(tree, 'skills', name, { description: `The ${name} skill. Use for ${name} work.` });
    writeSkill(tree, 'skills', 'crowded', { description: 'Has more files than the extension allows.' });
    for (let i = 0; i < 520; i++) tree.write(`skills/crowded/references/f${i}.md`, `${i}\n`);
    ctx = await startChatApp([tree.path('skills')], {
      'app.auth.mode': 'api_key',
      'app.skills.store_directory': tree.path('store'),
      'app.mcp.page_size': 3,
    });
    const users = ctx.app.get(UsersService);
    for (const [name, role] of [
      ['root', 'admin'],
      ['ann', 'member'],
      ['bob', 'member'],
    ] as const) {
      keys[name] = (await users.createKey((await users.createUser(name, role)).id)).key;
    }
    await ctx.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
    await ctx?.close();
    tree?.cleanup();
  });

  async function connect(
    user: string,
    era: Era = 'legacy',
    onResourcesChanged?: () => void,
  ): Promise<{ client: Client; skills: SkillsClient }> {
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${keys[user]}` } },
    });
    const client = new Client(
      { name: 'skillhost-e2e', version: '1.0.0' },
      {
        versionNegotiation: { mode: era },
        ...(onResourcesChanged === undefined
          ? {}
          : {
              listChanged: { resources: { autoRefresh: false, debounceMs: 0, onChanged: () => onResourcesChanged() } },
            }),
      },
    );
    await client.connect(transport);
    clients.push(client);
    return { client, skills: new SkillsClient(client) };
  }

  const names = (skills: readonly Skill[]) => skills.map((skill) => skill.frontmatter.name);

  describe.each<Era>(['legacy', 'auto'])('with a %s client', (era) => {
    it('sees the extension with directory reads, resources, the tools and the prompts', async () => {
      const { client, skills } = await connect('ann', era);
      // The SDK's default is the 2025 handshake (today's agents); `auto` negotiates 2026-07-28.
      expect(client.getNegotiatedProtocolVersion()).toBe(era === 'auto' ? '2026-07-28' : '2025-11-25');
      expect(skills.supported).toBe(true);
      expect(skills.directoryRead).toBe(true);
      const capabilities = client.getServerCapabilities();
      expect(capabilities?.resources).toBeDefined();
      expect(capabilities?.extensions?.['io.modelcontextprotocol/skills']).toEqual({ directoryRead: true });
      const { tools } = await client.listTools();
      // Every skill fits the budget: no search tool.
      expect(tools.map((tool) => tool.name)).toEqual(['activate_team_skill', 'read_skill_file']);
      const nameSchema = (tools[0].inputSchema.properties as Record<string, { enum?: string[] }>).name;
      expect(nameSchema.enum).toEqual(expect.arrayContaining(['alpha', 'typed', 'zeta']));
    });

    it(
      "gives level 1 to clients without the extension: every skill's name and description in the tool's " +
        'description and in the instructions, the same bytes on every listing',
      async () => {
        const { client } = await connect('ann', era);
        const { tools } = await client.listTools();
        const entries = [
          '- alpha: Alpha does the first thing. Use when a test needs alpha.',
          '- typed: Typed frontmatter: a colon, quotes.',
          '- zeta: The zeta skill. Use for zeta work.',
        ];
        for (const entry of entries) expect(tools[0].description).toContain(entry);
        // The crowded skill is no resource here, but it is a skill of the catalogue: it can be activated.
        expect(tools[0].description).toContain('- crowded: Has more files than the extension allows.');
        const instructions = client.getInstructions() ?? '';
        for (const entry of entries) expect(instructions).toContain(entry);
        // A client that defers tools shows its model only the first line, cut at about 240 characters.
        expect(instructions.split('\n')[0].length).toBeLessThan(240);
        expect(instructions.split('\n')[0]).toContain('activate_team_skill');
        const again = await (await connect('ann', era)).client.listTools();
        expect(again.tools[0].description).toBe(tools[0].description);
        expect((await client.listTools()).tools).toEqual(tools);
      },
    );

    it(
      'marks every tool read-only, idempotent and closed-world, with a title (clients that gate tools by these ' +
        'run them unattended)',
      async () => {
        const { client } = await connect('ann', era);
        const { tools } = await client.listTools();
        for (const tool of tools) {
          expect(tool.annotations).toEqual({
            title: expect.any(String),
            readOnlyHint: true,
            destructiveHint: false,
            idempotentHint: true,
            openWorldHint: false,
          });
          expect(tool.title).toBe(tool.annotations?.title);
        }
      },
    );

    it("reads a skill's other file with read_skill_file, under the REST path rules", async () => {
      const { client } = await connect('ann', era);
      const text = (result: unknown) => (result as { content: { text: string }[] }).content[0].text;
      const read = await client.callTool({
        name: 'read_skill_file',
        arguments: { name: 'alpha', path: 'references/guide.md' },
      });
      expect([read.isError ?? false, text(read)]).toEqual([false, 'ALPHA-GUIDE-MARKER\n']);
      // The crowded skill is over the extension's limits, but its files are the user's to read here.
      expect(
        text(
          await client.callTool({ name: 'read_skill_file', arguments: { name: 'crowded', path: 'references/f7.md' } }),
        ),
      ).toBe('7\n');
      for (const [path, code] of [
        ['../typed/SKILL.md', 'RESOURCE_OUTSIDE_SKILL'],
        ['/etc/passwd', 'RESOURCE_OUTSIDE_SKILL'],
        ['references/missing.md', 'RESOURCE_NOT_FOUND'],
        ['references', 'RESOURCE_IS_DIRECTORY'],
      ]) {
        const refused = await client.callTool({ name: 'read_skill_file', arguments: { name: 'alpha', path } });
        expect({ path, isError: refused.isError, text: text(refused) }).toEqual({
          path,
          isError: true,
          text: expect.stringContaining(code),
        });
      }
      const unknown = await client.callTool({ name: 'read_skill_file', arguments: { name: 'nope', path: 'SKILL.md' } });
      expect([unknown.isError, text(unknown)]).toEqual([true, expect.stringContaining('SKILL_NOT_FOUND')]);
    });

    it(
      'pages through skills/list to every served skill, each a complete manifest; the crowded skill ' + 'is left out',
      async () => {
        const { client, skills } = await connect('ann', era);
        const first = await call(client, 'skills/list', {});
        const page = first as unknown as { skills: Skill[]; nextCursor?: string; ttlMs?: number; cacheScope?: string };
        expect(page.skills).toHaveLength(3);
        expect(page.nextCursor).toEqual(expect.any(String));
        if (era === 'auto') expect(page).toMatchObject({ ttlMs: 60_000, cacheScope: 'private' });
        const listing = await skills.list();
        expect(names(listing.skills)).toEqual(['alpha', 'delta', 'epsilon', 'gamma', 'typed', 'zeta']);
        const alpha = listing.skills[0];
        expect(alpha.uri).toBe('skill://alpha/SKILL.md');
        const paths = (alpha.resources as { uri: string }[]).map((resource) => resource.uri);
        expect(paths).toEqual(
          expect.arrayContaining([
            'skill://alpha/SKILL.md',
            'skill://alpha/references/guide.md',
            'skill://alpha/references/deep/more.md',
            'skill://alpha/scripts/run.sh',
            'skill://alpha/assets/logo.png',
          ]),
        );
        expect(paths).toHaveLength(5);
        for (const resource of alpha.resources as { digest: string; size: number }[]) {
          expect(resource.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
        }
        const typed = listing.skills.find((skill) => skill.frontmatter.name === 'typed')!;
        expect(typed.frontmatter).toEqual({
          name: 'typed',
          description: 'Typed frontmatter: a colon, quotes.',
          license: 'MIT',
          metadata: { version: '2.1', owner: 'team' },
        });
      },
    );

    it(
      'lists every file of every served skill in resources/list, paged, each with its MIME type and size (clients ' +
        'that read only listed resources)',
      async () => {
        const { client } = await connect('ann', era);
        type Listed = { uri: string; name: string; mimeType?: string; size?: number; description?: string };
        const pages: Listed[][] = [];
        let cursor: string | undefined;
        do {
          // The raw method: the client's listResources walks the pages itself.
          const page = (await call(client, 'resources/list', cursor === undefined ? {} : { cursor })) as unknown as {
            resources: Listed[];
            nextCursor?: string;
          };
          pages.push(page.resources);
          cursor = page.nextCursor;
        } while (cursor !== undefined);
        expect((await client.listResources()).resources).toEqual(pages.flat());
        // page_size 3: three skills' files a page.
        expect(pages).toHaveLength(2);
        const all = pages.flat();
        expect(all.filter((resource) => resource.uri.endsWith('/SKILL.md')).map((resource) => resource.uri)).toEqual(
          ['alpha', 'delta', 'epsilon', 'gamma', 'typed', 'zeta'].map((name) => `skill://${name}/SKILL.md`),
        );
        expect(
          all
            .filter((resource) => resource.uri.startsWith('skill://alpha/'))
            .map((resource) => resource.uri)
            .sort(),
        ).toEqual(
          ['SKILL.md', 'assets/logo.png', 'references/deep/more.md', 'references/guide.md', 'scripts/run.sh'].map(
            (path) => `skill://alpha/${path}`,
          ),
        );
        expect(all.find((resource) => resource.uri === 'skill://alpha/references/guide.md')).toMatchObject({
          name: 'alpha/references/guide.md',
          mimeType: 'text/markdown',
          size: 'ALPHA-GUIDE-MARKER\n'.length,
        });
        expect(all.find((resource) => resource.uri === 'skill://alpha/assets/logo.png')).toMatchObject({
          mimeType: 'image/png',
          size: PNG.length,
        });
        expect(all.find((resource) => resource.uri === 'skill://typed/SKILL.md')).toMatchObject({
          description: 'Typed frontmatter: a colon, quotes.',
          mimeType: 'text/markdown',
          size: expect.any(Number),
        });
        expect(JSON.stringify(all)).not.toContain('crowded');
        // Every listed file reads.
        for (const resource of all) expect((await client.readResource({ uri: resource.uri })).contents).toHaveLength(1);
        await expect(call(client, 'resources/list', { cursor: 'not-a-cursor' })).rejects.toMatchObject({
          code: -32602,
        });
      },
    );

    it('gets one skill by URI and refuses an unknown one with -32602', async () => {
      const { client, skills } = await connect('ann', era);
      const { skill } = await skills.get('skill://typed/SKILL.md');
      expect(skill.frontmatter.name).toBe('typed');
      await expect(call(client, 'skills/get', { uri: 'skill://nope/SKILL.md' })).rejects.toMatchObject({
        code: -32602,
      });
      await expect(call(client, 'skills/get', { uri: 'skill://crowded/SKILL.md' })).rejects.toMatchObject({
        code: -32602,
      });
    });

    it('reads SKILL.md, a text file and a binary file, each verified against its digest and size', async () => {
      const { skills } = await connect('ann', era);
      const { skill } = await skills.get('skill://alpha/SKILL.md');
      const manifest = await skills.read(skill);
      expect(manifest.verified).toBe(true);
      expect(manifest.body).toContain('ALPHA-BODY-MARKER');
      expect(manifest.frontmatter).toEqual(skill.frontmatter);
      const guide = await skills.read(skill, 'references/guide.md');
      expect(guide.text).toBe('ALPHA-GUIDE-MARKER\n');
      const logo = await skills.read(skill, 'assets/logo.png');
      expect(logo.text).toBeUndefined();
      expect(Buffer.from(logo.bytes).equals(PNG)).toBe(true);
      const entry = (skill.resources as { uri: string; digest: string; size: number }[]).find((resource) =>
        resource.uri.endsWith('logo.png'),
      )!;
      expect(entry).toEqual({ uri: 'skill://alpha/assets/logo.png', digest: sha256(PNG), size: PNG.length });
    });

    it('reads a directory: its direct children, files and folders', async () => {
      const { skills } = await connect('ann', era);
      const root = await skills.readDirectory('skill://alpha');
      expect(root.resources.map((child) => [child.name, child.mimeType])).toEqual([
        ['SKILL.md', 'text/markdown'],
        ['assets', 'inode/directory'],
        ['references', 'inode/directory'],
        ['scripts', 'inode/directory'],
      ]);
      const references = await skills.readDirectory('skill://alpha/references');
      expect(references.resources.map((child) => child.uri)).toEqual([
        'skill://alpha/references/deep',
        'skill://alpha/references/guide.md',
      ]);
    });

    it(
      'refuses reads outside what a skill publishes with -32602: traversal, unknown files, a file as ' + 'a directory',
      async () => {
        const { client } = await connect('ann', era);
        for (const uri of [
          'skill://alpha/../typed/SKILL.md',
          'skill://alpha/%2e%2e/%2e%2e/etc/passwd',
          'skill://alpha/references/missing.md',
          'skill://crowded/SKILL.md',
          'file:///etc/passwd',
        ]) {
          await expect(client.readResource({ uri })).rejects.toMatchObject({ code: -32602 });
        }
        await expect(call(client, 'resources/directory/read', { uri: 'skill://alpha/SKILL.md' })).rejects.toMatchObject(
          {
            code: -32602,
          },
        );
      },
    );

    it('activates a skill through activate_team_skill and refuses an unknown name with an error result', async () => {
      const { client } = await connect('ann', era);
      const result = await client.callTool({ name: 'activate_team_skill', arguments: { name: 'alpha' } });
      expect(result.isError).toBeFalsy();
      const text = (result.content as { type: string; text: string }[])[0].text;
      expect(text).toContain('<skill_content name="alpha">');
      expect(text).toContain('ALPHA-BODY-MARKER');
      expect(text).toContain('<file>references/guide.md</file>');
      const refused = await client.callTool({ name: 'activate_team_skill', arguments: { name: 'nope' } });
      expect(refused.isError).toBe(true);
      // Every skill is listed: the name is an enum, and an unknown one is an argument error naming them.
      expect((refused.content as { text: string }[])[0].text).toMatch(
        /^Invalid arguments for activate_team_skill: 'name' must be one of the available skills: alpha, /,
      );
      await expect(client.callTool({ name: 'activate_skill', arguments: { name: 'alpha' } })).rejects.toMatchObject({
        code: -32602,
      });
    });

    it(
      'offers one prompt per skill with one required argument; the message asks for the activation and quotes the ' +
        'request, and holds none of the skill',
      async () => {
        const { client } = await connect('ann', era);
        const listed = await client.listPrompts();
        expect(listed.prompts.map((prompt) => prompt.name)).toEqual(expect.arrayContaining(['alpha', 'typed']));
        expect(listed.prompts.find((prompt) => prompt.name === 'alpha')).toMatchObject({
          description: 'Alpha does the first thing. Use when a test needs alpha.',
          arguments: [{ name: 'request', description: expect.any(String), required: true }],
        });
        const prompt = await client.getPrompt({
          name: 'alpha',
          arguments: { request: 'tidy the report for the board, in three parts' },
        });
        const text = (prompt.messages[0].content as { text: string }).text;
        expect(text).toContain('activate_team_skill tool with {"name": "alpha"}');
        expect(text).toContain('My request: tidy the report for the board, in three parts');
        expect(text).not.toContain('ALPHA-BODY-MARKER');
        // A bare /alpha (Gemini CLI sends an empty request).
        for (const args of [{ request: '' }, {}] as Record<string, string>[]) {
          const bare = (
            (await client.getPrompt({ name: 'alpha', arguments: args })).messages[0].content as { text: string }
          ).text;
          expect(bare).toContain('Then ask me what to do with it');
        }
      },
    );
  });

  it("is refused without a key, with a wrong key, and a session is not another user's", async () => {
    const body = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const accept = 'application/json, text/event-stream';
    const none = await request(ctx.app.getHttpServer()).post('/mcp').set('accept', accept).send(body);
    expect(none.status).toBe(401);
    // Both the API's error body and a JSON-RPC error, for MCP clients; the key is checked before the
    // body is read, so the request's id is not known (JSON-RPC's null).
    expect(none.body).toMatchObject({
      code: 'UNAUTHENTICATED',
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, data: { code: 'UNAUTHENTICATED' } },
    });
    const wrong = await request(ctx.app.getHttpServer())
      .post('/mcp')
      .set('accept', accept)
      .set('authorization', 'Bearer sk_nope')
      .send(body);
    expect(wrong.status).toBe(401);
    const opened = await request(ctx.app.getHttpServer())
      .post('/mcp')
      .set('accept', accept)
      .set('authorization', `Bearer ${keys.ann}`)
      .send(body);
    expect(opened.status).toBe(200);
    const session = opened.headers['mcp-session-id'];
    expect(session).toEqual(expect.any(String));
    const stolen = await request(ctx.app.getHttpServer())
      .post('/mcp')
      .set('accept', accept)
      .set('authorization', `Bearer ${keys.bob}`)
      .set('mcp-session-id', session)
      .send({ jsonrpc: '2.0', id: 2, method: 'skills/list', params: {} });
    expect(stolen.status).toBe(404);
    expect(stolen.body).toMatchObject({
      code: 'MCP_SESSION_NOT_FOUND',
      jsonrpc: '2.0',
      id: 2,
      error: { code: -32001, data: { code: 'MCP_SESSION_NOT_FOUND' } },
    });
  });

  it(
    "says in the 401's challenge what is wrong with the key (RFC 6750), as agents that show only the " + 'header need',
    async () => {
      const body = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };
      const post = (authorization?: string) => {
        const req = request(ctx.app.getHttpServer()).post('/mcp').set('accept', 'application/json, text/event-stream');
        return authorization === undefined ? req.send(body) : req.set('authorization', authorization).send(body);
      };
      const none = await post();
      expect(none.headers['www-authenticate']).toBe(
        `Bearer realm="skillhost", error_description="${none.body.message.replace(/"/g, "'")}"`,
      );
      const wrong = await post(`Bearer skh_${'w'.repeat(43)}`);
      expect(wrong.body).toMatchObject({
        code: 'UNAUTHENTICATED',
        message: 'The API key is not valid.',
        error: { data: { code: 'UNAUTHENTICATED' } },
      });
      expect(wrong.headers['www-authenticate']).toBe(
        'Bearer realm="skillhost", error="invalid_token", error_description="The API key is not valid."',
      );
      const malformed = await post('Bearer $SKILLHOST_API_KEY');
      expect(malformed.headers['www-authenticate']).toContain(
        'error="invalid_token", error_description="The API key is malformed: expected `Authorization: Bearer ' +
          'skh_...` (or `x-api-key: skh_...`).',
      );
      const users = ctx.app.get(UsersService);
      const revoked = await users.createKey((await users.createUser('carol', 'member')).id);
      await users.revokeKey(revoked.apiKey.id);
      const refused = await post(`Bearer ${revoked.key}`);
      expect([refused.status, refused.headers['www-authenticate']]).toEqual([
        401,
        'Bearer realm="skillhost", error="invalid_token", error_description="The API key has been revoked."',
      ]);
    },
  );

  it(
    'answers the OAuth discovery and registration probes of MCP clients with 404 OAUTH_NOT_SUPPORTED saying how ' +
      'to send a key',
    async () => {
      const probes: [string, string][] = [
        ['GET', '/.well-known/oauth-protected-resource'],
        ['GET', '/.well-known/oauth-protected-resource/mcp'],
        ['GET', '/.well-known/oauth-authorization-server'],
        ['GET', '/.well-known/oauth-authorization-server/mcp'],
        ['GET', '/.well-known/openid-configuration'],
        ['GET', '/.well-known/openid-configuration/mcp'],
        ['GET', '/mcp/.well-known/openid-configuration'],
        ['GET', '/authorize?response_type=code'],
        ['POST', '/register'],
        ['POST', '/token'],
      ];
      for (const [method, path] of probes) {
        const answer = await fetch(`${base}${path}`, {
          method,
          headers: method === 'POST' ? { 'content-type': 'application/json' } : {},
          body: method === 'POST' ? '{}' : undefined,
        });
        const json = (await answer.json()) as {
          code: string;
          message: string;
          error: string;
          error_description: string;
        };
        expect({ path, status: answer.status, code: json.code }).toEqual({
          path,
          status: 404,
          code: 'OAUTH_NOT_SUPPORTED',
        });
        expect(json.message).toContain('Authorization: Bearer skh_');
        // Also an OAuth error response, which the MCP SDKs' OAuth code reports by its description.
        expect([json.error, json.error_description]).toEqual(['invalid_request', json.message]);
      }
    },
  );

  it(
    "gives each user their own catalogue: a personal skill is its owner's alone; connected clients of both eras " +
      'hear of the install',
    async () => {
      let annHeard = 0;
      let bobHeard = 0;
      const ann = await connect('ann', 'legacy', () => annHeard++);
      const bob = await connect('bob', 'auto', () => bobHeard++);
      // An agent without the extension re-lists its tools when told they changed: the new skill is in the activation
      // tool's description.
      let annToolsHeard = 0;
      const annAgent = new Client(
        { name: 'agent', version: '1' },
        { listChanged: { tools: { autoRefresh: false, debounceMs: 0, onChanged: () => annToolsHeard++ } } },
      );
      await annAgent.connect(
        new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${keys.ann}` } },
        }),
      );
      clients.push(annAgent);
      expect((await annAgent.listTools()).tools[0].description).not.toContain('- mine:');
      // Let the notification streams open before the change.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const archive = await tarGzOf({
        'mine/SKILL.md': skillMd({ name: 'mine', description: 'Ann only. Use for ann things.', body: 'MINE-BODY' }),
        'mine/notes.txt': 'MINE-NOTES\n',
      });
      await request(ctx.app.getHttpServer())
        .post('/v1/skills')
        .set('authorization', `Bearer ${keys.ann}`)
        .set('content-type', archive.contentType)
        .send(archive.body)
        .expect(201);
      await waitFor(() => annHeard > 0 && bobHeard > 0 && annToolsHeard > 0);
      expect((await annAgent.listTools()).tools[0].description).toContain('- mine: Ann only. Use for ann things.');
      expect((await bob.client.listTools()).tools[0].description).not.toContain('- mine:');
      expect(names((await ann.skills.list()).skills)).toContain('mine');
      expect(names((await bob.skills.list()).skills)).not.toContain('mine');
      const { skill } = await ann.skills.get('skill://mine/SKILL.md');
      expect((await ann.skills.read(skill, 'notes.txt')).text).toBe('MINE-NOTES\n');
      await expect(call(bob.client, 'skills/get', { uri: 'skill://mine/SKILL.md' })).rejects.toMatchObject({
        code: -32602,
      });
      await expect(bob.client.readResource({ uri: 'skill://mine/notes.txt' })).rejects.toMatchObject({ code: -32602 });
      const bobsFetch = await request(ctx.app.getHttpServer())
        .get('/.well-known/agent-skills/mine/SKILL.md')
        .set('authorization', `Bearer ${keys.bob}`);
      expect([bobsFetch.status, bobsFetch.body.code]).toEqual([404, 'SKILL_NOT_FOUND']);
    },
  );

  it("tells a user's sessions when their own filter changes their catalogue, and applies it", async () => {
    let annHeard = 0;
    let bobHeard = 0;
    const ann = await connect('ann', 'legacy', () => annHeard++);
    await connect('bob', 'legacy', () => bobHeard++);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const http = request(ctx.app.getHttpServer());
    await http
      .put('/v1/me/skills')
      .set('authorization', `Bearer ${keys.ann}`)
      .send({ exclude: ['gamma'] })
      .expect(200);
    try {
      await waitFor(() => annHeard > 0);
      expect(names((await ann.skills.list()).skills)).not.toContain('gamma');
      await expect(call(ann.client, 'skills/get', { uri: 'skill://gamma/SKILL.md' })).rejects.toMatchObject({
        code: -32602,
      });
      // Bob's catalogue did not change: his session is not told.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(bobHeard).toBe(0);
    } finally {
      await http.put('/v1/me/skills').set('authorization', `Bearer ${keys.ann}`).send({}).expect(200);
    }
  });

  /**
   * `skills/list` answers are remembered per view of the catalogue, protocol version and cursor
   * (mcp-server.factory.ts): a remembered page is the page the SDK made, a reload or a filter change is seen by the
   * very next request of an open session, and one user's page is never another's, whatever cursor they send.
   */
  describe('skills/list answers remembered per view', () => {
    interface Page {
      skills: Skill[];
      nextCursor?: string;
      ttlMs?: number;
    }
    const listPage = async (client: Client, cursor?: string) =>
      (await call(client, 'skills/list', cursor === undefined ? {} : { cursor })) as unknown as Page;
    /** Every page, raw, as the server answered them. */
    async function walk(client: Client): Promise<Page[]> {
      const pages: Page[] = [];
      let cursor: string | undefined;
      do {
        const page = await listPage(client, cursor);
        pages.push(page);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return pages;
    }
    const listed = (pages: Page[]) => names(pages.flatMap((page) => page.skills));
    const setFilter = (user: string, filter: object) =>
      request(ctx.app.getHttpServer())
        .put('/v1/me/skills')
        .set('authorization', `Bearer ${keys[user]}`)
        .send(filter)
        .expect(200);
    const reload = () =>
      request(ctx.app.getHttpServer())
        .post('/v1/admin/skills/reload')
        .set('authorization', `Bearer ${keys.root}`)
        .expect(200);

    it.each<Era>(['legacy', 'auto'])(
      'answers a remembered page exactly as when it made it (%s client), an empty cursor still refused',
      async (era) => {
        const made = await walk((await connect('ann', era)).client);
        const remembered = await walk((await connect('ann', era)).client);
        expect(remembered).toEqual(made);
        expect(listed(made)).toEqual(expect.arrayContaining(['alpha', 'delta', 'epsilon', 'gamma', 'typed', 'zeta']));
        if (era === 'auto') expect(made[0]).toMatchObject({ ttlMs: 60_000, cacheScope: 'private' });
        else expect(made[0].ttlMs).toBeUndefined();
        // No cursor is the first page; an empty one is no cursor at all.
        await expect(listPage((await connect('ann', era)).client, '')).rejects.toMatchObject({ code: -32602 });
      },
    );

    it("sees a user's filter change, and its undoing, at the very next request of an open session", async () => {
      const { client } = await connect('ann');
      const before = listed(await walk(client));
      expect(before).toContain('gamma');
      await setFilter('ann', { exclude: ['gamma'] });
      try {
        // No waiting for a notification: the next request's view is another object, its pages made afresh.
        expect(listed(await walk(client))).toEqual(before.filter((name) => name !== 'gamma'));
      } finally {
        await setFilter('ann', {});
      }
      expect(listed(await walk(client))).toEqual(before);
    });

    it('sees a reload at the very next request of an open session, in both eras', async () => {
      const legacy = (await connect('ann')).client;
      const modern = (await connect('ann', 'auto')).client;
      expect(listed(await walk(legacy))).not.toContain('omega');
      expect(listed(await walk(modern))).not.toContain('omega');
      writeSkill(tree, 'skills', 'omega', { description: 'Added on disk. Use for omega work.' });
      try {
        await reload();
        expect(listed(await walk(legacy))).toContain('omega');
        expect(listed(await walk(modern))).toContain('omega');
      } finally {
        rmSync(tree.path('skills/omega'), { recursive: true, force: true });
        await reload();
      }
      expect(listed(await walk(legacy))).not.toContain('omega');
    });

    it(
      "never answers one user's page to another: a cursor sent in another user's session is read in their own " +
        'view, whoever asked first',
      async () => {
        await setFilter('bob', { exclude: ['delta'] });
        try {
          for (const era of ['legacy', 'auto'] as const) {
            const ann = (await connect('ann', era)).client;
            const bob = (await connect('bob', era)).client;
            // Bob asks first: a page made for his view must not be answered to Ann, nor Ann's to him.
            const bobFirst = await listPage(bob);
            const annFirst = await listPage(ann);
            const bobAll = listed(await walk(bob));
            const annAll = listed(await walk(ann));
            expect(bobAll).not.toContain('delta');
            expect(annAll).toContain('delta');
            expect(listed([bobFirst])).toEqual(bobAll.slice(0, 3));
            expect(listed([annFirst])).toEqual(annAll.slice(0, 3));
            // Each sends the other's cursor: the page after that name in their own view.
            const pageAfter = (all: string[], name: string) => all.filter((other) => other > name).slice(0, 3);
            const bobsLast = bobFirst.skills[2].frontmatter.name;
            const annsLast = annFirst.skills[2].frontmatter.name;
            expect(listed([await listPage(ann, bobFirst.nextCursor)])).toEqual(pageAfter(annAll, bobsLast));
            expect(listed([await listPage(bob, annFirst.nextCursor)])).toEqual(pageAfter(bobAll, annsLast));
          }
        } finally {
          await setFilter('bob', {});
        }
      },
    );
  });

  it('tells connected clients when an admin switches a skill off, and stops serving it', async () => {
    let heard = 0;
    const ann = await connect('ann', 'legacy', () => heard++);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const http = request(ctx.app.getHttpServer());
    await http
      .put('/v1/admin/skills/zeta/enabled')
      .set('authorization', `Bearer ${keys.root}`)
      .send({ enabled: false })
      .expect(200);
    try {
      await waitFor(() => heard > 0);
      expect(names((await ann.skills.list()).skills)).not.toContain('zeta');
      await expect(ann.client.readResource({ uri: 'skill://zeta/SKILL.md' })).rejects.toMatchObject({ code: -32602 });
    } finally {
      await http
        .put('/v1/admin/skills/zeta/enabled')
        .set('authorization', `Bearer ${keys.root}`)
        .send({ enabled: true })
        .expect(200);
      await waitFor(() => heard > 1);
    }
  });

  it('serves the discovery index with digests that match the files it points to', async () => {
    const http = request(ctx.app.getHttpServer());
    await http.get('/.well-known/agent-skills/index.json').expect(401);
    const index = (
      await http.get('/.well-known/agent-skills/index.json').set('authorization', `Bearer ${keys.bob}`).expect(200)
    ).body;
    expect(index.version).toBe('0.2.0');
    expect(index.skills.map((skill: { name: string }) => skill.name)).toEqual([
      'alpha',
      'delta',
      'epsilon',
      'gamma',
      'typed',
      'zeta',
    ]);
    const alpha = index.skills[0];
    expect(alpha.files[0].path).toBe('SKILL.md');
    // Skillhost's own name for the version, beside the proposal's fields: a folder skill has no number.
    expect(alpha.version).toEqual({ digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/), number: null });
    const lines: string[] = [];
    for (const file of alpha.files) {
      const got = await http
        .get(file.url)
        .set('authorization', `Bearer ${keys.bob}`)
        .buffer(true)
        .parse((res, done) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => done(null, Buffer.concat(chunks)));
        })
        .expect(200);
      const bytes = got.body as Buffer;
      expect(sha256(bytes)).toBe(file.digest);
      expect(bytes.length).toBe(file.size);
      lines.push(`${file.path}\0${file.digest.slice(7)}\n`);
    }
    lines.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect(alpha.digest).toBe(sha256(lines.join('')));
    await http
      .get('/.well-known/agent-skills/alpha/../typed/SKILL.md')
      .set('authorization', `Bearer ${keys.bob}`)
      .expect((res) => expect([400, 404]).toContain(res.status));
    await http.get('/.well-known/agent-skills/crowded/SKILL.md').set('authorization', `Bearer ${keys.bob}`).expect(404);
  });

  it('tags the discovery index with the digest of its body, and answers 304 to that tag', async () => {
    const http = request(ctx.app.getHttpServer());
    const first = await http
      .get('/.well-known/agent-skills/index.json')
      .set('authorization', `Bearer ${keys.bob}`)
      .expect(200);
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(first.headers.etag).toBe(`"${sha256(Buffer.from(first.text))}"`);
    for (const tag of [first.headers.etag, `W/${first.headers.etag}`, `"sha256:other", ${first.headers.etag}`]) {
      const again = await http
        .get('/.well-known/agent-skills/index.json')
        .set('authorization', `Bearer ${keys.bob}`)
        .set('if-none-match', tag);
      expect([again.status, again.text, again.headers.etag]).toEqual([304, '', first.headers.etag]);
    }
    const stale = await http
      .get('/.well-known/agent-skills/index.json')
      .set('authorization', `Bearer ${keys.bob}`)
      .set('if-none-match', '"sha256:0000"')
      .expect(200);
    expect(stale.body).toEqual(first.body);
    // Another catalogue, another tag: ann's filter leaves gamma out of hers.
    await http
      .put('/v1/me/skills')
      .set('authorization', `Bearer ${keys.ann}`)
      .send({ exclude: ['gamma'] })
      .expect(200);
    try {
      const ann = await http
        .get('/.well-known/agent-skills/index.json')
        .set('authorization', `Bearer ${keys.ann}`)
        .set('if-none-match', first.headers.etag)
        .expect(200);
      expect(ann.headers.etag).not.toBe(first.headers.etag);
    } finally {
      await http.put('/v1/me/skills').set('authorization', `Bearer ${keys.ann}`).send({}).expect(200);
    }
  });

  it('reports the skills it leaves out in the admin view', async () => {
    const http = request(ctx.app.getHttpServer());
    await http.get('/v1/admin/mcp').set('authorization', `Bearer ${keys.bob}`).expect(403);
    const report = (await http.get('/v1/admin/mcp').set('authorization', `Bearer ${keys.root}`).expect(200)).body;
    expect(report.leftOut).toEqual([{ name: 'crowded', owner: null, reason: expect.stringContaining('512') }]);
    expect(report.published).toBe(report.skills - 1);
    expect(report.sessions).toBeGreaterThan(0);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error('timed out waiting for a list_changed notification');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('skills over MCP when they do not all fit the budget', () => {
  let tree: TempTree;
  let ctx: ChatTestContext;
  let base: string;
  let client: Client;

  beforeAll(async () => {
    tree = tempTree();
    for (let i = 0; i < 40; i++) {
      const name = `tool-${String(i).padStart(2, '0')}`;
      writeSkill(tree, 'skills', name, {
        description: `Handles chore number ${i} of the team's weekly routine. Use when asked about chore ${i}.`,
      });
    }
    // Longer than the others: it does not fill what is left of the budget once they are listed.
    writeSkill(tree, 'skills', 'zz-invoices', {
      description:
        'Reconciles supplier invoices against purchase orders and goods receipts, line by line, flagging price ' +
        'and quantity differences. Use for invoice matching.',
    });
    ctx = await startChatApp([tree.path('skills')], {
      'app.mcp.catalogue_budget_tokens': 300,
      'app.mcp.instructions_max_chars': 1024,
    });
    await ctx.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;
    client = new Client({ name: 'skillhost-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
  });

  afterAll(async () => {
    await client?.close();
    await ctx?.close();
    tree?.cleanup();
  });

  it(
    'lists whole entries within the budget, says how many more there are, and offers search_skills (the same ' +
      'bytes on every listing)',
    async () => {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['activate_team_skill', 'read_skill_file', 'search_skills']);
      const description = tools[0].description ?? '';
      const listed = description.split('\n').filter((line) => line.startsWith('- '));
      expect(listed.length).toBeGreaterThan(0);
      expect(listed.length).toBeLessThan(41);
      for (const line of listed)
        expect(line).toMatch(
          /^- tool-\d\d: Handles chore number \d+ of the team's weekly routine\. Use when asked about chore \d+\.$/,
        );
      expect(description).toContain(
        `(${41 - listed.length} more skills are not listed here: find them with the search_skills tool when no ` +
          `listed skill fits the task.)`,
      );
      // A name from search is not in an enum of the listed ones.
      expect((tools[0].inputSchema.properties as Record<string, { enum?: string[] }>).name.enum).toBeUndefined();
      expect((await client.listTools()).tools).toEqual(tools);
      expect(tools[2].annotations).toMatchObject({ readOnlyHint: true, openWorldHint: false });
    },
  );

  it(
    'keeps the instructions within instructions_max_chars, whole entries only, naming what it leaves ' + 'out',
    async () => {
      const instructions = client.getInstructions() ?? '';
      expect(instructions.length).toBeLessThanOrEqual(1024);
      const lines = instructions.split('\n');
      for (const line of lines.filter((l) => l.startsWith('- ')))
        expect(line).toMatch(/Use when asked about chore \d+\.$/);
      expect(lines[lines.length - 1]).toMatch(
        new RegExp(
          "^\\(\\d+ more skills are listed in activate_team_skill's description; \\d+ more are found " +
            'with search_skills\\.\\)$',
        ),
      );
    },
  );

  it('finds an unlisted skill with search_skills, and activates it by name', async () => {
    const found = await client.callTool({ name: 'search_skills', arguments: { query: 'match supplier invoices' } });
    const results = JSON.parse((found.content as { text: string }[])[0].text).results as { name: string }[];
    expect(results[0].name).toBe('zz-invoices');
    const activated = await client.callTool({ name: 'activate_team_skill', arguments: { name: 'zz-invoices' } });
    expect([activated.isError ?? false, (activated.content as { text: string }[])[0].text]).toEqual([
      false,
      expect.stringContaining('<skill_content name="zz-invoices">'),
    ]);
  });
});
