import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { buildServer, type Instances, startInstances } from '../support/instances.js';
import { tempTree, writeSkill } from '../support/files/skill-tree.js';

/**
 * What a person sees when the server starts: a short summary (address, auth, database, skills,
 * models), not Nest's hundred lines and not a warning for each usual folder that does not exist;
 * the details are debug lines.
 */
describe('the start-up log', () => {
  const tree = tempTree('skillhost-startup-log-');
  let servers: Instances[] = [];
  const start = async (overrides: Record<string, unknown>) => {
    const instances = await startInstances(1, {
      overrides: {
        'app.skills.enabled': true,
        'app.skills.directories': [tree.path('skills'), './.skills', '~/.agents/skills'],
        ...overrides,
      },
    });
    servers.push(instances);
    const [server] = instances.instances;
    // Started means listening; the summary's lines come after that one, so its last is waited for.
    const deadline = Date.now() + 30_000;
    while (!/"msg":"Models: /.test(server.output())) {
      if (Date.now() > deadline) throw new Error(`no start-up summary within 30 s:\n${server.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return server;
  };
  const records = (output: string) =>
    output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: string; msg: string; context?: string });

  beforeAll(() => {
    buildServer();
    writeSkill(tree, 'skills', 'release-notes');
    writeSkill(tree, 'skills', 'broken', { name: 'Not-Valid' });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
    servers = [];
    tree.cleanup();
  });

  it('at info is the summary: six lines (after the migrations of a new database), and nothing about the usual ' +
    'folders that are missing', async () => {
    const server = await start({});
    await expect(fetch(`${server.baseUrl}/health`).then((r) => r.status)).resolves.toBe(200);
    const lines = records(server.output()).filter((record) => record.msg !== 'request completed');
    expect(lines.map((record) => record.msg)).toEqual([
      expect.stringMatching(/^Applied \d+ database migration\(s\)$/),
      expect.stringMatching(/^Skillhost \d+\.\d+\.\d+\S* listening at http:\/\/127\.0\.0\.1:\d+$/),
      'Open the chat page at /, the API at /docs (REST) and /graphql, agents at /mcp',
      "Auth: off on this loopback address: requests without a key act as the admin 'local' (a key that is sent " +
        'is still checked)',
      expect.stringMatching(/^Database: PostgreSQL at postgres:\/\/.*\/skillhost_test_\w+$/),
      `Skills: 1 loaded from ${tree.path('skills')}; 1 invalid: \`npx skillhost list\` or GET /v1/admin/skills ` +
        `says why`,
      expect.stringMatching(
        new RegExp(
          '^Models: none configured, so chats answer 503 MODEL_NOT_CONFIGURED until you configure one: ' +
            'SKILLHOST_MODEL with OPENAI_BASE_URL',
        ),
      ),
    ]);
    expect(lines.every((record) => record.level === 'info')).toBe(true);
  }, 60_000);

  it('a configured folder that is missing is still a warning; at debug the details are all there', async () => {
    const server = await start({
      'app.logging.level': 'debug',
      'app.skills.directories': [tree.path('skills'), tree.path('typo')],
      'app.models': { local: { provider: 'openai-compatible', base_url: 'http://127.0.0.1:9/v1', model: 'm' } },
    });
    const all = records(server.output());
    expect(all).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        msg:
          `Skills directory '${tree.path('typo')}' ` +
          `(${tree.path('typo')}) does not exist or is not a readable folder; skipped`,
      }),
    );
    expect(all).toContainEqual(expect.objectContaining({ level: 'debug', context: 'InstanceLoader' }));
    expect(all).toContainEqual(
      expect.objectContaining({ level: 'debug', msg: expect.stringMatching(/^Invalid skill at .*broken/) }),
    );
    expect(all).toContainEqual(
      expect.objectContaining({ level: 'debug', msg: expect.stringMatching(/^Applied migrations: InitialSchema/) }),
    );
    expect(all).toContainEqual(expect.objectContaining({ level: 'info', msg: 'Models: local' }));
  }, 60_000);
});
