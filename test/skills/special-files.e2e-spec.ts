import { chmodSync } from 'node:fs';
import type { Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { SkillRegistryService } from '@skillhost/nest';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { asNobodyUntil, makeFifo, makeSocket, openToEveryone, releaseFifosLater } from './special-files.js';

/**
 * A FIFO named SKILL.md used to freeze the server: start-up never finished, a reload blocked every
 * request, SIGTERM went unanswered. Special files and unreadable folders among the skills are now
 * listed as invalid with the reason, and the server stays responsive throughout.
 */
describe('the server with special files and unreadable folders among its skills', () => {
  let tree: TempTree;
  let socket: Server;
  let release: { stop(): void };
  let ctx: ChatTestContext;
  const http = () => request(ctx.app.getHttpServer());

  beforeAll(async () => {
    tree = tempTree();
    writeSkill(tree, 'skills', 'good');
    writeSkill(tree, 'skills', 'locked');
    makeFifo(tree.path('skills/fifo/SKILL.md'));
    socket = await makeSocket(tree.path('skills/socket/SKILL.md'));
    openToEveryone(tree.root, tree.path('skills'), tree.path('skills/good'), tree.path('skills/good/SKILL.md'));
    chmodSync(tree.path('skills/locked'), 0o000);
    // Without the fix start-up blocks on the FIFO until this writer comes.
    release = releaseFifosLater([tree.path('skills/fifo/SKILL.md')], 2000);
    ctx = await startChatApp([tree.path('skills')]);
  });
  afterAll(async () => {
    release.stop();
    await ctx?.close();
    await new Promise((resolve) => socket.close(resolve));
    chmodSync(tree.path('skills/locked'), 0o755);
    tree.cleanup();
  });

  const fifoReason = 'SKILL.md is a FIFO (named pipe), not a regular file; replace it with a text file';
  const socketReason = 'SKILL.md is a socket, not a regular file; replace it with a text file';

  it('starts, serving the valid skills and listing the special files as invalid with the reason', async () => {
    expect((await http().get('/v1/skills').expect(200)).body.skills.map((s: { name: string }) => s.name)).toEqual([
      'good',
      'locked',
    ]);
    const report = (await http().get('/v1/admin/skills').expect(200)).body;
    expect(report.invalid).toEqual([
      { path: tree.path('skills/fifo'), source: tree.path('skills'), errors: [fifoReason], warnings: [] },
      { path: tree.path('skills/socket'), source: tree.path('skills'), errors: [socketReason], warnings: [] },
    ]);
  });

  it(
    'reloads without blocking: other requests are answered alongside, and the report names every ' + 'problem',
    async () => {
      const [reload, chats, health] = await Promise.all([
        http().post('/v1/admin/skills/reload'),
        http().get('/v1/chats'),
        http().get('/v1/skills'),
      ]);
      expect([reload.status, chats.status, health.status]).toEqual([200, 200, 200]);
      expect(reload.body.invalid.map((entry: { errors: string[] }) => entry.errors)).toEqual([
        [fifoReason],
        [socketReason],
      ]);
    },
  );

  it('run as a user who cannot read a skill folder, lists it as invalid instead of dropping it', async () => {
    await asNobodyUntil(() => ctx.app.get(SkillRegistryService).reload());
    const report = (await http().get('/v1/admin/skills').expect(200)).body;
    expect(report.valid.map((s: { name: string }) => s.name)).toEqual(['good']);
    expect(report.invalid).toContainEqual({
      path: tree.path('skills/locked'),
      source: tree.path('skills'),
      errors: [
        "SKILL.md cannot be read: permission denied (EACCES); the server's user needs read access to it and " +
          'search (x) access to its folder',
      ],
      warnings: [],
    });
    expect(report.directories).toEqual([expect.objectContaining({ skills: 1, invalid: 3 })]);
  });
});
