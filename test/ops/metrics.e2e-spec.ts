import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import request from 'supertest';
import { createApp } from '../../src/app/app.factory.js';
import { UsersService } from '../../src/domain/users/users.service.js';
import { configWith } from '../../src/config/config-loader.js';
import { createTestApp } from '../support/app.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';

/**
 * The value of one sample of a Prometheus text exposition, e.g. `skillhost_turns_total{model="scripted",outcome="ok"}`;
 * undefined when absent.
 */
function sample(exposition: string, series: string): number | undefined {
  const line = exposition.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

let tree: TempTree;
beforeAll(() => {
  tree = tempTree();
  writeSkill(tree, 'skills', 'pdf', { description: 'Works with PDF files.' });
  tree.write('skills/pdf/references/forms.md', 'FORMS');
  writeSkill(tree, 'skills', 'docx', { description: 'Works with Word files.' });
});
afterAll(() => tree.cleanup());

describe('GET /metrics (auth on, [app.metrics] public = false)', () => {
  let ctx: ChatTestContext;
  let adminKey: string;
  let memberKey: string;
  const http = () => request(ctx.app.getHttpServer());
  const scrape = async () => (await http().get('/metrics').set('authorization', `Bearer ${adminKey}`).expect(200)).text;

  beforeAll(async () => {
    ctx = await startChatApp([tree.path('skills')], { 'app.auth.mode': 'api_key' });
    const users = ctx.app.get(UsersService);
    adminKey = (await users.createKey((await users.createUser('root', 'admin')).id)).key;
    memberKey = (await users.createKey((await users.createUser('mia', 'member')).id)).key;
  });
  afterAll(async () => ctx?.close());

  it('needs an admin key: 401 without one, 403 for a member, the Prometheus text format for an admin', async () => {
    expect((await http().get('/metrics').expect(401)).body.code).toBe('UNAUTHENTICATED');
    expect((await http().get('/metrics').set('authorization', `Bearer ${memberKey}`).expect(403)).body.code).toBe(
      'FORBIDDEN',
    );
    const res = await http().get('/metrics').set('authorization', `Bearer ${adminKey}`).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.text).toContain('# TYPE skillhost_http_request_duration_seconds histogram');
    // The process's own metrics are there too.
    expect(res.text).toContain('# TYPE process_cpu_user_seconds_total counter');
  });

  it('the skills snapshot: loaded skills, the catalogue size, how long the scan took', async () => {
    const text = await scrape();
    expect(sample(text, 'skillhost_skills_loaded')).toBe(2);
    expect(sample(text, 'skillhost_skills_invalid')).toBe(0);
    expect(sample(text, 'skillhost_skills_catalogue_bytes')).toBeGreaterThan(40);
    expect(sample(text, 'skillhost_skills_reload_duration_seconds_count')).toBe(1);
    await http().post('/v1/admin/skills/reload').set('authorization', `Bearer ${adminKey}`).expect(200);
    expect(sample(await scrape(), 'skillhost_skills_reload_duration_seconds_count')).toBe(2);
  });

  it(
    'after a turn: the turn and its model/overhead time, its tool calls by tool and status, activations by skill, ' +
      'the request by route',
    async () => {
      const chat = await http().post('/v1/chats').set('authorization', `Bearer ${memberKey}`).send({}).expect(201);
      ctx.model.play(
        {
          toolCalls: [
            { name: 'skills_activate', arguments: { name: 'pdf' } },
            { name: 'skills_readResource', arguments: { name: 'pdf', path: '../escape' } },
            { name: 'skills_delete_everything', arguments: {} },
          ],
        },
        { toolCalls: [{ name: 'skills_readResource', arguments: { name: 'pdf', path: 'references/forms.md' } }] },
        { text: 'Done.' },
      );
      await http()
        .post(`/v1/chats/${chat.body.id}/messages`)
        .set('authorization', `Bearer ${memberKey}`)
        .send({ content: 'Fill the form.' })
        .expect(201);
      const text = await scrape();
      expect(sample(text, 'skillhost_turns_total{model="scripted",outcome="ok"}')).toBe(1);
      for (const histogram of ['turn_duration', 'turn_model', 'turn_overhead', 'turn_database', 'turn_skills']) {
        expect({ histogram, count: sample(text, `skillhost_${histogram}_seconds_count{model="scripted"}`) }).toEqual({
          histogram,
          count: 1,
        });
      }
      expect(sample(text, 'skillhost_turn_model_seconds_sum{model="scripted"}')).toBeGreaterThan(0);
      expect(sample(text, 'skillhost_tool_calls_total{tool="skills.activate",status="ok"}')).toBe(1);
      expect(sample(text, 'skillhost_tool_calls_total{tool="skills.readResource",status="ok"}')).toBe(1);
      expect(sample(text, 'skillhost_tool_calls_total{tool="skills.readResource",status="error"}')).toBe(1);
      // A tool name the model made up is one `unknown` series, not a series per invention.
      expect(sample(text, 'skillhost_tool_calls_total{tool="unknown",status="error"}')).toBe(1);
      expect(text).not.toContain('skills_delete_everything');
      expect(sample(text, 'skillhost_skill_activations_total{skill="pdf"}')).toBe(1);
      expect(sample(text, 'skillhost_skill_activations_total{skill="docx"}')).toBeUndefined();
      expect(
        sample(
          text,
          'skillhost_http_request_duration_seconds_count{method="POST",route="/v1/chats/:id/messages",status="201"}',
        ),
      ).toBe(1);
      expect(
        sample(text, 'skillhost_http_request_duration_seconds_count{method="POST",route="/v1/chats",status="201"}'),
      ).toBe(1);
    },
  );

  it('failed turns count by error code, with made-up model names kept out of the labels', async () => {
    const chat = await http().post('/v1/chats').set('authorization', `Bearer ${memberKey}`).send({}).expect(201);
    await http()
      .post(`/v1/chats/${chat.body.id}/messages`)
      .set('authorization', `Bearer ${memberKey}`)
      .send({ content: 'hi', model: 'made-up-model' })
      .expect(400);
    ctx.model.play({ status: 500, body: 'down' });
    await http()
      .post(`/v1/chats/${chat.body.id}/messages`)
      .set('authorization', `Bearer ${memberKey}`)
      .send({ content: 'hi' })
      .expect(502);
    const text = await scrape();
    expect(sample(text, 'skillhost_turns_total{model="unknown",outcome="VALIDATION_FAILED"}')).toBe(1);
    expect(sample(text, 'skillhost_turns_total{model="scripted",outcome="MODEL_ERROR"}')).toBe(1);
    expect(text).not.toContain('made-up-model');
  });

  it('the tool API (no model) counts tool calls and activations too', async () => {
    const chat = await http().post('/v1/chats').set('authorization', `Bearer ${memberKey}`).send({}).expect(201);
    await http()
      .post(`/v1/chats/${chat.body.id}/tools/skills.activate`)
      .set('authorization', `Bearer ${memberKey}`)
      .send({ name: 'docx' })
      .expect(200);
    const text = await scrape();
    expect(sample(text, 'skillhost_skill_activations_total{skill="docx"}')).toBe(1);
    expect(sample(text, 'skillhost_tool_calls_total{tool="skills.activate",status="ok"}')).toBe(2);
  });

  it('unknown URLs are one series, not one per path', async () => {
    await http().get('/no/such/thing/1').expect(404);
    await http().get('/no/such/thing/2').expect(404);
    const text = await scrape();
    expect(
      sample(text, 'skillhost_http_request_duration_seconds_count{method="GET",route="(unmatched)",status="404"}'),
    ).toBe(2);
    expect(text).not.toContain('/no/such/thing');
  });
});

describe('GET /metrics with [app.metrics] public = true', () => {
  let app: NestFastifyApplication;
  beforeAll(async () => {
    app = await createTestApp({ 'app.auth.mode': 'api_key', 'app.metrics.public': true });
  });
  afterAll(async () => app?.close());

  it('answers without a key, while the rest of the API still needs one', async () => {
    const res = await request(app.getHttpServer()).get('/metrics').expect(200);
    expect(res.text).toContain('skillhost_http_request_duration_seconds');
    expect((await request(app.getHttpServer()).get('/v1/me').expect(401)).body.code).toBe('UNAUTHENTICATED');
  });
});

describe('metrics per app, and database errors', () => {
  let db: TestDatabase;
  let first: NestFastifyApplication;
  let second: NestFastifyApplication;
  beforeAll(async () => {
    db = await createTestDatabase();
    first = await createApp(configWith({ 'app.database.url': db.url, 'app.auth.mode': 'none' }), { logger: false });
    second = await createTestApp({ 'app.auth.mode': 'none' });
  });
  afterAll(async () => {
    await Promise.all([first?.close(), second?.close()]);
    await db?.drop();
  });
  const scrape = async (app: NestFastifyApplication) =>
    (await request(app.getHttpServer()).get('/metrics').expect(200)).text;

  it(
    "two apps in one process count only their own requests (a registry each, not prom-client's " + 'global one)',
    async () => {
      for (let i = 0; i < 3; i++) await request(first.getHttpServer()).get('/v1/chats').expect(200);
      const series = 'skillhost_http_request_duration_seconds_count{method="GET",route="/v1/chats",status="200"}';
      expect(sample(await scrape(first), series)).toBe(3);
      expect(sample(await scrape(second), series)).toBeUndefined();
    },
  );

  it('a database that is gone counts as `unavailable` database errors', async () => {
    expect(sample(await scrape(first), 'skillhost_database_errors_total{kind="unavailable"}')).toBeUndefined();
    await db.drop();
    expect((await request(first.getHttpServer()).get('/v1/chats').expect(503)).body.code).toBe('DATABASE_UNAVAILABLE');
    expect(sample(await scrape(first), 'skillhost_database_errors_total{kind="unavailable"}')).toBeGreaterThanOrEqual(
      1,
    );
  });
});
