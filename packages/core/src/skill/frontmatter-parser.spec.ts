import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import yaml from 'js-yaml';
import { corpusPath, findSkillFiles } from '../../../../test/support/files/corpus.js';
import { NOT_A_MAPPING, parseFrontmatterYaml, parseSimpleFrontmatter } from './frontmatter-parser.js';
import { locateFrontmatter } from './frontmatter-reader.js';

describe(parseFrontmatterYaml.name, () => {
  it('reads every scalar as a string, as the reference validator does', () => {
    const parsed = parseFrontmatterYaml('name: 123\nversion: 1.0\nflag: true\nnothing: null\n');
    expect(parsed).toEqual({
      ok: true,
      data: { name: '123', version: '1.0', flag: 'true', nothing: 'null' },
      warnings: [],
    });
  });

  it('reads scalars as strings on the js-yaml path too', () => {
    const parsed = parseFrontmatterYaml('name: 123\nmetadata: {version: 1.0, n: 2}\nlist: [1, true]\n');
    expect(parsed).toEqual({
      ok: true,
      data: { name: '123', metadata: { version: '1.0', n: '2' }, list: ['1', 'true'] },
      warnings: [],
    });
  });

  it('reads block scalars and quoted strings', () => {
    const parsed = parseFrontmatterYaml('name: a\ndescription: >\n  Folded\n  text\nquote: "a \\"b\\""\n');
    expect(parsed).toMatchObject({ ok: true, data: { name: 'a', description: 'Folded text\n', quote: 'a "b"' } });
  });

  it('rejects anchors and aliases', () => {
    expect(parseFrontmatterYaml('a: &x hello\nb: *x\n')).toEqual({
      ok: false,
      error: 'Invalid YAML in frontmatter: anchors and aliases are not allowed (line 2)',
    });
    expect(parseFrontmatterYaml('b: *x\n')).toMatchObject({
      ok: false,
      error: expect.stringContaining('Invalid YAML in frontmatter: unidentified alias'),
    });
  });

  it('rejects an alias bomb quickly and with a clear error', () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      ...'bcdefghij'
        .split('')
        .map((k, i) => `${k}: &${k} [*${'abcdefghij'[i]},*${'abcdefghij'[i]},*${'abcdefghij'[i]},*${'abcdefghij'[i]}]`),
    ].join('\n');
    expect(parseFrontmatterYaml(bomb)).toMatchObject({
      ok: false,
      error: expect.stringContaining('anchors and aliases are not allowed'),
    });
  });

  it('rejects duplicate keys, naming the line in the SKILL.md', () => {
    expect(parseFrontmatterYaml('name: a\nname: b\n')).toEqual({
      ok: false,
      error: 'Invalid YAML in frontmatter: duplicated mapping key (line 3, column 1)',
    });
  });

  it('rejects a top level that is not a mapping', () => {
    expect(parseFrontmatterYaml('- a\n- b\n')).toEqual({ ok: false, error: NOT_A_MAPPING });
    expect(parseFrontmatterYaml('just text\n')).toEqual({ ok: false, error: NOT_A_MAPPING });
    expect(parseFrontmatterYaml('')).toEqual({ ok: false, error: NOT_A_MAPPING });
  });

  it('reports unparseable YAML with the reference prefix', () => {
    expect(parseFrontmatterYaml('name: a\ndescription: Use when: you need it\n')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^Invalid YAML in frontmatter: bad indentation of a mapping entry/),
    });
  });

  it('bounds nesting depth instead of recursing without limit', () => {
    const deep = `a: ${'['.repeat(5000)}${']'.repeat(5000)}\n`;
    expect(parseFrontmatterYaml(deep)).toMatchObject({
      ok: false,
      error: expect.stringContaining('Invalid YAML in frontmatter'),
    });
  });

  it('in lenient mode retries an unquoted colon as a quoted string, with a warning', () => {
    expect(parseFrontmatterYaml('name: a\ndescription: Use when: you need "it"\n', { lenient: true })).toEqual({
      ok: true,
      data: { name: 'a', description: 'Use when: you need "it"' },
      warnings: [
        'Unquoted colon in frontmatter field(s) description; read as a quoted string (quote the value to silence this)',
      ],
    });
  });

  it('in lenient mode still fails YAML that quoting cannot repair', () => {
    expect(parseFrontmatterYaml('name: [a\n', { lenient: true })).toMatchObject({ ok: false });
  });
});

describe(parseSimpleFrontmatter.name, () => {
  it('handles flat lines, quotes, nested metadata and comments', () => {
    expect(
      parseSimpleFrontmatter(
        "# comment\nname: a\ndescription: 'It''s here'\nmetadata:\n  author: me\n  version: \"1.0\"\nlicense:\n",
      ),
    ).toEqual({
      name: 'a',
      description: "It's here",
      metadata: { author: 'me', version: '1.0' },
      license: null,
    });
  });

  it.each([
    ['a block scalar', 'description: |\n  text\n'],
    ['a continuation line', 'description: one\n  two\n'],
    ['an inline comment', 'description: x # y\n'],
    ['a colon-space in a value', 'description: a: b\n'],
    ['escapes in double quotes', 'description: "a\\tb"\n'],
    ['an anchor', 'description: &a x\n'],
    ['a flow collection', 'tags: [a, b]\n'],
    ['a duplicate key', 'a: 1\na: 2\n'],
    ['a tab', 'a:\tb\n'],
    ['a __proto__ key', '__proto__: x\n'],
  ])('leaves %s to js-yaml', (_, text) => {
    expect(parseSimpleFrontmatter(text)).toBeUndefined();
  });

  it('agrees with js-yaml on random frontmatter built from YAML-significant pieces', () => {
    // A fixed-seed generator, so a failure is reproducible.
    let seed = 42;
    const random = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 16) % n;
    };
    const keys = ['name', 'description', 'a', 'b-c', 'x_y', '9', 'metadata'];
    const values = [
      '',
      ' ',
      'x',
      'a b',
      "'q'",
      "'it''s'",
      '"d"',
      '"a\\b"',
      'a: b',
      'a #c',
      'a#b',
      '- x',
      '[1]',
      '{a: 1}',
      '&x y',
      '*y',
      '|',
      '>',
      'ü ✓',
      'a:',
      'x\ty',
      '~',
      'null',
      '1.0',
      "'a'b'",
      '"',
    ];
    const lines = () => {
      const out: string[] = [];
      for (let i = 0, n = 1 + random(4); i < n; i++) {
        const kind = random(10);
        if (kind === 0) out.push('');
        else if (kind === 1) out.push('# comment');
        else if (kind === 2) out.push(`  ${keys[random(keys.length)]}: ${values[random(values.length)]}`);
        else if (kind === 3) out.push(`    ${values[random(values.length)]}`);
        else out.push(`${keys[random(keys.length)]}:${random(4) === 0 ? '' : ' '}${values[random(values.length)]}`);
      }
      return out.join(random(5) === 0 ? '\r\n' : '\n');
    };
    let compared = 0;
    for (let i = 0; i < 50000; i++) {
      const text = lines();
      const fast = parseSimpleFrontmatter(text);
      if (fast === undefined) continue;
      compared++;
      expect({ text, data: fast }).toEqual({ text, data: yaml.load(text, { schema: yaml.FAILSAFE_SCHEMA }) });
    }
    expect(compared).toBeGreaterThan(1000);
  });

  it('agrees with js-yaml on every frontmatter of the real-world corpus it accepts', () => {
    let accepted = 0;
    const files = findSkillFiles(corpusPath());
    expect(files.length).toBeGreaterThan(2000);
    for (const file of files) {
      const bytes = readFileSync(file);
      const location = locateFrontmatter(bytes, bytes.length, true);
      if (location.kind !== 'found') continue;
      const text = bytes.toString('utf8', location.yamlStart, location.yamlEnd);
      const fast = parseSimpleFrontmatter(text);
      if (fast === undefined) continue;
      accepted++;
      expect({ file, data: fast }).toEqual({ file, data: yaml.load(text, { schema: yaml.FAILSAFE_SCHEMA }) });
    }
    // The fast path must actually carry most real files, or it is not worth having.
    expect(accepted / files.length).toBeGreaterThan(0.5);
  });
});
