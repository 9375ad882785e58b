import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { RouteOptions } from 'fastify';
import request from 'supertest';
import type { Response } from 'superagent';
import { UsersService } from '../../src/domain/users/users.service.js';
import { type ErrorCode, httpStatusOf } from '@skillhost/core';
import { createTestApp } from '../support/app.js';
import { skillDigest } from '../../src/domain/skills/store/index-skill-digest.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { collectText, parseSse } from '../support/sse.js';
import { OAUTH_PROBES } from '../../src/api/http/oauth-probes.controller.js';
import { gitRepo } from '../support/files/git-repo.js';
import { usePdfSkillsFolder } from '../support/files/skill-tree.js';
import { multipartOf, tarGzOf, type UploadBody, zipOf } from '../support/skill-archives.js';
import {
  documentedCodes,
  ERROR_BODY_REF,
  hasInput,
  type OpenApiDocument,
  operationsOf,
  routeShape,
  samplePath,
  schemaChecker,
} from './openapi-document.js';

const skillsFolder = usePdfSkillsFolder();

/** Every route Fastify gets from Nest: the hook goes on in the adapter's `init`, before Nest registers its routes. */
function recordRoutes(): { routes: string[]; stop(): void } {
  const routes: string[] = [];
  const init = FastifyAdapter.prototype.init;
  const spy = jest.spyOn(FastifyAdapter.prototype, 'init').mockImplementation(async function (this: FastifyAdapter) {
    this.getInstance().addHook('onRoute', (route: RouteOptions) => {
      for (const method of [route.method].flat()) routes.push(`${method} ${route.url}`);
    });
    return init.call(this);
  });
  return { routes, stop: () => spy.mockRestore() };
}

/** The documentation itself and GraphQL (another front door with its own schema) are not REST routes. */
const isRestRoute = (route: string) => {
  const [method, url] = route.split(' ');
  // GraphQL, MCP (with the OAuth probes its clients make) and the OpenAI-compatible gateway are protocols of their own,
  // described by their schema and specification (OpenAI's API, docs/openai-gateway.md); the web page is files.
  const webPage = url === '/' || url === '/styles.css' || url.startsWith('/app/') || url.startsWith('/vendor/');
  const oauthProbe = [...OAUTH_PROBES.get, ...OAUTH_PROBES.post].some((path) => url === `/${path}`);
  return (
    !['HEAD', 'OPTIONS'].includes(method) &&
    url !== '/openapi.json' &&
    url !== '/docs' &&
    !url.startsWith('/docs/') &&
    !/^\/graph(i)?ql/.test(url) &&
    url !== '/mcp' &&
    // The sign-in's redirects, which a browser follows (docs/sign-in.md).
    !url.startsWith('/auth/oidc/') &&
    !url.startsWith('/openai/') &&
    !webPage &&
    !oauthProbe
  );
};

/** Sends a request by method name, with no key unless `key` is given. */
function send(app: NestFastifyApplication, method: string, url: string, key?: string) {
  const test = request(app.getHttpServer())[method.toLowerCase() as 'get' | 'post' | 'patch' | 'delete'](url);
  return key === undefined ? test : test.set('authorization', `Bearer ${key}`);
}

describe('OpenAPI document and UI (auth mode api_key)', () => {
  let ctx: ChatTestContext;
  let registered: string[];
  let document: OpenApiDocument;
  let adminKey: string;
  let memberKey: string;
  const http = () => request(ctx.app.getHttpServer());

  beforeAll(async () => {
    const recorder = recordRoutes();
    try {
      ctx = await startChatApp([skillsFolder()], {
        'app.auth.mode': 'api_key',
        // The member's import reads an index on 127.0.0.1, which members may reach only when it is listed.
        'app.skills.import.member_hosts': ['127.0.0.1'],
      });
    } finally {
      recorder.stop();
    }
    registered = recorder.routes;
    const users = ctx.app.get(UsersService);
    adminKey = (await users.createKey((await users.createUser('root', 'admin')).id)).key;
    memberKey = (await users.createKey((await users.createUser('mia', 'member')).id)).key;
    document = (await http().get('/openapi.json').expect(200)).body as OpenApiDocument;
  });
  afterAll(async () => ctx?.close());

  it('GET /openapi.json needs no key and answers a valid OpenAPI 3.1 document titled Skillhost', async () => {
    const res = await http().get('/openapi.json').expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    // The same server refuses a keyless request on a REST route, so the 200 above is not auth being off.
    expect((await http().get('/v1/skills').expect(401)).body.code).toBe('UNAUTHENTICATED');
    const validator = new Validator();
    const result = await validator.validate(res.body);
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(res.body.info).toMatchObject({ title: 'Skillhost', version: '0.1.0' });
  });

  it('the validator does check the document: without a schema the operations reference, it is invalid', async () => {
    const broken = structuredClone(document);
    delete broken.components.schemas.ErrorBodyDto;
    expect((await new Validator().validate(broken as unknown as Record<string, unknown>)).valid).toBe(false);
  });

  it('GET /docs needs no key and answers the Swagger UI page, whose script and styles are served', async () => {
    const page = await http().get('/docs').expect(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.text).toContain('<div id="swagger-ui">');
    expect(page.text).toContain('url: "openapi.json"');
    const script = page.text.match(/<script src="([^"]+)"/)?.[1];
    expect(script).toBe('docs/swagger-ui-bundle.js');
    const bundle = await http().get(`/${script}`).buffer(true).parse(collectText).expect(200);
    expect(bundle.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect(bundle.body).toContain('SwaggerUIBundle');
    const css = await http().get('/docs/swagger-ui.css').expect(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it.each([
    '/docs/package.json',
    '/docs/../package.json',
    '/docs/..%2Fpackage.json',
    '/docs/%2e%2e/package.json',
    '/docs/%00',
    '/docs/index.html',
    '/docs/swagger-ui-bundle.js.map',
  ])('GET %s → 404: /docs serves only the files the page loads', async (url) => {
    const res = await http().get(url).expect(404);
    expect(res.body.code).toBe('ROUTE_NOT_FOUND');
    expect(res.text).not.toContain('"name"');
  });

  it('documents every route the app registers, and none it does not', () => {
    const app = [
      ...new Set(registered.filter(isRestRoute).map((route) => routeShape(route.split(' ')[0], route.split(' ')[1]))),
    ].sort();
    const documented = operationsOf(document)
      .map(({ method, path }) => routeShape(method, path))
      .sort();
    expect(app.length).toBeGreaterThan(20);
    expect(documented).toEqual(app);
  });

  it(
    'every route but the health probes requires the bearer or x-api-key scheme and documents 401; without a key ' +
      'exactly those answer 401',
    async () => {
      expect(document.components.securitySchemes).toEqual({
        bearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
        'api-key': expect.objectContaining({ type: 'apiKey', in: 'header', name: 'x-api-key' }),
      });
      const problems: string[] = [];
      for (const { key, method, path, operation } of operationsOf(document)) {
        const secured = operation.security !== undefined;
        if (secured) {
          expect({ key, security: operation.security }).toEqual({ key, security: [{ bearer: [] }, { 'api-key': [] }] });
          expect({ key, codes: documentedCodes(operation, 401) }).toEqual({ key, codes: ['UNAUTHENTICATED'] });
        } else {
          expect({ key, has401: '401' in operation.responses }).toEqual({ key, has401: false });
        }
        const res = await send(ctx.app, method, samplePath(path));
        if ((res.status === 401) !== secured)
          problems.push(`${key}: documented ${secured ? 'keyed' : 'public'}, answered ${res.status} without a key`);
      }
      expect(problems).toEqual([]);
      expect(
        operationsOf(document)
          .filter(({ operation }) => operation.security === undefined)
          .map(({ key }) => key),
      ).toEqual(['GET /v1/auth/providers', 'GET /health', 'GET /health/live', 'GET /health/ready']);
    },
  );

  it(
    "every error response is the error body, narrowed to codes of its own status (but a probe's 503, which is its " +
      'report)',
    () => {
      const errorBody = document.components.schemas.ErrorBodyDto;
      expect(errorBody).toMatchObject({
        required: ['code', 'message'],
        properties: { code: expect.anything(), message: expect.anything(), details: expect.anything() },
      });
      const probes = ['GET /health/live', 'GET /health/ready'];
      for (const key of probes)
        expect(
          operationsOf(document).find((o) => o.key === key)?.operation.responses['503']?.content?.['application/json']
            ?.schema?.$ref,
        ).toBe('#/components/schemas/HealthReportDto');
      for (const { key, operation } of operationsOf(document)) {
        for (const [status, response] of Object.entries(operation.responses).filter(
          ([status]) => Number(status) >= 400 && !(probes.includes(key) && status === '503'),
        )) {
          const schema = response.content?.['application/json']?.schema;
          expect({ key, status, ref: schema?.allOf?.[0]?.$ref }).toEqual({ key, status, ref: ERROR_BODY_REF });
          const codes = documentedCodes(operation, status);
          expect(codes.length).toBeGreaterThan(0);
          expect({
            key,
            status,
            codes: codes.filter((code) => httpStatusOf(code as ErrorCode) !== Number(status)),
          }).toEqual({ key, status, codes: [] });
          for (const code of codes) expect(response.description).toContain(`\`${code}\``);
        }
        expect({ key, codes: documentedCodes(operation, 500) }).toEqual({ key, codes: ['INTERNAL'] });
      }
    },
  );

  const PUBLISH_ROUTES = [
    'POST /v1/admin/skills',
    'POST /v1/admin/skills/import',
    'POST /v1/admin/skills/{name}/rollback',
  ];

  it('admin routes document 403 FORBIDDEN, and exactly those refuse a member', async () => {
    const problems: string[] = [];
    for (const { key, method, path, operation } of operationsOf(document)) {
      const documented = documentedCodes(operation, 403).includes('FORBIDDEN');
      const res = await send(ctx.app, method, samplePath(path), memberKey);
      // Editors pass these routes' guard and the service decides by the skill's owners, after the body is read: a
      // member's empty sample is refused for its body first (the auth matrix sends them valid ones: 403).
      if (PUBLISH_ROUTES.includes(key) && documented && [400, 415].includes(res.status)) continue;
      if ((res.body.code === 'FORBIDDEN') !== documented)
        problems.push(
          `${key}: documented ${documented ? '' : 'no '}403, a member got ${res.status} ${res.body.code ?? ''}`,
        );
    }
    expect(problems).toEqual([]);
    expect(
      operationsOf(document).filter(({ operation }) => documentedCodes(operation, 403).length > 0).length,
    ).toBeGreaterThanOrEqual(8);
  });

  it(
    'routes with a body or a query document 400 VALIDATION_FAILED, with a body 413 too; keyed routes document 503 ' +
      'DATABASE_UNAVAILABLE',
    () => {
      for (const { key, operation } of operationsOf(document)) {
        const input = hasInput(operation);
        expect({ key, validation: documentedCodes(operation, 400).includes('VALIDATION_FAILED') }).toEqual({
          key,
          // A resource path, and the skill name of the eval routes (kept by name in PostgreSQL), are checked too.
          validation: input.body || input.query || key.includes('/resources/') || key.includes('/{name}/evals'),
        });
        expect({ key, tooLarge: documentedCodes(operation, 413) }).toEqual({
          key,
          tooLarge: input.body ? ['PAYLOAD_TOO_LARGE'] : [],
        });
        expect({ key, database: documentedCodes(operation, 503).includes('DATABASE_UNAVAILABLE') }).toEqual({
          key,
          database: operation.security !== undefined,
        });
      }
    },
  );

  it('every route but the health probes documents 429 RATE_LIMITED with Retry-After', () => {
    for (const { key, operation } of operationsOf(document)) {
      const limited = !key.startsWith('GET /health');
      expect({ key, codes: documentedCodes(operation, 429) }).toEqual({ key, codes: limited ? ['RATE_LIMITED'] : [] });
      if (limited)
        expect({ key, headers: Object.keys(operation.responses['429'].headers ?? {}) }).toEqual({
          key,
          headers: ['retry-after'],
        });
    }
  });

  it('a route that can answer 503 IMPORT_BUSY documents its Retry-After; one that cannot does not', () => {
    for (const { key, operation } of operationsOf(document)) {
      const codes = documentedCodes(operation, 503);
      if (codes.length === 0) continue;
      expect({ key, headers: Object.keys(operation.responses['503'].headers ?? {}) }).toEqual({
        key,
        headers: codes.includes('IMPORT_BUSY') ? ['retry-after'] : [],
      });
    }
    expect(
      documentedCodes(operationsOf(document).find((o) => o.key === 'POST /v1/skills/import')!.operation, 503),
    ).toContain('IMPORT_BUSY');
  });

  it(
    'a tour of every route answers only documented statuses, codes and media types, with bodies that match the ' +
      'schemas',
    async () => {
      const check = schemaChecker(document);
      const operations = new Map(operationsOf(document).map((documented) => [documented.key, documented.operation]));
      const problems: string[] = [];
      const succeeded = new Set<string>();
      const visit = (key: string, res: Response, body: unknown = res.body) => {
        const operation = operations.get(key);
        const response = operation?.responses[String(res.status)];
        if (response === undefined)
          return void problems.push(`${key}: answered ${res.status}, which is not documented`);
        if (res.status < 300) succeeded.add(key);
        if (res.status >= 400 && !documentedCodes(operation!, res.status).includes(res.body.code))
          problems.push(`${key}: ${res.status} ${res.body.code} is not documented`);
        if (response.content === undefined)
          return void (res.text && problems.push(`${key}: ${res.status} has a body but documents none`));
        const mediaType = String(res.headers['content-type']).split(';')[0];
        const media = response.content[mediaType];
        if (media === undefined)
          return void problems.push(
            `${key}: ${res.status} answered ${mediaType}; documented: ${Object.keys(response.content).join(', ')}`,
          );
        if (mediaType === 'application/json' && media.schema)
          problems.push(...check(media.schema, body).map((error) => `${key} ${res.status}: ${error}`));
      };
      const admin = { authorization: `Bearer ${adminKey}` };

      visit('GET /health', await http().get('/health'));
      visit('GET /health/live', await http().get('/health/live'));
      visit('GET /health/ready', await http().get('/health/ready'));
      visit('GET /metrics', await http().get('/metrics').set(admin));
      visit('GET /metrics', await http().get('/metrics').set('x-api-key', memberKey));
      visit('GET /v1/me', await http().get('/v1/me').set(admin));
      const myKey = await http()
        .post('/v1/me/keys')
        .set(admin)
        .send({ label: 'tour', expiresAt: '2999-01-01T00:00:00Z' });
      visit('POST /v1/me/keys', myKey);
      visit('GET /v1/me/keys', await http().get('/v1/me/keys').set(admin));
      visit('DELETE /v1/me/keys/{id}', await http().delete(`/v1/me/keys/${myKey.body.id}`).set(admin));
      visit('DELETE /v1/me/keys/{id}', await http().delete(`/v1/me/keys/${myKey.body.id}`).set(admin));
      visit('GET /v1/auth/providers', await http().get('/v1/auth/providers'));
      visit('GET /v1/auth/session', await http().get('/v1/auth/session').set(admin));
      visit('POST /v1/auth/logout', await http().post('/v1/auth/logout').set(admin));

      const user = await http().post('/v1/admin/users').set(admin).send({ name: 'tour-user' });
      visit('POST /v1/admin/users', user);
      visit('POST /v1/admin/users', await http().post('/v1/admin/users').set(admin).send({ name: 'tour-user' }));
      visit('POST /v1/admin/users', await http().post('/v1/admin/users').set(admin).send({ name: 'Not Valid' }));
      const signInOf = (id: string) => `/v1/admin/users/${id}/sign-in`;
      visit(
        'PUT /v1/admin/users/{id}/sign-in',
        await http().put(signInOf(user.body.id)).set(admin).send({ email: 'tour@example.com' }),
      );
      visit('PUT /v1/admin/users/{id}/sign-in', await http().put(signInOf(user.body.id)).set(admin).send({}));
      visit('PUT /v1/admin/users/{id}/sign-in', await http().put(signInOf('nobody')).set(admin).send({ email: null }));
      visit(
        'PUT /v1/admin/users/{id}/sign-in',
        await http().put(signInOf(user.body.id)).set(admin).send({ subject: 'someone' }),
      );
      visit('GET /v1/admin/users', await http().get('/v1/admin/users?limit=2').set(admin));
      visit('GET /v1/admin/users', await http().get('/v1/admin/users?limit=0').set(admin));
      visit(
        'PATCH /v1/admin/users/{id}',
        await http().patch(`/v1/admin/users/${user.body.id}`).set(admin).send({ role: 'admin', disabled: true }),
      );
      visit(
        'PATCH /v1/admin/users/{id}',
        await http()
          .patch(`/v1/admin/users/${samplePath('{id}')}`)
          .set(admin)
          .send({ disabled: false }),
      );
      const userKey = await http().post(`/v1/admin/users/${user.body.id}/keys`).set(admin).send({});
      visit('POST /v1/admin/users/{id}/keys', userKey);
      visit('DELETE /v1/admin/keys/{id}', await http().delete(`/v1/admin/keys/${userKey.body.id}`).set(admin));
      visit('GET /v1/admin/users', await http().get('/v1/admin/users').set('x-api-key', memberKey));

      visit('GET /v1/skills', await http().get('/v1/skills').set(admin));
      visit('GET /v1/skills', await http().get('/v1/skills'));
      visit('GET /v1/skills/{name}', await http().get('/v1/skills/pdf').set(admin));
      visit('GET /v1/skills/{name}', await http().get('/v1/skills/nope').set(admin));
      visit('GET /v1/skills/{name}/body', await http().get('/v1/skills/pdf/body').set(admin));
      visit('GET /v1/skills/{name}/resources', await http().get('/v1/skills/pdf/resources?type=references').set(admin));
      visit('GET /v1/skills/{name}/resources', await http().get('/v1/skills/pdf/resources?type=nope').set(admin));
      visit(
        'GET /v1/skills/{name}/resources/{path}',
        await http().get('/v1/skills/pdf/resources/references/forms.md').set(admin),
      );
      visit(
        'GET /v1/skills/{name}/resources/{path}',
        await http().get('/v1/skills/pdf/resources/references').set(admin),
      );
      visit(
        'GET /v1/skills/{name}/resources/{path}',
        await http().get('/v1/skills/pdf/resources/missing.md').set(admin),
      );
      for (const format of ['json', 'xml', 'markdown', 'yaml'])
        visit('GET /v1/skills-catalogue', await http().get(`/v1/skills-catalogue?format=${format}`).set(admin));
      visit(
        'GET /v1/skills-catalogue',
        await http().get('/v1/skills-catalogue?query=fill%20a%20PDF%20form').set(admin),
      );
      visit('GET /v1/skills/search', await http().get('/v1/skills/search?q=fill%20a%20PDF%20form&limit=3').set(admin));
      visit('GET /v1/skills/search', await http().get('/v1/skills/search?q=%20').set(admin));
      visit('GET /v1/skills/search', await http().get('/v1/skills/search?q=pdf&limit=21').set(admin));
      visit(
        'GET /.well-known/agent-skills/index.json',
        await http().get('/.well-known/agent-skills/index.json').set(admin),
      );
      visit(
        'GET /.well-known/agent-skills/versions.json',
        await http().get('/.well-known/agent-skills/versions.json').set(admin),
      );
      visit(
        'GET /.well-known/agent-skills/{name}/{path}',
        await http().get('/.well-known/agent-skills/pdf/SKILL.md').set(admin),
      );
      visit(
        'GET /.well-known/agent-skills/{name}/{path}',
        await http().get('/.well-known/agent-skills/pdf/references/forms.md').set(admin),
      );
      visit(
        'GET /.well-known/agent-skills/{name}/{path}',
        await http().get('/.well-known/agent-skills/pdf/missing.md').set(admin),
      );
      visit(
        'GET /.well-known/agent-skills/{name}/{path}',
        await http().get('/.well-known/agent-skills/nope/SKILL.md').set(admin),
      );
      visit('GET /v1/models', await http().get('/v1/models').set(admin));
      visit('GET /v1/admin/mcp', await http().get('/v1/admin/mcp').set(admin));
      visit('GET /v1/admin/mcp', await http().get('/v1/admin/mcp').set('x-api-key', memberKey));
      visit('GET /v1/commands', await http().get('/v1/commands').set(admin));
      visit('GET /v1/commands', await http().get('/v1/commands'));
      visit('GET /v1/admin/skills', await http().get('/v1/admin/skills').set(admin));
      visit('POST /v1/admin/skills/reload', await http().post('/v1/admin/skills/reload').set(admin));
      const upload = (path: string, key: Record<string, string>, archive: UploadBody) =>
        http().post(path).set(key).set('content-type', archive.contentType).send(archive.body);
      const tourSkill = {
        'tour/SKILL.md': '---\nname: tour\ndescription: A skill installed on the tour.\n---\nDo the tour.\n',
      };
      visit('POST /v1/admin/skills', await upload('/v1/admin/skills', admin, await zipOf(tourSkill)));
      visit('POST /v1/admin/skills', await upload('/v1/admin/skills', admin, multipartOf(tourSkill)));
      visit('POST /v1/admin/skills', await upload('/v1/admin/skills', admin, await tarGzOf({ 'x/../SKILL.md': 'x' })));
      visit('POST /v1/admin/skills', await http().post('/v1/admin/skills').set(admin).send({ name: 'tour' }));
      visit(
        'POST /v1/skills',
        await upload(
          '/v1/skills',
          { 'x-api-key': memberKey },
          await tarGzOf({ 'mine/SKILL.md': '---\nname: mine\ndescription: Mine.\n---\nBody.\n' }),
        ),
      );
      visit(
        'POST /v1/skills',
        await upload(
          '/v1/skills',
          { 'x-api-key': memberKey },
          await zipOf({ 'Bad/SKILL.md': '---\nname: Bad\ndescription: Bad.\n---\n' }),
        ),
      );
      const repo = gitRepo(mkdtempSync(join(tmpdir(), 'skillhost-openapi-git-')));
      repo.commit({ 'SKILL.md': '---\nname: imported\ndescription: Imported on the tour.\n---\nBody.\n' }, 'one');
      repo.push();
      const importFrom = (path: string, key: Record<string, string>, source: string) =>
        http().post(path).set(key).send({ source });
      visit(
        'POST /v1/admin/skills/import',
        await importFrom('/v1/admin/skills/import', admin, `git+file://${repo.bare}`),
      );
      visit(
        'POST /v1/admin/skills/import',
        await importFrom('/v1/admin/skills/import', admin, `git+file://${repo.bare}`),
      );
      visit('POST /v1/admin/skills/import', await importFrom('/v1/admin/skills/import', admin, 'git+ssh://h/r'));
      visit(
        'POST /v1/admin/skills/import',
        await importFrom('/v1/admin/skills/import', admin, `git+file://${repo.bare}#no-such-ref`),
      );
      const mirrors = '/v1/admin/skills/mirrors';
      const addMirror = (name: string) =>
        http()
          .post(mirrors)
          .set(admin)
          .send({ name, source: `git+file://${repo.bare}`, interval: '1h' });
      visit(`POST ${mirrors}`, await addMirror('tour'));
      visit(`POST ${mirrors}`, await addMirror('tour'));
      visit(`POST ${mirrors}`, await addMirror('Bad Name'));
      visit(`GET ${mirrors}`, await http().get(mirrors).set(admin));
      visit(`POST ${mirrors}/{name}/run`, await http().post(`${mirrors}/tour/run`).set(admin));
      visit(`POST ${mirrors}/{name}/run`, await http().post(`${mirrors}/nope/run`).set(admin));
      visit(`GET ${mirrors}`, await http().get(mirrors).set(admin));
      visit(`DELETE ${mirrors}/{name}`, await http().delete(`${mirrors}/tour`).set(admin));
      visit(`DELETE ${mirrors}/{name}`, await http().delete(`${mirrors}/tour`).set(admin));
      const index = await serveIndex({ 'SKILL.md': '---\nname: indexed\ndescription: From an index.\n---\nBody.\n' });
      visit('POST /v1/skills/import', await importFrom('/v1/skills/import', { 'x-api-key': memberKey }, index.url));
      visit(
        'POST /v1/skills/import',
        await importFrom('/v1/skills/import', { 'x-api-key': memberKey }, `${index.url.replace('index', 'nope')}`),
      );
      visit(
        'POST /v1/skills/import',
        await importFrom('/v1/skills/import', { 'x-api-key': memberKey }, `${index.url}#other`),
      );
      await index.close();
      visit('GET /v1/skills/{name}/versions', await http().get('/v1/skills/imported/versions').set(admin));
      visit('GET /v1/skills/{name}/versions', await http().get('/v1/skills/tour/versions').set(admin));
      visit('GET /v1/skills/{name}/versions', await http().get('/v1/skills/pdf/versions').set(admin));
      visit(
        'POST /v1/admin/skills/{name}/rollback',
        await http().post('/v1/admin/skills/tour/rollback').set(admin).send({ version: 1 }),
      );
      visit(
        'POST /v1/admin/skills/{name}/rollback',
        await http().post('/v1/admin/skills/tour/rollback').set(admin).send({ version: 9 }),
      );
      const evalsRun = (name: string, body: unknown) =>
        http()
          .post(`/v1/admin/skills/${name}/evals/run`)
          .set(admin)
          .send(body as object);
      visit('POST /v1/admin/skills/{name}/evals/run', await evalsRun('tour', {}));
      visit('POST /v1/admin/skills/{name}/evals/run', await evalsRun('tour', { level: 'telepathy' }));
      visit('POST /v1/admin/skills/{name}/evals/run', await evalsRun('no-such-skill', {}));
      visit('POST /v1/admin/skills/{name}/evals/run', await evalsRun('tour', { level: 'model' }));
      const evalsAt = (name: string, body: unknown) =>
        http()
          .post(`/v1/admin/skills/${name}/evals`)
          .set(admin)
          .send(body as object);
      visit('POST /v1/admin/skills/{name}/evals', await evalsAt('tour', {}));
      visit('POST /v1/admin/skills/{name}/evals', await evalsAt('tour', { level: 'telepathy' }));
      visit('POST /v1/admin/skills/{name}/evals', await evalsAt('no-such-skill', {}));
      visit('POST /v1/admin/skills/{name}/evals', await evalsAt('tour', { level: 'model' }));
      visit('GET /v1/admin/skills/{name}/evals', await http().get('/v1/admin/skills/tour/evals').set(admin));
      const evalCases = '/v1/admin/skills/{name}/evals/cases';
      const addCases = (name: string, body: unknown) =>
        http()
          .post(`/v1/admin/skills/${name}/evals/cases`)
          .set(admin)
          .send(body as object);
      const tourCase = { query: 'take the tour of the office', should_trigger: true };
      visit(`POST ${evalCases}`, await addCases('tour', tourCase));
      visit(`POST ${evalCases}`, await addCases('tour', [tourCase]));
      visit(`POST ${evalCases}`, await addCases('tour', { query: '', should_trigger: true }));
      visit(`POST ${evalCases}`, await addCases('no-such-skill', tourCase));
      const listedCases = await http().get('/v1/admin/skills/tour/evals/cases').set(admin);
      visit(`GET ${evalCases}`, listedCases);
      // A run with a kept case: its result says where the case came from.
      visit('POST /v1/admin/skills/{name}/evals/run', await evalsRun('tour', {}));
      const keptCase = `/v1/admin/skills/tour/evals/cases/${listedCases.body.cases[0].id}`;
      visit(`DELETE ${evalCases}/{id}`, await http().delete(keptCase).set(admin));
      visit(`DELETE ${evalCases}/{id}`, await http().delete(keptCase).set(admin));
      visit(
        'PUT /v1/admin/skills/{name}/enabled',
        await http().put('/v1/admin/skills/tour/enabled').set(admin).send({ enabled: false }),
      );
      visit(
        'PUT /v1/admin/skills/{name}/enabled',
        await http().put('/v1/admin/skills/tour/enabled').set(admin).send({ enabled: 'off' }),
      );
      visit(
        'PUT /v1/admin/skills/{name}/enabled',
        await http().put('/v1/admin/skills/nope/enabled').set(admin).send({ enabled: true }),
      );
      const groups = '/v1/admin/groups';
      const group = await http().post(groups).set(admin).send({ name: 'tour-group' });
      visit('POST /v1/admin/groups', group);
      visit('POST /v1/admin/groups', await http().post(groups).set(admin).send({ name: 'tour-group' }));
      visit('POST /v1/admin/groups', await http().post(groups).set(admin).send({ name: 'bad\u0001' }));
      visit('GET /v1/admin/groups', await http().get(`${groups}?limit=1`).set(admin));
      visit('GET /v1/admin/groups/{id}', await http().get(`${groups}/${group.body.id}`).set(admin));
      visit('GET /v1/admin/groups/{id}', await http().get(`${groups}/nope`).set(admin));
      const tourUserId = (await http().get('/v1/admin/users').set(admin)).body.items[0].id;
      const member = `${groups}/${group.body.id}/members/${tourUserId}`;
      visit('PUT /v1/admin/groups/{id}/members/{userId}', await http().put(member).set(admin));
      visit(
        'PUT /v1/admin/groups/{id}/members/{userId}',
        await http().put(`${groups}/${group.body.id}/members/x`).set(admin),
      );
      const access = '/v1/admin/skills/tour/access';
      visit(
        'PUT /v1/admin/skills/{name}/access',
        await http()
          .put(access)
          .set(admin)
          .send({ audience: 'groups', groups: [group.body.id] }),
      );
      visit('PUT /v1/admin/skills/{name}/access', await http().put(access).set(admin).send({ audience: 'groups' }));
      visit('PUT /v1/admin/skills/{name}/access', await http().put('/v1/admin/skills/nope/access').set(admin).send({}));
      visit('GET /v1/admin/skills/{name}/access', await http().get(access).set(admin));
      visit('GET /v1/admin/skills/{name}/access', await http().get('/v1/admin/skills/nope/access').set(admin));
      visit('DELETE /v1/admin/groups/{id}/members/{userId}', await http().delete(member).set(admin));
      visit('DELETE /v1/admin/groups/{id}/members/{userId}', await http().delete(member).set(admin));
      visit('DELETE /v1/admin/groups/{id}', await http().delete(`${groups}/${group.body.id}`).set(admin));
      visit('DELETE /v1/admin/groups/{id}', await http().delete(`${groups}/${group.body.id}`).set(admin));
      visit('GET /v1/admin/audit', await http().get('/v1/admin/audit?action=skill.install&limit=3').set(admin));
      visit('GET /v1/admin/audit', await http().get('/v1/admin/audit?action=nope').set(admin));
      visit('GET /v1/admin/audit', await http().get('/v1/admin/audit').set('x-api-key', memberKey));
      const usage = '/v1/admin/skills/usage';
      visit('GET /v1/admin/skills/usage', await http().get(`${usage}?groupBy=day,model&from=2026-01-01`).set(admin));
      visit('GET /v1/admin/skills/usage', await http().get(`${usage}?from=2026-02-30`).set(admin));
      visit('GET /v1/admin/skills/usage', await http().get(usage).set('x-api-key', memberKey));
      visit('DELETE /v1/admin/skills/{name}', await http().delete('/v1/admin/skills/tour').set(admin));
      visit('DELETE /v1/admin/skills/{name}', await http().delete('/v1/admin/skills/tour').set(admin));
      visit('DELETE /v1/skills/{name}', await http().delete('/v1/skills/mine').set('x-api-key', memberKey));
      visit('DELETE /v1/skills/{name}', await http().delete('/v1/skills/mine').set('x-api-key', memberKey));
      visit(
        'PUT /v1/me/skills',
        await http()
          .put('/v1/me/skills')
          .set(admin)
          .send({ exclude: ['git-*'] }),
      );
      visit('PUT /v1/me/skills', await http().put('/v1/me/skills').set(admin).send({ include: 'pdf' }));
      visit('GET /v1/me/skills', await http().get('/v1/me/skills').set(admin));
      visit('PUT /v1/me/skills', await http().put('/v1/me/skills').set(admin).send({}));

      const chat = await http().post('/v1/chats').set(admin).send({ title: 'tour' });
      visit('POST /v1/chats', chat);
      visit(
        'POST /v1/chats',
        await http()
          .post('/v1/chats')
          .set(admin)
          .set('content-type', 'application/json')
          .send(JSON.stringify({ title: 'x'.repeat(1024 * 1024) })),
      );
      visit('GET /v1/chats', await http().get('/v1/chats').set(admin));
      visit('GET /v1/chats/{id}', await http().get(`/v1/chats/${chat.body.id}`).set(admin));
      visit(
        'GET /v1/chats/{id}',
        await http()
          .get(`/v1/chats/${samplePath('{id}')}`)
          .set(admin),
      );
      ctx.model.play({ toolCalls: [{ name: 'skills_activate', arguments: { name: 'pdf' } }] }, { text: 'Done.' });
      visit(
        'POST /v1/chats/{id}/messages',
        await http().post(`/v1/chats/${chat.body.id}/messages`).set(admin).send({ content: 'Fill the form.' }),
      );
      visit(
        'POST /v1/chats/{id}/messages',
        await http().post(`/v1/chats/${chat.body.id}/messages`).set(admin).send({ content: 'hi', model: 'nope' }),
      );
      ctx.model.play({ text: 'Streamed.' });
      const streamed = await http()
        .post(`/v1/chats/${chat.body.id}/messages`)
        .set(admin)
        .set('accept', 'text/event-stream')
        .send({ content: 'Again.' })
        .buffer(true)
        .parse(collectText);
      visit('POST /v1/chats/{id}/messages', streamed, streamed.body);
      const done = parseSse(streamed.body as string).find((event) => event.event === 'done');
      problems.push(
        ...check({ $ref: '#/components/schemas/TurnDto' }, done?.data).map((error) => `SSE done: ${error}`),
      );
      visit('GET /v1/chats/{id}/messages', await http().get(`/v1/chats/${chat.body.id}/messages`).set(admin));
      visit(
        'PUT /v1/chats/{id}/skills',
        await http()
          .put(`/v1/chats/${chat.body.id}/skills`)
          .set(admin)
          .send({ include: ['pdf'] }),
      );
      visit(
        'PUT /v1/chats/{id}/skills',
        await http()
          .put(`/v1/chats/${samplePath('{id}')}/skills`)
          .set(admin)
          .send({}),
      );
      visit('GET /v1/chats/{id}/skills', await http().get(`/v1/chats/${chat.body.id}/skills`).set(admin));
      visit(
        'GET /v1/chats/{id}/skills',
        await http()
          .get(`/v1/chats/${samplePath('{id}')}/skills`)
          .set(admin),
      );
      visit('GET /v1/chats/{id}/context', await http().get(`/v1/chats/${chat.body.id}/context?tools=true`).set(admin));
      visit(
        'GET /v1/chats/{id}/context',
        await http()
          .get(`/v1/chats/${chat.body.id}/context?message=${encodeURIComponent('fill a PDF form')}`)
          .set(admin),
      );
      const tools = `/v1/chats/${chat.body.id}/tools`;
      visit(
        'POST /v1/chats/{id}/tools/{tool}',
        await http().post(`${tools}/skills.activate`).set(admin).send({ name: 'pdf' }),
      );
      visit(
        'POST /v1/chats/{id}/tools/{tool}',
        await http().post(`${tools}/skills.readResource`).set(admin).send({ name: 'pdf', path: '../x' }),
      );
      visit(
        'POST /v1/chats/{id}/tools/{tool}',
        await http().post(`${tools}/skills.readResource`).set(admin).send({ name: 'pdf', path: 'references/forms.md' }),
      );
      visit(
        'POST /v1/chats/{id}/tools/{tool}',
        await http().post(`${tools}/skills.listResources`).set(admin).send({ name: 'pdf', type: 'references' }),
      );
      visit(
        'POST /v1/chats/{id}/tools/{tool}',
        await http().post(`${tools}/skills.listResources`).set(admin).send({ name: 'pdf', type: 'nope' }),
      );
      visit(
        'POST /v1/chats/{id}/tools/{tool}',
        await http().post(`${tools}/use_skill`).set(admin).send({ input: 'fill a PDF form' }),
      );
      visit(
        'POST /v1/chats/{id}/tools/{tool}',
        await http().post(`${tools}/skills.runScript`).set(admin).send({ name: 'pdf', path: 'scripts/x.sh' }),
      );
      visit('POST /v1/chats/{id}/tools/{tool}', await http().post(`${tools}/no_such_tool`).set(admin).send({}));
      visit('GET /v1/admin/chats', await http().get('/v1/admin/chats').set(admin));
      visit('DELETE /v1/chats/{id}', await http().delete(`/v1/chats/${chat.body.id}`).set(admin));
      visit('DELETE /v1/chats/{id}', await http().delete(`/v1/chats/${chat.body.id}`).set(admin));

      expect(problems).toEqual([]);
      expect([...operations.keys()].filter((key) => !succeeded.has(key))).toEqual([]);
    },
  );
});

describe.each([
  { switches: { 'app.skills.enabled': false }, code: 'SKILLS_DISABLED' },
  { switches: { 'app.skills.enabled': true, 'app.tools.enabled': false }, code: 'TOOLS_DISABLED' },
])('OpenAPI: feature switches ($code)', ({ switches, code }) => {
  let app: NestFastifyApplication;
  beforeAll(async () => {
    app = await createTestApp({ ...switches, 'app.skills.directories': [skillsFolder()] });
  });
  afterAll(async () => app?.close());

  it(`exactly the routes that document 404 ${code} answer it while the switch is off`, async () => {
    const document = (await request(app.getHttpServer()).get('/openapi.json').expect(200)).body as OpenApiDocument;
    const problems: string[] = [];
    let documentedCount = 0;
    for (const { key, method, path, operation } of operationsOf(document)) {
      const documented = documentedCodes(operation, 404).includes(code);
      if (documented) documentedCount++;
      const res = await send(app, method, samplePath(path, 'pdf'));
      if ((res.body.code === code) !== documented)
        problems.push(
          `${key}: documented ${documented ? '' : 'no '}${code}, answered ${res.status} ${res.body.code ?? ''}`,
        );
    }
    expect(problems).toEqual([]);
    // Every skills route is behind the skills switch; the tools one runs every tool.
    expect(documentedCount).toBeGreaterThanOrEqual(code === 'TOOLS_DISABLED' ? 1 : 2);
  });
});

/** A discovery index on 127.0.0.1 serving one skill (`indexed`) with the given files. */
async function serveIndex(files: Record<string, string>): Promise<{ url: string; close: () => Promise<void> }> {
  const digest = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;
  const entries = Object.entries(files).map(([path, text]) => ({
    path,
    digest: digest(text),
    size: Buffer.byteLength(text),
    url: `/files/${path}`,
  }));
  const index = {
    version: '0.2.0',
    skills: [{ name: 'indexed', description: 'From an index.', digest: skillDigest(entries), files: entries }],
  };
  const server = createServer((req, res) => {
    if (req.url === '/.well-known/agent-skills/index.json') return res.end(JSON.stringify(index));
    const text = files[(req.url ?? '').replace('/files/', '')];
    if (text === undefined) return res.writeHead(404).end();
    res.end(text);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/.well-known/agent-skills/index.json`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
