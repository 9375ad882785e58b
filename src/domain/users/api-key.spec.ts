import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { API_KEY_PATTERN, generateApiKey, hashApiKey, presentedKey } from './api-key.js';

describe(generateApiKey.name, () => {
  it('makes skh_ + 32 random bytes in base64url, a 10-character prefix and the SHA-256 hex', () => {
    const sut = generateApiKey();
    expect(sut.key).toMatch(/^skh_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(sut.key.slice(4), 'base64url')).toHaveLength(32);
    expect(sut.prefix).toBe(sut.key.slice(0, 10));
    expect(sut.hash).toBe(createHash('sha256').update(sut.key).digest('hex'));
    expect(generateApiKey().key).not.toBe(sut.key);
  });
});

describe(presentedKey.name, () => {
  const key = `skh_${'A'.repeat(43)}`;

  it('reads Authorization: Bearer (any case) first, then x-api-key', () => {
    expect(presentedKey({ authorization: `Bearer ${key}` })).toBe(key);
    expect(presentedKey({ authorization: `bearer  ${key} ` })).toBe(key);
    expect(presentedKey({ 'x-api-key': key })).toBe(key);
    expect(presentedKey({ authorization: `Bearer ${key}`, 'x-api-key': 'other' })).toBe(key);
    expect(presentedKey({})).toBeUndefined();
  });

  it.each([
    ['another scheme', { authorization: `Basic ${key}` }],
    ['no key after Bearer', { authorization: 'Bearer' }],
    ['too short', { authorization: 'Bearer skh_abc' }],
    ['too long', { authorization: `Bearer ${key}A` }],
    ['a NUL inside', { 'x-api-key': `skh_${'A'.repeat(20)}\u0000${'A'.repeat(22)}` }],
    ['an unpaired surrogate', { 'x-api-key': `skh_${'A'.repeat(42)}\ud800` }],
    ['a repeated header', { 'x-api-key': [key, key] }],
    ['two tokens', { authorization: `Bearer ${key} ${key}` }],
  ])('%s is malformed (no look-up is made)', (_, headers) => {
    expect(presentedKey(headers)).toBe('malformed');
  });

  it('accepts exactly the generated alphabet', () => {
    expect(API_KEY_PATTERN.test(generateApiKey().key)).toBe(true);
    expect(hashApiKey(key)).toHaveLength(64);
  });
});
