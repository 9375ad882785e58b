import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';
import { skillMd, tempTree } from '../support/files/skill-tree.js';
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
