import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import request from 'supertest';
import { UsersService } from '../../src/domain/users/users.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { query } from '../support/database.js';
import { skillMd, tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { zipOf } from '../support/skill-archives.js';

/**
 * Groups and roles through the real app on PostgreSQL: a shared skill given to a group is in its members' views only,
 * through every door this suite can reach (REST catalogue, search, the discovery index and versions.json, MCP,
 * activation and resources), and leaks nowhere else; editors publish and roll back only what they or their groups
 * own; every change is in the audit log.
 */
let tree: TempTree;
let ctx: ChatTestContext;
let base: string;
const keys: Record<string, string> = {};
const ids: Record<string, string> = {};
let finance: string;
const clients: Client[] = [];
const http = () => request(ctx.app.getHttpServer());
const as = (user: string) => ({ authorization: `Bearer ${keys[user]}` });

async function upload(path: string, user: string, name: string, body = 'BODY') {
  const archive = await zipOf({
    [`${name}/SKILL.md`]: skillMd({ name, description: `The ${name} skill for payroll runs.`, body }),
    [`${name}/references/notes.md`]: `${name} NOTES`,
  });
  return http().post(path).set(as(user)).set('content-type', archive.contentType).send(archive.body);
}

const names = (items: { name: string }[]) => items.map((item) => item.name);

beforeAll(async () => {
  tree = tempTree();
  writeSkill(tree, 'skills', 'team-notes', { description: 'Notes for the whole team.' });
  ctx = await startChatApp([tree.path('skills')], { 'app.auth.mode': 'api_key' });
  ctx.model.answerWith(() => ({ text: 'ok' }));
  const users = ctx.app.get(UsersService);
  for (const [name, role] of [
    ['root', 'admin'],
    ['alice', 'member'],
    ['bob', 'member'],
    ['erin', 'editor'],
    ['dave', 'editor'],
  ] as const) {
    const user = await users.createUser(name, role);
    ids[name] = user.id;
    keys[name] = (await users.createKey(user.id)).key;
  }
  finance = (await http().post('/v1/admin/groups').set(as('root')).send({ name: 'finance' }).expect(201)).body.id;
  for (const member of ['alice', 'erin'])
    await http().put(`/v1/admin/groups/${finance}/members/${ids[member]}`).set(as('root')).expect(200);
  expect((await upload('/v1/admin/skills', 'root', 'payroll')).status).toBe(201);
  const access = await http()
    .put('/v1/admin/skills/payroll/access')
    .set(as('root'))
    .send({ audience: 'groups', groups: [finance], owningGroupId: finance })
    .expect(200);
  expect(access.body).toEqual({
    name: 'payroll',
    audience: 'groups',
    groups: [{ id: finance, name: 'finance' }],
    owningUser: null,
    owningGroup: { id: finance, name: 'finance' },
  });
  await ctx.app.listen(0, '127.0.0.1');
  base = `http://127.0.0.1:${(ctx.app.getHttpServer().address() as AddressInfo).port}`;
});

afterAll(async () => {
  await Promise.allSettled(clients.map((client) => client.close()));
  await ctx?.close();
  tree?.cleanup();
});

describe('a skill shared with a group', () => {
  it("is in the group members' catalogue and search, and in nobody else's (admins' included)", async () => {
    expect(names((await http().get('/v1/skills').set(as('alice')).expect(200)).body.skills)).toEqual([
      'payroll',
      'team-notes',
    ]);
    for (const outsider of ['bob', 'root', 'dave']) {
      const listed = (await http().get('/v1/skills').set(as(outsider)).expect(200)).body;
      expect({ outsider, names: names(listed.skills) }).toEqual({ outsider, names: ['team-notes'] });
      const catalogue = await http().get('/v1/skills-catalogue').set(as(outsider)).expect(200);
      expect(catalogue.text).not.toContain('payroll');
      const search = (await http().get('/v1/skills/search?q=payroll').set(as(outsider)).expect(200)).body;
      expect(JSON.stringify(search)).not.toContain('payroll');
    }
    expect((await http().get('/v1/skills-catalogue').set(as('alice')).expect(200)).text).toContain('payroll');
    // The admin views show every shared skill, whoever's catalogue offers it.
    const report = (await http().get('/v1/admin/skills').set(as('root')).expect(200)).body;
    expect(names(report.valid)).toEqual(['payroll', 'team-notes']);
    const mcp = (await http().get('/v1/admin/mcp').set(as('root')).expect(200)).body;
    expect(mcp.skills).toBe(2);
    const found = (await http().get('/v1/skills/search?q=payroll').set(as('alice')).expect(200)).body;
    expect(JSON.stringify(found)).toContain('payroll');
  });

  it('is in the discovery index and versions.json of the members only', async () => {
    const index = (who: string) => http().get('/.well-known/agent-skills/index.json').set(as(who)).expect(200);
    expect(names((await index('alice')).body.skills)).toEqual(['payroll', 'team-notes']);
    expect(names((await index('bob')).body.skills)).toEqual(['team-notes']);
    const versions = (who: string) => http().get('/.well-known/agent-skills/versions.json').set(as(who)).expect(200);
    expect((await versions('alice')).text).toContain('payroll');
    expect((await versions('bob')).text).not.toContain('payroll');
    await http().get('/.well-known/agent-skills/payroll/SKILL.md').set(as('alice')).expect(200);
    const refused = await http().get('/.well-known/agent-skills/payroll/SKILL.md').set(as('bob'));
    expect(refused.status).toBe(404);
  });

  it(
    "answers an outsider's activation, body and resource reads exactly as for a skill that does not " + 'exist',
    async () => {
      const chat = (await http().post('/v1/chats').set(as('bob')).send({}).expect(201)).body.id;
      const activate = (name: string) =>
        http().post(`/v1/chats/${chat}/tools/skills.activate`).set(as('bob')).send({ name }).expect(200);
      const hidden = (await activate('payroll')).body.toolCard;
      const missing = (await activate('no-such-skill')).body.toolCard;
      expect(hidden.status).toBe('error');
      expect(hidden.output).toContain('SKILL_NOT_FOUND');
      expect(hidden.output.replaceAll('payroll', 'NAME')).toBe(missing.output.replaceAll('no-such-skill', 'NAME'));
      const body = await http().get('/v1/skills/payroll/body').set(as('bob')).expect(404);
      const none = await http().get('/v1/skills/no-such-skill/body').set(as('bob')).expect(404);
      expect(body.body.code).toBe('SKILL_NOT_FOUND');
      expect(JSON.stringify(body.body).replaceAll('payroll', 'NAME')).toBe(
        JSON.stringify(none.body).replaceAll('no-such-skill', 'NAME'),
      );
      await http().get('/v1/skills/payroll/resources/references/notes.md').set(as('bob')).expect(404);
      for (const query of ['', '?scope=shared']) {
        const versions = await http().get(`/v1/skills/payroll/versions${query}`).set(as('bob')).expect(404);
        const never = await http().get(`/v1/skills/no-such-skill/versions${query}`).set(as('bob')).expect(404);
        expect(JSON.stringify(versions.body).replaceAll('payroll', 'NAME')).toBe(
          JSON.stringify(never.body).replaceAll('no-such-skill', 'NAME'),
        );
      }
      await http().get('/v1/skills/payroll/versions').set(as('alice')).expect(200);
      await http().get('/v1/skills/payroll/versions').set(as('root')).expect(200);
      const aliceChat = (await http().post('/v1/chats').set(as('alice')).send({}).expect(201)).body.id;
      const allowed = await http()
        .post(`/v1/chats/${aliceChat}/tools/skills.activate`)
        .set(as('alice'))
        .send({ name: 'payroll' })
        .expect(200);
      expect(allowed.body.toolCard.status).toBe('ok');
    },
  );

  it("is listed over MCP to the members only, and an outsider's read of it is SKILL_NOT_FOUND", async () => {
    const connect = async (user: string) => {
      const client = new Client({ name: 'groups-e2e', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: as(user) } }),
      );
      clients.push(client);
      return client;
    };
    const alice = await connect('alice');
    const bob = await connect('bob');
    const listed = async (client: Client) =>
      (await new SkillsClient(client).list()).skills.map((skill) => skill.frontmatter.name);
    expect(await listed(alice)).toEqual(['payroll', 'team-notes']);
    expect(await listed(bob)).toEqual(['team-notes']);
    const read = await bob.callTool({
      name: 'read_skill_file',
      arguments: { name: 'payroll', path: 'references/notes.md' },
    });
    expect(read.isError).toBe(true);
    expect((read as { content: { text: string }[] }).content[0].text).toContain('SKILL_NOT_FOUND');
  });

  it(
    'leaves the view of a member taken out of the group on their next request, and comes back when ' + 're-added',
    async () => {
      await http().delete(`/v1/admin/groups/${finance}/members/${ids.alice}`).set(as('root')).expect(200);
      expect(names((await http().get('/v1/skills').set(as('alice')).expect(200)).body.skills)).toEqual(['team-notes']);
      await http().put(`/v1/admin/groups/${finance}/members/${ids.alice}`).set(as('root')).expect(200);
      expect(names((await http().get('/v1/skills').set(as('alice')).expect(200)).body.skills)).toContain('payroll');
    },
  );

  it(
    'gives no outsider a hint that the name is taken: their personal skill of that name is theirs, ' + 'unwarned',
    async () => {
      const mine = await upload('/v1/skills', 'bob', 'payroll', 'BOB-OWN');
      expect(mine.status).toBe(201);
      expect(mine.body.warnings).toEqual([]);
      const body = (await http().get('/v1/skills/payroll/body').set(as('bob')).expect(200)).body;
      expect(JSON.stringify(body)).toContain('BOB-OWN');
      const aliceBody = (await http().get('/v1/skills/payroll/body').set(as('alice')).expect(200)).body;
      expect(JSON.stringify(aliceBody)).not.toContain('BOB-OWN');
      await http().delete('/v1/skills/payroll').set(as('bob')).expect(204);
    },
  );
});

describe('editors', () => {
  it('publish and roll back a skill their group owns', async () => {
    const published = await upload('/v1/admin/skills', 'erin', 'payroll', 'SECOND');
    expect(published.status).toBe(201);
    expect(published.body).toMatchObject({ name: 'payroll', version: 2 });
    const rolled = await http()
      .post('/v1/admin/skills/payroll/rollback')
      .set(as('erin'))
      .send({ version: 1 })
      .expect(200);
    expect(rolled.body).toMatchObject({ name: 'payroll', version: 1, changed: true });
  });

  it('are refused (FORBIDDEN, nothing changed) on a skill neither they nor their groups own', async () => {
    const refused = await upload('/v1/admin/skills', 'dave', 'payroll', 'DAVE');
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe('FORBIDDEN');
    expect(refused.body.message).toContain('/v1/admin/skills/payroll/access');
    const rollback = await http().post('/v1/admin/skills/payroll/rollback').set(as('dave')).send({ version: 2 });
    expect([rollback.status, rollback.body.code]).toEqual([403, 'FORBIDDEN']);
    const history = (await http().get('/v1/skills/payroll/versions').set(as('erin')).expect(200)).body;
    expect({ current: history.current, versions: history.versions.length }).toEqual({ current: 1, versions: 2 });
  });

  it('own the new shared skills they publish; members publish none', async () => {
    expect((await upload('/v1/admin/skills', 'dave', 'dave-tool')).status).toBe(201);
    const access = (await http().get('/v1/admin/skills/dave-tool/access').set(as('root')).expect(200)).body;
    expect(access).toEqual({
      name: 'dave-tool',
      audience: 'team',
      groups: [],
      owningUser: { id: ids.dave, name: 'dave' },
      owningGroup: null,
    });
    expect((await upload('/v1/admin/skills', 'dave', 'dave-tool', 'AGAIN')).status).toBe(201);
    const member = await upload('/v1/admin/skills', 'alice', 'alice-shared');
    expect([member.status, member.body.code]).toEqual([403, 'FORBIDDEN']);
    // Admin routes stay admin routes for editors.
    await http().put('/v1/admin/skills/dave-tool/access').set(as('dave')).send({ audience: 'team' }).expect(403);
    await http().get('/v1/admin/groups').set(as('erin')).expect(403);
  });
});

describe('groups', () => {
  it('refuse a taken name, an unknown group, and admin changes to a provider group', async () => {
    const taken = await http().post('/v1/admin/groups').set(as('root')).send({ name: 'finance' }).expect(409);
    expect(taken.body.code).toBe('GROUP_NAME_TAKEN');
    const unknown = await http()
      .get('/v1/admin/groups/00000000-0000-4000-8000-00000000dead')
      .set(as('root'))
      .expect(404);
    expect(unknown.body.code).toBe('GROUP_NOT_FOUND');
    await query(ctx.db.url, "INSERT INTO groups (id, name, source) VALUES (gen_random_uuid(), 'from-idp', 'provider')");
    const [{ id }] = await query<{ id: string }>(ctx.db.url, "SELECT id FROM groups WHERE name = 'from-idp'");
    const managed = await http().put(`/v1/admin/groups/${id}/members/${ids.bob}`).set(as('root')).expect(409);
    expect(managed.body.code).toBe('GROUP_MANAGED_BY_PROVIDER');
    const sharing = await http()
      .put('/v1/admin/skills/payroll/access')
      .set(as('root'))
      .send({ audience: 'groups', groups: ['00000000-0000-4000-8000-00000000dead'] })
      .expect(404);
    expect(sharing.body.code).toBe('GROUP_NOT_FOUND');
    const empty = await http()
      .put('/v1/admin/skills/payroll/access')
      .set(as('root'))
      .send({ audience: 'groups', groups: [] })
      .expect(400);
    expect(empty.body.code).toBe('VALIDATION_FAILED');
  });

  it('lists groups with their members', async () => {
    const detail = (await http().get(`/v1/admin/groups/${finance}`).set(as('root')).expect(200)).body;
    expect(detail).toMatchObject({ name: 'finance', source: 'admin', memberCount: 2 });
    expect(detail.members.map((member: { name: string }) => member.name)).toEqual(['alice', 'erin']);
    const page = (await http().get('/v1/admin/groups').set(as('root')).expect(200)).body;
    expect(page.items.map((group: { name: string }) => group.name)).toContain('finance');
  });
});

describe('the audit log', () => {
  it('holds each change with who made it, in the order made', async () => {
    const rows = await query<{ actor_name: string | null; action: string; target: string }>(
      ctx.db.url,
      'SELECT actor_name, action, target FROM audit_log ORDER BY id',
    );
    const seen = rows.map((row) => `${row.actor_name} ${row.action} ${row.target}`);
    expect(seen).toEqual(
      expect.arrayContaining([
        `root group.create group:${finance}`,
        `root group.member.add group:${finance}`,
        'root skill.install skill:payroll',
        'root skill.audience skill:payroll',
        'erin skill.install skill:payroll',
        'erin skill.rollback skill:payroll',
        'dave skill.install skill:dave-tool',
        `root group.member.remove group:${finance}`,
      ]),
    );
    expect(seen.filter((line) => line.startsWith('dave skill.install skill:payroll'))).toEqual([]);
    expect(seen.filter((line) => line.includes('alice-shared'))).toEqual([]);
  });

  it('is shown to admins newest first, filtered by action and target, and to nobody else', async () => {
    const page = (await http().get('/v1/admin/audit?target=skill:payroll&limit=2').set(as('root')).expect(200)).body;
    expect(page).toMatchObject({ limit: 2, offset: 0 });
    expect(page.items.map((entry: { action: string }) => entry.action)).toEqual(['skill.rollback', 'skill.install']);
    expect(page.items[0]).toMatchObject({
      actor: { id: ids.erin, name: 'erin' },
      target: 'skill:payroll',
      details: { from: 2, to: 1 },
      at: expect.any(String),
    });
    const installs = (await http().get('/v1/admin/audit?action=skill.install').set(as('root')).expect(200)).body;
    expect(installs.items.every((entry: { action: string }) => entry.action === 'skill.install')).toBe(true);
    expect(installs.total).toBe(installs.items.length);
    const bad = await http().get('/v1/admin/audit?action=skill.delete').set(as('root')).expect(400);
    expect(bad.body.code).toBe('VALIDATION_FAILED');
    for (const caller of ['alice', 'erin']) {
      const refused = await http().get('/v1/admin/audit').set(as(caller)).expect(403);
      expect(refused.body.code).toBe('FORBIDDEN');
    }
  });
});

describe('a membership change', () => {
  it("tells the member's connected MCP clients (list_changed) at once, and only theirs", async () => {
    const users = ctx.app.get(UsersService);
    const gina = await users.createUser('gina', 'member');
    const ginaKey = (await users.createKey(gina.id)).key;
    let ginaHeard = 0;
    let bobHeard = 0;
    const connect = async (key: string, onChanged: () => void) => {
      const client = new Client(
        { name: 'agent', version: '1' },
        { listChanged: { tools: { autoRefresh: false, debounceMs: 0, onChanged } } },
      );
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${key}` } },
        }),
      );
      clients.push(client);
      return client;
    };
    // The activation tool's enum: the skills the client's user may activate.
    const offered = async (client: Client) => {
      const [tool] = (await client.listTools()).tools;
      return ((tool.inputSchema.properties as Record<string, { enum?: string[] }>).name.enum ?? []).includes('payroll');
    };
    const ginaAgent = await connect(ginaKey, () => ginaHeard++);
    await connect(keys.bob, () => bobHeard++);
    expect(await offered(ginaAgent)).toBe(false);
    // Let the notification streams open before the change.
    await new Promise((resolve) => setTimeout(resolve, 300));

    await http().put(`/v1/admin/groups/${finance}/members/${gina.id}`).set(as('root')).expect(200);
    await waitFor(() => ginaHeard > 0);
    expect(await offered(ginaAgent)).toBe(true);

    const heard = ginaHeard;
    await http().delete(`/v1/admin/groups/${finance}/members/${gina.id}`).set(as('root')).expect(200);
    await waitFor(() => ginaHeard > heard);
    expect(await offered(ginaAgent)).toBe(false);
    // Bob's view never changed: his client was not told.
    expect(bobHeard).toBe(0);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error('timed out waiting for a list_changed notification');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
