import { describe, expect, it } from '@jest/globals';
import { escapeXml, renderCatalogue } from './catalogue-renderer.js';

const entries = [
  { name: 'zeta', description: 'Last one.', location: '/s/zeta/SKILL.md' },
  { name: 'alpha', description: 'Tom & Jerry <say> "hi" it\'s', location: '/s/alpha/SKILL.md' },
];

describe(renderCatalogue.name, () => {
  it('renders json exactly as available_skills with name and description, sorted by name', () => {
    expect(renderCatalogue(entries, 'json', false)).toBe(
      '{"available_skills":[{"name":"alpha","description":"Tom & Jerry <say> \\"hi\\" it\'s"},{"name":"zeta","description":"Last one."}]}',
    );
  });

  it('adds locations to json only when asked', () => {
    expect(JSON.parse(renderCatalogue(entries, 'json', true)).available_skills[0]).toEqual({
      name: 'alpha',
      description: 'Tom & Jerry <say> "hi" it\'s',
      location: '/s/alpha/SKILL.md',
    });
  });

  it('renders the specification xml with every special character escaped', () => {
    expect(renderCatalogue(entries, 'xml', true)).toBe(
      [
        '<available_skills>',
        '<skill>',
        '<name>alpha</name>',
        '<description>Tom &amp; Jerry &lt;say&gt; &quot;hi&quot; it&apos;s</description>',
        '<location>/s/alpha/SKILL.md</location>',
        '</skill>',
        '<skill>',
        '<name>zeta</name>',
        '<description>Last one.</description>',
        '<location>/s/zeta/SKILL.md</location>',
        '</skill>',
        '</available_skills>',
      ].join('\n'),
    );
    expect(renderCatalogue(entries, 'xml', false)).not.toContain('<location>');
  });

  it('renders markdown as one line per skill', () => {
    expect(renderCatalogue([{ name: 'a', description: 'Line one.\n  Line two.\n' }, ...entries], 'markdown', false)).toBe(
      '- a: Line one. Line two.\n- alpha: Tom & Jerry <say> "hi" it\'s\n- zeta: Last one.',
    );
  });

  it("renders markdown with locations as the aloop design's lines: `- name: description (file: path)`", () => {
    expect(renderCatalogue(entries, 'markdown', true)).toBe('- alpha: Tom & Jerry <say> "hi" it\'s (file: /s/alpha/SKILL.md)\n- zeta: Last one. (file: /s/zeta/SKILL.md)');
    // A line break in a path would end the list item early.
    expect(renderCatalogue([{ name: 'n', description: 'd', location: '/s/odd\nname/SKILL.md' }], 'markdown', true)).toBe('- n: d (file: /s/odd name/SKILL.md)');
  });

  it('renders nothing at all when there are no skills', () => {
    for (const format of ['json', 'xml', 'markdown'] as const) expect(renderCatalogue([], format, true)).toBe('');
  });
});

describe(escapeXml.name, () => {
  it('escapes the five XML specials and nothing else', () => {
    expect(escapeXml(`&<>"' ü`)).toBe('&amp;&lt;&gt;&quot;&apos; ü');
  });
});
