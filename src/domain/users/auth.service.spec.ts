import { describe, expect, it } from '@jest/globals';
import { ErrorCode } from '@skillhost/core';
import { loadConfig } from '../../config/config-loader.js';
import type { ApiKeyStore } from './api-key-store.js';
import { generateApiKey } from './api-key.js';
import { AuthService } from './auth.service.js';
import type { KeyOwner } from './user.types.js';

/** The one store call authentication makes, over a map of hashes; counts its look-ups. */
function keyStore(owners: Map<string, KeyOwner>) {
  const store = {
    lookUps: 0,
    async findOwnerByHash(hash: string) {
      store.lookUps++;
      return owners.get(hash) ?? null;
    },
    async touchLastUsed() {},
  };
  return store;
}

function makeOwner(overrides: Partial<KeyOwner> = {}): KeyOwner {
  return {
    keyId: 'key-1',
    revokedAt: null,
    expiresAt: null,
    lastUsedAt: new Date(),
    userId: 'user-1',
    userName: 'ada',
    role: 'member',
    disabled: false,
    ...overrides,
  };
}

function setUp(owner: KeyOwner | null) {
  const key = generateApiKey();
  const store = keyStore(new Map(owner === null ? [] : [[key.hash, owner]]));
  const config = loadConfig({ env: {}, toml: { app: { auth: { mode: 'api_key' } } } });
  const sut = new AuthService(config, store as unknown as ApiKeyStore);
  return { sut, store, headers: { authorization: `Bearer ${key.key}` } };
}

describe(AuthService.name, () => {
  it('asks the store once, then answers the same key at once with the same principal', async () => {
    const { sut, store, headers } = setUp(makeOwner());

    const first = sut.authenticateNow(headers);
    expect(first).toBeInstanceOf(Promise);
    const principal = await first;
    const second = sut.authenticateNow(headers);

    expect(second).toBe(principal);
    expect(principal).toEqual({ userId: 'user-1', name: 'ada', role: 'member', keyId: 'key-1' });
    expect(store.lookUps).toBe(1);
  });

  it('refuses an unknown key from the cache too, without asking the store again', async () => {
    const { sut, store, headers } = setUp(null);

    await expect(sut.authenticate(headers)).rejects.toMatchObject({ code: ErrorCode.UNAUTHENTICATED });
    expect(() => sut.authenticateNow(headers)).toThrow('The API key is not valid.');
    expect(store.lookUps).toBe(1);
  });

  it('refuses a cached key once it has expired, though its cache entry has not', async () => {
    const owner = makeOwner({ expiresAt: new Date(Date.now() + 60) });
    const { sut, headers } = setUp(owner);
    await sut.authenticate(headers);

    await new Promise((resolve) => setTimeout(resolve, 80));

    expect(() => sut.authenticateNow(headers)).toThrow('The API key has expired.');
  });

  it('refuses a missing or malformed key before any look-up', () => {
    const { sut, store } = setUp(makeOwner());

    expect(() => sut.authenticateNow({})).toThrow('An API key is required');
    expect(() => sut.authenticateNow({ authorization: 'Basic abc' })).toThrow('The API key is malformed');
    expect(store.lookUps).toBe(0);
  });

  it('hands a bearer token that is not a key to the OAuth verifier once one is set, and only then', async () => {
    const { sut, store } = setUp(makeOwner());
    const token = { authorization: `Bearer ${'t'.repeat(43)}` };
    expect(() => sut.authenticateNow(token)).toThrow('The API key is malformed');
    const seen: string[] = [];
    const principal = { userId: 'user-2', name: 'bo', role: 'member' as const, keyId: null, scopes: new Set<never>() };
    sut.acceptBearerTokens({
      verify: (presented) => {
        seen.push(presented);
        return principal;
      },
    });

    expect(sut.authenticateNow(token)).toBe(principal);
    // Another scheme, or a key-shaped value, never reaches the verifier.
    expect(() => sut.authenticateNow({ authorization: `Basic ${'t'.repeat(43)}` })).toThrow('The API key is malformed');
    expect(() => sut.authenticateNow({ 'x-api-key': 't'.repeat(43) })).toThrow('The API key is malformed');
    expect(seen).toEqual(['t'.repeat(43)]);
    expect(store.lookUps).toBe(0);
  });
});
