import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';

function commandMd(description: string, fields: string[] = [], body = 'Run with $ARGUMENTS.'): string {
  return ['---', `description: ${description}`, ...fields, '---', '', body, ''].join('\n');
}

const COMMAND_SCAN_LOG = /^(Loaded \d+ command|Commands directory|Invalid command file)/;
const COMMANDS_QUERY = '{ commands { name description argumentHint requiredSkills missingSkills } }';

describe('Commands HTTP and GraphQL API', () => {
  let tree: TempTree;
  let ctx: ChatTestContext;
  const logs: string[] = [];
  const http = () => request(ctx.app.getHttpServer());

  beforeAll(async () => {
    tree = tempTree();
    writeSkill(tree, 'skills', 'pdf', { description: 'Works with PDF files.' });
    writeSkill(tree, 'skills', 'code-review', { description: 'Reviews code.' });
    tree.write(
      'commands/review-pr.md',
      commandMd(
        'Reviews a pull request.',
        ['requires-skills: [code-review, git-commit]', 'argument-hint: "<pr-number> [focus]"'],
        'Review PR $1 ($2).',
      ),
    );
    tree.write('commands/pdf.md', commandMd('Fills a PDF form.', ['requires-skills: pdf']));
    tree.write('commands/deploy.md', commandMd('Deploys.'));
    tree.write('commands/Broken.md', commandMd('Bad name.'));
    tree.write('shared/deploy.md', commandMd('Shadowed deploy.'));
    const capture = (message: unknown) => void logs.push(String(message));
    ctx = await startChatApp(
      [tree.path('skills')],
      { 'app.commands.directories': [tree.path('commands'), tree.path('shared'), tree.path('missing')] },
      undefined,
      {},
      { log: capture, warn: capture, error: capture },
    );
  });
  afterAll(async () => {
    await ctx?.close();
    tree?.cleanup();
  });

  it('logs the commands scan at start-up: the count, each invalid file and each warning', () => {
    expect(logs.filter((line) => COMMAND_SCAN_LOG.test(line))).toEqual([
      'Loaded 3 command(s) (1 invalid, 2 collision(s))',
      `Commands directory '${tree.path('missing')}' ` +
        `(${tree.path('missing')}) does not exist or is not a readable folder; skipped`,
      expect.stringMatching(
        new RegExp(`^Invalid command file at ${tree.path('commands/Broken.md')}: Command name 'Broken'`),
      ),
    ]);
  });

  it(
    'GET /v1/commands lists the loaded commands in name order, with the required skills that are missing, and no ' +
      'host paths',
    async () => {
      const res = await http().get('/v1/commands').expect(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(res.body).toEqual({
        count: 3,
        commands: [
          { name: 'deploy', description: 'Deploys.', argumentHint: null, requiredSkills: [], missingSkills: [] },
          {
            name: 'pdf',
            description: 'Fills a PDF form.',
            argumentHint: null,
            requiredSkills: ['pdf'],
            missingSkills: [],
          },
          {
            name: 'review-pr',
            description: 'Reviews a pull request.',
            argumentHint: '<pr-number> [focus]',
            requiredSkills: ['code-review', 'git-commit'],
            missingSkills: ['git-commit'],
          },
        ],
      });
      expect(res.text).not.toContain(tree.root);
    },
  );

  it('the GraphQL query commands answers what GET /v1/commands answers', async () => {
    const res = await http().post('/graphql').send({ query: COMMANDS_QUERY }).expect(200);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.commands).toEqual((await http().get('/v1/commands')).body.commands);
  });

  it(
    'GET /v1/admin/skills has a commands section: directories, valid, invalid, both kinds of ' + 'collision, warnings',
    async () => {
      const res = await http().get('/v1/admin/skills').expect(200);
      expect(res.body.commands).toEqual({
        directories: [
          { configured: tree.path('commands'), path: tree.path('commands'), exists: true, commands: 3, invalid: 1 },
          { configured: tree.path('shared'), path: tree.path('shared'), exists: true, commands: 0, invalid: 0 },
          { configured: tree.path('missing'), path: tree.path('missing'), exists: false, commands: 0, invalid: 0 },
        ],
        valid: ['deploy', 'pdf', 'review-pr'].map((name) => ({
          name,
          path: tree.path('commands', `${name}.md`),
          source: tree.path('commands'),
          warnings: [],
        })),
        invalid: [
          {
            path: tree.path('commands/Broken.md'),
            source: tree.path('commands'),
            name: 'Broken',
            errors: [expect.stringMatching(/^Command name 'Broken'/)],
          },
        ],
        collisions: [
          {
            name: 'deploy',
            kind: 'command',
            winner: { path: tree.path('commands/deploy.md'), source: tree.path('commands') },
            loser: { path: tree.path('shared/deploy.md'), source: tree.path('shared') },
          },
          {
            name: 'pdf',
            kind: 'skill',
            winner: { path: tree.path('commands/pdf.md'), source: tree.path('commands') },
            loser: { path: tree.path('skills/pdf'), source: tree.path('skills') },
          },
        ],
        warnings: [
          `Commands directory '${tree.path('missing')}' ` +
            `(${tree.path('missing')}) does not exist or is not a readable folder; skipped`,
        ],
      });
      // The skill that lost /pdf to the command is still loaded.
      expect(res.body.valid.map((s: { name: string }) => s.name)).toEqual(['code-review', 'pdf']);
    },
  );

  it('the GraphQL admin report (reloadSkills) has the same commands section', async () => {
    const res = await http()
      .post('/graphql')
      .send({
        query:
          `mutation { reloadSkills { commands {
          directories { configured path exists commands invalid } valid { name path source warnings }
          invalid { path source name errors } collisions { name kind winner { path source } loser { path source } } ` +
          `warnings
        } } }`,
      })
      .expect(200);
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data.reloadSkills.commands).toEqual((await http().get('/v1/admin/skills')).body.commands);
  });

  it('POST /v1/admin/skills/reload picks up added and removed command files', async () => {
    tree.write('commands/added.md', commandMd('Arrived late.'));
    try {
      const res = await http().post('/v1/admin/skills/reload').expect(200);
      expect(res.body.commands.valid.map((c: { name: string }) => c.name)).toEqual([
        'added',
        'deploy',
        'pdf',
        'review-pr',
      ]);
      expect((await http().get('/v1/commands').expect(200)).body.count).toBe(4);
    } finally {
      rmSync(tree.path('commands/added.md'));
      await http().post('/v1/admin/skills/reload').expect(200);
    }
    expect((await http().get('/v1/commands').expect(200)).body.count).toBe(3);
  });
});

describe('Commands with skills disabled', () => {
  let tree: TempTree;
  let ctx: ChatTestContext;
  const logs: string[] = [];

  beforeAll(async () => {
    tree = tempTree();
    tree.write('commands/deploy.md', commandMd('Deploys.'));
    tree.write('commands/Broken.md', commandMd('Bad name.'));
    const capture = (message: unknown) => void logs.push(String(message));
    ctx = await startChatApp(
      [],
      { 'app.skills.enabled': false, 'app.commands.directories': [tree.path('commands')] },
      undefined,
      {},
      { log: capture, warn: capture, error: capture },
    );
  });
  afterAll(async () => {
    await ctx?.close();
    tree?.cleanup();
  });

  it('GET /v1/commands → 404 SKILLS_DISABLED, and the GraphQL query answers the same code', async () => {
    const res = await request(ctx.app.getHttpServer()).get('/v1/commands').expect(404);
    expect(res.body).toEqual({
      code: 'SKILLS_DISABLED',
      message: 'Skills are disabled on this server (app.skills.enabled = false).',
    });
    const graphql = await request(ctx.app.getHttpServer()).post('/graphql').send({ query: COMMANDS_QUERY }).expect(200);
    expect(graphql.body).toMatchObject({
      data: null,
      errors: [{ message: res.body.message, path: ['commands'], extensions: { code: 'SKILLS_DISABLED', status: 404 } }],
    });
  });

  it('reads no command file at start-up (the same app with skills on logs its scan)', () => {
    expect(logs.filter((line) => COMMAND_SCAN_LOG.test(line))).toEqual([]);
  });
});
