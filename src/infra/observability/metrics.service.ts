import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { Inject, Injectable, Module, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { errorCodeOf } from '../../domain/shared/error-code-of.js';
import { APP_CONFIG, type AppConfig } from '../../config/app-config.js';
import { DATABASE_ERROR_CHANNEL, type DatabaseErrorEvent } from '../database/database-errors.js';
import { SKILLS_METRICS, type SkillsMetrics, type SnapshotFacts } from '@skillhost/core';
import { CHAT_METRICS, type ChatMetrics } from '../../domain/chats/chat-metrics.js';
import { SCRIPT_METRICS, type ScriptMetrics } from '../../domain/sandbox/script-metrics.js';
import { RATE_LIMIT_METRICS, type RateLimitMetrics, type RateLimitName } from '../../domain/limits/rate-limit-store.js';

/** Where a turn's time went, in ms (the chat's `TurnTiming`). */
export interface TurnTimingMs {
  totalMs: number;
  modelMs: number;
  overheadMs: number;
  dbMs: number;
  skillsMs: number;
}

export interface RequestFacts {
  method: string;
  /** The route's pattern (`/v1/chats/:id`), never the path itself: one series per route, not per chat. */
  route: string;
  status: number;
  durationMs: number;
}

/** Labels for requests no route matched, so a scan of random URLs adds one series, not thousands. */
export const UNMATCHED_ROUTE = '(unmatched)';

const seconds = (ms: number) => ms / 1000;

/** Model latency spans milliseconds (a local model) to minutes; Skillhost's own share should stay in milliseconds. */
const MODEL_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120];
const OVERHEAD_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
const REQUEST_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/**
 * The process's own metrics (CPU, memory, event loop, GC) describe the process, not an app, and
 * prom-client's collectors for them start monitors that are never stopped: one set per process,
 * in a registry of its own (not prom-client's global default), shown beside every app's.
 */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (processRegistry === undefined) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/**
 * This app's Prometheus metrics, in a registry of its own: tests run many apps in one process,
 * and each must count only its own requests. Label values are bounded: routes are patterns,
 * models and tools are the configured ones, skills are the loaded ones.
 */
@Injectable()
export class MetricsService
  implements OnModuleInit, OnModuleDestroy, SkillsMetrics, ChatMetrics, ScriptMetrics, RateLimitMetrics
{
  readonly registry = new Registry();
  private readonly models: ReadonlySet<string>;
  private readonly defaultModel: string | undefined;

  private readonly requestDuration = new Histogram({
    name: 'skillhost_http_request_duration_seconds',
    help: 'HTTP requests by method, route pattern and status, and how long they took.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: REQUEST_BUCKETS,
    registers: [this.registry],
  });

  private readonly turns = new Counter({
    name: 'skillhost_turns_total',
    help: 'Chat turns by model and outcome (`ok`, or the error code).',
    labelNames: ['model', 'outcome'] as const,
    registers: [this.registry],
  });

  private readonly turnDuration = this.turnHistogram(
    'skillhost_turn_duration_seconds',
    'Whole turns that succeeded, by model.',
    MODEL_BUCKETS,
  );
  private readonly turnModel = this.turnHistogram(
    'skillhost_turn_model_seconds',
    'Time a successful turn waited for the model, by model.',
    MODEL_BUCKETS,
  );
  private readonly turnOverhead = this.turnHistogram(
    'skillhost_turn_overhead_seconds',
    "Skillhost's own time in a successful turn (everything but the model), by model.",
    OVERHEAD_BUCKETS,
  );
  private readonly turnDatabase = this.turnHistogram(
    'skillhost_turn_database_seconds',
    "The database statements' part of a turn's overhead, by model.",
    OVERHEAD_BUCKETS,
  );
  private readonly turnSkills = this.turnHistogram(
    'skillhost_turn_skills_seconds',
    "The skill tools' part of a turn's overhead, by model.",
    OVERHEAD_BUCKETS,
  );

  private readonly toolCalls = new Counter({
    name: 'skillhost_tool_calls_total',
    help: 'Skill tool calls (by a model or through the tool API) by tool and status (`ok` or `error`).',
    labelNames: ['tool', 'status'] as const,
    registers: [this.registry],
  });

  private readonly toolDuration = new Histogram({
    name: 'skillhost_tool_call_duration_seconds',
    help: 'How long skill tool calls took, by tool.',
    labelNames: ['tool'] as const,
    buckets: OVERHEAD_BUCKETS,
    registers: [this.registry],
  });

  private readonly activations = new Counter({
    name: 'skillhost_skill_activations_total',
    help: 'Successful skills.activate calls, by skill.',
    labelNames: ['skill'] as const,
    registers: [this.registry],
  });

  private readonly databaseErrors = new Counter({
    name: 'skillhost_database_errors_total',
    help: 'Failed database work, by kind: `unavailable` (refused, dropped, timed out) or `query` (any other error).',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  private readonly snapshotSkills = new Gauge({
    name: 'skillhost_skills_loaded',
    help: 'Valid skills in the current catalogue snapshot.',
    registers: [this.registry],
  });
  private readonly snapshotInvalid = new Gauge({
    name: 'skillhost_skills_invalid',
    help: 'Skills the last scan excluded as invalid.',
    registers: [this.registry],
  });
  private readonly snapshotCollisions = new Gauge({
    name: 'skillhost_skills_collisions',
    help: 'Name collisions the last scan resolved by directory order.',
    registers: [this.registry],
  });
  /** Measured when scraped: rendering the catalogue of thousands of skills is not added to every reload. */
  private catalogueSize: (() => number) | undefined;
  private readonly catalogueBytes = new Gauge({
    name: 'skillhost_skills_catalogue_bytes',
    help: 'Size of the rendered catalogue every system prompt carries, in UTF-8 bytes.',
    registers: [this.registry],
    collect: () => {
      if (this.catalogueSize !== undefined) this.catalogueBytes.set(this.catalogueSize());
    },
  });

  private readonly reloadDuration = new Histogram({
    name: 'skillhost_skills_reload_duration_seconds',
    help: 'How long scanning the skill directories into a new snapshot took.',
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  private readonly rateLimited = new Counter({
    name: 'skillhost_rate_limited_total',
    help: 'Requests refused with 429 RATE_LIMITED, by the limit they hit.',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });

  private readonly rateLimitStoreErrors = new Counter({
    name: 'skillhost_rate_limit_store_errors_total',
    help: "Takes from the rate limits' store in PostgreSQL that failed or timed out (the limits then fail open).",
    registers: [this.registry],
  });

  private readonly rateLimitUnchecked = new Counter({
    name: 'skillhost_rate_limit_unchecked_total',
    help: "Requests let through without counting them against a limit, because the rate limits' store was failing.",
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });

  /** Asked when scraped: the script sandboxes running now. */
  private scriptsRunning: (() => number) | undefined;
  private readonly scriptSandboxes = new Gauge({
    name: 'skillhost_scripts_running',
    help: 'Script sandboxes running now on this instance.',
    registers: [this.registry],
    collect: () => {
      if (this.scriptsRunning !== undefined) this.scriptSandboxes.set(this.scriptsRunning());
    },
  });

  private readonly scriptsRefused = new Counter({
    name: 'skillhost_scripts_refused_total',
    help: 'Script calls refused with SCRIPTS_BUSY, by the cap that was full: `turn`, `user` or `instance`.',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  });

  private readonly onDatabaseError = (message: unknown) =>
    this.databaseErrors.inc({ kind: (message as DatabaseErrorEvent).kind });

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.models = new Set(Object.keys(config.app.models));
    this.defaultModel = config.app.defaultModel;
  }

  /**
   * runQuery is a plain function shared by every repository, so it announces errors on a
   * process-wide channel: apps running side by side in one process (tests) each count all of them.
   */
  onModuleInit(): void {
    subscribe(DATABASE_ERROR_CHANNEL, this.onDatabaseError);
  }

  onModuleDestroy(): void {
    unsubscribe(DATABASE_ERROR_CHANNEL, this.onDatabaseError);
  }

  /** The Prometheus text exposition: this app's metrics, then the process's. */
  async scrape(): Promise<string> {
    return `${await this.registry.metrics()}\n${await processMetrics().metrics()}`;
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  observeRequest(request: RequestFacts): void {
    this.requestDuration.observe(
      { method: request.method, route: request.route, status: String(request.status) },
      seconds(request.durationMs),
    );
  }

  /** `requestedModel`: what the turn asked for (undefined: the default model). */
  observeTurn(requestedModel: string | undefined, timing: TurnTimingMs): void {
    const model = this.modelLabel(requestedModel);
    this.turns.inc({ model, outcome: 'ok' });
    this.turnDuration.observe({ model }, seconds(timing.totalMs));
    this.turnModel.observe({ model }, seconds(timing.modelMs));
    this.turnOverhead.observe({ model }, seconds(timing.overheadMs));
    this.turnDatabase.observe({ model }, seconds(timing.dbMs));
    this.turnSkills.observe({ model }, seconds(timing.skillsMs));
  }

  observeFailedTurn(requestedModel: string | undefined, error: unknown): void {
    this.turns.inc({ model: this.modelLabel(requestedModel), outcome: errorCodeOf(error) });
  }

  /** `tool`: a canonical tool name, or `unknown` for a name the model made up (the caller bounds it). */
  observeToolCall(tool: string, status: 'ok' | 'error', durationMs: number): void {
    this.toolCalls.inc({ tool, status });
    this.toolDuration.observe({ tool }, seconds(durationMs));
  }

  observeActivation(skill: string): void {
    this.activations.inc({ skill });
  }

  /**
   * `catalogueBytes`: the size of the configured format's catalogue, as every system prompt carries it (asked when
   * scraped).
   */
  observeSkillsReload(snapshot: SnapshotFacts, catalogueBytes: () => number): void {
    this.reloadDuration.observe(seconds(snapshot.durationMs));
    this.snapshotSkills.set(snapshot.skills.size);
    this.snapshotInvalid.set(snapshot.invalid.length);
    this.snapshotCollisions.set(snapshot.collisions.length);
    this.catalogueSize = catalogueBytes;
  }

  /** `running`: how many script sandboxes run now (asked when scraped). */
  observeScripts(running: () => number): void {
    this.scriptsRunning = running;
  }

  observeScriptsRefused(limit: 'turn' | 'user' | 'instance'): void {
    this.scriptsRefused.inc({ limit });
  }

  observeRateLimited(limit: string): void {
    this.rateLimited.inc({ limit });
  }

  observeRateLimitStoreError(): void {
    this.rateLimitStoreErrors.inc();
  }

  observeRateLimitUnchecked(limit: RateLimitName): void {
    this.rateLimitUnchecked.inc({ limit });
  }

  /** A configured model's name; anything else (a name the request made up, no model at all) is one label. */
  private modelLabel(requested: string | undefined): string {
    const name = requested ?? this.defaultModel;
    if (name === undefined) return 'none';
    return this.models.has(name) ? name : 'unknown';
  }

  private turnHistogram(name: string, help: string, buckets: number[]): Histogram<'model'> {
    return new Histogram({ name, help, labelNames: ['model'] as const, buckets, registers: [this.registry] });
  }
}

/** The domain's metrics ports, each bound to MetricsService, which implements them all. */
const PORTS = [
  { provide: SKILLS_METRICS, useExisting: MetricsService satisfies new (...args: never[]) => SkillsMetrics },
  { provide: SCRIPT_METRICS, useExisting: MetricsService satisfies new (...args: never[]) => ScriptMetrics },
  { provide: CHAT_METRICS, useExisting: MetricsService satisfies new (...args: never[]) => ChatMetrics },
  { provide: RATE_LIMIT_METRICS, useExisting: MetricsService satisfies new (...args: never[]) => RateLimitMetrics },
];

/** Metrics for every module that records: they import it and inject their port. */
@Module({
  providers: [MetricsService, ...PORTS],
  exports: [MetricsService, ...PORTS.map((port) => port.provide)],
})
export class MetricsModule {}
