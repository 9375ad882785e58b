import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { UsersService } from '../../src/domain/users/users.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { query } from '../support/database.js';
import { type UploadBody, zipOf } from '../support/skill-archives.js';
import { skillMd } from '../support/files/skill-tree.js';

/** Anthropic's public skills, as the team's skills directory: the catalogue a new skill is ranked in. */
const CORPUS = '/work/shared/corpus/anthropics-skills';

const DESCRIPTION =
  'Co-authors technical specs, design proposals and decision records with the user. Use when asked to write or ' +
  'draft a spec, a proposal or an RFC.';
const FILE_CASES = [
  { query: 'put together an RFC on the billing service with me', should_trigger: true },
  { query: 'make an animated GIF of our logo for Slack', should_trigger: false },
];
const KEPT_POSITIVE = 'draft a proposal for moving our queue to Kafka';
const KEPT_NEGATIVE = 'build an MCP server for the GitHub API';

const skillZip = (name: string, description: string, triggers?: unknown) =>
  zipOf({
    [`${name}/SKILL.md`]: skillMd({ name, description, body: '# Specs\n\nAsk, then draft.\n' }),
    ...(triggers === undefined ? {} : { [`${name}/evals/triggers.json`]: JSON.stringify(triggers) }),
  });

/**
 * Trigger eval cases kept by the service: who may list, add and remove them (as for running evals), bad input refused
 * with the file's messages and nothing kept, duplicates merged, and the kept cases used by the runs (both levels) and
 * by the publishing gate, each result saying where its case came from.
 */
describe('kept trigger eval cases: the routes, the runs and the gate', () => {
  let ctx: ChatTestContext;
  const http = () => request(ctx.app.getHttpServer());
  const keys: Record<string, string> = {};
  const as = (user: string) => ({ authorization: `Bearer ${keys[user]}` });
  const cases = (skill: string) => `/v1/admin/skills/${skill}/evals/cases`;
  const add = (user: string, skill: string, body: unknown) =>
    http()
      .post(cases(skill))
      .set(as(user))
      .send(body as object);
  const upload = (user: string, archive: UploadBody) =>
    http().post('/v1/admin/skills').set(as(user)).set('content-type', archive.contentType).send(archive.body);
  const keptRows = async () =>
    (await query<{ n: number }>(ctx.db.url, 'SELECT count(*)::int AS n FROM skill_eval_cases'))[0].n;

  beforeAll(async () => {
    ctx = await startChatApp([CORPUS], { 'app.auth.mode': 'api_key', 'app.skills.evals.gate': 'refuse' });
    const users = ctx.app.get(UsersService);
    for (const [name, role] of [
      ['root', 'admin'],
      ['ed', 'editor'],
      ['eve', 'editor'],
      ['ann', 'member'],
    ] as const) {
      keys[name] = (await users.createKey((await users.createUser(name, role)).id)).key;
    }
    // ed publishes both skills, so ed owns them; eve is an editor who owns neither.
    await upload('ed', await skillZip('spec-writer', DESCRIPTION, FILE_CASES)).expect(201);
    await upload('ed', await skillZip('notes-helper', DESCRIPTION)).expect(201);
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it('lets admins and owning editors list, add and remove cases; other editors and members get 403', async () => {
    for (const user of ['eve', 'ann']) {
      const refused = await http().get(cases('spec-writer')).set(as(user)).expect(403);
      expect(refused.body).toMatchObject({ code: 'FORBIDDEN' });
      expect(refused.body.message).toContain("'spec-writer' is not one of them");
      await add(user, 'spec-writer', { query: KEPT_POSITIVE, should_trigger: true }).expect(403);
    }
    expect(await keptRows()).toBe(0);
    const added = await add('ed', 'spec-writer', { query: KEPT_POSITIVE, should_trigger: true }).expect(201);
    expect(added.body).toEqual({
      skill: 'spec-writer',
      added: [
        {
          source: 'kept',
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          query: KEPT_POSITIVE,
          shouldTrigger: true,
          addedBy: { id: expect.any(String), name: 'ed' },
          addedAt: expect.any(String),
          inFile: false,
        },
      ],
      duplicates: [],
    });
    const byAdmin = await add('root', 'spec-writer', [
      { query: KEPT_NEGATIVE, should_trigger: false, expect_skill: 'mcp-builder' },
    ]).expect(201);
    const list = await http().get(cases('spec-writer')).set(as('ed')).expect(200);
    expect(list.body).toMatchObject({ skill: 'spec-writer', fileProblems: [], limits: { maxKeptCases: 500 } });
    expect(
      list.body.cases.map((entry: { source: string; query: string; addedBy?: { name: string } }) => [
        entry.source,
        entry.query,
        entry.addedBy?.name,
      ]),
    ).toEqual([
      ['file', FILE_CASES[0].query, undefined],
      ['file', FILE_CASES[1].query, undefined],
      ['kept', KEPT_POSITIVE, 'ed'],
      ['kept', KEPT_NEGATIVE, 'root'],
    ]);
    await http()
      .delete(`${cases('spec-writer')}/${byAdmin.body.added[0].id}`)
      .set(as('eve'))
      .expect(403);
    await http()
      .delete(`${cases('spec-writer')}/${byAdmin.body.added[0].id}`)
      .set(as('ed'))
      .expect(204);
    await add('ed', 'spec-writer', { query: KEPT_NEGATIVE, should_trigger: false, expect_skill: 'mcp-builder' });
    const audit = await http().get('/v1/admin/audit?target=skill:spec-writer').set(as('root')).expect(200);
    expect(audit.body.items.map((entry: { action: string; actor: { name: string } }) => entry.action)).toEqual([
      'skill.eval-case.add',
      'skill.eval-case.remove',
      'skill.eval-case.add',
      'skill.eval-case.add',
      'skill.install',
    ]);
    expect(audit.body.items[1]).toMatchObject({
      actor: { name: 'ed' },
      details: { case: { query: KEPT_NEGATIVE, shouldTrigger: false, expectSkill: 'mcp-builder' } },
    });
  });

  it('refuses bad cases with 400 VALIDATION_FAILED in the words of the file check, keeping none', async () => {
    const before = await keptRows();
    const refusals: [unknown, string[]][] = [
      [
        { query: 'write a spec', should_trigger: 'yes' },
        ['body: case 1 ("write a spec"): should_trigger must be true or false'],
      ],
      [
        [{ query: 'a fine request', should_trigger: true }, { should_trigger: false }],
        ['body: case 2: query is missing'],
      ],
      [
        { query: 'x'.repeat(4001), should_trigger: true },
        [`body: case 1 ("${'x'.repeat(40)}…"): query must be at most 4000 characters`],
      ],
      [
        { query: 'Put together an RFC on the billing service with me', should_trigger: false },
        [
          'body: case 1 ("Put together an RFC on the billing servi…"): the same request is listed as ' +
            'should_trigger true too in evals/triggers.json; keep one',
        ],
      ],
      [
        { should_trigger: [], should_not_trigger: [KEPT_POSITIVE] },
        [
          // Cases of the grouped form are counted across both lists, as the file check counts them.
          'body: case 1 ("draft a proposal for moving our queue to…"): the same request is listed as ' +
            'should_trigger true too among the kept cases; keep one',
        ],
      ],
      [
        Array.from({ length: 501 }, (_, i) => ({ query: `request ${i}`, should_trigger: true })),
        ['body: has 501 cases, more than 500'],
      ],
      [
        { query: 'a spec', should_trigger: true, expect_skill: 'pdf', weight: 2 },
        ['body: case 1 ("a spec"): unknown field(s) "weight" (a case has query, should_trigger, expect_skill)'],
      ],
    ];
    for (const [body, problems] of refusals) {
      const answer = await add('ed', 'spec-writer', body).expect(400);
      expect(answer.body).toMatchObject({ code: 'VALIDATION_FAILED', details: { problems } });
      expect(answer.body.message).toContain("The trigger eval cases for 'spec-writer' are not valid, so none was kept");
    }
    // A request with NUL is refused before it is read (PostgreSQL could not store it).
    const nul = await add('ed', 'spec-writer', { query: 'draft\u0000a spec', should_trigger: true }).expect(400);
    expect(nul.body.details.problems).toEqual([
      'query: contains a NUL character (U+0000), which cannot be stored; remove it',
    ]);
    expect(await keptRows()).toBe(before);
    const missing = await add('root', 'no-such-skill', { query: 'a spec', should_trigger: true }).expect(404);
    expect(missing.body).toMatchObject({ code: 'SKILL_NOT_FOUND' });
  });

  it('merges a case already kept or in the file (200, listed as duplicates) and keeps the new ones', async () => {
    const before = await keptRows();
    const again = await add('ed', 'spec-writer', [
      { query: KEPT_POSITIVE.toUpperCase(), should_trigger: true },
      { query: FILE_CASES[1].query, should_trigger: false },
    ]).expect(200);
    expect(again.body).toEqual({
      skill: 'spec-writer',
      added: [],
      duplicates: [
        { query: KEPT_POSITIVE.toUpperCase(), shouldTrigger: true, of: 'kept' },
        { query: FILE_CASES[1].query, shouldTrigger: false, of: 'file' },
      ],
    });
    expect(await keptRows()).toBe(before);
  });

  it("runs the kept cases with the file's at the catalogue level, each result saying where it came from", async () => {
    const run = await http().post('/v1/admin/skills/spec-writer/evals/run').set(as('ed')).send({}).expect(200);
    const [skill] = run.body.skills;
    expect(skill.score).toMatchObject({ cases: 4, passed: 4, precision: 1, recall: 1 });
    expect(
      skill.cases.map((entry: { query: string; source: string; caseId?: string; pass: boolean }) => [
        entry.query,
        entry.source,
        entry.caseId === undefined ? 'no id' : 'id',
        entry.pass,
      ]),
    ).toEqual([
      [FILE_CASES[0].query, 'file', 'no id', true],
      [FILE_CASES[1].query, 'file', 'no id', true],
      [KEPT_POSITIVE, 'kept', 'id', true],
      [KEPT_NEGATIVE, 'kept', 'id', true],
    ]);
    const history = await http().get('/v1/admin/skills/spec-writer/evals').set(as('ed')).expect(200);
    expect(history.body.runs[0].cases.map((entry: { source: string }) => entry.source)).toEqual([
      'file',
      'file',
      'kept',
      'kept',
    ]);
  });

  it('runs them at the model level too', async () => {
    ctx.model.answerWith((recorded) => {
      const user = JSON.stringify(recorded.body.messages.filter((message) => message.role === 'user').at(-1));
      const activate = recorded.body.tools?.find((tool) => /activate/.test(tool.function.name))?.function.name;
      const skill = /spec|proposal|RFC/i.test(user) ? 'spec-writer' : /MCP/.test(user) ? 'mcp-builder' : undefined;
      if (activate === undefined || skill === undefined) return { text: 'No skill needed.' };
      return { toolCalls: [{ name: activate, arguments: { name: skill } }] };
    });
    const run = await http()
      .post('/v1/admin/skills/spec-writer/evals/run')
      .set(as('root'))
      .send({ level: 'model' })
      .expect(200);
    expect(run.body).toMatchObject({ calls: 4, score: { cases: 4, passed: 4 } });
    expect(run.body.cases.map((entry: { source: string }) => entry.source)).toEqual(['file', 'file', 'kept', 'kept']);
  });

  it('gates a new version on the kept cases of a skill without a file: refused, the old one serves', async () => {
    await add('ed', 'notes-helper', {
      should_trigger: [FILE_CASES[0].query, KEPT_POSITIVE],
      should_not_trigger: [FILE_CASES[1].query],
    }).expect(201);
    const refused = await upload('ed', await skillZip('notes-helper', 'An internal helper of the team.')).expect(422);
    expect(refused.body).toMatchObject({
      code: 'EVAL_REGRESSION',
      details: {
        skill: 'notes-helper',
        recallBefore: 1,
        recallAfter: 0,
        regressed: [
          { query: FILE_CASES[0].query, shouldTrigger: true, source: 'kept' },
          { query: KEPT_POSITIVE, shouldTrigger: true, source: 'kept' },
        ],
      },
    });
    const served = await http().get('/v1/skills/notes-helper').set(as('ann')).expect(200);
    expect(served.body.description).toBe(DESCRIPTION);
  });

  it("leaves out of runs a kept case whose request the skill's new file lists, and says so", async () => {
    await upload(
      'ed',
      await skillZip('spec-writer', DESCRIPTION, [...FILE_CASES, { query: KEPT_POSITIVE, should_trigger: true }]),
    ).expect(201);
    const list = await http().get(cases('spec-writer')).set(as('ed')).expect(200);
    expect(
      list.body.cases.filter((entry: { inFile?: boolean }) => entry.inFile).map((e: { query: string }) => e.query),
    ).toEqual([KEPT_POSITIVE]);
    const run = await http().post('/v1/admin/skills/spec-writer/evals/run').set(as('ed')).send({}).expect(200);
    expect(run.body.skills[0].cases.map((entry: { source: string }) => entry.source)).toEqual([
      'file',
      'file',
      'file',
      'kept',
    ]);
  });

  it('answers 404 EVAL_CASE_NOT_FOUND for an id the skill does not keep, removing nothing', async () => {
    const before = await keptRows();
    const [kept] = (await http().get(cases('notes-helper')).set(as('ed')).expect(200)).body.cases;
    for (const path of [`${cases('spec-writer')}/${kept.id}`, `${cases('notes-helper')}/not-a-uuid`]) {
      const answer = await http().delete(path).set(as('root')).expect(404);
      expect(answer.body).toMatchObject({ code: 'EVAL_CASE_NOT_FOUND' });
      expect(answer.body.message).toContain('keeps no trigger eval case with the id');
    }
    expect(await keptRows()).toBe(before);
  });
});
