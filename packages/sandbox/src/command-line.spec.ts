import { describe, expect, it } from '@jest/globals';
import { formatCommandLine, invocationForms, quoteWord, splitCommandWords } from './command-line.js';

function words(line: string): string[] {
  const result = splitCommandWords(line);
  if (!result.ok) throw new Error(result.problem);
  return result.words.map((word) => word.text);
}

describe(quoteWord.name, () => {
  it.each([
    ['plain', 'plain'],
    ['scripts/echo.sh', 'scripts/echo.sh'],
    ['--flag=a,b:c', '--flag=a,b:c'],
    ['a b', "'a b'"],
    ["it's", "'it'\\''s'"],
    ['', "''"],
    ['$(id)', "'$(id)'"],
    ['*', "'*'"],
    ['héllo', "'héllo'"],
    ['a\nb', "'a\nb'"],
  ])('quotes %j as %s', (word, quoted) => {
    expect(quoteWord(word)).toBe(quoted);
  });
});

describe(splitCommandWords.name, () => {
  it('splits on any whitespace and drops empty runs', () => {
    expect(words('  python3\tscripts/x.py \n a  ')).toEqual(['python3', 'scripts/x.py', 'a']);
    expect(words('')).toEqual([]);
    expect(words('   ')).toEqual([]);
  });

  it('reads single quotes literally, double quotes with escapes, and backslashes outside quotes', () => {
    expect(words(`'a b' "c \\"d\\" \\$e \\n" f\\ g 'h'"i"j ''`)).toEqual(['a b', 'c "d" $e \\n', 'f g', 'hij', '']);
  });

  it('expands nothing: $(...), backticks, globs and operators stay characters', () => {
    expect(words('echo $(id) `id` ; | && *.py ~')).toEqual(['echo', '$(id)', '`id`', ';', '|', '&&', '*.py', '~']);
  });

  it('marks unquoted stars only', () => {
    const result = splitCommandWords(`a* '*' "*" \\* b`);
    expect(result.ok && result.words.map((word) => word.unquotedStar)).toEqual([true, false, false, false, false]);
  });

  it.each([
    [`'open`, 'unterminated single quote'],
    [`"open`, 'unterminated double quote'],
    [`"a\\"`, 'unterminated double quote'],
    ['end\\', 'trailing backslash'],
  ])('refuses %j: %s', (line, problem) => {
    const result = splitCommandWords(line);
    expect(result.ok ? 'accepted' : result.problem).toContain(problem);
  });

  it('reads back what formatCommandLine wrote, for hostile words', () => {
    const hostile = [
      'a b',
      "it's",
      '"q"',
      '$(touch /tmp/x)',
      '`id`',
      '; rm -rf /',
      '*',
      '',
      '\\',
      'tab\there',
      'new\nline',
      "''",
      'ünï 🙂',
    ];
    expect(words(formatCommandLine(hostile))).toEqual(hostile);
  });
});

describe(invocationForms.name, () => {
  it('gives the interpreter form and the direct form, reducing an interpreter path to its name', () => {
    expect(invocationForms({ interpreter: '/usr/bin/python3', scriptPath: 'scripts/x.py', args: ['a b'] })).toEqual({
      viaInterpreter: ['python3', 'scripts/x.py', 'a b'],
      direct: ['./scripts/x.py', 'a b'],
    });
  });

  it('keeps ./ before a script whose name starts with a dash, so it cannot read as an option', () => {
    expect(invocationForms({ interpreter: 'sh', scriptPath: '-x.sh', args: [] }).viaInterpreter).toEqual([
      'sh',
      './-x.sh',
    ]);
  });
});
