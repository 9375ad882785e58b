import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { UsersService } from '../../src/domain/users/users.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { query } from '../support/database.js';
import { zipOf } from '../support/skill-archives.js';
import { skillMd } from '../support/files/skill-tree.js';

/** Anthropic's public skills, as the team's skills directory. */
const CORPUS = '/work/shared/corpus/anthropics-skills';
const DESCRIPTION = 'Co-authors technical specs and RFCs. Use when asked to write a spec, a proposal or an RFC.';

/**
 * Trigger eval cases, runs and the usage funnel as a hostile client tries them: every bad input a 4xx with a stable
 * code, nothing kept, no 500.
 */
describe('trigger evals and the usage funnel: hostile input', () => {
  let ctx: ChatTestContext;
  const http = () => request(ctx.app.getHttpServer());
  const keys: Record<string, string> = {};
  const as = (user: string) => ({ authorization: `Bearer ${keys[user]}` });
  const CASES = '/v1/admin/skills/spec-writer/evals/cases';
  const post = (path: string, body: unknown, user = 'root') =>
    http().post(path).set(as(user)).set('content-type', 'application/json').send(JSON.stringify(body));
  const keptRows = async () =>
    (await query<{ n: number }>(ctx.db.url, 'SELECT count(*)::int AS n FROM skill_eval_cases'))[0].n;
  const skillZip = (triggers?: unknown) =>
    zipOf({
      'spec-writer/SKILL.md': skillMd({ name: 'spec-writer', description: DESCRIPTION, body: '# Specs\n' }),
      ...(triggers === undefined ? {} : { 'spec-writer/evals/triggers.json': JSON.stringify(triggers) }),
    });

  beforeAll(async () => {
    ctx = await startChatApp([CORPUS], { 'app.auth.mode': 'api_key' });
    const users = ctx.app.get(UsersService);
    for (const [name, role] of [
      ['root', 'admin'],
      ['ed', 'editor'],
    ] as const)
      keys[name] = (await users.createKey((await users.createUser(name, role)).id)).key;
    const zip = await skillZip();
    await http().post('/v1/admin/skills').set(as('ed')).set('content-type', zip.contentType).send(zip.body).expect(201);
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it('answers 400 for a skill name with NUL in the path, at every eval route', async () => {
    // Regression, fixed since a hostile pass found it. Was: 500 INTERNAL (PostgreSQL refused the NUL) on the cases
    // list, the kept runs and the removal of a case.
    const name = 'spec%00writer';
    const uuid = '00000000-0000-4000-8000-000000000000';
    for (const user of ['root', 'ed'])
      for (const [method, path] of [
        ['get', `/v1/admin/skills/${name}/evals/cases`],
        ['post', `/v1/admin/skills/${name}/evals/cases`],
        ['delete', `/v1/admin/skills/${name}/evals/cases/${uuid}`],
        ['get', `/v1/admin/skills/${name}/evals`],
        ['post', `/v1/admin/skills/${name}/evals`],
        ['post', `/v1/admin/skills/${name}/evals/run`],
      ] as const) {
        const answer =
          method === 'post'
            ? await post(path, path.endsWith('/cases') ? { query: 'a spec', should_trigger: true } : {}, user)
            : await http()[method](path).set(as(user));
        expect([method, path, user, answer.status, answer.body]).toEqual([
          method,
          path,
          user,
          400,
          {
            code: 'VALIDATION_FAILED',
            message: 'Invalid request: name: contains a NUL character (U+0000), which cannot be stored; remove it',
            details: { problems: ['name: contains a NUL character (U+0000), which cannot be stored; remove it'] },
          },
        ]);
      }
    expect(await keptRows()).toBe(0);
  });

  it('refuses an expect_skill naming the skill itself, or no possible skill, keeping nothing', async () => {
    // Regression, fixed since a hostile pass found it. Was: 201, a negative case that can never pass (it expects
    // the skill it says must not be listed), and names like "../../etc/passwd" or an ESC sequence that
    // `skillhost eval` printed as they were.
    const refusals: [unknown, string][] = [
      [
        { query: 'write a spec', should_trigger: false, expect_skill: 'spec-writer' },
        'body: case 1 ("write a spec"): expect_skill names \'spec-writer\' itself; name the skill the request ' +
          'should lead to instead, or leave expect_skill out',
      ],
      ...['../../etc/passwd', 'a\\b', '\u001b[2Jpdf', ' pdf', 'pdf\n', '   '].map((name): [unknown, string] => [
        { query: 'make a PDF', should_trigger: false, expect_skill: name },
        'body: case 1 ("make a PDF"): expect_skill must be a skill name: no control characters, slashes or ' +
          'spaces around it',
      ]),
    ];
    for (const [body, problem] of refusals) {
      const answer = await post(CASES, body).expect(400);
      expect(answer.body).toMatchObject({ code: 'VALIDATION_FAILED', details: { problems: [problem] } });
    }
    expect(await keptRows()).toBe(0);
    // A skill not installed (yet) is a fine expectation: it may come, and the case then fails until it does.
    await post(CASES, { query: 'make a PDF', should_trigger: false, expect_skill: 'not-installed-yet' }).expect(201);
  });

  it("refuses an install whose file's negative case expects the skill itself; the old version serves", async () => {
    // Regression, fixed since a hostile pass found it. Was: installed, with a case that could never pass.
    const zip = await skillZip([
      { query: 'draft an RFC', should_trigger: true },
      { query: 'write me a spec', should_trigger: false, expect_skill: 'spec-writer' },
    ]);
    const refused = await http()
      .post('/v1/admin/skills')
      .set(as('ed'))
      .set('content-type', zip.contentType)
      .send(zip.body)
      .expect(400);
    expect(refused.body).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: {
        skill: 'spec-writer',
        problems: [
          'evals/triggers.json: case 2 ("write me a spec"): expect_skill names \'spec-writer\' itself; name the ' +
            'skill the request should lead to instead, or leave expect_skill out',
        ],
      },
    });
    const versions = await http().get('/v1/skills/spec-writer/versions').set(as('root')).expect(200);
    expect(versions.body.versions ?? versions.body).toHaveLength(1);
  });

  it('keeps at most 500 cases when additions race for the last places', async () => {
    const before = await keptRows();
    const batch = (tag: string) =>
      Array.from({ length: 300 }, (_, i) => ({ query: `${tag} request ${i}`, should_trigger: i % 2 === 0 }));
    const answers = await Promise.all([post(CASES, batch('first')), post(CASES, batch('second'))]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 400]);
    const refused = answers.find((answer) => answer.status === 400)!;
    expect(refused.body).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(refused.body.details.problems[0]).toMatch(/^body: 'spec-writer' would keep 60\d cases, more than 500/);
    expect(await keptRows()).toBe(before + 300);
  });

  it('refuses what no body form takes: too many, too big, too deep, not JSON', async () => {
    const before = await keptRows();
    const many = await post(
      CASES,
      Array.from({ length: 10_000 }, (_, i) => ({ query: `r ${i}`, should_trigger: true })),
    ).expect(400);
    expect(many.body.code).toBe('VALIDATION_FAILED');
    const big = await post(CASES, { query: 'y'.repeat(5_000_000), should_trigger: true }).expect(413);
    expect(big.body.code).toBe('PAYLOAD_TOO_LARGE');
    const deep = await http()
      .post(CASES)
      .set(as('root'))
      .set('content-type', 'application/json')
      .send(`${'['.repeat(5000)}${']'.repeat(5000)}`)
      .expect(400);
    expect(deep.body.code).toBe('VALIDATION_FAILED');
    const text = await http().post(CASES).set(as('root')).set('content-type', 'text/plain').send('hi').expect(415);
    expect(text.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    expect(await keptRows()).toBe(before);
  });

  it('answers 400 for usage days before 1970, which PostgreSQL could not take as a range', async () => {
    // Regression, fixed since a hostile pass found it. Was: 500 INTERNAL for to=0001-01-15 (the default from fell in
    // year 0, which PostgreSQL has not) and for from=0000-01-01.
    for (const [range, problems] of [
      [
        'from=0000-01-01&to=0000-01-01',
        ["from must be 1970-01-01 or later, not '0000-01-01'", "to must be 1970-01-01 or later, not '0000-01-01'"],
      ],
      ['to=0001-01-15', ["to must be 1970-01-01 or later, not '0001-01-15'"]],
      ['from=1969-12-31', ["from must be 1970-01-01 or later, not '1969-12-31'"]],
    ] as const) {
      const answer = await http().get(`/v1/admin/skills/usage?${range}`).set(as('root')).expect(400);
      expect(answer.body).toMatchObject({ code: 'VALIDATION_FAILED', details: { problems } });
    }
    const earliest = await http().get('/v1/admin/skills/usage?to=1970-01-10').set(as('root')).expect(200);
    expect(earliest.body).toMatchObject({ from: '1969-12-12', to: '1970-01-10', rows: [] });
    await http().get('/v1/admin/skills/usage?from=9999-12-01&to=9999-12-31').set(as('root')).expect(200);
  });
});
