import { chmodSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createApp } from '../../src/app/app.factory.js';
import { configWith } from '../../src/config/config-loader.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { createTestDatabase, query } from '../support/database.js';
import { useSkillTree, writeSkill } from '../support/files/skill-tree.js';
import { checkSandbox } from '@skillhost/sandbox';
import { zipOf } from '../support/skill-archives.js';

/**
 * skills.runScript through the API and the model: the sandbox, allowed-tools enforced, the card.
 * Without a working bwrap these tests are skipped with the reason printed (never passed silently).
 */
const missing = await checkSandbox().then(
  () => undefined,
  (error: Error) => error.message,
);
const describeWithSandbox = missing === undefined ? describe : describe.skip;
if (missing !== undefined) console.warn(`SKIPPED skills.runScript e2e tests: ${missing}`);

const tree = useSkillTree((t) => {
  writeSkill(t, 'skills', 'tools', {
    description: 'Runs its scripts.',
    extra: 'allowed-tools: Bash(sh:*) Bash(python3:*)',
  });
  t.write('skills/tools/scripts/hello.sh', '#!/bin/sh\necho "hello $1"; echo "to stderr" >&2; exit 3\n');
  t.write('skills/tools/scripts/env.py', 'import os\nprint(sorted(os.environ))\n');
  t.write(
    'skills/tools/scripts/peek.sh',
    '#!/bin/sh\ncat /etc/shadow 2>&1 | head -1; ls ../ 2>&1 | head -3; echo done\n',
  );
  writeSkill(t, 'skills', 'vanishing', { description: 'Removed after the scan.', extra: 'allowed-tools: Bash(sh:*)' });
  t.write('skills/vanishing/scripts/run.sh', 'echo ran\n');
  writeSkill(t, 'skills', 'locked', { description: 'Declares no scripts.' });
  t.write('skills/locked/scripts/run.sh', '#!/bin/sh\necho ran\n');
  // The sandbox runs as uid 65534 when the server is root: it must be able to read the folders.
  chmodSync(t.root, 0o755);
});

describeWithSandbox('skills.runScript with scripts enabled', () => {
  let ctx: ChatTestContext;
  const http = () => request(ctx.app.getHttpServer());
  const newChat = async () => (await http().post('/v1/chats').send({}).expect(201)).body.id as string;
  beforeAll(async () => {
    process.env.SKILLHOST_TEST_SECRET = 'not-for-scripts';
    ctx = await startChatApp([tree().path('skills'), resolve('skills')], {
      'app.scripts.enabled': true,
      'app.scripts.timeout_ms': 10_000,
    });
  });
  afterAll(async () => {
    delete process.env.SKILLHOST_TEST_SECRET;
    await ctx?.close();
  });

  it(
    'runs the scripts of a shared store skill, and refuses those of a personal one (personal_skills ' + '= false)',
    async () => {
      const files = (name: string) => ({
        [`${name}/SKILL.md`]:
          `---\nname: ${name}\ndescription: Uploaded with a script.\nallowed-tools: ` + `Bash(sh:*)\n---\nRun it.\n`,
        [`${name}/scripts/run.sh`]: 'echo uploaded-ran\n',
      });
      const install = async (path: string, name: string) => {
        const archive = await zipOf(files(name));
        await http().post(path).set('content-type', archive.contentType).send(archive.body).expect(201);
      };
      await install('/v1/admin/skills', 'team-script');
      await install('/v1/skills', 'own-script');
      const chat = await newChat();
      const team = (
        await http()
          .post(`/v1/chats/${chat}/tools/skills.runScript`)
          .send({ name: 'team-script', path: 'scripts/run.sh' })
          .expect(200)
      ).body.toolCard;
      expect(team).toMatchObject({ status: 'ok', output: expect.stringContaining('uploaded-ran') });
      const own = (
        await http()
          .post(`/v1/chats/${chat}/tools/skills.runScript`)
          .send({ name: 'own-script', path: 'scripts/run.sh' })
          .expect(200)
      ).body.toolCard;
      expect(own).toMatchObject({
        status: 'error',
        output: expect.stringMatching(/^Error \(SCRIPT_NOT_ALLOWED\): Skill 'own-script' is a personal skill/),
      });
    },
  );

  it(
    "runs the conformance skill's echo.sh and returns its marker (the skill declares " + 'Bash(./scripts/echo.sh:*))',
    async () => {
      const chat = await newChat();
      const run = (
        await http()
          .post(`/v1/chats/${chat}/tools/skills.runScript`)
          .send({ name: 'skills-system-validation', path: 'scripts/echo.sh', args: ['conformance'] })
          .expect(200)
      ).body;
      expect(run.toolCard).toMatchObject({
        tool: 'skills.runScript',
        status: 'ok',
        args: { name: 'skills-system-validation', path: 'scripts/echo.sh', args: ['conformance'] },
        summary: {
          skill: 'skills-system-validation',
          path: 'scripts/echo.sh',
          command: 'sh scripts/echo.sh conformance',
          exitCode: 0,
          timedOut: false,
          truncated: false,
        },
      });
      expect(run.toolCard.output).toMatch(
        new RegExp(
          '^\\$ sh scripts\\/echo\\.sh conformance\\n\\[exit code 0, \\d+ ms\\]\\nSCRIPT-MARKER: ' +
            'SCRIPT-91e0c5d2-skills-echo conformance\\n$',
        ),
      );
    },
  );

  it('a script that fails is an error card with its exit code and both streams', async () => {
    const chat = await newChat();
    const run = (
      await http()
        .post(`/v1/chats/${chat}/tools/skills.runScript`)
        .send({ name: 'tools', path: 'scripts/hello.sh', args: ['world; rm -rf /'] })
        .expect(200)
    ).body;
    expect(run.toolCard).toMatchObject({
      status: 'error',
      summary: { command: "sh scripts/hello.sh 'world; rm -rf /'", exitCode: 3 },
    });
    expect(run.toolCard.output).toContain('hello world; rm -rf /\nto stderr\n');
    expect(run.toolCard.output).toMatch(/\[exit code 3, \d+ ms\]/);
  });

  it('sees no server secret, no host file and no other skill', async () => {
    const chat = await newChat();
    const env = (
      await http()
        .post(`/v1/chats/${chat}/tools/skills.runScript`)
        .send({ name: 'tools', path: 'scripts/env.py' })
        .expect(200)
    ).body;
    expect(env.toolCard.status).toBe('ok');
    expect(env.toolCard.output).not.toContain('SKILLHOST_TEST_SECRET');
    expect(env.toolCard.output).not.toContain('DATABASE_URL');
    const peek = (
      await http()
        .post(`/v1/chats/${chat}/tools/skills.runScript`)
        .send({ name: 'tools', path: 'scripts/peek.sh' })
        .expect(200)
    ).body;
    expect(peek.toolCard.output).toMatch(/No such file or directory/);
    expect(peek.toolCard.output).not.toMatch(/locked|root:/);
    expect(peek.toolCard.output).toMatch(/done\n$/);
  });

  it("refuses a script the skill's allowed-tools does not permit, saying what it would need to declare", async () => {
    const chat = await newChat();
    const run = (
      await http()
        .post(`/v1/chats/${chat}/tools/skills.runScript`)
        .send({ name: 'locked', path: 'scripts/run.sh' })
        .expect(200)
    ).body;
    expect(run.toolCard).toMatchObject({
      tool: 'skills.runScript',
      status: 'error',
      summary: { skill: 'locked', path: 'scripts/run.sh' },
    });
    expect(run.toolCard.output).toMatch(
      new RegExp(
        "^Error \\(SCRIPT_NOT_ALLOWED\\): Skill 'locked' may not run 'scripts\\/run\\.sh': " +
          '.*Bash\\(sh:\\*\\).*Bash\\(\\.\\/scripts\\/run\\.sh:\\*\\)',
      ),
    );
  });

  it('refuses paths out of the skill and files that are not scripts, as cards', async () => {
    const chat = await newChat();
    const out = (
      await http()
        .post(`/v1/chats/${chat}/tools/skills.runScript`)
        .send({ name: 'tools', path: '../locked/scripts/run.sh' })
        .expect(200)
    ).body;
    expect(out.toolCard.output).toMatch(/^Error \(RESOURCE_OUTSIDE_SKILL\)/);
    const notScript = (
      await http()
        .post(`/v1/chats/${chat}/tools/skills.runScript`)
        .send({ name: 'tools', path: 'SKILL.md' })
        .expect(200)
    ).body;
    expect(notScript.toolCard).toMatchObject({
      status: 'error',
      output: expect.stringMatching(/^Error \(VALIDATION_FAILED\): Script 'SKILL\.md'/),
    });
  });

  it('is offered to the model in the context, and a model-made call is stored as a card', async () => {
    const chat = await newChat();
    const context = (await http().get(`/v1/chats/${chat}/context`).expect(200)).body;
    expect(context.tools.map((t: { name: string }) => t.name)).toEqual([
      'skills.activate',
      'skills.readResource',
      'skills.listResources',
      'skills.runScript',
    ]);
    expect(context.systemPrompt).toContain('skills_runScript');
    ctx.model.play(
      {
        toolCalls: [
          {
            name: 'skills_runScript',
            arguments: { name: 'skills-system-validation', path: 'scripts/echo.sh', args: ['x'] },
          },
        ],
      },
      { text: 'STEP 5: PASS' },
    );
    const turn = (await http().post(`/v1/chats/${chat}/messages`).send({ content: 'run step 5' }).expect(201)).body;
    expect(turn.assistantMessage.toolCards[0]).toMatchObject({
      tool: 'skills.runScript',
      status: 'ok',
      summary: { exitCode: 0 },
    });
    const sent = ctx.model.requests[1].body.messages.filter((m) => m.role === 'tool').map((m) => m.content as string);
    expect(sent[0]).toContain('SCRIPT-MARKER: SCRIPT-91e0c5d2-skills-echo x');
    const [row] = await query<{ tool: string }>(
      ctx.db.url,
      "SELECT tool_cards->0->>'tool' AS tool FROM chat_messages WHERE chat_id = $1 AND role = 'assistant'",
      [chat],
    );
    expect(row.tool).toBe('skills.runScript');
  });

  it('a skill whose folder went away since the scan is SKILL_NOT_FOUND naming it, with no host path', async () => {
    rmSync(tree().path('skills/vanishing'), { recursive: true });
    const chat = await newChat();
    const run = (
      await http()
        .post(`/v1/chats/${chat}/tools/skills.runScript`)
        .send({ name: 'vanishing', path: 'scripts/run.sh' })
        .expect(200)
    ).body;
    expect(run.toolCard).toMatchObject({
      status: 'error',
      output: "Error (SKILL_NOT_FOUND): Skill 'vanishing' is no longer on disk; reload the skills.",
    });
  });

  it('checks arguments with the tool schema: no NUL in args, at most 64 of them', async () => {
    const chat = await newChat();
    const nul = (
      await http()
        .post(`/v1/chats/${chat}/tools/skills.runScript`)
        .send({ name: 'tools', path: 'scripts/hello.sh', args: ['a\u0000b'] })
        .expect(400)
    ).body;
    expect(nul).toMatchObject({
      code: 'VALIDATION_FAILED',
      details: { problems: ['args[0]: contains a NUL character (U+0000), which cannot be stored; remove it'] },
    });
    const many = (
      await http()
        .post(`/v1/chats/${chat}/tools/skills.runScript`)
        .send({ name: 'tools', path: 'scripts/hello.sh', args: Array.from({ length: 65 }, () => 'a') })
        .expect(400)
    ).body;
    expect(many.details.problems).toEqual(["'args' must hold at most 64 arguments"]);
  });
});

describeWithSandbox('skills.runScript with require_allowed_tools = false', () => {
  let ctx: ChatTestContext;
  beforeAll(async () => {
    ctx = await startChatApp([tree().path('skills')], {
      'app.scripts.enabled': true,
      'app.scripts.require_allowed_tools': false,
    });
  });
  afterAll(async () => ctx?.close());

  it('runs a script its skill does not declare (still sandboxed)', async () => {
    const http = () => request(ctx.app.getHttpServer());
    const chat = (await http().post('/v1/chats').send({}).expect(201)).body.id;
    const run = (
      await http()
        .post(`/v1/chats/${chat}/tools/skills.runScript`)
        .send({ name: 'locked', path: 'scripts/run.sh' })
        .expect(200)
    ).body;
    expect(run.toolCard).toMatchObject({ status: 'ok', summary: { exitCode: 0 } });
    expect(run.toolCard.output).toMatch(/\nran\n$/);
  });
});

describe('skills.runScript with scripts off (the default)', () => {
  let ctx: ChatTestContext;
  beforeAll(async () => {
    ctx = await startChatApp([tree().path('skills')]);
  });
  afterAll(async () => ctx?.close());

  it('is not offered, and its route answers 404 SCRIPTS_DISABLED without running anything', async () => {
    const http = () => request(ctx.app.getHttpServer());
    const chat = (await http().post('/v1/chats').send({}).expect(201)).body.id;
    const context = (await http().get(`/v1/chats/${chat}/context`).expect(200)).body;
    expect(context.tools.map((t: { name: string }) => t.name)).not.toContain('skills.runScript');
    expect(context.systemPrompt).not.toContain('skills_runScript');
    const refused = (
      await http()
        .post(`/v1/chats/${chat}/tools/skills.runScript`)
        .send({ name: 'tools', path: 'scripts/hello.sh' })
        .expect(404)
    ).body;
    expect(refused).toEqual({
      code: 'SCRIPTS_DISABLED',
      message: 'Running skill scripts is disabled on this server ([app.scripts] enabled = false).',
    });
    expect(await query(ctx.db.url, 'SELECT count(*)::int AS n FROM chat_messages WHERE chat_id = $1', [chat])).toEqual([
      { n: 0 },
    ]);
  });
});

describe('start-up with scripts enabled and no sandbox', () => {
  it('stops with one line saying what is missing', async () => {
    const db = await createTestDatabase();
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const started = createApp(configWith({ 'app.scripts.enabled': true, 'app.database.url': db.url }), {
        logger: false,
      });
      await expect(started).rejects.toThrow(
        new RegExp(
          '^\\[app\\.scripts\\] enabled = true, but the sandbox cannot run: bubblewrap is not ' +
            'installed.*install the Debian package bubblewrap\\. Scripts are never run unsandboxed: fix ' +
            'this or set enabled = false\\.$',
        ),
      );
    } finally {
      process.env.PATH = path;
      await db.drop();
    }
  });
});
