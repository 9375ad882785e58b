import { describe, expect, it } from '@jest/globals';
import { type AllowedToolRule, checkScriptAllowed, parseAllowedTools } from './allowed-tools.js';
import type { ScriptInvocation } from './command-line.js';

const echo = (args: string[] = ['a']): ScriptInvocation => ({ interpreter: 'sh', scriptPath: 'scripts/echo.sh', args });

function rulesOf(value: unknown): AllowedToolRule[] {
  return parseAllowedTools(value).rules;
}

function permitted(allowedTools: unknown, invocation: ScriptInvocation = echo()): boolean {
  return checkScriptAllowed(rulesOf(allowedTools), invocation).allowed;
}

describe(parseAllowedTools.name, () => {
  it('parses the specification’s example', () => {
    const sut = parseAllowedTools('Bash(git:*) Bash(jq:*) Read');
    expect(sut.problems).toEqual([]);
    expect(sut.rules).toEqual([
      { raw: 'Bash(git:*)', tool: 'Bash', specifier: 'git:*', bash: { kind: 'prefix', words: ['git'] } },
      { raw: 'Bash(jq:*)', tool: 'Bash', specifier: 'jq:*', bash: { kind: 'prefix', words: ['jq'] } },
      { raw: 'Read', tool: 'Read', specifier: null },
    ]);
  });

  it('separates entries by any whitespace or commas, but not inside parentheses', () => {
    expect(rulesOf(' Read,Grep ,\tGlob\n\nBash(python3 scripts/x.py:*) ,, ').map((rule) => rule.raw)).toEqual([
      'Read',
      'Grep',
      'Glob',
      'Bash(python3 scripts/x.py:*)',
    ]);
    expect(rulesOf(`Bash(jq -r '.a, .b':*)`)[0].bash).toEqual({ kind: 'prefix', words: ['jq', '-r', '.a, .b'] });
  });

  it('reads Bash alone and Bash(*) as any command', () => {
    expect(rulesOf('Bash Bash(*) Bash( * )').map((rule) => rule.bash)).toEqual([
      { kind: 'any' },
      { kind: 'any' },
      { kind: 'any' },
    ]);
  });

  it('reads a command without :* as exact, and :* or a trailing lone * as any arguments', () => {
    expect(rulesOf('Bash(./scripts/echo.sh)')[0].bash).toEqual({ kind: 'exact', words: ['./scripts/echo.sh'] });
    expect(rulesOf('Bash(./scripts/echo.sh a)')[0].bash).toEqual({ kind: 'exact', words: ['./scripts/echo.sh', 'a'] });
    expect(rulesOf('Bash(git log:*)')[0].bash).toEqual({ kind: 'prefix', words: ['git', 'log'] });
    expect(rulesOf('Bash(git log *)')[0].bash).toEqual({ kind: 'prefix', words: ['git', 'log'] });
  });

  it('keeps parentheses and quotes inside a specifier', () => {
    expect(rulesOf('Bash(echo (a) b)')[0].bash).toEqual({ kind: 'exact', words: ['echo', '(a)', 'b'] });
    expect(rulesOf('Bash(echo ")")')[0].bash).toEqual({ kind: 'exact', words: ['echo', ')'] });
    expect(rulesOf(`Bash(echo '(' \\))`)[0].bash).toEqual({ kind: 'exact', words: ['echo', '(', ')'] });
    expect(rulesOf('Bash(python3 "my script.py":*)')[0].bash).toEqual({
      kind: 'prefix',
      words: ['python3', 'my script.py'],
    });
    expect(rulesOf(`Bash(echo '*')`)[0].bash).toEqual({ kind: 'exact', words: ['echo', '*'] });
  });

  it('keeps other tools with their specifiers, which permit no commands', () => {
    expect(rulesOf('Read(./docs/**) mcp__github__create_issue WebFetch(domain:example.com)')).toEqual([
      { raw: 'Read(./docs/**)', tool: 'Read', specifier: './docs/**' },
      { raw: 'mcp__github__create_issue', tool: 'mcp__github__create_issue', specifier: null },
      { raw: 'WebFetch(domain:example.com)', tool: 'WebFetch', specifier: 'domain:example.com' },
    ]);
  });

  it.each([
    ['Bash(python3 scripts/*.py)', "has a '*' inside the command"],
    ['Bash(git * main)', "has a '*' inside the command"],
    ['Bash(*:*)', "has a '*' inside the command"],
    ['Bash(py*:*)', "has a '*' inside the command"],
    ['Bash()', 'is empty'],
    ['Bash(   )', 'is empty'],
    ['Bash(:*)', "has no command before ':*'"],
    ['Bash(echo "open)', 'is missing its closing'],
    [`Bash(echo 'x\\)`, 'is missing its closing'],
    ['Bash(git:*', "is missing its closing ')'"],
    ['Bash(echo \\', "is missing its closing ')'"],
    ['Bash(ls)x', "has text after its closing ')'"],
    ['Bash(a)(b)', "has text after its closing ')'"],
    ['Read)', "has a ')' without its '('"],
    ['(git:*)', 'does not start with a tool name'],
    ['123', 'does not start with a tool name'],
    ['Bash-(x', 'is missing its closing'],
    ['Bäsh(ls)', 'does not start with a tool name'],
  ])('drops %j with a problem (%s), permitting nothing', (value, problem) => {
    const sut = parseAllowedTools(value);
    expect(sut.rules.filter((rule) => rule.bash)).toEqual([]);
    expect(sut.problems).toEqual([expect.stringContaining(problem)]);
    expect(sut.problems[0]).toMatch(/ignored$/);
  });

  it('costs one entry per typo: the entries around it still parse', () => {
    const sut = parseAllowedTools('Read Bash(ls)x Grep Bash(a)(b) Glob');
    expect(sut.rules.map((rule) => rule.raw)).toEqual(['Read', 'Grep', 'Glob']);
    expect(sut.problems).toHaveLength(2);
    expect(parseAllowedTools('Read Bash(git:*').rules.map((rule) => rule.raw)).toEqual(['Read']);
  });

  it('treats tool names as case-sensitive and says so', () => {
    const sut = parseAllowedTools('bash(python3:*) BASH');
    expect(sut.rules.map((rule) => [rule.tool, rule.bash])).toEqual([
      ['bash', undefined],
      ['BASH', undefined],
    ]);
    expect(sut.problems).toEqual([
      expect.stringContaining("names the tool 'bash', which is not 'Bash'"),
      expect.stringContaining("names the tool 'BASH'"),
    ]);
  });

  it('accepts a YAML list of entries, and reports what in it is not a string', () => {
    const sut = parseAllowedTools(['Bash(git:*)', 'Read Grep', 42, null, ['nested']]);
    expect(sut.rules.map((rule) => rule.raw)).toEqual(['Bash(git:*)', 'Read', 'Grep']);
    expect(sut.problems).toEqual([
      "allowed-tools entry 3 must be a string such as 'Bash(python3:*)', not the number 42; it was ignored",
      "allowed-tools entry 4 must be a string such as 'Bash(python3:*)', not null; it was ignored",
      "allowed-tools entry 5 must be a string such as 'Bash(python3:*)', not a list; it was ignored",
    ]);
  });

  it.each([
    [42, 'the number 42'],
    [true, 'the boolean true'],
    [{ Bash: 'git' }, 'a mapping'],
  ])('refuses the non-string value %j', (value, described) => {
    expect(parseAllowedTools(value)).toEqual({
      rules: [],
      problems: [`allowed-tools must be a space-separated string such as 'Bash(python3:*) Read', not ${described}`],
    });
  });

  it.each([[undefined], [null], [''], ['  \n\t '], [[]], [',,,']])('reads %j as no rules and no problems', (value) => {
    expect(parseAllowedTools(value)).toEqual({ rules: [], problems: [] });
  });

  // No clock is read (a synchronous test cannot time out): a parse quadratic in the entries would
  // not finish at all on a million of them, so the run would hang rather than pass.
  it('parses 1 000 000 entries', () => {
    const value = Array.from({ length: 1_000_000 }, (_, i) => `Bash(tool${i}:*)`).join(' ');
    const sut = parseAllowedTools(value);
    expect(sut.rules).toHaveLength(1_000_000);
    expect(checkScriptAllowed(sut.rules, { interpreter: 'tool999999', scriptPath: 'x', args: [] })).toEqual({
      allowed: true,
      matched: 'Bash(tool999999:*)',
    });
  });

  it('survives 100 000 open parentheses without recursion', () => {
    const sut = parseAllowedTools(`Bash${'('.repeat(100_000)}`);
    expect(sut.rules).toEqual([]);
    expect(sut.problems).toHaveLength(1);
  });
});

describe(checkScriptAllowed.name, () => {
  it('permits by interpreter: Bash(sh:*) for any sh script, with any arguments', () => {
    expect(checkScriptAllowed(rulesOf('Read Bash(sh:*)'), echo(['a', 'b c']))).toEqual({
      allowed: true,
      matched: 'Bash(sh:*)',
    });
    expect(permitted('Bash(sh:*)', echo([]))).toBe(true);
  });

  it('permits by script: Bash(./scripts/echo.sh:*) whatever the interpreter, with or without ./', () => {
    expect(permitted('Bash(./scripts/echo.sh:*)')).toBe(true);
    expect(permitted('Bash(scripts/echo.sh:*)')).toBe(true);
    expect(permitted('Bash(./scripts//echo.sh:*)')).toBe(true);
    expect(permitted('Bash(./scripts/../scripts/echo.sh:*)')).toBe(true);
    expect(permitted('Bash(sh scripts/echo.sh:*)')).toBe(true);
    expect(permitted('Bash(sh ./scripts/echo.sh:*)')).toBe(true);
  });

  it('does not take a bare file name as a path when run directly, as a shell would not', () => {
    const atRoot: ScriptInvocation = { interpreter: 'sh', scriptPath: 'echo.sh', args: [] };
    expect(permitted('Bash(echo.sh)', atRoot)).toBe(false);
    expect(permitted('Bash(./echo.sh)', atRoot)).toBe(true);
    expect(permitted('Bash(sh echo.sh)', atRoot)).toBe(true);
  });

  it('matches an exact rule only without arguments, or with exactly the arguments it names', () => {
    expect(permitted('Bash(./scripts/echo.sh)', echo([]))).toBe(true);
    expect(permitted('Bash(./scripts/echo.sh)', echo(['a']))).toBe(false);
    expect(permitted('Bash(./scripts/echo.sh a)', echo(['a']))).toBe(true);
    expect(permitted('Bash(./scripts/echo.sh a)', echo(['a', 'b']))).toBe(false);
    expect(permitted('Bash(./scripts/echo.sh "a b")', echo(['a b']))).toBe(true);
    expect(permitted('Bash(./scripts/echo.sh "a b")', echo(['a', 'b']))).toBe(false);
  });

  it('compares whole words, so a prefix cannot be stretched into a longer name or argument', () => {
    expect(permitted('Bash(s:*)')).toBe(false);
    expect(permitted('Bash(python:*)', { interpreter: 'python3', scriptPath: 'x.py', args: [] })).toBe(false);
    expect(permitted('Bash(./scripts/echo:*)')).toBe(false);
    expect(permitted('Bash(./scripts/echo.sh --safe:*)', echo(['--safe; rm -rf /']))).toBe(false);
    expect(permitted('Bash(./scripts/echo.sh --safe:*)', echo(['--safe', 'x']))).toBe(true);
  });

  it('accepts the interpreter by its system paths, not by any path ending in its name', () => {
    expect(permitted('Bash(/bin/sh:*)')).toBe(true);
    expect(permitted('Bash(/usr/bin/sh:*)')).toBe(true);
    expect(permitted('Bash(/opt/evil/sh:*)')).toBe(false);
    expect(permitted('Bash(/skill/scripts/echo.sh:*)')).toBe(false);
  });

  it('permits a script whose name starts with a dash by its ./ form', () => {
    const dash: ScriptInvocation = { interpreter: 'sh', scriptPath: '-x.sh', args: [] };
    expect(permitted('Bash(sh ./-x.sh)', dash)).toBe(true);
    expect(permitted('Bash(./-x.sh)', dash)).toBe(true);
    expect(checkScriptAllowed([], dash)).toMatchObject({ needed: 'Bash(sh:*) or Bash(./-x.sh:*)' });
  });

  it('does not let a rule for one script permit another, or a path outside', () => {
    expect(permitted('Bash(./scripts/other.sh:*)')).toBe(false);
    expect(permitted('Bash(../tool/scripts/echo.sh:*)')).toBe(false);
    expect(permitted('Bash(python3:*)')).toBe(false);
  });

  it('permits anything with Bash or Bash(*)', () => {
    expect(checkScriptAllowed(rulesOf('Bash'), echo())).toEqual({ allowed: true, matched: 'Bash' });
    expect(checkScriptAllowed(rulesOf('Read Bash(*)'), echo())).toEqual({ allowed: true, matched: 'Bash(*)' });
  });

  it('refuses with no rules or no Bash rules, saying what to add', () => {
    const needed = 'Bash(sh:*) or Bash(./scripts/echo.sh:*)';
    expect(checkScriptAllowed([], echo())).toEqual({
      allowed: false,
      needed,
      reason:
        `The skill's allowed-tools permit no Bash commands, so 'sh scripts/echo.sh a' or './scripts/echo.sh a' ` +
        `may not run; add ${needed} to its allowed-tools.`,
    });
    expect(checkScriptAllowed(rulesOf('Read bash(sh:*)'), echo()).allowed).toBe(false);
  });

  it('names the rules it tried, at most five', () => {
    const sut = checkScriptAllowed(
      rulesOf('Bash(a:*) Bash(b:*) Bash(c:*) Bash(d:*) Bash(e:*) Bash(f:*) Bash(g:*) Read'),
      echo(),
    );
    expect(sut.allowed ? '' : sut.reason).toBe(
      "None of the skill's allowed-tools (Bash(a:*), Bash(b:*), Bash(c:*), Bash(d:*), Bash(e:*) and 2 more) " +
        "permit 'sh scripts/echo.sh a' or './scripts/echo.sh a'; add Bash(sh:*) or Bash(./scripts/echo.sh:*) to " +
        'its allowed-tools.',
    );
  });

  it('quotes odd script paths in `needed` so that what it suggests, once added, permits the script', () => {
    const odd: ScriptInvocation = { interpreter: '/usr/bin/python3', scriptPath: "scripts/my tool's.py", args: ['x'] };
    const sut = checkScriptAllowed([], odd);
    expect(sut.allowed ? '' : sut.needed).toBe(`Bash(python3:*) or Bash('./scripts/my tool'\\''s.py':*)`);
    const scriptRule = (sut.allowed ? '' : sut.needed).split(' or ')[1];
    expect(checkScriptAllowed(rulesOf(scriptRule), odd)).toEqual({ allowed: true, matched: scriptRule });
  });
});
