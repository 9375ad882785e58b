import { Inject, Injectable } from '@nestjs/common';
import { SkillRegistryService } from '@skillhost/nest';
import { validationFailed } from '../../shared/validation-errors.js';
import {
  ACTIVATION_WAYS,
  activationCounter,
  SKILL_USAGE_STORE,
  USAGE_COUNTERS,
  type UsageCounts,
  type UsageGroup,
  type UsageStore,
  type UsageSummaryRow,
  usageDay,
  zeroCounts,
} from './skill-usage.js';

/** Days a query covers when it names no `from`. */
export const DEFAULT_USAGE_DAYS = 30;
const DAY_MS = 24 * 60 * 60 * 1000;
/** The longest range one query may cover (the most `retention_days` allows). */
const MAX_RANGE_DAYS = 36_500;
/**
 * The earliest day a query may name: the range's default start is computed back from `to`, and PostgreSQL has no year
 * 0 (nor does the funnel hold days before the epoch).
 */
const FIRST_DAY = '1970-01-01';

export interface UsageRequest {
  skill?: string;
  model?: string;
  from?: string;
  to?: string;
  groupBy?: readonly UsageGroup[];
}

/** The funnel over a range: its rows, their totals, and the team's skills that no one activated in it. */
export interface UsageReport {
  from: string;
  to: string;
  groupBy: UsageGroup[];
  rows: UsageSummaryRow[];
  totals: UsageCounts;
  /** Skills of the team's catalogue (now) with no activation in the range, in name order. */
  neverActivated: string[];
}

/** The skills usage funnel for admins (REST `GET /v1/admin/skills/usage`, GraphQL `skillUsage`). */
@Injectable()
export class SkillUsageService {
  constructor(
    @Inject(SKILL_USAGE_STORE) private readonly store: UsageStore,
    private readonly registry: SkillRegistryService,
  ) {}

  async report(request: UsageRequest, now = new Date()): Promise<UsageReport> {
    const { from, to } = rangeOf(request, now);
    const groupBy = [...new Set(request.groupBy ?? [])];
    const rows = await this.store.summary({ skill: request.skill, model: request.model, from, to, groupBy });
    const totals = zeroCounts();
    const activated = new Set<string>();
    for (const row of rows) {
      for (const counter of USAGE_COUNTERS) totals[counter] += row[counter];
      if (activationsOf(row) > 0) activated.add(row.skill);
    }
    const names = [...this.registry.snapshot.skills.keys()].filter(
      (name) => request.skill === undefined || name === request.skill,
    );
    const neverActivated = names.filter((name) => !activated.has(name)).sort();
    return { from, to, groupBy, rows, totals, neverActivated };
  }
}

/** Every way's activations of a row. */
export function activationsOf(counts: UsageCounts): number {
  return ACTIVATION_WAYS.reduce((sum, way) => sum + counts[activationCounter(way)], 0);
}

/** The days asked for (default: the last DEFAULT_USAGE_DAYS to today), or VALIDATION_FAILED saying what was wrong. */
function rangeOf(request: UsageRequest, now: Date): { from: string; to: string } {
  const problems: string[] = [];
  for (const key of ['from', 'to'] as const) {
    const value = request[key];
    if (value !== undefined && !isDay(value))
      problems.push(`${key} must be a UTC day as YYYY-MM-DD (a real date), not '${value}'`);
    else if (value !== undefined && value < FIRST_DAY)
      problems.push(`${key} must be ${FIRST_DAY} or later, not '${value}'`);
  }
  if (problems.length > 0) throw validationFailed(problems);
  const to = request.to ?? usageDay(now);
  const from = request.from ?? usageDay(new Date(Date.parse(to) - (DEFAULT_USAGE_DAYS - 1) * DAY_MS));
  if (from > to) throw validationFailed([`from (${from}) must not be after to (${to}); swap them`]);
  if (Date.parse(to) - Date.parse(from) > MAX_RANGE_DAYS * DAY_MS)
    throw validationFailed([`from and to may be at most ${MAX_RANGE_DAYS} days apart`]);
  return { from, to };
}

function isDay(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const parsed = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && usageDay(parsed) === value;
}
