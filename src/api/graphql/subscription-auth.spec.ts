import { describe, expect, it } from '@jest/globals';
import { connectionCredentials } from './subscription-auth.js';

describe(connectionCredentials.name, () => {
  it.each([
    ['top-level authorization', { authorization: 'Bearer skh_x' }, { authorization: 'Bearer skh_x' }],
    ['any case', { Authorization: 'Bearer skh_x' }, { authorization: 'Bearer skh_x' }],
    ['x-api-key', { 'X-Api-Key': 'skh_x' }, { 'x-api-key': 'skh_x' }],
    ['nested under headers', { headers: { Authorization: 'Bearer skh_x' } }, { authorization: 'Bearer skh_x' }],
    [
      'top level before headers',
      { authorization: 'Bearer a', headers: { authorization: 'Bearer b' } },
      { authorization: 'Bearer a' },
    ],
    ['a non-string value, kept for the key parser to refuse', { authorization: 42 }, { authorization: 42 }],
  ])('reads %s', (_, payload, expected) => {
    expect(connectionCredentials(payload)).toEqual(expected);
  });

  it.each([[undefined], [null], ['Bearer skh_x'], [{}], [{ token: 'skh_x' }]])('finds none in %p', (payload) => {
    expect(connectionCredentials(payload)).toBeUndefined();
  });
});
