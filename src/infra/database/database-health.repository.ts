import { Inject, Injectable } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { DATA_SOURCE } from './persistence.tokens.js';

/** What a ping found: the round trip, or why there was none. */
export type PingResult = { ok: true; ms: number } | { ok: false; reason: string };

/**
 * Whether the database answers at all, for readiness probes. A ping never throws: a refused,
 * dropped or closed connection, an error or no answer within `timeoutMs` are all a `reason`.
 */
@Injectable()
export class DatabaseHealthRepository {
  constructor(@Inject(DATA_SOURCE) private readonly dataSource: DataSource) {}

  async ping(timeoutMs: number): Promise<PingResult> {
    const started = performance.now();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<PingResult>((resolve) => {
      timer = setTimeout(
        () => resolve({ ok: false, reason: `no answer to SELECT 1 within ${timeoutMs} ms` }),
        timeoutMs,
      );
    });
    // A frozen server can keep the query (or the wait for a connection) pending long after the probe gave up; it
    // settles on its own.
    const query = this.dataSource
      .query('SELECT 1')
      .then((): PingResult => ({ ok: true, ms: Math.round((performance.now() - started) * 100) / 100 }))
      .catch(
        (error: unknown): PingResult => ({ ok: false, reason: error instanceof Error ? error.message : String(error) }),
      );
    try {
      return await Promise.race([query, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
