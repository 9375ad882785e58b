import { describe, expect, it } from '@jest/globals';
import { CHAT_TITLE_MAX_CHARACTERS, chatTitleFrom } from './chat-title.js';

const graphemes = (text: string) =>
  [...new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text)].length;

describe(chatTitleFrom.name, () => {
  it('keeps a short message as it is', () => {
    expect(chatTitleFrom('Summarise the Q3 report')).toBe('Summarise the Q3 report');
  });

  it('makes one line of a multi-line message, collapsing every run of white space', () => {
    expect(chatTitleFrom('  first line\r\n\n\tsecond\u00a0\u3000line  \u2028third ')).toBe(
      'first line second line third',
    );
  });

  it('cuts a long message at a word boundary, with an ellipsis, within the limit', () => {
    const sut = chatTitleFrom(
      'Please read the attached quarterly report and write a short summary of the main risks for the board',
    );
    expect(sut).toBe('Please read the attached quarterly report and write a short…');
    expect(graphemes(sut!)).toBeLessThanOrEqual(CHAT_TITLE_MAX_CHARACTERS);
  });

  it('keeps a message of exactly the limit whole, and cuts one character more', () => {
    const exact = `${'word '.repeat(11)}abcde`;
    expect(exact.length).toBe(CHAT_TITLE_MAX_CHARACTERS);
    expect(chatTitleFrom(exact)).toBe(exact);
    expect(chatTitleFrom(`${exact}f`)).toBe(`${'word '.repeat(11).trim()}…`);
  });

  it('cuts a long word (a URL, a language without spaces) where the room ends', () => {
    const url = `https://example.com/${'a'.repeat(200)}`;
    expect(chatTitleFrom(`see ${url}`)).toBe(`see ${url.slice(0, CHAT_TITLE_MAX_CHARACTERS - 5)}…`);
    const japanese = '日本語の長い文章'.repeat(20);
    expect(chatTitleFrom(japanese)).toBe(`${japanese.slice(0, CHAT_TITLE_MAX_CHARACTERS - 1)}…`);
  });

  it('never cuts an emoji or a letter with its accent apart', () => {
    const family = '👨‍👩‍👧';
    const sut = chatTitleFrom(family.repeat(100))!;
    expect(sut).toBe(`${family.repeat(CHAT_TITLE_MAX_CHARACTERS - 1)}…`);
    expect(Buffer.from(sut).toString()).toBe(sut); // no lone surrogate
    expect(chatTitleFrom('e\u0301'.repeat(100))).toBe(`${'e\u0301'.repeat(CHAT_TITLE_MAX_CHARACTERS - 1)}…`);
  });

  it('drops trailing punctuation before the ellipsis', () => {
    expect(chatTitleFrom(`${'a'.repeat(40)} ${'b'.repeat(10)}, ${'c'.repeat(30)}`)).toBe(
      `${'a'.repeat(40)} ${'b'.repeat(10)}…`,
    );
  });

  it('removes invisible direction controls and control characters', () => {
    expect(chatTitleFrom('invoice \u202Eexe.pdf\u202C\u0007 now')).toBe('invoice exe.pdf now');
  });

  it('keeps an invocation as typed', () => {
    expect(chatTitleFrom('/pdf fill the form')).toBe('/pdf fill the form');
  });

  it('gives no title for a message of white space only', () => {
    expect(chatTitleFrom(' \n\t\u00a0')).toBeNull();
  });

  it('reads only the start of a long message, after any white space, never splitting an emoji', () => {
    expect(chatTitleFrom(`${' \n'.repeat(50_000)}Plan the release`)).toBe('Plan the release');
    const words = 'word '.repeat(20_000);
    expect(chatTitleFrom(words)).toBe(chatTitleFrom(words.slice(0, 200)));
    expect(chatTitleFrom(`${'a'.repeat(4095)}😀`)).toBe(`${'a'.repeat(59)}…`);
    expect(chatTitleFrom(`${'😀'.repeat(3000)}`)).toBe(`${'😀'.repeat(59)}…`);
  });
});
