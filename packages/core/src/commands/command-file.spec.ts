import { describe, expect, it } from '@jest/globals';
import { type CommandFileVerdict, expandTemplate, parseCommandFile } from './command-file.js';

/** The text of a command file: `fields` are frontmatter lines as written. */
function commandFile(fields: string[] = ['description: Reviews a pull request.'], body = 'Review PR $1.'): string {
  return ['---', ...fields, '---', '', body].join('\n');
}

function errorsOf(verdict: CommandFileVerdict): string[] {
  if (verdict.ok) throw new Error(`expected errors, got ${JSON.stringify(verdict.command)}`);
  return verdict.errors;
}

function commandOf(verdict: CommandFileVerdict) {
  if (!verdict.ok) throw new Error(`expected a command, got ${JSON.stringify(verdict.errors)}`);
  return verdict.command;
}

describe(parseCommandFile.name, () => {
  it('reads description, requires-skills, argument-hint and the template after the frontmatter', () => {
    const sut = parseCommandFile(
      'review-pr',
      commandFile(
        [
          'description: Reviews a pull request.',
          'requires-skills: [code-review, git-commit]',
          'argument-hint: "<pr-number> [focus]"',
        ],
        '# Review\n\nReview PR $1, focusing on $2.\n\n',
      ),
    );
    expect(sut).toEqual({
      ok: true,
      command: {
        description: 'Reviews a pull request.',
        argumentHint: '<pr-number> [focus]',
        requiredSkills: ['code-review', 'git-commit'],
        template: '# Review\n\nReview PR $1, focusing on $2.',
        warnings: [],
      },
    });
  });

  it('leaves out what is optional: no skills, no hint', () => {
    expect(commandOf(parseCommandFile('x', commandFile()))).toMatchObject({ requiredSkills: [], argumentHint: null });
    expect(
      commandOf(parseCommandFile('x', commandFile(['description: d', 'requires-skills:', 'argument-hint: ""']))),
    ).toMatchObject({ requiredSkills: [], argumentHint: null });
  });

  it.each([
    ['a', true],
    ['review-pr', true],
    ['review_pr', true],
    ['v2-fix_up', true],
    ['a'.repeat(64), true],
    ['Review', false],
    ['-review', false],
    ['review-', false],
    ['re--view', false],
    ['re-_view', false],
    ['re.view', false],
    ['ré', false],
    ['', false],
  ])('the name %p (from the file name) is valid: %p', (name, valid) => {
    const verdict = parseCommandFile(name, commandFile());
    expect(verdict.ok).toBe(valid);
    if (!valid)
      expect(errorsOf(verdict)).toEqual([
        expect.stringMatching(
          new RegExp(
            "^Command name '.*' \\(the file name without \\.md\\) may hold only lowercase letters " +
              'a-z and digits.*rename the file',
          ),
        ),
      ]);
  });

  it('refuses a name past 64 characters, saying how long it is', () => {
    expect(errorsOf(parseCommandFile('a'.repeat(65), commandFile()))).toEqual([
      `Command name '${'a'.repeat(65)}' is 65 characters; at most 64 are allowed: rename the file to a shorter name`,
    ]);
  });

  describe('description', () => {
    it.each([
      [[], "Missing required field 'description': add `description: <what the command does>` to the frontmatter"],
      [
        ['description:'],
        "Missing required field 'description': add `description: <what the command does>` to the frontmatter",
      ],
      [
        ['description: "  "'],
        "Field 'description' is empty: say what the command does, e.g. `description: Reviews a pull request`",
      ],
      [
        ['description: [a, b]'],
        "Field 'description' must be text, not a list or mapping: write `description: <what the command does>`",
      ],
      [
        ['description:', '  nested: value'],
        "Field 'description' must be text, not a list or mapping: write `description: <what the command does>`",
      ],
    ])('%j → %s', (fields, error) => {
      expect(errorsOf(parseCommandFile('x', commandFile(fields)))).toEqual([error]);
    });

    it('is trimmed and may be 1024 characters (counted in code points), not 1025', () => {
      expect(
        commandOf(parseCommandFile('x', commandFile([`description: "  ${'é'.repeat(1023)}😀  "`]))).description,
      ).toBe(`${'é'.repeat(1023)}😀`);
      expect(errorsOf(parseCommandFile('x', commandFile([`description: ${'d'.repeat(1025)}`])))).toEqual([
        "Field 'description' is 1025 characters; at most 1024 are allowed: shorten it, and move details into " +
          'the template',
      ]);
    });
  });

  describe('requires-skills', () => {
    it.each([
      ['a YAML flow list', 'requires-skills: [pdf, git-commit]', ['pdf', 'git-commit']],
      ['a YAML block list', 'requires-skills:\n  - pdf\n  - git-commit', ['pdf', 'git-commit']],
      ['names separated by spaces', 'requires-skills: pdf git-commit', ['pdf', 'git-commit']],
      [
        'names separated by commas and spaces',
        'requires-skills: "pdf,git-commit ,  code-review"',
        ['pdf', 'git-commit', 'code-review'],
      ],
      ['one name', 'requires-skills: pdf', ['pdf']],
      ['duplicates, dropped keeping the first', 'requires-skills: [b, a, b, "  a ", c]', ['b', 'a', 'c']],
    ])('accepts %s', (_, line, skills) => {
      expect(commandOf(parseCommandFile('x', commandFile(['description: d', line]))).requiredSkills).toEqual(skills);
    });

    it('accepts 20 names, counted after dropping duplicates, and refuses 21', () => {
      const twenty = Array.from({ length: 20 }, (_, i) => `s${i}`);
      expect(
        commandOf(
          parseCommandFile(
            'x',
            commandFile(['description: d', `requires-skills: [${[...twenty, 's0', 's1'].join(', ')}]`]),
          ),
        ).requiredSkills,
      ).toEqual(twenty);
      expect(
        errorsOf(
          parseCommandFile('x', commandFile(['description: d', `requires-skills: ${[...twenty, 'extra'].join(' ')}`])),
        ),
      ).toEqual([
        "Field 'requires-skills' names 21 skills; at most 20 are allowed: trim the list or split the command",
      ]);
    });

    it('refuses empty and non-text items, naming each, and a mapping', () => {
      expect(
        errorsOf(parseCommandFile('x', commandFile(['description: d', 'requires-skills: [pdf, "", [a], {k: v}]']))),
      ).toEqual([
        "Field 'requires-skills' item 2 must be a non-empty skill name, not an empty string: write e.g. " +
          '`requires-skills: [pdf, git-commit]`',
        "Field 'requires-skills' item 3 must be a non-empty skill name, not a list: write e.g. " +
          '`requires-skills: [pdf, git-commit]`',
        "Field 'requires-skills' item 4 must be a non-empty skill name, not a mapping: write e.g. " +
          '`requires-skills: [pdf, git-commit]`',
      ]);
      expect(
        errorsOf(parseCommandFile('x', commandFile(['description: d', 'requires-skills:', '  pdf: yes']))),
      ).toEqual([
        "Field 'requires-skills' must be a list of skill names: write e.g. `requires-skills: [pdf, git-commit]` " +
          'or `requires-skills: pdf git-commit`',
      ]);
    });
  });

  describe('argument-hint', () => {
    it('is trimmed text of at most 200 characters', () => {
      expect(
        commandOf(parseCommandFile('x', commandFile(['description: d', `argument-hint: "${'h'.repeat(200)}"`])))
          .argumentHint,
      ).toBe('h'.repeat(200));
      expect(
        errorsOf(parseCommandFile('x', commandFile(['description: d', `argument-hint: ${'h'.repeat(201)}`]))),
      ).toEqual(["Field 'argument-hint' is 201 characters; at most 200 are allowed: shorten it"]);
    });

    it('explains that an unquoted [hint] is a YAML list', () => {
      expect(errorsOf(parseCommandFile('x', commandFile(['description: d', 'argument-hint: [pr-number]'])))).toEqual([
        "Field 'argument-hint' must be text, but YAML reads [ ] as a list: quote it, e.g. `argument-hint: " +
          '"[pr-number] [focus]"`',
      ]);
    });
  });

  it(
    'warns about unknown fields, suggesting the field meant, and about a name field that differs from the file ' +
      'name',
    () => {
      const sut = commandOf(
        parseCommandFile(
          'review',
          commandFile(['description: d', 'requires_skills: pdf', 'model: big', 'name: other']),
        ),
      );
      expect(sut.requiredSkills).toEqual([]);
      expect(sut.warnings).toEqual([
        "Unknown field 'requires_skills' is ignored (did you mean 'requires-skills'?); command files know " +
          'description, requires-skills, argument-hint',
        "Unknown field 'model' is ignored; command files know description, requires-skills, argument-hint",
        "Field 'name' is ignored: a command is named by its file, so this one is /review; rename the file to change it",
      ]);
      expect(commandOf(parseCommandFile('review', commandFile(['description: d', 'name: review']))).warnings).toEqual(
        [],
      );
    },
  );

  it.each([
    [
      'no frontmatter',
      'Just a prompt $ARGUMENTS',
      'A command file must start with YAML frontmatter: a first line ---, fields such as `description: …`, then ' +
        'a line ---',
    ],
    [
      'an unclosed frontmatter',
      '---\ndescription: d\nbody',
      'The frontmatter is not closed: add a line that is exactly --- after its last field',
    ],
    [
      'an empty file',
      '',
      'A command file must start with YAML frontmatter: a first line ---, fields such as `description: …`, then ' +
        'a line ---',
    ],
    [
      'a frontmatter that is a list',
      '---\n- a\n- b\n---\nbody',
      'The frontmatter must be a YAML mapping of fields, e.g. `description: Reviews a pull request`',
    ],
  ])('refuses %s', (_, text, error) => {
    expect(errorsOf(parseCommandFile('x', text))).toEqual([error]);
  });

  it('refuses bad YAML with its line, duplicate keys, and anchors', () => {
    expect(errorsOf(parseCommandFile('x', commandFile(['description: d', 'requires-skills: [oops'])))).toEqual([
      expect.stringMatching(/^Invalid YAML in frontmatter: .*\(line \d+, column \d+\)$/),
    ]);
    expect(errorsOf(parseCommandFile('x', commandFile(['description: a', 'description: b'])))).toEqual([
      expect.stringMatching(/^Invalid YAML in frontmatter: duplicated mapping key/),
    ]);
    expect(errorsOf(parseCommandFile('x', commandFile(['description: &a d', 'argument-hint: *a'])))).toEqual([
      expect.stringMatching(/anchors and aliases are not allowed/),
    ]);
  });

  it('refuses an empty template (whitespace only counts as empty)', () => {
    expect(errorsOf(parseCommandFile('x', commandFile(undefined, '  \n\t\n')))).toEqual([
      'The file has no prompt template after its frontmatter; write the prompt below the closing ---',
    ]);
  });

  it('reports every problem at once: name, fields and template', () => {
    expect(errorsOf(parseCommandFile('Bad', commandFile(['argument-hint: [x]'], '')))).toEqual([
      expect.stringMatching(/^Command name 'Bad'/),
      "Missing required field 'description': add `description: <what the command does>` to the frontmatter",
      expect.stringMatching(/^Field 'argument-hint' must be text/),
      'The file has no prompt template after its frontmatter; write the prompt below the closing ---',
    ]);
  });

  it('refuses NUL bytes and unpaired surrogates, which no text file holds', () => {
    expect(errorsOf(parseCommandFile('x', commandFile(undefined, 'a\0b')))).toEqual([
      expect.stringMatching(
        /^The file contains a NUL byte \(at character \d+\); a command file must be plain UTF-8 text$/,
      ),
    ]);
    expect(
      errorsOf(parseCommandFile('x', commandFile(['description: \ud800']))).filter((e) => e.includes('surrogate')),
    ).toEqual(['The file contains an unpaired UTF-16 surrogate; a command file must be valid UTF-8 text']);
    expect(commandOf(parseCommandFile('x', commandFile(['description: emoji 😀'])))).toMatchObject({
      description: 'emoji 😀',
    });
  });

  it('accepts a BOM and CRLF line ends', () => {
    const sut = commandOf(parseCommandFile('x', '\ufeff---\r\ndescription: Windows file.\r\n---\r\nDo $1.\r\n'));
    expect(sut).toMatchObject({ description: 'Windows file.', template: 'Do $1.' });
  });

  it('keeps a --- inside the template as template text', () => {
    expect(commandOf(parseCommandFile('x', commandFile(undefined, 'One\n---\nTwo'))).template).toBe('One\n---\nTwo');
  });
});

describe(expandTemplate.name, () => {
  it('stops, answering undefined, once the result would pass maxChars', () => {
    // Unbounded, this would be 2.5 billion characters: past V8's longest string, a RangeError.
    const template = '$ARGUMENTS '.repeat(25_000);
    expect(expandTemplate(template, 'x'.repeat(100_000), 1_000_000)).toBeUndefined();
    expect(expandTemplate('[$ARGUMENTS][$1]', 'abc', 12)).toBe('[abc][abc]');
    expect(expandTemplate('[$ARGUMENTS][$1]', 'abcd', 11)).toBeUndefined();
  });

  it('puts the trimmed arguments in $ARGUMENTS, every time it appears', () => {
    expect(expandTemplate('Review: $ARGUMENTS. Again: $ARGUMENTS', '  42 security  ')).toBe(
      'Review: 42 security. Again: 42 security',
    );
  });

  it('puts the whitespace-separated words in $1…$9', () => {
    expect(expandTemplate('$1|$2|$3|$4|$5|$6|$7|$8|$9', 'a b\tc\nd  e f g h i j')).toBe('a|b|c|d|e|f|g|h|i');
  });

  it('leaves missing words and missing arguments empty', () => {
    expect(expandTemplate('PR $1 focus [$2] all [$ARGUMENTS]', '42')).toBe('PR 42 focus [] all [42]');
    expect(expandTemplate('[$1][$ARGUMENTS]', '   ')).toBe('[][]');
    expect(expandTemplate('[$1][$ARGUMENTS]', '')).toBe('[][]');
  });

  it('reads $10 as $1 followed by 0', () => {
    expect(expandTemplate('$10', 'x y z')).toBe('x0');
  });

  it('turns $$ into a literal $, so $$1 is "$1" as written', () => {
    expect(expandTemplate('costs $$5, see $$1 and $$ARGUMENTS, $$$1', 'a')).toBe('costs $5, see $1 and $ARGUMENTS, $a');
  });

  it('leaves every other $ alone', () => {
    expect(expandTemplate('$0 $HOME ${x} $ $arguments $A end$', 'a')).toBe('$0 $HOME ${x} $ $arguments $A end$');
  });

  it('never expands what the arguments bring in (one pass), nor reads replacement patterns in them', () => {
    expect(expandTemplate('[$ARGUMENTS] [$1] [$2]', '$2 $& $ARGUMENTS')).toBe('[$2 $& $ARGUMENTS] [$2] [$&]');
    expect(expandTemplate('[$1] [$2]', "$' $`")).toBe("[$'] [$`]");
  });

  it('splits on Unicode whitespace and keeps non-ASCII words whole', () => {
    expect(expandTemplate('$1/$2/$3', 'größe\u00a0日本語\u3000😀')).toBe('größe/日本語/😀');
  });

  it('leaves a template without placeholders unchanged (the arguments are not appended)', () => {
    expect(expandTemplate('Summarise the chat.', 'ignored')).toBe('Summarise the chat.');
  });
});
