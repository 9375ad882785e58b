import { describe, expect, it } from '@jest/globals';
import { CappedOutput, utf8Boundary } from './capped-output.js';

describe(CappedOutput.name, () => {
  it('keeps everything up to the cap, in order, not truncated', () => {
    const sut = new CappedOutput(10);
    expect(sut.add(Buffer.from('abc'))).toBe(true);
    expect(sut.add(Buffer.from('defghij'))).toBe(true);
    expect([sut.text(), sut.truncated, sut.bytes]).toEqual(['abcdefghij', false, 10]);
  });

  it('cuts past the cap, keeps nothing more, and ends with a notice on its own line', () => {
    const sut = new CappedOutput(10);
    sut.add(Buffer.from('abcdefgh'));
    expect(sut.add(Buffer.from('ijkl'))).toBe(false);
    expect(sut.add(Buffer.from('more'))).toBe(false);
    expect([sut.text(), sut.truncated, sut.bytes]).toEqual([
      'abcdefghij\n[output cut at 10 bytes; the script was stopped]',
      true,
      10,
    ]);
  });

  it('adds no blank line when the kept part ends a line', () => {
    const sut = new CappedOutput(4);
    sut.add(Buffer.from('abc\nd'));
    expect(sut.text()).toBe('abc\n[output cut at 4 bytes; the script was stopped]');
  });

  it('never ends in half a character', () => {
    const sut = new CappedOutput(5);
    sut.add(Buffer.from('ab🙂cd'));
    expect(sut.text()).toBe('ab\n[output cut at 5 bytes; the script was stopped]');
    const one = new CappedOutput(1);
    one.add(Buffer.from('é'));
    expect(one.text()).toBe('[output cut at 1 bytes; the script was stopped]');
  });

  it('shows invalid UTF-8 from a script as replacement characters', () => {
    const sut = new CappedOutput(100);
    sut.add(Buffer.from([0x61, 0xff, 0x62, 0xc3]));
    expect(sut.text()).toBe('a\uFFFDb\uFFFD');
  });
});

describe(utf8Boundary.name, () => {
  it.each([
    ['', 0],
    ['abc', 3],
    ['aé', 3],
    ['a🙂', 5],
  ])('keeps whole %j', (text, length) => {
    expect(utf8Boundary(Buffer.from(text))).toBe(length);
  });

  it.each([
    [[0x61, 0xc3], 1],
    [[0x61, 0xe2, 0x82], 1],
    [[0x61, 0xf0, 0x9f, 0x99], 1],
    [[0x80, 0x80, 0x80, 0x80, 0x80], 5],
  ])('cuts %j at %d', (bytes, length) => {
    expect(utf8Boundary(Buffer.from(bytes))).toBe(length);
  });
});
