import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type { CaseResult, EvalScore } from '../../domain/skills/evals/catalogue-eval.js';
import type { EvalRunStore, StoredEvalRun } from '../../domain/skills/evals/eval-run-store.js';
import { runQuery } from './database-errors.js';
import { DATA_SOURCE } from './persistence.tokens.js';

interface RunRow {
  skill_name: string;
  digest: string;
  level: 'catalogue' | 'model';
  model: string;
  score: EvalScore;
  cases: CaseResult[];
  run_at: Date;
}

/** `skill_eval_runs`: the last trigger eval run per skill, version, level and model. */
@Injectable()
export class SkillEvalRunRepository implements EvalRunStore {
  constructor(@Inject(DATA_SOURCE) private readonly dataSource: DataSource) {}

  save(run: Omit<StoredEvalRun, 'runAt'>): Promise<void> {
    return runQuery(async () => {
      await this.dataSource.query(
        'INSERT INTO skill_eval_runs (skill_name, digest, level, model, score, cases) ' +
          'VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT ON CONSTRAINT pk_skill_eval_runs ' +
          'DO UPDATE SET score = EXCLUDED.score, cases = EXCLUDED.cases, run_at = now()',
        [run.skill, run.digest, run.level, run.model, JSON.stringify(run.score), JSON.stringify(run.cases)],
      );
    });
  }

  keep(run: Omit<StoredEvalRun, 'runAt'>): Promise<boolean> {
    return runQuery(async () => {
      const written = await this.dataSource.query<unknown[]>(
        'INSERT INTO skill_eval_runs (skill_name, digest, level, model, score, cases) ' +
          'VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT ON CONSTRAINT pk_skill_eval_runs ' +
          'DO UPDATE SET score = EXCLUDED.score, cases = EXCLUDED.cases, run_at = now() ' +
          'WHERE (skill_eval_runs.score, skill_eval_runs.cases) IS DISTINCT FROM (EXCLUDED.score, EXCLUDED.cases) ' +
          'RETURNING 1',
        [run.skill, run.digest, run.level, run.model, JSON.stringify(run.score), JSON.stringify(run.cases)],
      );
      return written.length > 0;
    });
  }

  runsOf(skill: string): Promise<StoredEvalRun[]> {
    return runQuery(async () =>
      (
        await this.dataSource.query<RunRow[]>(
          'SELECT skill_name, digest, level, model, score, cases, run_at FROM skill_eval_runs WHERE skill_name = $1 ' +
            'ORDER BY run_at DESC, level, model',
          [skill],
        )
      ).map((row) => ({
        skill: row.skill_name,
        digest: row.digest,
        level: row.level,
        model: row.model,
        score: row.score,
        cases: row.cases,
        runAt: row.run_at,
      })),
    );
  }
}
