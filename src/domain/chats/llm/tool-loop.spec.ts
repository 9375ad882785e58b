import { describe, expect, it } from '@jest/globals';
import { cutToUtf8Bytes } from './tool-loop.js';

describe(cutToUtf8Bytes.name, () => {
  it('keeps text that fits', () => {
    expect(cutToUtf8Bytes('hello', 5)).toBe('hello');
    expect(cutToUtf8Bytes('é', 2)).toBe('é');
  });

  it('cuts at the byte limit without splitting a character or a surrogate pair', () => {
    expect(cutToUtf8Bytes('abcdef', 4)).toBe('abcd');
    // é is 2 bytes: 3 bytes hold one and a half of them.
    expect(cutToUtf8Bytes('ééé', 3)).toBe('é');
    // 😀 is 4 bytes (two UTF-16 units): 6 bytes hold "a" and one emoji, never half of the next.
    expect(cutToUtf8Bytes('a😀😀', 6)).toBe('a😀');
    expect(cutToUtf8Bytes('😀', 3)).toBe('');
  });

  it('gives nothing for no room', () => {
    expect(cutToUtf8Bytes('abc', 0)).toBe('');
  });

  it('is exact for long text', () => {
    const text = 'ü'.repeat(600_000);
    const cut = cutToUtf8Bytes(text, 1_000_001);
    expect(Buffer.byteLength(cut)).toBe(1_000_000);
  });
});
