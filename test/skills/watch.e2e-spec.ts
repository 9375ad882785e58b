import { rmSync } from 'node:fs';
import type { LoggerService } from '@nestjs/common';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { useSkillTree, writeSkill } from '../support/files/skill-tree.js';

/** `[app.skills] watch = true`: a change on disk reaches the catalogue, and is logged. */
const tree = useSkillTree((t) => {
  writeSkill(t, 'skills', 'pdf', { description: 'Works with PDF files.' });
  t.write('commands/.keep', '');
});

/**
 * Polls `check` every 50 ms until it holds, failing with what it waited for after a bound meant for a busy
 * machine: the watcher answers in well under a second, but how fast is for a benchmark to say, not a test.
 */
const WAIT_MS = 20_000;
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  const started = performance.now();
  while (performance.now() - started < WAIT_MS) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`not within ${WAIT_MS} ms: ${what}`);
}

describe('watching the skills directories', () => {
  let ctx: ChatTestContext;
  const logs: string[] = [];
  const logger: LoggerService = {
    log: (message: unknown) => void logs.push(String(message)),
    warn: (message: unknown) => void logs.push(String(message)),
    error: () => undefined,
  };
  const names = async () =>
    ((await request(ctx.app.getHttpServer()).get('/v1/skills').expect(200)).body.skills as { name: string }[]).map(
      (s) => s.name,
    );
  beforeAll(async () => {
    ctx = await startChatApp(
      [tree().path('skills'), tree().path('missing')],
      { 'app.skills.watch': true, 'app.commands.directories': [tree().path('commands')] },
      undefined,
      {},
      logger,
    );
  });
  afterAll(async () => ctx?.close());

  it('skips a directory that does not exist, saying so', () => {
    expect(logs).toContainEqual(expect.stringMatching(new RegExp(`^Not watching ${tree().path('missing')} .*ENOENT`)));
  });

  it('loads a skill written on disk, and logs what changed', async () => {
    writeSkill(tree(), 'skills', 'release-notes', { description: 'Writes release notes.' });
    await eventually('release-notes in GET /v1/skills', async () => (await names()).includes('release-notes'));
    expect(logs).toContainEqual(
      expect.stringMatching(/^Skills changed on disk: added release-notes \(2 skills, 0 invalid\)$/),
    );
  });

  it('logs a skill whose files changed with its old and new digest', async () => {
    tree().write('skills/release-notes/references/style.md', 'Short sentences.');
    await eventually('the change logged', async () =>
      logs.some((line) => line.startsWith('Skills changed on disk: changed release-notes')),
    );
    expect(logs).toContainEqual(
      expect.stringMatching(
        new RegExp(
          '^Skills changed on disk: changed release-notes \\(sha256:[0-9a-f]{12} → ' +
            'sha256:[0-9a-f]{12}\\) \\(2 skills, 0 invalid\\)$',
        ),
      ),
    );
  });

  it('drops a removed skill, and picks up a new command', async () => {
    rmSync(tree().path('skills/pdf'), { recursive: true });
    tree().write('commands/standup.md', '---\ndescription: Standup notes.\n---\nWrite them.\n');
    await eventually('pdf gone and /standup listed', async () => {
      const commands = (await request(ctx.app.getHttpServer()).get('/v1/commands').expect(200)).body.commands as {
        name: string;
      }[];
      return !(await names()).includes('pdf') && commands.some((c) => c.name === 'standup');
    });
    expect(logs.some((line) => /removed pdf/.test(line))).toBe(true);
  });
});
