import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import type { DataSource } from 'typeorm';
import { DATA_SOURCE } from '../../src/infra/database/persistence.tokens.js';
import { ChatRepository } from '../../src/infra/database/chat.repository.js';
import { SkillSearchService } from '../../src/domain/skills/ranking/skill-search.service.js';
import { type ChatTestContext, startChatApp } from '../support/chat-app.js';
import { useSkillTree, writeSkill } from '../support/files/skill-tree.js';

/**
 * The team signal: skills activated in more chats lately rank higher among near-equal matches,
 * never above a clearly better one. Counted per chat from chat_activated_skills in PostgreSQL.
 */
describe('the team signal', () => {
  const tree = useSkillTree((tree) => {
    // Two skills that match "weekly report" equally: without a signal, the name decides (alpha first).
    writeSkill(tree, 'skills', 'report-alpha', { description: 'Writes the weekly report for the team.' });
    writeSkill(tree, 'skills', 'report-beta', { description: 'Writes the weekly report for the team.' });
    writeSkill(tree, 'skills', 'invoice-maker', {
      description: 'Creates invoices for customers and sends them as PDF.',
    });
  });
  let ctx: ChatTestContext;
  const http = () => request(ctx.app.getHttpServer());
  const search = async (q: string) =>
    (
      (await http().get('/v1/skills/search').query({ q }).expect(200)).body.results as { name: string; score: number }[]
    ).map((r) => r.name);
  const activateIn = async (name: string) => {
    const chat = (await http().post('/v1/chats').send({}).expect(201)).body.id as string;
    await http().post(`/v1/chats/${chat}/tools/skills.activate`).send({ name }).expect(200);
    return chat;
  };

  beforeAll(async () => {
    // Two of the three skills fit: every catalogue is partial.
    ctx = await startChatApp([tree().path('skills')], { 'app.skills.catalogue_max_skills': 2 });
  });
  afterAll(async () => ctx?.close());

  it('orders equal matches by name while nothing has been activated', async () => {
    await ctx.app.get(SkillSearchService).refreshUse();
    expect(await search('weekly report')).toEqual(['report-alpha', 'report-beta']);
  });

  it('counts chats, not activations: one chat activating a skill again and again counts once', async () => {
    const chat = await activateIn('report-alpha');
    for (let i = 0; i < 3; i++)
      await http().post(`/v1/chats/${chat}/tools/skills.activate`).send({ name: 'report-alpha' }).expect(200);
    await activateIn('report-beta');
    await activateIn('report-beta');
    expect(await ctx.app.get(ChatRepository).skillUse(30, 100)).toEqual(
      new Map([
        ['report-beta', 2],
        ['report-alpha', 1],
      ]),
    );
  });

  it('puts the skill activated in more chats first among equals, once the counts are re-read', async () => {
    const service = ctx.app.get(SkillSearchService);
    await service.refreshUse();
    expect(service.popularity.get('report-beta')).toBe(2);
    expect(await search('weekly report')).toEqual(['report-beta', 'report-alpha']);
  });

  it('never lifts a popular skill above a clearly better match', async () => {
    for (let i = 0; i < 5; i++) await activateIn('report-beta');
    await ctx.app.get(SkillSearchService).refreshUse();
    expect((await search('send an invoice as PDF'))[0]).toBe('invoice-maker');
  });

  it('forgets activations older than 30 days', async () => {
    await ctx.app
      .get<DataSource>(DATA_SOURCE)
      .query(
        `UPDATE chat_activated_skills SET last_activated_at = now() - interval '31 days' WHERE skill_name = ` +
          `'report-beta'`,
      );
    const service = ctx.app.get(SkillSearchService);
    await service.refreshUse();
    expect(service.popularity.has('report-beta')).toBe(false);
    expect(await search('weekly report')).toEqual(['report-alpha', 'report-beta']);
  });

  it('fills a partial catalogue with the most used skills after the ranked ones', async () => {
    // A message that matches nothing lists no ranked skill: the team's most used come instead.
    await activateIn('invoice-maker');
    await ctx.app.get(SkillSearchService).refreshUse();
    const chat = (await http().post('/v1/chats').send({}).expect(201)).body.id as string;
    const context = await http().get(`/v1/chats/${chat}/context`).query({ message: 'zzzz qqqq' }).expect(200);
    // report-beta's chats are past the window: invoice-maker and report-alpha, one chat each, by name.
    expect(context.body.catalogue).toMatchObject({
      complete: false,
      listed: ['invoice-maker', 'report-alpha'],
      unlisted: 1,
    });
  });
});
