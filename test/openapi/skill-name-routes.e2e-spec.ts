import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import type { RouteOptions } from 'fastify';
import request from 'supertest';
import { keysFor } from '../support/api-keys.js';
import { createTestApp } from '../support/app.js';
import { type TempTree, tempTree, writeSkill } from '../support/files/skill-tree.js';
import { type OpenApiDocument, operationsOf } from './openapi-document.js';

/** What a skill's name may be (agentskills.io): lowercase letters, digits and single hyphens inside, 1–64 long. */
const SKILL_NAME = /^(?=.{1,64}$)[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** A name no static segment of any route is: where every skill route is reached from. */
const PLAIN_NAME = 'plain-skill-name';

/** Documented routes whose `{name}` is not a skill's, and what it is. Every other `{name}` is checked. */
const NOT_SKILL_NAMES: Record<string, string> = {
  'DELETE /v1/admin/skills/mirrors/{name}': "a mirror's name",
  'POST /v1/admin/skills/mirrors/{name}/run': "a mirror's name",
};

/**
 * The requests for a skill route that another route answers, because a static segment there is a valid skill name and
 * the two requests are byte for byte the same; each is resolved as docs/http-api.md ("Skill names in paths") says. A
 * new route that shadows a skill route fails the first test: give the skill route an unambiguous alternative there.
 */
const KNOWN_SHADOWS = [
  // Without `q`, the search route answers the skill named `search` (it is not a search without one).
  { route: 'GET /v1/skills/{name}', name: 'search', answeredBy: 'GET /v1/skills/search' },
  // A mirror named `evals` owns this request; `POST /v1/admin/skills/mirrors/evals` runs the skill's evals.
  {
    route: 'POST /v1/admin/skills/{name}/evals/run',
    name: 'mirrors',
    answeredBy: 'POST /v1/admin/skills/mirrors/:name/run',
  },
];

/**
 * Records every route Fastify gets, and the route each request was matched to (by its `x-probe` header): the hooks go
 * on in the adapter's `init`, before Nest registers its routes.
 */
function recordRouting(): { routes: RouteOptions[]; matched: Map<string, string | undefined>; stop(): void } {
  const routes: RouteOptions[] = [];
  const matched = new Map<string, string | undefined>();
  const init = FastifyAdapter.prototype.init;
  const spy = jest.spyOn(FastifyAdapter.prototype, 'init').mockImplementation(async function (this: FastifyAdapter) {
    const fastify = this.getInstance();
    fastify.addHook('onRoute', (route: RouteOptions) => void routes.push(route));
    fastify.addHook('onRequest', async (req) => {
      const probe = req.headers['x-probe'];
      if (typeof probe === 'string') matched.set(probe, req.routeOptions.url);
    });
    return init.call(this);
  });
  return { routes, matched, stop: () => spy.mockRestore() };
}

/** A documented path with the skill's name in `{name}` and a plain value in every other parameter. */
function pathFor(path: string, name: string): string {
  return path.replace(/\{([^}]+)\}/g, (_, parameter: string) =>
    parameter === 'name' ? name : parameter === 'path' ? 'SKILL.md' : 'x',
  );
}

describe('skill names in paths: every valid name reaches every skill route', () => {
  let app: NestFastifyApplication;
  let tree: TempTree;
  let routing: ReturnType<typeof recordRouting>;
  let document: OpenApiDocument;
  let admin: Record<string, string>;
  const http = () => request(app.getHttpServer());

  /** The route pattern Fastify matched for this request (no key: every guarded route answers 401, changing nothing). */
  async function routeOf(method: string, path: string): Promise<string | undefined> {
    const probe = randomUUID();
    await http()[method.toLowerCase() as 'get' | 'post' | 'put' | 'delete' | 'patch'](path).set('x-probe', probe);
    return routing.matched.get(probe);
  }

  beforeAll(async () => {
    tree = tempTree('skillhost-route-names-');
    // Skills named as the shadowed requests: what the resolutions are checked on.
    writeSkill(tree, 'skills', 'search', { description: 'Searches the web. Use when asked to look something up.' });
    writeSkill(tree, 'skills', 'mirrors', { description: 'Reflects on mirrors. Use when asked about mirrors.' });
    tree.write(
      'skills/mirrors/evals/triggers.json',
      JSON.stringify([{ query: 'tell me about mirrors', should_trigger: true }]),
    );
    routing = recordRouting();
    app = await createTestApp({
      'app.auth.mode': 'api_key',
      'app.skills.enabled': true,
      'app.skills.directories': [tree.path('skills')],
    });
    routing.stop();
    document = (await http().get('/openapi.json').expect(200)).body;
    const keys = await keysFor(app, { root: 'admin' });
    admin = { authorization: `Bearer ${keys.root}` };
  });
  afterAll(async () => {
    await app?.close();
    tree?.cleanup();
  });

  it('finds the requests for a skill route that another route answers: only the known, resolved ones', async () => {
    const skillRoutes = operationsOf(document).filter(
      (operation) => operation.path.includes('{name}') && NOT_SKILL_NAMES[operation.key] === undefined,
    );
    // Every static segment of every route (documented or not: the web page, MCP, the gateway) that a skill could be
    // named.
    const names = [
      ...new Set(routing.routes.flatMap((route) => route.url.split('/').filter((segment) => SKILL_NAME.test(segment)))),
    ].sort();
    expect(names).toEqual(expect.arrayContaining(['search', 'mirrors', 'usage', 'import', 'reload', 'evals']));
    expect(skillRoutes.length).toBeGreaterThan(10);

    const shadows: { route: string; name: string; answeredBy: string | undefined }[] = [];
    for (const { key, method, path } of skillRoutes) {
      const own = await routeOf(method, pathFor(path, PLAIN_NAME));
      expect({ key, own }).toEqual({ key, own: expect.any(String) });
      for (const name of names) {
        const answeredBy = await routeOf(method, pathFor(path, name));
        if (answeredBy !== own) shadows.push({ route: key, name, answeredBy: `${method} ${answeredBy}` });
      }
    }
    expect(shadows).toEqual(KNOWN_SHADOWS);
  });

  it('answers GET /v1/skills/search without q with the skill named search, and searches with q', async () => {
    const skill = await http().get('/v1/skills/search').set(admin).expect(200);
    expect(skill.body).toMatchObject({ name: 'search', description: expect.stringContaining('Searches the web') });
    const found = await http().get('/v1/skills/search').query({ q: 'mirrors' }).set(admin).expect(200);
    expect(found.body.results[0]).toMatchObject({ name: 'mirrors' });
  });

  it("runs a skill named mirrors' evals at POST …/mirrors/evals (…/mirrors/evals/run is a mirror's run)", async () => {
    const run = await http().post('/v1/admin/skills/mirrors/evals').set(admin).send({}).expect(200);
    expect(run.body).toMatchObject({
      level: 'catalogue',
      skills: [{ skill: 'mirrors', score: { cases: 1, passed: 1, recall: 1 } }],
    });
    const mirror = await http().post('/v1/admin/skills/mirrors/evals/run').set(admin).send({}).expect(404);
    expect(mirror.body).toMatchObject({ code: 'SKILL_MIRROR_NOT_FOUND' });
  });
});
