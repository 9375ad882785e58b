import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { ScriptedModelServer } from '../support/scripted-model-server.js';
import { useChatSkillsTree } from '../support/files/skill-tree.js';

/**
 * `[app.skills] disabled`: a switched-off skill is in no catalogue, `/name` stays text, and reaching it answers
 * SKILL_DISABLED.
 */
const chatSkills = useChatSkillsTree();

describe('skills switched off by [app.skills] disabled', () => {
  let ctx: ChatTestContext;
  const http = () => request(ctx.app.getHttpServer());
  beforeAll(async () => {
    ctx = await startChatApp([chatSkills().path('skills')], { 'app.skills.disabled': ['pdf'] });
  });
  afterAll(async () => ctx?.close());

  const refusal = {
    code: 'SKILL_DISABLED',
    message: "Skill 'pdf' is switched off on this server ([app.skills] disabled); an operator can switch it on again.",
    details: { name: 'pdf' },
  };

  it('is in no list or catalogue, and its routes answer 403 SKILL_DISABLED', async () => {
    expect((await http().get('/v1/skills').expect(200)).body.skills.map((s: { name: string }) => s.name)).toEqual([
      'git-commit',
    ]);
    expect((await http().get('/v1/skills-catalogue?format=markdown').expect(200)).text).toBe(
      '- git-commit: Writes commit messages.',
    );
    expect((await http().get('/v1/skills/pdf').expect(403)).body).toEqual(refusal);
    expect((await http().get('/v1/skills/pdf/body').expect(403)).body).toEqual(refusal);
    expect((await http().get('/v1/skills/pdf/resources/references/forms.md').expect(403)).body).toEqual(refusal);
    expect((await http().get('/v1/skills/nope').expect(404)).body.code).toBe('SKILL_NOT_FOUND');
  });

  it('is listed in the admin view', async () => {
    const report = (await http().get('/v1/admin/skills').expect(200)).body;
    expect(report.disabled).toEqual([
      { name: 'pdf', path: chatSkills().path('skills/pdf'), source: chatSkills().path('skills') },
    ]);
    expect(report.valid.map((s: { name: string }) => s.name)).toEqual(['git-commit']);
  });

  it('in a chat: /pdf stays plain text, and activating it is an error card SKILL_DISABLED', async () => {
    const chat = (await http().post('/v1/chats').send({}).expect(201)).body.id;
    ctx.model.play({ toolCalls: [{ name: 'skills_activate', arguments: { name: 'pdf' } }] }, { text: 'It is off.' });
    const turn = (await http().post(`/v1/chats/${chat}/messages`).send({ content: '/pdf fill this' }).expect(201)).body;
    expect(turn.invokedSkills).toEqual([]);
    const sent = ctx.model.requests[0];
    expect(sent.body.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['/pdf fill this']);
    expect(ScriptedModelServer.systemPrompt(sent)).not.toContain('Works with PDF files');
    expect(turn.assistantMessage.toolCards[0]).toMatchObject({
      tool: 'skills.activate',
      status: 'error',
      output: `Error (SKILL_DISABLED): ${refusal.message}`,
    });
    expect(turn.activatedSkills).toEqual([]);
    const api = (
      await http()
        .post(`/v1/chats/${chat}/tools/skills.readResource`)
        .send({ name: 'pdf', path: 'references/forms.md' })
        .expect(200)
    ).body;
    expect(api.toolCard).toMatchObject({ status: 'error', output: `Error (SKILL_DISABLED): ${refusal.message}` });
  });
});
