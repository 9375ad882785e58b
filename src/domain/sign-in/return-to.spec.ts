import { describe, expect, it } from '@jest/globals';
import { checkedReturnTo } from './return-to.js';

describe(checkedReturnTo.name, () => {
  it('keeps a path on this server, with its query and fragment; none is the page', () => {
    expect(checkedReturnTo(undefined)).toBe('/');
    expect(checkedReturnTo('')).toBe('/');
    expect(checkedReturnTo('/?chat=abc#end')).toBe('/?chat=abc#end');
    expect(checkedReturnTo('/docs')).toBe('/docs');
  });

  it.each([
    '//evil.example',
    '///evil.example',
    '/\\evil.example',
    'https://evil.example/',
    'evil.example',
    'javascript:alert(1)',
    '/\tevil',
    '/a\r\nSet-Cookie: x=1',
    `/${'a'.repeat(2048)}`,
  ])('refuses %j with SIGN_IN_RETURN_TO_INVALID', (returnTo) => {
    expect(() => checkedReturnTo(returnTo)).toThrow(expect.objectContaining({ code: 'SIGN_IN_RETURN_TO_INVALID' }));
  });
});
