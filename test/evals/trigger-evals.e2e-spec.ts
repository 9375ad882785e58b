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

const TRIGGERS = {
  should_trigger: [
    'put together an RFC on the billing service with me',
    'draft a proposal for moving our queue to Kafka',
  ],
  should_not_trigger: [
    'make an animated GIF of our logo for Slack',
    { query: 'build an MCP server for the GitHub API', expect_skill: 'mcp-builder' },
  ],
};

const specWriter = (description: string, triggers: unknown = TRIGGERS) =>
  zipOf({
    'spec-writer/SKILL.md': skillMd({ name: 'spec-writer', description, body: '# Specs\n\nAsk, then draft.\n' }),
    'spec-writer/evals/triggers.json': typeof triggers === 'string' ? triggers : JSON.stringify(triggers),
  });

describe('trigger evals: the catalogue level, the publishing gate (refuse), bad eval files', () => {
  let ctx: ChatTestContext;
  const http = () => request(ctx.app.getHttpServer());
  const keys: Record<string, string> = {};
  const as = (user: string) => ({ authorization: `Bearer ${keys[user]}` });
  const upload = (user: string, archive: UploadBody) =>
    http().post('/v1/admin/skills').set(as(user)).set('content-type', archive.contentType).send(archive.body);
  const versions = async () =>
    (
      await query<{ n: number }>(
        ctx.db.url,
        'SELECT (SELECT count(*) FROM skill_versions)::int + (SELECT count(*) FROM skill_blobs)::int AS n',
      )
    )[0].n;

  beforeAll(async () => {
    ctx = await startChatApp([CORPUS], {
      'app.auth.mode': 'api_key',
      'app.skills.evals.gate': 'refuse',
    });
    const users = ctx.app.get(UsersService);
    for (const [name, role] of [
      ['root', 'admin'],
      ['ed', 'editor'],
      ['ann', 'member'],
    ] as const) {
      keys[name] = (await users.createKey((await users.createUser(name, role)).id)).key;
    }
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it(
    'refuses a bad evals/triggers.json at install (400), naming the file, each case and why; nothing ' + 'is installed',
    async () => {
      const bad = [{ query: 'write a spec for the new API', should_trigger: 'yes' }, { should_trigger: false }];
      const answer = await upload('root', await specWriter(DESCRIPTION, bad)).expect(400);
      expect(answer.body).toMatchObject({
        code: 'VALIDATION_FAILED',
        details: {
          problems: [
            'evals/triggers.json: case 1 ("write a spec for the new API"): should_trigger must be true or false',
            'evals/triggers.json: case 2: query is missing',
          ],
        },
      });
      expect(answer.body.message).toContain(
        "The trigger evals of 'spec-writer' are not valid, so nothing was installed",
      );
      const notJson = await upload('root', await specWriter(DESCRIPTION, '{ "should_trigger": [')).expect(400);
      expect(notJson.body.details.problems).toEqual([expect.stringMatching(/^evals\/triggers\.json: not JSON \(/)]);
      await http().get('/v1/skills/spec-writer').set(as('root')).expect(404);
    },
  );

  it('installs a skill with trigger evals and runs them: listed for its requests, not for the others', async () => {
    await upload('root', await specWriter(DESCRIPTION)).expect(201);
    const run = await http().post('/v1/admin/skills/spec-writer/evals/run').set(as('root')).send({}).expect(200);
    expect(run.body).toMatchObject({
      level: 'catalogue',
      withoutEvals: [],
      invalid: [],
      skills: [
        {
          skill: 'spec-writer',
          digest: expect.stringMatching(/^sha256:/),
          complete: true,
          score: { cases: 4, passed: 4, precision: 1, recall: 1, truePositives: 2, trueNegatives: 2 },
        },
      ],
    });
    expect(run.body.skills[0].cases).toEqual([
      { query: TRIGGERS.should_trigger[0], shouldTrigger: true, source: 'file', triggered: true, pass: true },
      { query: TRIGGERS.should_trigger[1], shouldTrigger: true, source: 'file', triggered: true, pass: true },
      { query: TRIGGERS.should_not_trigger[0], shouldTrigger: false, source: 'file', triggered: false, pass: true },
      {
        query: 'build an MCP server for the GitHub API',
        shouldTrigger: false,
        expectSkill: 'mcp-builder',
        source: 'file',
        triggered: false,
        expectedTriggered: true,
        pass: true,
      },
    ]);
    expect(run.body.collisions).toBeUndefined();
  });

  it(
    'refuses a version whose description lost its triggers (422 EVAL_REGRESSION); the old version ' + 'serves',
    async () => {
      const before = await versions();
      const answer = await upload('root', await specWriter('An internal helper of the team.')).expect(422);
      expect(answer.body).toMatchObject({
        code: 'EVAL_REGRESSION',
        details: {
          skill: 'spec-writer',
          recallBefore: 1,
          recallAfter: 0,
          regressed: [
            { query: TRIGGERS.should_trigger[0], shouldTrigger: true },
            { query: TRIGGERS.should_trigger[1], shouldTrigger: true },
          ],
        },
      });
      expect(answer.body.message).toContain('catalogue recall 100% → 0%');
      expect(answer.body.message).toContain('Nothing was installed: the serving version stays.');
      expect(await versions()).toBe(before);
      const served = await http().get('/v1/skills/spec-writer').set(as('ann')).expect(200);
      expect(served.body.description).toBe(DESCRIPTION);
      const history = await http().get('/v1/skills/spec-writer/versions').set(as('root')).expect(200);
      expect(history.body.versions.map((v: { version: number }) => v.version)).toEqual([1]);
    },
  );

  it('installs a version that keeps its triggers', async () => {
    const answer = await upload('root', await specWriter(`${DESCRIPTION} Also for design docs.`)).expect(201);
    expect(answer.body).toMatchObject({ name: 'spec-writer', version: 2, warnings: [] });
  });

  it('runs the model level: a scripted model that activates by a rule, with the real prompt and tools', async () => {
    // The rule: a request about specs, proposals or RFCs activates spec-writer, one about MCP mcp-builder; others none.
    ctx.model.answerWith((recorded) => {
      const user = recorded.body.messages.filter((message) => message.role === 'user').at(-1);
      const text = JSON.stringify(user?.content ?? '');
      const activate = recorded.body.tools?.find((tool) => /activate/.test(tool.function.name))?.function.name;
      const skill = /spec|proposal|RFC/i.test(text) ? 'spec-writer' : /MCP/.test(text) ? 'mcp-builder' : undefined;
      if (activate === undefined || skill === undefined) return { text: 'No skill needed.' };
      return { toolCalls: [{ name: activate, arguments: { name: skill } }] };
    });
    const before = ctx.model.requests.length;
    const run = await http()
      .post('/v1/admin/skills/spec-writer/evals/run')
      .set(as('root'))
      .send({ level: 'model' })
      .expect(200);
    expect(run.body).toMatchObject({
      skill: 'spec-writer',
      model: expect.any(String),
      calls: 4,
      notRun: 0,
      score: { cases: 4, passed: 4, precision: 1, recall: 1 },
    });
    expect(run.body.cases.map((entry: { activated: string[] }) => entry.activated)).toEqual([
      ['spec-writer'],
      ['spec-writer'],
      [],
      ['mcp-builder'],
    ]);
    // One call per case, each with the turn's system prompt listing the skill and the skill tools.
    const sent = ctx.model.requests.slice(before);
    expect(sent).toHaveLength(4);
    expect(JSON.stringify(sent[0].body.messages[0])).toContain('spec-writer');
    expect(sent[0].body.tools?.length).toBeGreaterThan(0);
  });

  it('keeps the last run per version, level and model', async () => {
    const kept = await http().get('/v1/admin/skills/spec-writer/evals').set(as('root')).expect(200);
    expect(kept.body.skill).toBe('spec-writer');
    const runs = kept.body.runs.map((run: { digest: string; level: string; model: string; score: object }) => ({
      level: run.level,
      model: run.model,
      digest: run.digest,
      recall: (run.score as { recall: number }).recall,
    }));
    // Version 1's catalogue run, version 2's (the gate's, kept with the install) and version 2's model run; the
    // version the gate refused has none.
    const { versions } = (await http().get('/v1/skills/spec-writer/versions').set(as('root')).expect(200)).body;
    const version2 = versions.find((entry: { version: number }) => entry.version === 2).digest as string;
    expect(runs).toEqual(
      expect.arrayContaining([
        { level: 'model', model: expect.any(String), digest: version2, recall: 1 },
        { level: 'catalogue', model: '', digest: version2, recall: 1 },
        { level: 'catalogue', model: '', digest: expect.not.stringMatching(version2), recall: 1 },
      ]),
    );
    expect(runs).toHaveLength(3);
    expect(kept.body.runs[0].cases).toHaveLength(4);
    await http().get('/v1/admin/skills/spec-writer/evals').set(as('ann')).expect(403);
  });

  it('lets admins and owning editors run the evals, no one else', async () => {
    const member = await http().post('/v1/admin/skills/spec-writer/evals/run').set(as('ann')).send({}).expect(403);
    expect(member.body).toMatchObject({ code: 'FORBIDDEN' });
    const editor = await http().post('/v1/admin/skills/spec-writer/evals/run').set(as('ed')).send({}).expect(403);
    expect(editor.body.message).toContain("'spec-writer' is not one of them");
    const missing = await http().post('/v1/admin/skills/nope/evals/run').set(as('root')).send({}).expect(404);
    expect(missing.body).toMatchObject({ code: 'SKILL_NOT_FOUND' });
  });
});

describe('trigger evals: the publishing gate (warn, the default), the model call budget', () => {
  let ctx: ChatTestContext;
  const http = () => request(ctx.app.getHttpServer());
  let key: string;
  const upload = (archive: UploadBody) =>
    http()
      .post('/v1/admin/skills')
      .set({ authorization: `Bearer ${key}` })
      .set('content-type', archive.contentType)
      .send(archive.body);

  beforeAll(async () => {
    ctx = await startChatApp([CORPUS], { 'app.auth.mode': 'api_key', 'app.skills.evals.model_max_calls': 2 });
    const users = ctx.app.get(UsersService);
    key = (await users.createKey((await users.createUser('root', 'admin')).id)).key;
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it('installs a version that lost its triggers, answering with a warning that names the regressed cases', async () => {
    await upload(await specWriter(DESCRIPTION)).expect(201);
    const answer = await upload(await specWriter('An internal helper of the team.')).expect(201);
    expect(answer.body).toMatchObject({ name: 'spec-writer', version: 2 });
    expect(answer.body.warnings).toEqual([
      "The new version of 'spec-writer' lists the skill for fewer of its trigger evals' requests (catalogue recall " +
        `100% → 0%); it no longer does for: ${JSON.stringify(TRIGGERS.should_trigger[0])}, ` +
        `${JSON.stringify(TRIGGERS.should_trigger[1])}.`,
    ]);
    const served = await http()
      .get('/v1/skills/spec-writer')
      .set({ authorization: `Bearer ${key}` })
      .expect(200);
    expect(served.body.description).toBe('An internal helper of the team.');
  });

  it('makes at most model_max_calls model calls, counting the cases left out', async () => {
    ctx.model.answerWith(() => ({ text: 'No skill needed.' }));
    const before = ctx.model.requests.length;
    const run = await http()
      .post('/v1/admin/skills/spec-writer/evals/run')
      .set({ authorization: `Bearer ${key}` })
      .send({ level: 'model' })
      .expect(200);
    expect(run.body).toMatchObject({ calls: 2, notRun: 2, score: { cases: 2, recall: 0 } });
    expect(ctx.model.requests.length - before).toBe(2);
  });
});
