import { Inject, Injectable } from '@nestjs/common';
import type { DataSource, EntityManager } from 'typeorm';
import { type AuditActor, skillTarget } from '../../domain/shared/audit.js';
import type { CasePlan, EvalCaseStore, KeptEvalCase } from '../../domain/skills/evals/eval-case-store.js';
import type { TriggerCase } from '../../domain/skills/evals/trigger-evals.js';
import { writeAudit } from './audit-log.js';
import { runQuery } from './database-errors.js';
import { DATA_SOURCE } from './persistence.tokens.js';

interface CaseRow {
  id: string;
  skill_name: string;
  query: string;
  should_trigger: boolean;
  expect_skill: string | null;
  added_by: string | null;
  added_by_name: string | null;
  added_at: Date;
}

const COLUMNS = 'id, skill_name, query, should_trigger, expect_skill, added_by, added_by_name, added_at';

/** The audit log holds the start of a request: enough to know the case, without copying every long one. */
const AUDITED_QUERY_CHARS = 200;

/** `skill_eval_cases`: the trigger eval cases kept for each skill, in the order they were added. */
@Injectable()
export class SkillEvalCaseRepository implements EvalCaseStore {
  constructor(@Inject(DATA_SOURCE) private readonly dataSource: DataSource) {}

  casesOf(skills: readonly string[]): Promise<Map<string, KeptEvalCase[]>> {
    return runQuery(async () => {
      const rows = await this.dataSource.query<CaseRow[]>(
        `SELECT ${COLUMNS} FROM skill_eval_cases WHERE skill_name = ANY($1::text[]) ORDER BY skill_name, seq`,
        [[...new Set(skills)]],
      );
      const bySkill = new Map<string, KeptEvalCase[]>();
      for (const row of rows) bySkill.set(row.skill_name, [...(bySkill.get(row.skill_name) ?? []), toCase(row)]);
      return bySkill;
    });
  }

  add(
    skill: string,
    plan: (kept: readonly KeptEvalCase[]) => CasePlan,
    actor: AuditActor,
  ): Promise<{ added: KeptEvalCase[] } | { problems: string[] }> {
    return runQuery(() =>
      this.dataSource.transaction(async (manager) => {
        // One addition per skill at a time, on every instance: the plan's limit and duplicate checks see the last one.
        await manager.query("SELECT pg_advisory_xact_lock(hashtext('skill_eval_cases'), hashtext($1))", [skill]);
        const kept = (
          await manager.query<CaseRow[]>(`SELECT ${COLUMNS} FROM skill_eval_cases WHERE skill_name = $1 ORDER BY seq`, [
            skill,
          ])
        ).map(toCase);
        const planned = plan(kept);
        if ('problems' in planned) return { problems: planned.problems };
        if (planned.add.length === 0) return { added: [] };
        const added = await insertCases(manager, skill, planned.add, actor);
        await writeAudit(manager, {
          actor,
          action: 'skill.eval-case.add',
          target: skillTarget(skill, null),
          details: { cases: added.map(auditedCase) },
        });
        return { added };
      }),
    );
  }

  remove(skill: string, id: string, actor: AuditActor): Promise<KeptEvalCase | null> {
    return runQuery(() =>
      this.dataSource.transaction(async (manager) => {
        const [rows] = await manager.query<[CaseRow[], number]>(
          `DELETE FROM skill_eval_cases WHERE id = $1 AND skill_name = $2 RETURNING ${COLUMNS}`,
          [id, skill],
        );
        const [row] = rows;
        if (row === undefined) return null;
        const removed = toCase(row);
        await writeAudit(manager, {
          actor,
          action: 'skill.eval-case.remove',
          target: skillTarget(skill, null),
          details: { case: auditedCase(removed) },
        });
        return removed;
      }),
    );
  }
}

/** Inserts the cases in their order (`seq` follows it), answering them as stored. */
async function insertCases(
  manager: EntityManager,
  skill: string,
  cases: readonly TriggerCase[],
  actor: AuditActor,
): Promise<KeptEvalCase[]> {
  const rows = await manager.query<CaseRow[]>(
    `INSERT INTO skill_eval_cases (skill_name, query, should_trigger, expect_skill, added_by, added_by_name)
     SELECT $1, c.query, c.should_trigger, c.expect_skill, $5, $6
       FROM unnest($2::text[], $3::boolean[], $4::text[]) WITH ORDINALITY AS c (query, should_trigger, expect_skill, n)
      ORDER BY c.n
     RETURNING seq, ${COLUMNS}`,
    [
      skill,
      cases.map((entry) => entry.query),
      cases.map((entry) => entry.shouldTrigger),
      cases.map((entry) => entry.expectSkill ?? null),
      actor.id,
      actor.name,
    ],
  );
  return (rows as (CaseRow & { seq: string })[])
    .sort((a, b) => Number(BigInt(a.seq) - BigInt(b.seq)))
    .map((row) => toCase(row));
}

function toCase(row: CaseRow): KeptEvalCase {
  return {
    id: row.id,
    skill: row.skill_name,
    query: row.query,
    shouldTrigger: row.should_trigger,
    ...(row.expect_skill === null ? {} : { expectSkill: row.expect_skill }),
    addedBy: row.added_by === null && row.added_by_name === null ? null : { id: row.added_by, name: row.added_by_name },
    addedAt: row.added_at,
  };
}

function auditedCase(entry: KeptEvalCase) {
  // By code point: a cut between the halves of a surrogate pair would be text jsonb refuses.
  const points = [...entry.query];
  const query = points.length > AUDITED_QUERY_CHARS ? `${points.slice(0, AUDITED_QUERY_CHARS).join('')}…` : entry.query;
  return {
    id: entry.id,
    query,
    shouldTrigger: entry.shouldTrigger,
    ...(entry.expectSkill === undefined ? {} : { expectSkill: entry.expectSkill }),
  };
}
