import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { query } from '../support/database.js';
import { ScriptedModelServer } from '../support/scripted-model-server.js';

describe('the conformance flow, end to end', () => {
  let ctx: ChatTestContext;
  const http = () => request(ctx.app.getHttpServer());

  beforeAll(async () => {
    ctx = await startChatApp([resolve('skills')]);
  });
  afterAll(async () => ctx?.close());

  it(
    '/skills-system-validation run the checks → activation, reads with markers, a refused escape, persisted ' +
      'activations',
    async () => {
      const chat = (await http().post('/v1/chats').send({ title: 'conformance' }).expect(201)).body;
      ctx.model.play(
        {
          toolCalls: [
            {
              name: 'skills_readResource',
              arguments: { name: 'skills-system-validation', path: 'references/REFERENCE.md' },
            },
          ],
        },
        {
          toolCalls: [
            {
              name: 'skills_readResource',
              arguments: { name: 'skills-system-validation', path: 'assets/fixture.json' },
            },
          ],
        },
        {
          toolCalls: [
            { name: 'skills_readResource', arguments: { name: 'skills-system-validation', path: '../../config.toml' } },
          ],
        },
        { text: 'STEP 1: PASS\nSTEP 2: PASS — REF-7f3c9a1e-skills-reference\nRESULT: 5/5 passed' },
      );

      const res = await http()
        .post(`/v1/chats/${chat.id}/messages`)
        .send({ content: '/skills-system-validation run the checks' })
        .expect(201);

      expect(res.body.invokedSkill).toBe('skills-system-validation');
      expect(res.body.userMessage).toMatchObject({
        role: 'user',
        content: '/skills-system-validation run the checks',
        invokedSkill: 'skills-system-validation',
      });
      expect(res.body.assistantMessage.content).toBe(
        'STEP 1: PASS\nSTEP 2: PASS — REF-7f3c9a1e-skills-reference\nRESULT: 5/5 passed',
      );
      const cards = res.body.assistantMessage.toolCards;
      expect(cards.map((c: { tool: string; status: string }) => [c.tool, c.status])).toEqual([
        ['skills.activate', 'ok'],
        ['skills.readResource', 'ok'],
        ['skills.readResource', 'ok'],
        ['skills.readResource', 'error'],
      ]);
      expect(cards[0]).toMatchObject({
        args: { name: 'skills-system-validation' },
        summary: { skill: 'skills-system-validation', truncated: false },
      });
      expect(cards[0].output).toContain('# Skills system validation');
      expect(cards[1]).toMatchObject({
        summary: { skill: 'skills-system-validation', path: 'references/REFERENCE.md', truncated: false },
      });
      expect(cards[1].output).toContain('MARKER: REF-7f3c9a1e-skills-reference');
      expect(cards[2].output).toContain('ASSET-2b8d4e60-skills-fixture');
      expect(cards[3].output).toBe(
        "Error (RESOURCE_OUTSIDE_SKILL): Resource path '../../config.toml' leaves the skill folder; '..' is not " +
          'allowed.',
      );
      for (const card of cards) {
        expect(card).toEqual({
          id: expect.any(String),
          tool: card.tool,
          args: card.args,
          status: card.status,
          summary: card.summary,
          output: card.output,
          durationMs: expect.any(Number),
        });
        // The summary never repeats the body.
        expect(JSON.stringify(card.summary)).not.toContain('MARKER');
      }
      expect(res.body.activatedSkills).toEqual([
        {
          name: 'skills-system-validation',
          how: 'explicit',
          firstActivatedAt: expect.any(String),
          lastActivatedAt: expect.any(String),
          count: 1,
          version: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        },
      ]);

      // What the model was sent: the prefix stripped, the catalogue and rules, the wire tool names,
      // and the server's activation already in the conversation.
      const first = ctx.model.requests[0];
      expect(first.body.tools?.map((t) => t.function.name)).toEqual([
        'skills_activate',
        'skills_readResource',
        'skills_listResources',
      ]);
      expect(ScriptedModelServer.systemPrompt(first)).toContain('"name":"skills-system-validation"');
      expect(ScriptedModelServer.systemPrompt(first)).toContain(
        "The user invoked the skill 'skills-system-validation'",
      );
      // The user's words (prefix stripped), then the server's activation and its result.
      expect(first.body.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool']);
      expect(first.body.messages[1]).toEqual({ role: 'user', content: 'run the checks' });
      expect(first.body.messages[2].tool_calls).toEqual([
        {
          id: cards[0].id,
          type: 'function',
          function: { name: 'skills_activate', arguments: '{"name":"skills-system-validation"}' },
        },
      ]);
      expect(first.body.messages[3].content).toContain('# Skills system validation');
      // The refused read went back to the model as an error result it can read.
      const fourth = ctx.model.requests[3];
      expect(JSON.stringify(fourth.body.messages[fourth.body.messages.length - 1])).toContain(
        'leaves the skill folder',
      );

      // Stored: both messages in order with the cards, and the activation.
      const messages = (await http().get(`/v1/chats/${chat.id}/messages`).expect(200)).body;
      expect(messages.items.map((m: { seq: number; role: string }) => [m.seq, m.role])).toEqual([
        [1, 'user'],
        [2, 'assistant'],
      ]);
      // The turn's answer is what was stored, card for card.
      expect(messages.items).toEqual([res.body.userMessage, res.body.assistantMessage]);
      const rows = await query(
        ctx.db.url,
        'SELECT skill_name, how, activation_count FROM chat_activated_skills WHERE chat_id = $1',
        [chat.id],
      );
      expect(rows).toEqual([{ skill_name: 'skills-system-validation', how: 'explicit', activation_count: 1 }]);

      // After a restart on the same database the chat still has its activated skill.
      await ctx.closeApp();
      await ctx.restartApp();
      const again = (await http().get(`/v1/chats/${chat.id}`).expect(200)).body;
      expect(again.activatedSkills.map((a: { name: string }) => a.name)).toEqual(['skills-system-validation']);
      const context = (await http().get(`/v1/chats/${chat.id}/context`).expect(200)).body;
      expect(context.systemPrompt).toContain('Skills already activated in this chat: skills-system-validation.');
    },
  );
});
