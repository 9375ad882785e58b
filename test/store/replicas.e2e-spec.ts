import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { query } from '../support/database.js';
import { buildServer, type Instances, startInstances } from '../support/instances.js';
import { multipartOf, type UploadBody, zipOf } from '../support/skill-archives.js';
import { skillMd, tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import type { WireJson } from '../support/wire-json.js';

/**
 * Two server processes on one database, started together on a fresh one: a store change or a
 * reload made through one takes effect on the other. Instance A checks the generations only once a
 * minute, so what reaches it comes through LISTEN/NOTIFY; instance B checks every 200 ms, which
 * catches a change whose notification never came. No timing is asserted: each wait gives up after
 * 15 s (bench/results/store.md measures how long it takes).
 */
describe('several instances on one database stay in step', () => {
  let tree: TempTree;
  let cluster: Instances;
  const [a, b] = [0, 1];
  const url = (instance: number, path: string) => `${cluster.baseUrls[instance]}${path}`;
  const get = async (instance: number, path: string) => {
    const response = await fetch(url(instance, path));
    return { status: response.status, body: (await response.json()) as WireJson };
  };
  const send = async (instance: number, method: string, path: string, body?: unknown) => {
    const response = await fetch(url(instance, path), {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: response.status === 204 ? null : ((await response.json()) as WireJson) };
  };
  const upload = async (instance: number, archive: UploadBody) => {
    const response = await fetch(url(instance, '/v1/admin/skills'), {
      method: 'POST',
      headers: { 'content-type': archive.contentType },
      body: archive.body,
    });
    return { status: response.status, body: (await response.json()) as WireJson };
  };
  const names = async (instance: number) =>
    (await get(instance, '/v1/skills')).body.skills.map((s: { name: string }) => s.name) as string[];
  /** Polls until `check` holds (or 15 s pass, and the last value is what the assertion sees). */
  const eventually = async <T>(probe: () => Promise<T>, check: (value: T) => boolean): Promise<T> => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      const value = await probe();
      if (check(value) || Date.now() > deadline) return value;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  beforeAll(async () => {
    buildServer();
    tree = tempTree();
    writeSkill(tree, 'skills', 'pdf', { description: 'Works with PDF files.' });
    cluster = await startInstances(2, {
      overrides: { 'app.skills.enabled': true, 'app.skills.directories': [tree.path('skills')] },
      overridesFor: (index) => ({
        'app.skills.store_directory': tree.path(`store-${index}`),
        'app.skills.sync_interval_ms': index === a ? 60_000 : 200,
      }),
    });
  }, 120_000);
  afterAll(async () => {
    await cluster?.close();
    tree?.cleanup();
  });

  it('an install on one instance is listed and readable on the other (unpacked there from the database)', async () => {
    const files = {
      'weekly/SKILL.md': skillMd({ name: 'weekly', description: 'Weekly report.' }),
      'weekly/references/how.md': 'version one',
    };
    expect((await upload(b, await zipOf(files))).status).toBe(201);
    expect(
      await eventually(
        () => names(a),
        (list) => list.includes('weekly'),
      ),
    ).toEqual(['pdf', 'weekly']);
    const read = await fetch(url(a, '/v1/skills/weekly/resources/references/how.md'));
    expect(await read.text()).toBe('version one');
  });

  it('a new version, a rollback and a switch on one instance reach the other', async () => {
    const second = await upload(
      a,
      multipartOf({ 'weekly/SKILL.md': skillMd({ name: 'weekly', description: 'Weekly report, second edition.' }) }),
    );
    expect(second.body.version).toBe(2);
    const described = () => get(b, '/v1/skills/weekly').then((r) => r.body.description as string);
    expect(await eventually(described, (text) => text.includes('second edition'))).toBe(
      'Weekly report, second edition.',
    );
    expect((await send(b, 'POST', '/v1/admin/skills/weekly/rollback', { version: 1 })).status).toBe(200);
    expect(
      await eventually(
        () => get(a, '/v1/skills/weekly').then((r) => r.body.description as string),
        (text) => text === 'Weekly report.',
      ),
    ).toBe('Weekly report.');
    expect((await send(a, 'PUT', '/v1/admin/skills/pdf/enabled', { enabled: false })).status).toBe(200);
    expect(
      await eventually(
        () => get(b, '/v1/skills/pdf').then((r) => r.body.code),
        (code) => code === 'SKILL_DISABLED',
      ),
    ).toBe('SKILL_DISABLED');
    await send(b, 'PUT', '/v1/admin/skills/pdf/enabled', { enabled: true });
    expect(
      await eventually(
        () => get(a, '/v1/skills/pdf').then((r) => r.status),
        (status) => status === 200,
      ),
    ).toBe(200);
  });

  it('an uninstall on one instance takes the skill out of the other', async () => {
    expect((await send(a, 'DELETE', '/v1/admin/skills/weekly')).status).toBe(204);
    expect(
      await eventually(
        () => names(b),
        (list) => !list.includes('weekly'),
      ),
    ).toEqual(['pdf']);
  });

  it('a reload asked of one instance rescans the other', async () => {
    writeSkill(tree, 'skills', 'late', { description: 'Arrived on disk later.' });
    const reload = await send(a, 'POST', '/v1/admin/skills/reload');
    expect(reload.body.diff.added).toEqual([
      expect.objectContaining({ name: 'late', digest: expect.stringMatching(/^sha256:/) }),
    ]);
    expect(
      await eventually(
        () => names(b),
        (list) => list.includes('late'),
      ),
    ).toEqual(['late', 'pdf']);
  });

  it('a change whose notification was missed is caught by the periodic check', async () => {
    // A switch written behind the instances' backs: the generation moves, no NOTIFY is sent.
    await query(cluster.db.url, "INSERT INTO skill_switches (name, enabled) VALUES ('late', false)");
    await query(cluster.db.url, 'UPDATE skill_store_state SET generation = generation + 1');
    expect(
      await eventually(
        () => get(b, '/v1/skills/late').then((r) => r.body.code),
        (code) => code === 'SKILL_DISABLED',
      ),
    ).toBe('SKILL_DISABLED');
  });

  /** An MCP session on `instance` counting the resources/list_changed it hears, its GET stream open. */
  const listeningSession = async (instance: number) => {
    let heard = 0;
    const client = new Client(
      { name: 'replicas', version: '1.0.0' },
      { listChanged: { resources: { autoRefresh: false, debounceMs: 0, onChanged: () => heard++ } } },
    );
    const transport = new StreamableHTTPClientTransport(new URL(url(instance, '/mcp')));
    await client.connect(transport);
    await new Promise((resolve) => setTimeout(resolve, 300));
    return {
      heardOfIt: () =>
        eventually(
          async () => heard,
          (count) => count > 0,
        ),
      names: async () => (await new SkillsClient(client).list()).skills.map((skill) => skill.frontmatter.name),
      close: async () => {
        await transport.terminateSession();
        await client.close();
      },
    };
  };

  it('an MCP client of one instance hears of an install on the other, and lists the skill there', async () => {
    const session = await listeningSession(a);
    try {
      const files = {
        'mcp-news/SKILL.md': skillMd({ name: 'mcp-news', description: 'Installed on the other instance.' }),
      };
      expect((await upload(b, await zipOf(files))).status).toBe(201);
      expect(await session.heardOfIt()).toBeGreaterThan(0);
      expect(await session.names()).toContain('mcp-news');
    } finally {
      await session.close();
    }
  });

  it("a user's filter saved on one instance narrows what the other serves and tells its sessions", async () => {
    const session = await listeningSession(a);
    try {
      // Read (and remembered) on A before the change.
      expect(await session.names()).toContain('pdf');
      expect((await send(b, 'PUT', '/v1/me/skills', { exclude: ['pdf'] })).status).toBe(200);
      // Only the notification tells A's sessions: a filter read again once it expires tells no one.
      expect(await session.heardOfIt()).toBeGreaterThan(0);
      expect(await session.names()).not.toContain('pdf');
    } finally {
      await send(b, 'PUT', '/v1/me/skills', {});
      await session.close();
    }
  });
});
