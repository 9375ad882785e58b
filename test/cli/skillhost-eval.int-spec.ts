import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { keysFor } from '../support/api-keys.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';
import { skillMd, tempTree } from '../support/files/skill-tree.js';
import type { RecordedRequest, ScriptStep } from '../support/scripted-model-server.js';
import { ScriptedModelServer } from '../support/scripted-model-server.js';
import { run } from './run-cli.js';

/** Anthropic's public skills, as the team's skills directory. */
const CORPUS = '/work/shared/corpus/anthropics-skills';

const DESCRIPTION =
  'Co-authors technical specs, design proposals and decision records with the user. Use when asked to write or ' +
  'draft a spec, a proposal or an RFC.';
const TRIGGERS = [
  { query: 'put together an RFC on the billing service with me', should_trigger: true },
  { query: 'draft a proposal for moving our queue to Kafka', should_trigger: true },
  { query: 'make an animated GIF of our logo for Slack', should_trigger: false },
  { query: 'build an MCP server for the GitHub API', should_trigger: false, expect_skill: 'mcp-builder' },
];

/** `skillhost eval` and the gate of `skillhost install` on a real PostgreSQL, with the corpus as the team's skills. */
describe('skillhost eval, and install refused by the gate', () => {
  const tree = tempTree('skillhost-cli-eval-');
  let db: TestDatabase;
  const cli = (...argv: string[]) => run([...argv, '--config', 'cfg.toml'], tree.root);
  const writeSpecWriter = (folder: string, description: string) => {
    tree.write(`${folder}/spec-writer/SKILL.md`, skillMd({ name: 'spec-writer', description }));
    tree.write(`${folder}/spec-writer/evals/triggers.json`, JSON.stringify(TRIGGERS));
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    tree.write(
      'cfg.toml',
      `[app.database]\nurl = "${db.url}"\n[app.skills]\nenabled = true\ndirectories = ["${CORPUS}"]\n` +
        `store_directory = "${tree.path('store')}"\n[app.skills.evals]\ngate = "refuse"\n`,
    );
    writeSpecWriter('v1', DESCRIPTION);
    writeSpecWriter('v2', 'An internal helper of the team.');
  });
  afterAll(async () => {
    await db?.drop();
    tree.cleanup();
  });

  it('runs one skill: each case, precision and recall; exit 0 when every case passes', async () => {
    expect(await cli('install', 'v1/spec-writer')).toMatchObject({ code: 0 });
    const result = await cli('eval', 'spec-writer');
    expect(result).toMatchObject({ code: 0, err: '' });
    expect(result.out.split('\n')).toEqual([
      'Catalogue level: listed under 4000 tokens and 50 skills, ranked as a turn ranks.',
      expect.stringMatching(/^spec-writer: 4\/4 passed, precision 100%, recall 100% \(sha256:[0-9a-f]{12}…\)$/),
    ]);
    const json = JSON.parse((await cli('eval', 'spec-writer', '--json')).out);
    expect(json.skills[0].score).toMatchObject({ precision: 1, recall: 1 });
  });

  it('refuses to install a version that lost its triggers, and the old version still serves', async () => {
    const refused = await cli('install', 'v2/spec-writer');
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("The new version of 'spec-writer' lists the skill for fewer");
    expect(refused.err).toContain('Nothing was installed: the serving version stays.');
    const versions = JSON.parse((await cli('versions', 'spec-writer', '--json')).out);
    expect(versions.versions.map((v: { version: number }) => v.version)).toEqual([1]);
    expect((await cli('eval', 'spec-writer')).out).toContain('4/4 passed');
  });

  it('runs every skill with evals (the corpus has none), reports the others; an unknown name exits 1', async () => {
    const all = await cli('eval');
    expect(all.code).toBe(0);
    expect(all.out).toMatch(/Without trigger evals: algorithmic-art, brand-guidelines, /);
    const missing = await cli('eval', 'nope');
    expect(missing).toMatchObject({ code: 1, err: expect.stringContaining("No skill named 'nope' is offered") });
  });

  it("runs a skill's kept cases with its file's, saying which failing case is a kept one", async () => {
    await query(
      db.url,
      "INSERT INTO skill_eval_cases (skill_name, query, should_trigger) VALUES ('spec-writer', $1, true), " +
        "('spec-writer', 'bake a sourdough loaf for the team', true)",
      ['write up a design proposal for the new search service'],
    );
    const result = await cli('eval', 'spec-writer');
    expect(result.code).toBe(1);
    expect(result.out.split('\n').slice(1)).toEqual([
      expect.stringMatching(/^spec-writer: 5\/6 passed, precision 100%, recall 75% /),
      '  FAIL "bake a sourdough loaf for the team" (kept case): should be listed, is not',
    ]);
  });
});

/**
 * The model's rule: a request about specs, proposals or RFCs (or, with `gifs`, GIFs) activates spec-writer, one about
 * MCP mcp-builder, others none; through the activation tool of the prompt's style, as a real model would call it.
 */
function activateByRule(gifs = false): (recorded: RecordedRequest) => ScriptStep {
  return (recorded) => {
    const user = recorded.body.messages.filter((message) => message.role === 'user').at(-1);
    const text = JSON.stringify(user?.content ?? '');
    const activate = recorded.body.tools?.find((tool) => /activate/.test(tool.function.name))?.function.name;
    const wanted = gifs ? /spec|proposal|RFC|GIF/i : /spec|proposal|RFC/i;
    const skill = wanted.test(text) ? 'spec-writer' : /MCP/.test(text) ? 'mcp-builder' : undefined;
    if (activate === undefined || skill === undefined) return { text: 'No skill needed.' };
    return { toolCalls: [{ name: activate, arguments: { name: skill } }] };
  };
}

/** `skillhost eval --level model` on the server's own services, and either level through `--server`. */
describe('skillhost eval --level model, locally and through --server, against a scripted model', () => {
  const tree = tempTree('skillhost-cli-eval-model-');
  let db: TestDatabase;
  let model: ScriptedModelServer;
  let server: ChatTestContext;
  let serverUrl: string;
  let key: string;
  const cli = (...argv: string[]) => run([...argv, '--config', 'cfg.toml'], tree.root);
  const remote = (...argv: string[]) => run(argv, tree.root, { SKILLHOST_API_KEY: key });
  const runsKept = () =>
    query<{ level: string; model: string; passed: number }>(
      db.url,
      "SELECT level, model, (score->>'passed')::int AS passed FROM skill_eval_runs WHERE skill_name = 'spec-writer' " +
        'ORDER BY level, model',
    );

  beforeAll(async () => {
    db = await createTestDatabase();
    model = await new ScriptedModelServer().start();
    tree.write('skills/spec-writer/SKILL.md', skillMd({ name: 'spec-writer', description: DESCRIPTION }));
    tree.write('skills/spec-writer/evals/triggers.json', JSON.stringify(TRIGGERS));
    tree.write(
      'cfg.toml',
      `[app.database]\nurl = "${db.url}"\n[app.skills]\nenabled = true\n` +
        `directories = ["${CORPUS}", "${tree.path('skills')}"]\nstore_directory = "${tree.path('store')}"\n` +
        `[app.models.scripted]\nprovider = "openai-compatible"\nbase_url = "${model.url}"\nmodel = "scripted-1"\n` +
        'timeout_ms = 20000\nmax_retries = 0\n',
    );
    server = await startChatApp([CORPUS, tree.path('skills')], { 'app.auth.mode': 'api_key' });
    await server.app.listen(0, '127.0.0.1');
    serverUrl = await server.app.getUrl();
    key = (await keysFor(server.app, { root: 'admin' })).root;
  });
  afterAll(async () => {
    await server?.close();
    await model?.stop();
    await db?.drop();
    tree.cleanup();
  });

  it('asks the configured model once per case with the real prompt and tools, keeps the run, exit 0', async () => {
    model.answerWith(activateByRule());
    const result = await cli('eval', '--level', 'model', 'spec-writer');
    expect(result).toMatchObject({ code: 0, err: '' });
    expect(result.out.split('\n')).toEqual([
      'Model level: each case is the first step of a turn in a new chat, one model call.',
      expect.stringMatching(
        new RegExp(
          '^spec-writer with model scripted: 4/4 passed, precision 100%, recall 100%, 4 call\\(s\\) ' +
            '\\(sha256:[0-9a-f]{12}…\\)$',
        ),
      ),
    ]);
    expect(model.requests).toHaveLength(4);
    // The turn's system prompt lists the skill; the style's tools are offered.
    expect(JSON.stringify(model.requests[0].body.messages[0])).toContain('spec-writer');
    expect(model.requests[0].body.tools?.some((tool) => /activate/.test(tool.function.name))).toBe(true);
    expect(await runsKept()).toEqual([{ level: 'model', model: 'scripted', passed: 4 }]);
  });

  it('exits 1 when a case fails, naming it and what the model activated; --json is the runs', async () => {
    model.answerWith(activateByRule(true));
    const text = await cli('eval', '--level', 'model', 'spec-writer');
    expect(text.code).toBe(1);
    expect(text.out).toContain('spec-writer with model scripted: 3/4 passed, precision 67%, recall 100%');
    expect(text.out).toContain(
      '  FAIL "make an animated GIF of our logo for Slack": should not be activated, is (activated: spec-writer)',
    );
    const json = await cli('eval', '--level', 'model', '--model', 'scripted', 'spec-writer', '--json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.out)).toMatchObject({
      level: 'model',
      skills: [{ skill: 'spec-writer', model: 'scripted', calls: 4, notRun: 0, score: { cases: 4, passed: 3 } }],
    });
  });

  it('refuses what it cannot run: usage (exit 2), a model or skill that is not there (exit 1)', async () => {
    expect(await cli('eval', '--model', 'scripted', 'spec-writer')).toMatchObject({
      code: 2,
      err: expect.stringContaining('--model goes with --level model.'),
    });
    expect((await cli('eval', '--level', 'model')).err).toContain('give NAME');
    expect((await cli('eval', '--level', 'telepathy', 'spec-writer')).code).toBe(2);
    const before = model.requests.length;
    const noModel = await cli('eval', '--level', 'model', '--model', 'nope', 'spec-writer');
    expect(noModel).toMatchObject({ code: 1, err: expect.stringContaining('nope') });
    const noSkill = await cli('eval', '--level', 'model', 'nope');
    expect(noSkill).toMatchObject({ code: 1, err: expect.stringContaining("No skill named 'nope' is offered") });
    expect(model.requests.length).toBe(before);
  });

  it('runs either level on a server with --server, as the person whose key it is', async () => {
    server.model.answerWith(activateByRule());
    const modelRun = await remote('eval', '--server', serverUrl, '--level', 'model', 'spec-writer');
    expect(modelRun).toMatchObject({ code: 0, err: '' });
    expect(modelRun.out).toMatch(/^spec-writer with model scripted: 4\/4 passed, precision 100%, recall 100%, 4 call/m);
    expect(server.model.requests).toHaveLength(4);
    const catalogue = await remote('eval', '--server', serverUrl, 'spec-writer', '--json');
    expect(catalogue.code).toBe(0);
    expect(JSON.parse(catalogue.out)).toMatchObject({
      level: 'catalogue',
      skills: [{ skill: 'spec-writer', score: { cases: 4, passed: 4 } }],
      withoutEvals: [],
      invalid: [],
    });
    const kept = await getJson(serverUrl, 'v1/admin/skills/spec-writer/evals');
    expect(kept.runs.map((entry) => entry.level).sort()).toEqual(['catalogue', 'model']);
    const refused = await run(['eval', '--server', serverUrl, 'spec-writer'], tree.root, {
      SKILLHOST_API_KEY: 'skh_wrongwrongwrongwrongwrongwrongwrong',
    });
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('UNAUTHENTICATED');
    expect((await remote('eval', '--server', serverUrl)).code).toBe(2);
    expect((await remote('eval', '--server', serverUrl, '--config', 'cfg.toml', 'spec-writer')).code).toBe(2);
  });

  /** The kept runs, as the admin reads them. */
  async function getJson(base: string, path: string): Promise<{ runs: { level: string }[] }> {
    const response = await fetch(new URL(path, base.endsWith('/') ? base : `${base}/`), {
      headers: { authorization: `Bearer ${key}` },
    });
    return (await response.json()) as { runs: { level: string }[] };
  }
});
