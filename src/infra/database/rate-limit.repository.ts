import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import pg from 'pg';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { DataSource } from 'typeorm';
import type { BudgetGrant, LimitSpec, RateLimitName, RateLimitStore } from '../../domain/limits/rate-limit-store.js';
import { postgresUrlOf } from './data-source.js';
import { DATA_SOURCE } from './persistence.tokens.js';

/** Created by the RateLimits migration with the columns rate-limiter-flexible expects. */
export const RATE_LIMITS_TABLE = 'rate_limits';
/** How the limiter's connections show in pg_stat_activity. */
export const RATE_LIMIT_APPLICATION_NAME = 'skillhost-rate-limits';

/**
 * A limiter call must fail fast when the database is down or frozen, since requests wait for it: a statement within
 * this long on the server (a locked row included), an answer within a little more (a frozen server answers nothing).
 */
const TIMEOUT_MS = 500;
const CLIENT_TIMEOUT_MARGIN_MS = 500;
/**
 * Opening a connection forks a backend, which a busy machine can take longer than a statement over: a refused
 * connection fails at once anyway, and connections are kept open (POOL_SIZE at most), so this is paid rarely.
 */
const CONNECT_TIMEOUT_MS = 2000;
/** Takes are short and most calls never reach the store (leases): a few connections serve an instance. */
const POOL_SIZE = 4;
/**
 * Excess points are given back only while the window has this long left: the give-back is an upsert at the
 * caller's clock, so one that reached the server after another instance had started the next window would
 * lower that window's count. Until the window ends, the excess then only refuses others early.
 */
const GIVE_BACK_MARGIN_MS = 3000;

/**
 * The rate limits' budgets in PostgreSQL, shared by every instance on the database, through rate-limiter-flexible's
 * `RateLimiterPostgres` (a fixed window per key, one atomic upsert per take) on a small pool of its own with short
 * timeouts, so a slow database delays no request by more than about a second and never holds the app's pool.
 */
@Injectable()
export class RateLimitRepository implements RateLimitStore, OnApplicationShutdown {
  private pool: pg.Pool | undefined;
  private readonly limiters = new Map<RateLimitName, RateLimiterPostgres>();

  constructor(@Inject(DATA_SOURCE) private readonly dataSource: DataSource) {}

  /**
   * The library adds every consume to the count, refused or not: a batch that asked for more than was left is told
   * what it got (what was left before it) and gives the rest back, so a refused or partial take leaves the count as
   * if it had asked for exactly what it got.
   */
  async take(limit: LimitSpec, key: string, points: number): Promise<BudgetGrant> {
    const limiter = this.limiterFor(limit);
    let result: RateLimiterRes;
    try {
      result = await limiter.consume(key, points);
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      result = error;
    }
    const before = result.consumedPoints - points;
    const granted = Math.min(points, Math.max(0, limit.max - before));
    // A failed give-back only refuses others early until the window ends: the grant stands.
    if (granted < points && result.msBeforeNext > GIVE_BACK_MARGIN_MS)
      await limiter.reward(key, points - granted).catch(() => undefined);
    return { granted, remaining: Math.max(0, limit.max - before - granted), msBeforeNext: result.msBeforeNext };
  }

  async onApplicationShutdown(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    await pool?.end();
  }

  /** One limiter per limit, all on one table and pool; the key prefix keeps their counts apart. */
  private limiterFor(limit: LimitSpec): RateLimiterPostgres {
    let limiter = this.limiters.get(limit.name);
    if (limiter === undefined) {
      limiter = new RateLimiterPostgres({
        storeClient: this.openPool(),
        storeType: 'pool',
        tableName: RATE_LIMITS_TABLE,
        tableCreated: true,
        keyPrefix: limit.name,
        points: limit.max,
        duration: limit.windowMs / 1000,
      });
      this.limiters.set(limit.name, limiter);
    }
    return limiter;
  }

  private openPool(): pg.Pool {
    if (this.pool === undefined) {
      this.pool = new pg.Pool({
        connectionString: postgresUrlOf(this.dataSource),
        application_name: RATE_LIMIT_APPLICATION_NAME,
        max: POOL_SIZE,
        connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
        idleTimeoutMillis: 0,
        statement_timeout: TIMEOUT_MS,
        query_timeout: TIMEOUT_MS + CLIENT_TIMEOUT_MARGIN_MS,
        // A take is a one-row write whose commit need not wait for its WAL flush: a server crash can only forget
        // the last moments of a minute's counts, and the round trip every take costs is much shorter.
        options: '-c synchronous_commit=off',
      });
      // A server that goes away fails idle connections; the next take fails and is counted by the limiter.
      this.pool.on('error', () => undefined);
    }
    return this.pool;
  }
}
