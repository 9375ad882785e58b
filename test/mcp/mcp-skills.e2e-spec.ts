import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { type Skill, SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import request from 'supertest';
import { z } from 'zod';
import { UsersService } from '../../src/auth/users.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { tarGzOf } from '../support/skill-archives.js';
import { skillMd, tempTree, type TempTree, writeSkill } from '../support/skill-tree.js';

/**
 * Issue 14: the team's skills for every agent over MCP (`/mcp`, the MCP Skills extension with the
 * official TypeScript client, both protocol eras) and the Agent Skills discovery index.
 */

/** A request by method name, its result read as it comes (extension methods have no schema in the client). */
const call = (client: Client, method: string, params: Record<string, unknown>) => client.request({ method, params } as never, z.looseObject({}));
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
    writeSkill(tree, 'skills', 'alpha', { description: 'Alpha does the first thing. Use when a test needs alpha.', body: 'ALPHA-BODY-MARKER\n\nSee references/guide.md.' });
    tree.write('skills/alpha/references/guide.md', 'ALPHA-GUIDE-MARKER\n');
    tree.write('skills/alpha/references/deep/more.md', 'deeper\n');
    tree.write('skills/alpha/scripts/run.sh', '#!/bin/sh\necho alpha\n');
    tree.write('skills/alpha/assets/logo.png', PNG);
    // Frontmatter the MCP client reads with YAML 1.2 types: a number, a boolean, a nested map.
    tree.write('skills/typed/SKILL.md', '---\nname: typed\ndescription: "Typed frontmatter: a colon, quotes."\nlicense: MIT\nmetadata:\n  version: "2.1"\n  owner: team\n---\nTYPED-BODY\n');
    for (const name of ['delta', 'epsilon', 'gamma', 'zeta']) writeSkill(tree, 'skills', name, { description: `The ${name} skill. Use for ${name} work.` });
    writeSkill(tree, 'skills', 'crowded', { description: 'Has more files than the extension allows.' });
    for (let i = 0; i < 520; i++) tree.write(`skills/crowded/references/f${i}.md`, `${i}\n`);
    ctx = await startChatApp([tree.path('skills')], { 'app.auth.mode': 'api_key', 'app.skills.store_directory': tree.path('store'), 'app.mcp.page_size': 3 });
    const users = ctx.app.get(UsersService);
    for (const [name, role] of [['root', 'admin'], ['ann', 'member'], ['bob', 'member']] as const) {
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

  async function connect(user: string, era: Era = 'legacy', onResourcesChanged?: () => void): Promise<{ client: Client; skills: SkillsClient }> {
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${keys[user]}` } } });
    const client = new Client(
      { name: 'skillhost-e2e', version: '1.0.0' },
      {
        versionNegotiation: { mode: era },
        ...(onResourcesChanged === undefined ? {} : { listChanged: { resources: { autoRefresh: false, debounceMs: 0, onChanged: () => onResourcesChanged() } } }),
      },
    );
    await client.connect(transport);
    clients.push(client);
    return { client, skills: new SkillsClient(client) };
  }

  const names = (skills: readonly Skill[]) => skills.map((skill) => skill.frontmatter.name);

  describe.each<Era>(['legacy', 'auto'])('with a %s client', (era) => {
    it('sees the extension with directory reads, resources, the activate_skill tool and the prompts', async () => {
      const { client, skills } = await connect('ann', era);
      // The SDK's default is the 2025 handshake (today's agents); `auto` negotiates 2026-07-28.
      expect(client.getNegotiatedProtocolVersion()).toBe(era === 'auto' ? '2026-07-28' : '2025-11-25');
      expect(skills.supported).toBe(true);
      expect(skills.directoryRead).toBe(true);
      const capabilities = client.getServerCapabilities();
      expect(capabilities?.resources).toBeDefined();
      expect(capabilities?.extensions?.['io.modelcontextprotocol/skills']).toEqual({ directoryRead: true });
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['activate_skill']);
      const nameSchema = (tools[0].inputSchema.properties as Record<string, { enum?: string[] }>).name;
      expect(nameSchema.enum).toEqual(expect.arrayContaining(['alpha', 'typed', 'zeta']));
    });

    it('pages through skills/list to every served skill, each a complete manifest; the crowded skill is left out', async () => {
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
        expect.arrayContaining(['skill://alpha/SKILL.md', 'skill://alpha/references/guide.md', 'skill://alpha/references/deep/more.md', 'skill://alpha/scripts/run.sh', 'skill://alpha/assets/logo.png']),
      );
      expect(paths).toHaveLength(5);
      for (const resource of alpha.resources as { digest: string; size: number }[]) {
        expect(resource.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      }
      const typed = listing.skills.find((skill) => skill.frontmatter.name === 'typed')!;
      expect(typed.frontmatter).toEqual({ name: 'typed', description: 'Typed frontmatter: a colon, quotes.', license: 'MIT', metadata: { version: '2.1', owner: 'team' } });
    });

    it('lists each served SKILL.md in resources/list, with its name, description and size', async () => {
      const { client } = await connect('ann', era);
      const { resources } = await client.listResources();
      expect(resources.map((resource) => resource.uri)).toEqual(['alpha', 'delta', 'epsilon', 'gamma', 'typed', 'zeta'].map((name) => `skill://${name}/SKILL.md`));
      expect(resources.find((resource) => resource.name === 'typed')).toMatchObject({ description: 'Typed frontmatter: a colon, quotes.', mimeType: 'text/markdown', size: expect.any(Number) });
    });

    it('gets one skill by URI and refuses an unknown one with -32602', async () => {
      const { client, skills } = await connect('ann', era);
      const { skill } = await skills.get('skill://typed/SKILL.md');
      expect(skill.frontmatter.name).toBe('typed');
      await expect(call(client, 'skills/get', { uri: 'skill://nope/SKILL.md' })).rejects.toMatchObject({ code: -32602 });
      await expect(call(client, 'skills/get', { uri: 'skill://crowded/SKILL.md' })).rejects.toMatchObject({ code: -32602 });
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
      const entry = (skill.resources as { uri: string; digest: string; size: number }[]).find((resource) => resource.uri.endsWith('logo.png'))!;
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
      expect(references.resources.map((child) => child.uri)).toEqual(['skill://alpha/references/deep', 'skill://alpha/references/guide.md']);
    });

    it('refuses reads outside what a skill publishes with -32602: traversal, unknown files, a file as a directory', async () => {
      const { client } = await connect('ann', era);
      for (const uri of ['skill://alpha/../typed/SKILL.md', 'skill://alpha/%2e%2e/%2e%2e/etc/passwd', 'skill://alpha/references/missing.md', 'skill://crowded/SKILL.md', 'file:///etc/passwd']) {
        await expect(client.readResource({ uri })).rejects.toMatchObject({ code: -32602 });
      }
      await expect(call(client, 'resources/directory/read', { uri: 'skill://alpha/SKILL.md' })).rejects.toMatchObject({ code: -32602 });
    });

    it('activates a skill through activate_skill and refuses an unknown name with an error result', async () => {
      const { client } = await connect('ann', era);
      const result = await client.callTool({ name: 'activate_skill', arguments: { name: 'alpha' } });
      expect(result.isError).toBeFalsy();
      const text = (result.content as { type: string; text: string }[])[0].text;
      expect(text).toContain('<skill_content name="alpha">');
      expect(text).toContain('ALPHA-BODY-MARKER');
      expect(text).toContain('<file>references/guide.md</file>');
      const refused = await client.callTool({ name: 'activate_skill', arguments: { name: 'nope' } });
      expect(refused.isError).toBe(true);
    });

    it('offers one prompt per skill that brings in the instructions', async () => {
      const { client } = await connect('ann', era);
      const listed = await client.listPrompts();
      expect(listed.prompts.map((prompt) => prompt.name)).toEqual(expect.arrayContaining(['alpha', 'typed']));
      const prompt = await client.getPrompt({ name: 'alpha', arguments: { request: 'tidy the report' } });
      const text = (prompt.messages[0].content as { text: string }).text;
      expect(text).toContain('ALPHA-BODY-MARKER');
      expect(text).toContain('tidy the report');
    });
  });

  it('is refused without a key, with a wrong key, and a session is not another user\'s', async () => {
    const body = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } };
    const accept = 'application/json, text/event-stream';
    const none = await request(ctx.app.getHttpServer()).post('/mcp').set('accept', accept).send(body);
    expect(none.status).toBe(401);
    // Both the API's error body and a JSON-RPC error, for MCP clients.
    expect(none.body).toMatchObject({ code: 'UNAUTHENTICATED', jsonrpc: '2.0', id: 1, error: { code: -32000, data: { code: 'UNAUTHENTICATED' } } });
    const wrong = await request(ctx.app.getHttpServer()).post('/mcp').set('accept', accept).set('authorization', 'Bearer sk_nope').send(body);
    expect(wrong.status).toBe(401);
    const opened = await request(ctx.app.getHttpServer()).post('/mcp').set('accept', accept).set('authorization', `Bearer ${keys.ann}`).send(body);
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
    expect(stolen.body).toMatchObject({ code: 'MCP_SESSION_NOT_FOUND', jsonrpc: '2.0', id: 2, error: { code: -32001, data: { code: 'MCP_SESSION_NOT_FOUND' } } });
  });

  it("gives each user their own catalogue: a personal skill is its owner's alone; connected clients of both eras hear of the install", async () => {
    let annHeard = 0;
    let bobHeard = 0;
    const ann = await connect('ann', 'legacy', () => annHeard++);
    const bob = await connect('bob', 'auto', () => bobHeard++);
    // Let the notification streams open before the change.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const archive = await tarGzOf({ 'mine/SKILL.md': skillMd({ name: 'mine', description: 'Ann only. Use for ann things.', body: 'MINE-BODY' }), 'mine/notes.txt': 'MINE-NOTES\n' });
    await request(ctx.app.getHttpServer()).post('/v1/skills').set('authorization', `Bearer ${keys.ann}`).set('content-type', archive.contentType).send(archive.body).expect(201);
    await waitFor(() => annHeard > 0 && bobHeard > 0);
    expect(names((await ann.skills.list()).skills)).toContain('mine');
    expect(names((await bob.skills.list()).skills)).not.toContain('mine');
    const { skill } = await ann.skills.get('skill://mine/SKILL.md');
    expect((await ann.skills.read(skill, 'notes.txt')).text).toBe('MINE-NOTES\n');
    await expect(call(bob.client, 'skills/get', { uri: 'skill://mine/SKILL.md' })).rejects.toMatchObject({ code: -32602 });
    await expect(bob.client.readResource({ uri: 'skill://mine/notes.txt' })).rejects.toMatchObject({ code: -32602 });
    const bobsFetch = await request(ctx.app.getHttpServer()).get('/.well-known/agent-skills/mine/SKILL.md').set('authorization', `Bearer ${keys.bob}`);
    expect([bobsFetch.status, bobsFetch.body.code]).toEqual([404, 'SKILL_NOT_FOUND']);
  });

  it("tells a user's sessions when their own filter changes their catalogue, and applies it", async () => {
    let annHeard = 0;
    let bobHeard = 0;
    const ann = await connect('ann', 'legacy', () => annHeard++);
    await connect('bob', 'legacy', () => bobHeard++);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const http = request(ctx.app.getHttpServer());
    await http.put('/v1/me/skills').set('authorization', `Bearer ${keys.ann}`).send({ exclude: ['gamma'] }).expect(200);
    try {
      await waitFor(() => annHeard > 0);
      expect(names((await ann.skills.list()).skills)).not.toContain('gamma');
      await expect(call(ann.client, 'skills/get', { uri: 'skill://gamma/SKILL.md' })).rejects.toMatchObject({ code: -32602 });
      // Bob's catalogue did not change: his session is not told.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(bobHeard).toBe(0);
    } finally {
      await http.put('/v1/me/skills').set('authorization', `Bearer ${keys.ann}`).send({}).expect(200);
    }
  });

  it('tells connected clients when an admin switches a skill off, and stops serving it', async () => {
    let heard = 0;
    const ann = await connect('ann', 'legacy', () => heard++);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const http = request(ctx.app.getHttpServer());
    await http.put('/v1/admin/skills/zeta/enabled').set('authorization', `Bearer ${keys.root}`).send({ enabled: false }).expect(200);
    try {
      await waitFor(() => heard > 0);
      expect(names((await ann.skills.list()).skills)).not.toContain('zeta');
      await expect(ann.client.readResource({ uri: 'skill://zeta/SKILL.md' })).rejects.toMatchObject({ code: -32602 });
    } finally {
      await http.put('/v1/admin/skills/zeta/enabled').set('authorization', `Bearer ${keys.root}`).send({ enabled: true }).expect(200);
      await waitFor(() => heard > 1);
    }
  });

  it('serves the discovery index with digests that match the files it points to', async () => {
    const http = request(ctx.app.getHttpServer());
    await http.get('/.well-known/agent-skills/index.json').expect(401);
    const index = (await http.get('/.well-known/agent-skills/index.json').set('authorization', `Bearer ${keys.bob}`).expect(200)).body;
    expect(index.version).toBe('0.2.0');
    expect(index.skills.map((skill: { name: string }) => skill.name)).toEqual(['alpha', 'delta', 'epsilon', 'gamma', 'typed', 'zeta']);
    const alpha = index.skills[0];
    expect(alpha.files[0].path).toBe('SKILL.md');
    const lines: string[] = [];
    for (const file of alpha.files) {
      const got = await http.get(file.url).set('authorization', `Bearer ${keys.bob}`).buffer(true).parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => done(null, Buffer.concat(chunks)));
      }).expect(200);
      const bytes = got.body as Buffer;
      expect(sha256(bytes)).toBe(file.digest);
      expect(bytes.length).toBe(file.size);
      lines.push(`${file.path}\0${file.digest.slice(7)}\n`);
    }
    lines.sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    expect(alpha.digest).toBe(sha256(lines.join('')));
    await http.get('/.well-known/agent-skills/alpha/../typed/SKILL.md').set('authorization', `Bearer ${keys.bob}`).expect((res) => expect([400, 404]).toContain(res.status));
    await http.get('/.well-known/agent-skills/crowded/SKILL.md').set('authorization', `Bearer ${keys.bob}`).expect(404);
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
