import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import type { KeptEvalCase } from '../../src/domain/skills/evals/eval-case-store.js';
import { planAddition } from '../../src/domain/skills/evals/kept-eval-cases.js';
import { MAX_TRIGGER_CASES, type TriggerCase } from '../../src/domain/skills/evals/trigger-evals.js';
import { createDataSource, runPendingMigrations } from '../../src/infra/database/data-source.js';
import { SkillEvalCaseRepository } from '../../src/infra/database/skill-eval-case.repository.js';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';

/**
 * The kept trigger eval cases on a real database, through repositories over DataSources of their own as several
 * instances would have them: additions to one skill one at a time (so the limit and the both-ways check hold across
 * instances), the order kept, the audit rows written with the change, the author's name kept after the user goes.
 */
describe(SkillEvalCaseRepository.name, () => {
  let db: TestDatabase;
  const dataSources: DataSource[] = [];
  const instances: SkillEvalCaseRepository[] = [];
  const ann = { id: '', name: 'ann' };
  const plan = (cases: TriggerCase[]) => (kept: readonly KeptEvalCase[]) =>
    planAddition('spec-writer', cases, [], kept).plan;

  beforeAll(async () => {
    db = await createTestDatabase();
    for (let i = 0; i < 3; i++) {
      const dataSource = createDataSource(db.url, { poolSize: 2 });
      await dataSource.initialize();
      dataSources.push(dataSource);
      instances.push(new SkillEvalCaseRepository(dataSource));
    }
    await runPendingMigrations(dataSources[0]);
    [{ id: ann.id }] = await query<{ id: string }>(
      db.url,
      "INSERT INTO users (name, role) VALUES ('ann', 'editor') RETURNING id",
    );
  });
  afterAll(async () => {
    for (const dataSource of dataSources) await dataSource.destroy();
    await db?.drop();
  });

  it('keeps cases in the order sent, each skill its own, with who added them; writes one audit row', async () => {
    const [first] = instances;
    const sent = Array.from({ length: 30 }, (_, i) => ({ query: `request ${i}`, shouldTrigger: i % 3 !== 0 }));
    const outcome = await first.add('spec-writer', plan(sent), ann);
    expect('added' in outcome && outcome.added.map((entry) => entry.query)).toEqual(sent.map((entry) => entry.query));
    await first.add('other', plan([{ query: 'request 0', shouldTrigger: true }]), ann);
    const kept = await first.casesOf(['spec-writer', 'other', 'none']);
    expect([...kept.keys()].sort()).toEqual(['other', 'spec-writer']);
    expect(kept.get('spec-writer')?.map((entry) => entry.query)).toEqual(sent.map((entry) => entry.query));
    expect(kept.get('spec-writer')?.[0]).toMatchObject({ skill: 'spec-writer', addedBy: ann, shouldTrigger: false });
    const audit = await query<{ action: string; target: string; details: { cases: { id: string }[] } }>(
      db.url,
      "SELECT action, target, details FROM audit_log WHERE target = 'skill:spec-writer'",
    );
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ action: 'skill.eval-case.add', target: 'skill:spec-writer' });
    expect(audit[0].details.cases.map((entry) => entry.id)).toEqual(kept.get('spec-writer')?.map((entry) => entry.id));
  });

  it('lets one of two instances keep a request when both add it the two ways at once', async () => {
    const outcomes = await Promise.all([
      instances[1].add('race', plan([{ query: 'Summarise this thread', shouldTrigger: true }]), ann),
      instances[2].add('race', plan([{ query: 'summarise this thread', shouldTrigger: false }]), ann),
    ]);
    expect(outcomes.filter((outcome) => 'added' in outcome)).toHaveLength(1);
    expect(outcomes.find((outcome) => 'problems' in outcome)).toEqual({
      problems: [expect.stringContaining('the same request is listed as should_trigger')],
    });
    expect((await instances[0].casesOf(['race'])).get('race')).toHaveLength(1);
  });

  it('holds the limit of kept cases when instances add at once', async () => {
    const almost = Array.from({ length: MAX_TRIGGER_CASES - 1 }, (_, i) => ({
      query: `case ${i}`,
      shouldTrigger: true,
    }));
    await instances[0].add('full', plan(almost), ann);
    const outcomes = await Promise.all(
      instances.map((instance, i) => instance.add('full', plan([{ query: `last ${i}`, shouldTrigger: true }]), ann)),
    );
    expect(outcomes.filter((outcome) => 'added' in outcome)).toHaveLength(1);
    expect((await instances[0].casesOf(['full'])).get('full')).toHaveLength(MAX_TRIGGER_CASES);
  });

  it("stores nothing and writes no audit row for a refused plan; removes only the skill's own case", async () => {
    const before = await query<{ n: number }>(db.url, 'SELECT count(*)::int AS n FROM audit_log');
    const refused = await instances[0].add('spec-writer', () => ({ problems: ['no'] }), ann);
    expect(refused).toEqual({ problems: ['no'] });
    expect(await query<{ n: number }>(db.url, 'SELECT count(*)::int AS n FROM audit_log')).toEqual(before);
    const [entry] = (await instances[0].casesOf(['other'])).get('other') ?? [];
    expect(await instances[0].remove('spec-writer', entry.id, ann)).toBeNull();
    expect(await instances[1].remove('other', entry.id, ann)).toMatchObject({ id: entry.id, query: 'request 0' });
    expect(await instances[1].remove('other', entry.id, ann)).toBeNull();
    const [removal] = await query<{ action: string; details: unknown }>(
      db.url,
      "SELECT action, details FROM audit_log WHERE target = 'skill:other' ORDER BY at DESC, id DESC LIMIT 1",
    );
    expect(removal).toEqual({
      action: 'skill.eval-case.remove',
      details: { case: { id: entry.id, query: 'request 0', shouldTrigger: true } },
    });
  });

  it("audits the start of a long request, never cutting a character in two; keeps the author's name", async () => {
    // 199 letters then emoji (two UTF-16 units each): a cut by units at 200 would leave half of one.
    const long = `${'a'.repeat(199)}${'😀'.repeat(50)}`;
    const outcome = await instances[0].add('long', plan([{ query: long, shouldTrigger: true }]), ann);
    expect('added' in outcome && outcome.added[0].query).toBe(long);
    const [row] = await query<{ details: { cases: { query: string }[] } }>(
      db.url,
      "SELECT details FROM audit_log WHERE target = 'skill:long'",
    );
    expect(row.details.cases[0].query).toBe(`${'a'.repeat(199)}😀…`);
    await query(db.url, 'DELETE FROM audit_log WHERE actor_id = $1', [ann.id]);
    await query(db.url, 'DELETE FROM users WHERE id = $1', [ann.id]);
    const [kept] = (await instances[0].casesOf(['long'])).get('long') ?? [];
    expect(kept.addedBy).toEqual({ id: null, name: 'ann' });
  });
});
