/**
 * The skills usage funnel: per skill, version, model and day, how often a skill was offered (listed in a catalogue),
 * activated (by each way), had a resource read or a script run, failed, and took part in a turn.
 */

/**
 * How a skill was activated. In a chat turn, by what asked for it: a model's tool call (a code skill's calls
 * included), the user's `/name`, a command; in a turn of the gateway, `gateway`. Outside a turn the server cannot
 * tell a model's request from a person's, so the door names the way: an MCP client (`mcp`), a client of the REST or
 * GraphQL API (`api`: a chat's tool routes, a skill's instructions read directly).
 */
export const ACTIVATION_WAYS = ['tool', 'slash', 'command', 'mcp', 'gateway', 'api'] as const;
export type ActivationWay = (typeof ACTIVATION_WAYS)[number];

/** The counters of one row, in the order the API lists them. */
export const USAGE_COUNTERS = [
  'offered',
  'activatedTool',
  'activatedSlash',
  'activatedCommand',
  'activatedMcp',
  'activatedGateway',
  'activatedApi',
  'resourcesRead',
  'scriptsRun',
  'errors',
  'turns',
] as const;
export type UsageCounter = (typeof USAGE_COUNTERS)[number];
export type UsageCounts = Record<UsageCounter, number>;

/**
 * What a row is counted by. `version` and `model` are '' when there is none: outside a turn (MCP, the API's direct
 * routes) no model of this server takes part.
 */
export interface UsageKey {
  /** UTC day, `YYYY-MM-DD`. */
  day: string;
  skill: string;
  version: string;
  model: string;
}

export interface UsageRow extends UsageKey, UsageCounts {}

export function activationCounter(way: ActivationWay): UsageCounter {
  switch (way) {
    case 'tool':
      return 'activatedTool';
    case 'slash':
      return 'activatedSlash';
    case 'command':
      return 'activatedCommand';
    case 'mcp':
      return 'activatedMcp';
    case 'gateway':
      return 'activatedGateway';
    case 'api':
      return 'activatedApi';
  }
}

export function zeroCounts(): UsageCounts {
  return Object.fromEntries(USAGE_COUNTERS.map((counter) => [counter, 0])) as UsageCounts;
}

/** The UTC day of an instant, as rows are keyed. */
export function usageDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** One thing that happened to a skill, as the doors report it. */
export interface UsageEvent {
  skill: string;
  version?: string;
  model?: string;
  counter: UsageCounter;
  /** Default 1. */
  count?: number;
}

/**
 * Counts gathered in memory between flushes, one entry per key: a turn adds to a Map and never waits for the
 * database. `drain` hands over everything gathered and starts afresh.
 */
export class UsageTally {
  /**
   * By day, model, version, then skill: maps keyed by the strings the turn already holds (their hashes are cached),
   * where one key made per event (a concatenation) cost a fresh string and its hash each time.
   */
  private rows = new Map<string, Map<string, Map<string, Map<string, UsageRow>>>>();
  private count = 0;

  /** How many rows (distinct keys) are gathered. */
  get size(): number {
    return this.count;
  }

  add(day: string, event: UsageEvent): void {
    const version = event.version ?? '';
    const model = event.model ?? '';
    const skills = inner(inner(inner(this.rows, day), model), version);
    let row = skills.get(event.skill);
    if (row === undefined) {
      row = { day, skill: event.skill, version, model, ...zeroCounts() };
      skills.set(event.skill, row);
      this.count += 1;
    }
    row[event.counter] += event.count ?? 1;
  }

  /** Adds rows back (a flush that failed), so the next flush writes them. */
  merge(rows: readonly UsageRow[]): void {
    for (const row of rows)
      for (const counter of USAGE_COUNTERS)
        if (row[counter] !== 0) this.add(row.day, { ...row, counter, count: row[counter] });
  }

  drain(): UsageRow[] {
    const rows: UsageRow[] = [];
    for (const models of this.rows.values())
      for (const versions of models.values()) for (const skills of versions.values()) rows.push(...skills.values());
    this.rows = new Map();
    this.count = 0;
    return rows;
  }
}

function inner<V>(map: Map<string, Map<string, V>>, key: string): Map<string, V> {
  let found = map.get(key);
  if (found === undefined) {
    found = new Map();
    map.set(key, found);
  }
  return found;
}

/**
 * Where the doors report usage (an infra adapter buffers and writes in batches). Reporting never throws and never
 * waits: it is on the turn path.
 */
export interface UsageRecorder {
  record(events: readonly UsageEvent[]): void;
  /** Writes what was gathered (tests and shutdown); resolves once it is stored. */
  flush(): Promise<void>;
}

export const SKILL_USAGE_RECORDER = Symbol('SKILL_USAGE_RECORDER');

/** A recorder that counts nothing (`[app.skills.usage] enabled = false`). */
export const NO_USAGE: UsageRecorder = { record: () => undefined, flush: () => Promise.resolve() };

/** What to group the answer by, besides the skill. */
export const USAGE_GROUPS = ['day', 'version', 'model'] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];

export interface UsageQuery {
  skill?: string;
  model?: string;
  /** Inclusive UTC days, `YYYY-MM-DD`. */
  from?: string;
  to?: string;
  groupBy: readonly UsageGroup[];
}

/** A row of the answer: the skill, the groups asked for (others absent), the summed counters. */
export interface UsageSummaryRow extends Partial<Omit<UsageKey, 'skill'>>, UsageCounts {
  skill: string;
}

/** The usage table as the funnel uses it (infra's SkillUsageRepository). */
export interface UsageStore {
  /** Adds the rows' counts to the stored ones, in one statement. */
  add(rows: readonly UsageRow[]): Promise<void>;
  summary(query: UsageQuery): Promise<UsageSummaryRow[]>;
  /** Deletes days before `day`; returns how many rows went. */
  deleteBefore(day: string): Promise<number>;
}

export const SKILL_USAGE_STORE = Symbol('SKILL_USAGE_STORE');
