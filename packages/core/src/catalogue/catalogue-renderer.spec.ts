import { describe, expect, it } from '@jest/globals';
import {
  catalogueFrame,
  escapeXml,
  renderCatalogue,
  renderEntry,
  renderListing,
  renderUnlisted,
} from './catalogue-renderer.js';

const entries = [
  { name: 'zeta', description: 'Last one.', location: '/s/zeta/SKILL.md' },
  { name: 'alpha', description: 'Tom & Jerry <say> "hi" it\'s', location: '/s/alpha/SKILL.md' },
];

describe(renderCatalogue.name, () => {
  it('renders json exactly as available_skills with name and description, sorted by name', () => {
    expect(renderCatalogue(entries, 'json', false)).toBe(
      '{"available_skills":[{"name":"alpha","description":"Tom & Jerry <say> \\"hi\\" ' +
        'it\'s"},{"name":"zeta","description":"Last one."}]}',
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
    expect(
      renderCatalogue([{ name: 'a', description: 'Line one.\n  Line two.\n' }, ...entries], 'markdown', false),
    ).toBe('- a: Line one. Line two.\n- alpha: Tom & Jerry <say> "hi" it\'s\n- zeta: Last one.');
  });

  it("renders markdown with locations as the aloop design's lines: `- name: description (file: path)`", () => {
    expect(renderCatalogue(entries, 'markdown', true)).toBe(
      '- alpha: Tom & Jerry <say> "hi" it\'s (file: /s/alpha/SKILL.md)\n- zeta: Last one. (file: /s/zeta/SKILL.md)',
    );
    // A line break in a path would end the list item early.
    expect(
      renderCatalogue([{ name: 'n', description: 'd', location: '/s/odd\nname/SKILL.md' }], 'markdown', true),
    ).toBe('- n: d (file: /s/odd name/SKILL.md)');
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

describe(renderListing.name, () => {
  const unlisted = { count: 7, note: 'Find the rest with <skills_search> & more.' };

  it('renders entries in the order given, unlike renderCatalogue', () => {
    expect(renderListing(entries, 'json', false)).toBe(
      '{"available_skills":[{"name":"zeta","description":"Last one."},{"name":"alpha","description":"Tom & ' +
        'Jerry <say> \\"hi\\" it\'s"}]}',
    );
  });

  it('without `unlisted` (or with a count of 0), renders what renderCatalogue renders for sorted entries', () => {
    const sorted = [...entries].reverse();
    for (const format of ['json', 'xml', 'markdown'] as const) {
      for (const includeLocation of [false, true]) {
        expect(renderListing(sorted, format, includeLocation)).toBe(renderCatalogue(entries, format, includeLocation));
        expect(renderListing(sorted, format, includeLocation, { count: 0, note: 'ignored' })).toBe(
          renderCatalogue(entries, format, includeLocation),
        );
      }
    }
  });

  it('json: ends with unlisted_skills, count and note, and parses', () => {
    const text = renderListing(entries, 'json', false, unlisted);
    expect(text).toBe(
      '{"available_skills":[{"name":"zeta","description":"Last one."},{"name":"alpha","description":"Tom & ' +
        'Jerry <say> \\"hi\\" it\'s"}],"unlisted_skills":{"count":7,"note":"Find the rest with <skills_search> & ' +
        'more."}}',
    );
    expect(JSON.parse(text)).toEqual({
      available_skills: entries.map(({ name, description }) => ({ name, description })),
      unlisted_skills: unlisted,
    });
    expect(JSON.parse(renderListing(entries, 'json', true, unlisted)).available_skills[0].location).toBe(
      '/s/zeta/SKILL.md',
    );
    expect(JSON.parse(renderListing([], 'json', false, unlisted))).toEqual({
      available_skills: [],
      unlisted_skills: unlisted,
    });
  });

  it('xml: ends with an escaped unlisted_skills element inside available_skills', () => {
    expect(renderListing(entries.slice(0, 1), 'xml', false, unlisted)).toBe(
      [
        '<available_skills>',
        '<skill>',
        '<name>zeta</name>',
        '<description>Last one.</description>',
        '</skill>',
        '<unlisted_skills count="7">Find the rest with &lt;skills_search&gt; &amp; more.</unlisted_skills>',
        '</available_skills>',
      ].join('\n'),
    );
    expect(renderListing([], 'xml', false, unlisted)).toBe(
      '<available_skills>\n\n<unlisted_skills count="7">Find the rest with &lt;skills_search&gt; &amp; ' +
        'more.</unlisted_skills>\n</available_skills>',
    );
  });

  it('markdown: ends with the note in parentheses on its own line', () => {
    expect(renderListing(entries, 'markdown', false, unlisted)).toBe(
      '- zeta: Last one.\n- alpha: Tom & Jerry <say> "hi" it\'s\n(Find the rest with <skills_search> & more.)',
    );
    expect(renderListing(entries, 'markdown', true, unlisted)).toBe(
      '- zeta: Last one. (file: /s/zeta/SKILL.md)\n- alpha: Tom & Jerry <say> "hi" it\'s (file: ' +
        '/s/alpha/SKILL.md)\n(Find the rest with <skills_search> & more.)',
    );
  });

  it('is the frame, the entries joined by the separator, and the close or the unlisted part: a sum of parts', () => {
    for (const format of ['json', 'xml', 'markdown'] as const) {
      const frame = catalogueFrame(format);
      const parts = entries.map((entry) => renderEntry(entry, format, true));
      expect(renderListing(entries, format, true)).toBe(frame.open + parts.join(frame.separator) + frame.close);
      expect(renderListing(entries, format, true, unlisted)).toBe(
        frame.open + parts.join(frame.separator) + renderUnlisted(unlisted, format),
      );
    }
  });
});
