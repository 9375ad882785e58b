import { describe, expect, it } from '@jest/globals';
import { toStorableJson, toStorableText, unstorableCharacter } from './storable-text.js';

describe(unstorableCharacter.name, () => {
  it.each([
    ['plain text', 'héllo wörld', undefined],
    ['a surrogate pair (an emoji)', 'ok \u{1F600}', undefined],
    ['NUL', 'a\u0000b', 'NUL'],
    ['a lone high surrogate', 'a\ud800b', 'unpaired surrogate'],
    ['a lone low surrogate', '\udc00', 'unpaired surrogate'],
    ['a high surrogate at the very end', 'x\ud83d', 'unpaired surrogate'],
    ['two high surrogates', '\ud83d\ud83d\ude00', 'unpaired surrogate'],
  ])('%s → %s', (_label, text, expected) => {
    expect(unstorableCharacter(text)).toBe(expected);
  });

  it('lets NUL through when asked to, but never a lone surrogate', () => {
    expect(unstorableCharacter('a\u0000b', { allowNul: true })).toBeUndefined();
    expect(unstorableCharacter('a\u0000\ud800', { allowNul: true })).toBe('unpaired surrogate');
  });
});

describe(toStorableText.name, () => {
  it('replaces NUL and unpaired surrogates with U+FFFD and keeps everything else', () => {
    expect(toStorableText('a\u0000b\ud800c\udc00 \u{1F600}')).toBe('a\ufffdb\ufffdc\ufffd \u{1F600}');
  });

  it('returns the same string when nothing needs replacing', () => {
    const text = 'nothing to replace';
    expect(toStorableText(text)).toBe(text);
  });
});

describe(toStorableJson.name, () => {
  it('cleans every string of a JSON value, keys included, at any depth', () => {
    const dirty = { 'k\u0000': ['\ud800', { deep: 'x\u0000' }], n: 1, b: true, nil: null };
    expect(toStorableJson(dirty)).toEqual({ 'k\ufffd': ['\ufffd', { deep: 'x\ufffd' }], n: 1, b: true, nil: null });
  });

  it('returns the very same value when it is clean (no copy of a big tool output)', () => {
    const clean = [{ tool: 'skills.activate', args: { name: 'pdf' }, output: 'x'.repeat(1000) }];
    expect(toStorableJson(clean)).toBe(clean);
  });

  it('survives the JSON round trip PostgreSQL jsonb would refuse', () => {
    const stored = JSON.parse(JSON.stringify(toStorableJson({ a: '\u0000\ud800' })));
    expect(JSON.stringify(stored)).not.toMatch(/\\u0000|\\ud800/i);
  });
});
