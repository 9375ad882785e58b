import { describe, expect, it } from '@jest/globals';
import { AppError, ErrorCode } from '@skillhost/core';
import { runQuery } from './database-errors.js';

const failWith = (error: unknown) => runQuery(() => Promise.reject(error));

describe(runQuery.name, () => {
  it.each([
    [
      'a statement cancelled by statement_timeout (57014)',
      Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
    ],
    [
      'a lock wait past lock_timeout (55P03)',
      Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03' }),
    ],
    ['no answer within query_timeout', new Error('Query read timeout')],
    ['no connection within connectionTimeoutMillis', new Error('timeout exceeded when trying to connect')],
    ['a connection that timed out while connecting', new Error('Connection terminated due to connection timeout')],
    ['a refused connection', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })],
    [
      'a server that is shutting down (57P01), through TypeORM',
      Object.assign(new Error('QueryFailedError'), { driverError: { code: '57P01' } }),
    ],
  ])('%s → DATABASE_UNAVAILABLE', async (_, error) => {
    const thrown = await failWith(error).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(AppError);
    expect((thrown as AppError).code).toBe(ErrorCode.DATABASE_UNAVAILABLE);
  });

  it('leaves a wrong query as it is (a bug, not an outage)', async () => {
    const syntax = Object.assign(new Error('syntax error at or near "SELEC"'), { code: '42601' });
    await expect(failWith(syntax)).rejects.toBe(syntax);
  });
});
