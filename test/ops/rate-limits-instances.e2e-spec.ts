import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { buildServer, type Instances, startInstances } from '../support/instances.js';
import type { WireJson } from '../support/wire-json.js';

/**
 * Two server processes on one database, as a load balancer would have them: a user gets `requests_per_minute` in
 * total, not once per instance, whichever instance each request reaches.
 */
describe('rate limits across two instances on one database', () => {
  let cluster: Instances;
  const LIMIT = 10;

  const call = async (instance: number, path: string, key?: string, init: RequestInit = {}) => {
    const headers = { ...(key === undefined ? {} : { authorization: `Bearer ${key}` }), ...init.headers };
    const response = await fetch(`${cluster.baseUrls[instance]}${path}`, { ...init, headers });
    return { status: response.status, headers: response.headers, body: (await response.json()) as WireJson };
  };
  /** A member and a key of theirs, made as the local admin (no key on a loopback address). */
  const userWithKey = async (name: string): Promise<string> => {
    const json = { method: 'POST', headers: { 'content-type': 'application/json' } };
    const user = await call(0, '/v1/admin/users', undefined, { ...json, body: JSON.stringify({ name }) });
    const key = await call(1, `/v1/admin/users/${user.body.id}/keys`, undefined, { ...json, body: '{}' });
    expect(key.status).toBe(201);
    return key.body.key as string;
  };

  function expectRefused(res: Awaited<ReturnType<typeof call>>): void {
    expect({ status: res.status, code: res.body.code }).toEqual({ status: 429, code: 'RATE_LIMITED' });
    expect(res.body.message).toContain(`at most ${LIMIT} a minute per user, counted together by every instance`);
    const retryAfter = Number(res.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(res.body.details).toEqual({ limit: 'requests_per_minute', max: LIMIT, retryAfterSeconds: retryAfter });
  }

  beforeAll(async () => {
    buildServer();
    cluster = await startInstances(2, { overrides: { 'app.limits.requests_per_minute': LIMIT } });
  }, 300_000);
  afterAll(async () => cluster?.close());

  it('requests alternating between the instances: exactly the limit passes, then both refuse', async () => {
    const key = await userWithKey('alice');
    const statuses: number[] = [];
    for (let i = 0; i < LIMIT; i++) statuses.push((await call(i % 2, '/v1/me', key)).status);
    expect(statuses).toEqual(Array(LIMIT).fill(200));
    expectRefused(await call(0, '/v1/me', key));
    expectRefused(await call(1, '/v1/chats', key));
    // The local admin (counted by address, 2 requests so far) is not affected.
    expect((await call(1, '/v1/me')).body.name).toBe('local');
  });

  it('a burst of concurrent requests spread over both instances: exactly the limit passes', async () => {
    const key = await userWithKey('bob');
    const burst = await Promise.all(Array.from({ length: 40 }, (_, i) => call(i % 2, '/v1/me', key)));
    const statuses = burst.map((res) => res.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(LIMIT);
    expect(statuses.filter((status) => status === 429)).toHaveLength(40 - LIMIT);
    for (const res of burst.filter((r) => r.status === 429)) expectRefused(res);
  });

  it('/health/ready is never limited, on either instance', async () => {
    for (let i = 0; i < 2 * LIMIT; i++) expect((await call(i % 2, '/health/ready')).status).toBe(200);
  });
});
