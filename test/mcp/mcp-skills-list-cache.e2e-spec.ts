import { rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Skill } from '@modelcontextprotocol/client/ext/skills';
import request from 'supertest';
import { z } from 'zod';
import { UsersService } from '../../src/domain/users/users.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { tarGzOf } from '../support/skill-archives.js';
import { skillMd, tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';

/**
 * `skills/list` answers are remembered per view of the catalogue, protocol version and cursor (mcp-server.factory.ts):
 * a remembered page is the page the SDK made, a reload or a filter change is seen by the very next request, and a
 * page of one user's view is never another user's, whatever cursor they send.
 */

type Era = 'legacy' | 'auto';
interface Page {
  skills: Skill[];
  nextCursor?: string;
  ttlMs?: number;
  cacheScope?: string;
}

const listPage = async (client: Client, cursor?: string) =>
  (await client.request(
    { method: 'skills/list', params: cursor === undefined ? {} : { cursor } } as never,
    z.looseObject({}),
  )) as unknown as Page;

/** Every page of `skills/list`, raw, as the server answered them. */
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

const names = (pages: Page[]) => pages.flatMap((page) => page.skills.map((skill) => skill.frontmatter.name));

describe('skills/list answers remembered per view', () => {
  let tree: TempTree;
  let ctx: ChatTestContext;
  let base: string;
  const keys: Record<string, string> = {};
  const clients: Client[] = [];
  const http = () => request(ctx.app.getHttpServer());

  beforeAll(async () => {
    tree = tempTree();
    for (const name of ['alpha', 'beta', 'delta', 'epsilon', 'gamma', 'zeta'])
      writeSkill(tree, 'skills', name, { description: `The ${name} skill. Use for ${name} work.` });
    tree.write('skills/alpha/references/guide.md', 'ALPHA-GUIDE\n');
    ctx = await startChatApp([tree.path('skills')], {
      'app.auth.mode': 'api_key',
      'app.skills.store_directory': tree.path('store'),
      'app.mcp.page_size': 2,
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

  async function connect(user: string, era: Era = 'legacy'): Promise<Client> {
    const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${keys[user]}` } },
    });
    const client = new Client({ name: 'skillhost-e2e', version: '1.0.0' }, { versionNegotiation: { mode: era } });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  const setFilter = (user: string, filter: object) =>
    http().put('/v1/me/skills').set('authorization', `Bearer ${keys[user]}`).send(filter).expect(200);

  describe.each<Era>(['legacy', 'auto'])('with a %s client', (era) => {
    it('answers a page it remembers exactly as it answered it when it made it, the files as the index has them', async () => {
      const made = await walk(await connect('ann', era));
      const remembered = await walk(await connect('ann', era));
      expect(remembered).toEqual(made);
      expect(names(made)).toEqual(['alpha', 'beta', 'delta', 'epsilon', 'gamma', 'zeta']);
      expect(made.map((page) => page.skills.length)).toEqual([2, 2, 2]);
      // An empty cursor is no cursor: refused, though the first page is remembered.
      await expect(listPage(await connect('ann', era), '')).rejects.toMatchObject({ code: -32602 });
      if (era === 'auto') expect(made[0]).toMatchObject({ ttlMs: 60_000, cacheScope: 'private' });
      else expect(made[0].ttlMs).toBeUndefined();
      const index = (
        await http().get('/.well-known/agent-skills/index.json').set('authorization', `Bearer ${keys.ann}`).expect(200)
      ).body as { skills: { name: string; files: { path: string; digest: string }[] }[] };
      const alpha = made[0].skills[0];
      const indexed = index.skills.find((skill) => skill.name === 'alpha')!;
      expect(
        (alpha.resources as { uri: string; digest: string }[]).map(({ uri, digest }) => [uri, digest]).sort(),
      ).toEqual(indexed.files.map(({ path, digest }) => [`skill://alpha/${path}`, digest]).sort());
    });
  });

  it("sees a user's filter change at the very next request of an open session, and its undoing", async () => {
    const ann = await connect('ann');
    expect(names(await walk(ann))).toContain('gamma');
    await setFilter('ann', { exclude: ['gamma'] });
    try {
      // No waiting for a notification: the next request's view is another object, whose pages are made afresh.
      expect(names(await walk(ann))).toEqual(['alpha', 'beta', 'delta', 'epsilon', 'zeta']);
    } finally {
      await setFilter('ann', {});
    }
    expect(names(await walk(ann))).toEqual(['alpha', 'beta', 'delta', 'epsilon', 'gamma', 'zeta']);
  });

  it('sees a reload at the very next request of an open session', async () => {
    const ann = await connect('ann');
    const modern = await connect('ann', 'auto');
    expect(names(await walk(ann))).not.toContain('omega');
    await walk(modern);
    writeSkill(tree, 'skills', 'omega', { description: 'Added on disk. Use for omega work.' });
    try {
      await http().post('/v1/admin/skills/reload').set('authorization', `Bearer ${keys.root}`).expect(200);
      expect(names(await walk(ann))).toContain('omega');
      expect(names(await walk(modern))).toContain('omega');
    } finally {
      rmSync(tree.path('skills/omega'), { recursive: true, force: true });
      await http().post('/v1/admin/skills/reload').set('authorization', `Bearer ${keys.root}`).expect(200);
    }
    expect(names(await walk(ann))).not.toContain('omega');
  });

  it(
    "never answers one user's page to another: the same cursor in another user's session is read in their own " +
      'view, in both orders',
    async () => {
      const archive = await tarGzOf({
        'aaa-mine/SKILL.md': skillMd({ name: 'aaa-mine', description: 'Ann only. Use for ann things.' }),
      });
      await http()
        .post('/v1/skills')
        .set('authorization', `Bearer ${keys.ann}`)
        .set('content-type', archive.contentType)
        .send(archive.body)
        .expect(201);
      await setFilter('bob', { exclude: ['beta'] });
      try {
        for (const era of ['legacy', 'auto'] as const) {
          const ann = await connect('ann', era);
          const bob = await connect('bob', era);
          // Bob asks first: a page made for his view must not be answered to Ann, nor Ann's to him.
          const bobFirst = await listPage(bob);
          const annFirst = await listPage(ann);
          expect(names([bobFirst])).toEqual(['alpha', 'delta']);
          expect(names([annFirst])).toEqual(['aaa-mine', 'alpha']);
          // Each sends the other's cursor: the page after that name in their own view.
          const annWithBobs = await listPage(ann, bobFirst.nextCursor);
          const bobWithAnns = await listPage(bob, annFirst.nextCursor);
          expect(names([annWithBobs])).toEqual(['epsilon', 'gamma']);
          expect(names([bobWithAnns])).toEqual(['delta', 'epsilon']);
          expect(names(await walk(bob))).toEqual(['alpha', 'delta', 'epsilon', 'gamma', 'zeta']);
          expect(names(await walk(ann))).toEqual(['aaa-mine', 'alpha', 'beta', 'delta', 'epsilon', 'gamma', 'zeta']);
        }
      } finally {
        await setFilter('bob', {});
      }
    },
  );
});
