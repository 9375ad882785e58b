import { channel } from 'node:diagnostics_channel';
import { AppError, ErrorCode } from '@skillhost/core';

/** Where runQuery announces failed database work (for metrics); publishing costs nothing while nobody listens. */
export const DATABASE_ERROR_CHANNEL = 'skillhost.database.error';
export interface DatabaseErrorEvent {
  kind: 'unavailable' | 'query';
}
const databaseErrors = channel(DATABASE_ERROR_CHANNEL);

const DATABASE_UNAVAILABLE_MESSAGE = 'The database is unavailable; nothing was changed. Try again shortly.';

/**
 * Codes that mean the server is gone, refusing us or too slow, not that the query was wrong:
 * 57014 is a statement cancelled by statement_timeout, 55P03 a lock wait past lock_timeout.
 */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EPIPE',
  '57P01',
  '57P02',
  '57P03',
  '57P05',
  '57014',
  '55P03',
  '08000',
  '08001',
  '08003',
  '08006',
  '53300',
  '3D000',
]);

function isUnavailable(error: unknown): boolean {
  const e = error as { code?: string; message?: string; driverError?: { code?: string } };
  const code = e?.code ?? e?.driverError?.code;
  return (
    (code !== undefined && UNAVAILABLE_CODES.has(code)) ||
    new RegExp(
      'Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has ' +
        'encountered a connection error|not queryable|Cannot use a pool after calling end|Driver not ' +
        'Connected|Connection is not established|Query read timeout',
      'i',
    ).test(e?.message ?? '')
  );
}

export function databaseUnavailable(): AppError {
  return new AppError(ErrorCode.DATABASE_UNAVAILABLE, DATABASE_UNAVAILABLE_MESSAGE);
}

/**
 * Runs a repository's database work, turning "the database is gone" (a refused or dropped
 * connection, a closed pool, a statement or connection wait past app.database.statement_timeout_ms)
 * into DATABASE_UNAVAILABLE (503) for the caller; any other failure is left as it is.
 */
export async function runQuery<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (AppError.isInstance(error)) throw error;
    const unavailable = isUnavailable(error);
    if (databaseErrors.hasSubscribers)
      databaseErrors.publish({ kind: unavailable ? 'unavailable' : 'query' } satisfies DatabaseErrorEvent);
    if (unavailable) throw databaseUnavailable();
    throw error;
  }
}

/** PostgreSQL's unique_violation, for repositories that turn a taken name into `null`. */
export function isUniqueViolation(error: unknown, constraint: string): boolean {
  const e = error as { code?: string; constraint?: string; driverError?: { code?: string; constraint?: string } };
  const code = e?.code ?? e?.driverError?.code;
  return code === '23505' && (e?.constraint ?? e?.driverError?.constraint) === constraint;
}
