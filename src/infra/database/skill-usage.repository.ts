import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import {
  USAGE_COUNTERS,
  type UsageCounter,
  type UsageQuery,
  type UsageRow,
  type UsageStore,
  type UsageSummaryRow,
} from '../../domain/skills/usage/skill-usage.js';
import { DATA_SOURCE } from './persistence.tokens.js';

/** Each counter's column. */
const COLUMNS: Record<UsageCounter, string> = {
  offered: 'offered',
  activatedTool: 'activated_tool',
  activatedSlash: 'activated_slash',
  activatedCommand: 'activated_command',
  activatedMcp: 'activated_mcp',
  activatedGateway: 'activated_gateway',
  activatedApi: 'activated_api',
  resourcesRead: 'resources_read',
  scriptsRun: 'scripts_run',
  errors: 'errors',
  turns: 'turns',
};
const COUNTER_COLUMNS = USAGE_COUNTERS.map((counter) => COLUMNS[counter]);
const KEY_COLUMNS = ['day', 'skill', 'version', 'model'];

/**
 * One statement for any number of rows: the rows go as one array a column (`unnest`), so the statement and its
 * parameters are the same shape whatever the batch's size, and a conflict adds to the stored counts.
 */
const ADD_SQL = `
  INSERT INTO skill_usage_daily (${[...KEY_COLUMNS, ...COUNTER_COLUMNS].join(', ')})
  SELECT * FROM unnest($1::date[], $2::text[], $3::text[], $4::text[], ${COUNTER_COLUMNS.map(
    (_, index) => `$${index + 5}::bigint[]`,
  ).join(', ')})
  ON CONFLICT ON CONSTRAINT pk_skill_usage_daily DO UPDATE SET
  ${COUNTER_COLUMNS.map((column) => `${column} = skill_usage_daily.${column} + excluded.${column}`).join(', ')}`;

/** The skills usage funnel's table: batched adds, summaries for admins, and the retention sweep. */
@Injectable()
export class SkillUsageRepository implements UsageStore {
  constructor(@Inject(DATA_SOURCE) private readonly dataSource: DataSource) {}

  async add(rows: readonly UsageRow[]): Promise<void> {
    if (rows.length === 0) return;
    // Rows are sorted by key so two instances' concurrent upserts take the row locks in one order (no deadlock).
    const sorted = [...rows].sort((a, b) => compareKeys(a, b));
    const params = [
      sorted.map((row) => row.day),
      sorted.map((row) => row.skill),
      sorted.map((row) => row.version),
      sorted.map((row) => row.model),
      ...USAGE_COUNTERS.map((counter) => sorted.map((row) => row[counter])),
    ];
    await this.dataSource.query(ADD_SQL, params);
  }

  async summary(query: UsageQuery): Promise<UsageSummaryRow[]> {
    const params: unknown[] = [];
    const where: string[] = [];
    const bind = (sql: string, value: unknown) => {
      params.push(value);
      where.push(sql.replace('?', `$${params.length}`));
    };
    if (query.skill !== undefined) bind('skill = ?', query.skill);
    if (query.model !== undefined) bind('model = ?', query.model);
    if (query.from !== undefined) bind('day >= ?::date', query.from);
    if (query.to !== undefined) bind('day <= ?::date', query.to);
    const groups = ['skill', ...KEY_COLUMNS.filter((column) => query.groupBy.includes(column as never))];
    const select = groups.map((column) => (column === 'day' ? "to_char(day, 'YYYY-MM-DD') AS day" : column));
    const sums = USAGE_COUNTERS.map((counter) => `sum(${COLUMNS[counter]})::text AS "${counter}"`);
    const rows = await this.dataSource.query<Record<string, string>[]>(
      `SELECT ${[...select, ...sums].join(', ')} FROM skill_usage_daily ` +
        `${where.length > 0 ? `WHERE ${where.join(' AND ')} ` : ''}` +
        `GROUP BY ${groups.join(', ')} ORDER BY ${groups.join(', ')}`,
      params,
    );
    return rows.map((row) => {
      const summary: Record<string, string | number> = {};
      for (const column of groups) summary[column] = row[column];
      for (const counter of USAGE_COUNTERS) summary[counter] = Number(row[counter]);
      return summary as unknown as UsageSummaryRow;
    });
  }

  async deleteBefore(day: string): Promise<number> {
    const [, count] = await this.dataSource.query<[unknown, number]>(
      'DELETE FROM skill_usage_daily WHERE day < $1::date',
      [day],
    );
    return count;
  }
}

function compareKeys(a: UsageRow, b: UsageRow): number {
  for (const key of ['skill', 'day', 'version', 'model'] as const) {
    if (a[key] !== b[key]) return a[key] < b[key] ? -1 : 1;
  }
  return 0;
}
