import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import type {
  MirrorOrigin,
  MirrorOutcome,
  MirrorRunResult,
  NewMirror,
  SkillMirrorStore,
  StoredMirror,
} from '../../domain/skills/store/skill-mirror-store.js';
import { isUniqueViolation, runQuery } from './database-errors.js';
import { DATA_SOURCE } from './persistence.tokens.js';

interface MirrorRow {
  name: string;
  origin: MirrorOrigin;
  source: string;
  interval_seconds: number;
  created_by: string | null;
  created_at: Date;
  next_run_at: Date;
  running: boolean;
  last_run_at: Date | null;
  last_success_at: Date | null;
  last_error_at: Date | null;
  last_error: string | null;
  last_result: MirrorRunResult | null;
}

const COLUMNS =
  'name, origin, source, interval_seconds, created_by, created_at, next_run_at, ' +
  'COALESCE(claimed_until > now(), false) AS running, last_run_at, last_success_at, last_error_at, last_error, ' +
  'last_result';

/** The longest error text kept: a git error quoting a huge remote answer is cut here. */
const MAX_ERROR_CHARS = 2000;

/** `skill_mirrors`: each mirror, its schedule, the lease of its run and its last outcome. */
@Injectable()
export class SkillMirrorRepository implements SkillMirrorStore {
  constructor(@Inject(DATA_SOURCE) private readonly dataSource: DataSource) {}

  list(): Promise<StoredMirror[]> {
    return runQuery(async () =>
      (await this.dataSource.query<MirrorRow[]>(`SELECT ${COLUMNS} FROM skill_mirrors ORDER BY name`)).map(toMirror),
    );
  }

  find(name: string): Promise<StoredMirror | null> {
    return runQuery(async () => {
      const [row] = await this.dataSource.query<MirrorRow[]>(`SELECT ${COLUMNS} FROM skill_mirrors WHERE name = $1`, [
        name,
      ]);
      return row === undefined ? null : toMirror(row);
    });
  }

  add(mirror: NewMirror, createdBy: string | null): Promise<StoredMirror | null> {
    return runQuery(async () => {
      try {
        const [row] = await this.dataSource.query<MirrorRow[]>(
          `INSERT INTO skill_mirrors (name, origin, source, interval_seconds, created_by) VALUES ($1, 'api', $2, $3, ` +
            `$4) RETURNING ${COLUMNS}`,
          [mirror.name, mirror.source, mirror.intervalSeconds, createdBy],
        );
        return toMirror(row);
      } catch (error) {
        if (isUniqueViolation(error, 'pk_skill_mirrors')) return null;
        throw error;
      }
    });
  }

  remove(name: string, origin: MirrorOrigin): Promise<boolean> {
    return runQuery(async () => {
      const [, affected] = await this.dataSource.query<[unknown[], number]>(
        'DELETE FROM skill_mirrors WHERE name = $1 AND origin = $2',
        [name, origin],
      );
      return affected > 0;
    });
  }

  replaceConfigured(mirrors: readonly NewMirror[]): Promise<void> {
    return runQuery(() =>
      this.dataSource.transaction(async (manager) => {
        await manager.query("DELETE FROM skill_mirrors WHERE origin = 'config' AND NOT (name = ANY($1::text[]))", [
          mirrors.map((mirror) => mirror.name),
        ]);
        for (const mirror of mirrors)
          await manager.query(
            `INSERT INTO skill_mirrors (name, origin, source, interval_seconds) VALUES ($1, 'config', $2, $3)
             ON CONFLICT ON CONSTRAINT pk_skill_mirrors DO UPDATE SET origin = 'config', source = $2,
               interval_seconds = $3, created_by = NULL,
               next_run_at = CASE WHEN skill_mirrors.source = $2 AND skill_mirrors.interval_seconds = $3
                 THEN skill_mirrors.next_run_at ELSE now() END`,
            [mirror.name, mirror.source, mirror.intervalSeconds],
          );
      }),
    );
  }

  claim(name: string | undefined, leaseSeconds: number): Promise<StoredMirror | null> {
    // SKIP LOCKED: instances looking for due mirrors at once each take a different one, none waits.
    const which =
      name === undefined
        ? 'SELECT name FROM skill_mirrors WHERE next_run_at <= now() AND (claimed_until IS NULL OR claimed_until <= ' +
          'now()) ORDER BY next_run_at LIMIT 1 FOR UPDATE SKIP LOCKED'
        : 'SELECT name FROM skill_mirrors WHERE name = $2 AND (claimed_until IS NULL OR claimed_until <= now()) ' +
          'FOR UPDATE SKIP LOCKED';
    return runQuery(async () => {
      const [rows] = await this.dataSource.query<[MirrorRow[], number]>(
        `UPDATE skill_mirrors SET claimed_until = now() + make_interval(secs => $1), last_run_at = now()
         WHERE name = (${which}) RETURNING ${COLUMNS}`,
        name === undefined ? [leaseSeconds] : [leaseSeconds, name],
      );
      return rows[0] === undefined ? null : toMirror(rows[0]);
    });
  }

  finish(name: string, outcome: MirrorOutcome): Promise<void> {
    const set = outcome.ok
      ? 'last_success_at = now(), last_result = $2::jsonb'
      : 'last_error_at = now(), last_error = $2';
    const value = outcome.ok ? JSON.stringify(outcome.result) : outcome.error.slice(0, MAX_ERROR_CHARS);
    return runQuery(async () => {
      await this.dataSource.query(
        `UPDATE skill_mirrors SET ${set}, claimed_until = NULL,
           next_run_at = now() + make_interval(secs => interval_seconds) WHERE name = $1`,
        [name, value],
      );
    });
  }
}

function toMirror(row: MirrorRow): StoredMirror {
  return {
    name: row.name,
    origin: row.origin,
    source: row.source,
    intervalSeconds: row.interval_seconds,
    createdBy: row.created_by,
    createdAt: row.created_at,
    nextRunAt: row.next_run_at,
    running: row.running,
    lastRunAt: row.last_run_at,
    lastSuccessAt: row.last_success_at,
    lastErrorAt: row.last_error_at,
    lastError: row.last_error,
    lastResult: row.last_result,
  };
}
