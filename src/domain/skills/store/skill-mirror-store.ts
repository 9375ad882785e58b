/**
 * Where a mirror was defined: `[app.skills.mirrors.NAME]` (read-only to the API) or `POST /v1/admin/skills/mirrors`.
 */
export type MirrorOrigin = 'config' | 'api';

/** What a mirror's last good run installed: each skill's version, and whether it was new or kept back. */
export interface MirrorRunResult {
  skills: { name: string; version: number; digest: string; created: boolean; held: boolean }[];
  warnings: string[];
}

/** A mirror and its last run, as every instance reads it from the database. */
export interface StoredMirror {
  name: string;
  origin: MirrorOrigin;
  source: string;
  intervalSeconds: number;
  createdBy: string | null;
  createdAt: Date;
  nextRunAt: Date;
  /** Whether a run holds the mirror's lease now (on any instance). */
  running: boolean;
  lastRunAt: Date | null;
  lastSuccessAt: Date | null;
  lastErrorAt: Date | null;
  lastError: string | null;
  lastResult: MirrorRunResult | null;
}

export interface NewMirror {
  name: string;
  source: string;
  intervalSeconds: number;
}

export type MirrorOutcome = { ok: true; result: MirrorRunResult } | { ok: false; error: string };

/**
 * The mirrors' table (infra's SkillMirrorRepository implements it in PostgreSQL). A run first claims its mirror: a
 * lease no other instance can take until the run finishes or the lease runs out (a process that died mid-run).
 */
export interface SkillMirrorStore {
  list(): Promise<StoredMirror[]>;
  find(name: string): Promise<StoredMirror | null>;
  /** Null when the name is taken. */
  add(mirror: NewMirror, createdBy: string | null): Promise<StoredMirror | null>;
  /** Removes a mirror the API added; false when there is none of that name and origin. */
  remove(name: string, origin: MirrorOrigin): Promise<boolean>;
  /**
   * Makes the configuration's mirrors the `config` rows: each written (taking over an API mirror of the same name),
   * and `config` rows the configuration no longer has removed. A changed source or interval runs at once.
   */
  replaceConfigured(mirrors: readonly NewMirror[]): Promise<void>;
  /** Claims the named mirror, or (no name) the mirror most overdue; null when none is free (or due). */
  claim(name: string | undefined, leaseSeconds: number): Promise<StoredMirror | null>;
  /** Records a run's outcome, frees the lease and schedules the next run an interval from now. */
  finish(name: string, outcome: MirrorOutcome): Promise<void>;
}

export const SKILL_MIRROR_STORE = Symbol('SKILL_MIRROR_STORE');
