import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CatalogueFormat } from '../options/skills-options.schema.js';
import { corpusPath } from '../../../../test/support/files/corpus.js';
import { type TempTree, tempTree, writeSkill } from '../../../../test/support/files/skill-tree.js';
import { escapeXml } from './catalogue-renderer.js';
import { buildSnapshot, type CatalogueSnapshot, narrowSnapshot } from './catalogue-snapshot.js';
import { NO_COMMANDS } from '../commands/command-discovery.js';
import { type DiscoveryResult, discoverSkills } from '../skill/skill-discovery.js';
import type { SkillRecord } from '../skill/skill.types.js';
import {
  type CatalogueChoice,
  type CatalogueLimits,
  type CatalogueRequest,
  catalogueIsComplete,
  chooseCatalogue,
} from './catalogue-choice.js';
import { triggersOf } from './catalogue-index.js';
import { countTokens } from '../ranking/token-count.js';

const FORMATS: readonly CatalogueFormat[] = ['json', 'xml', 'markdown'];

function record(name: string, description: string, extra: Partial<SkillRecord> = {}): SkillRecord {
  return {
    name,
    description,
    path: `/s/${name}`,
    skillFile: `/s/${name}/SKILL.md`,
    source: '/s',
    frontmatter: { name, description },
    warnings: [],
    ...extra,
  };
}

function personal(name: string, description: string, ownerId: string): SkillRecord {
  return record(name, description, {
    source: 'store',
    store: { scope: 'personal', ownerId, owner: ownerId, version: 1, history: new Set() },
  });
}

const CONFIG = { validation: 'standard' as const, includeLocation: false, catalogueFormat: 'json' as const };

function discovery(skills: SkillRecord[]): DiscoveryResult {
  return { skills, invalid: [], collisions: [], excluded: [], warnings: [], directories: [] };
}

function snapshotOf(
  skills: SkillRecord[],
  options: { includeLocation?: boolean; format?: CatalogueFormat; personal?: SkillRecord[] } = {},
): CatalogueSnapshot {
  return buildSnapshot(
    discovery(skills),
    { ...CONFIG, includeLocation: options.includeLocation ?? false, catalogueFormat: options.format ?? 'json' },
    { scannedAt: new Date(0), durationMs: 0 },
    NO_COMMANDS,
    undefined,
    options.personal === undefined ? undefined : { personal: options.personal, switches: new Map() },
  );
}

const limits = (overrides: Partial<CatalogueLimits> = {}): CatalogueLimits => ({
  budgetTokens: 4000,
  maxSkills: 50,
  format: 'json',
  ...overrides,
});
const request = (message: string, overrides: Partial<CatalogueRequest> = {}): CatalogueRequest => ({
  message,
  searchable: true,
  ...overrides,
});

/** How an entry's description shows in each format (whole). */
function shown(record: SkillRecord, format: CatalogueFormat): string {
  switch (format) {
    case 'json':
      return JSON.stringify({ name: record.name, description: record.description });
    case 'xml':
      return `<name>${escapeXml(record.name)}</name>\n<description>${escapeXml(record.description)}</description>`;
    case 'markdown':
      return `- ${record.name}: ${record.description.replace(/\s*[\r\n]+\s*/g, ' ').trim()}`;
  }
}

/** A partial choice is what its `listed` says: each listed entry whole, in order; no other skill; the note's count. */
function expectConsistent(choice: CatalogueChoice, view: CatalogueSnapshot, format: CatalogueFormat): void {
  expect(choice.complete).toBe(false);
  expect(new Set(choice.listed).size).toBe(choice.listed.length);
  expect(choice.unlisted).toBe(view.skills.size - choice.listed.length);
  let at = -1;
  for (const name of choice.listed) {
    const listed = view.skills.get(name);
    expect(listed).toBeDefined();
    const position = choice.text.indexOf(shown(listed!, format));
    expect(position).toBeGreaterThan(at);
    at = position;
  }
  for (const [name, skill] of view.skills)
    if (!choice.listed.includes(name)) expect(choice.text).not.toContain(shown(skill, format));
  expect(choice.tokens).toBeGreaterThanOrEqual(countTokens(choice.text));
  if (choice.unlisted > 0)
    expect(choice.text).toContain(
      choice.unlisted === 1 ? '1 more skill is not listed here' : `${choice.unlisted} more skills are not listed here`,
    );
  if (format === 'json') {
    const parsed = JSON.parse(choice.text) as {
      available_skills: { name: string; description: string }[];
      unlisted_skills?: { count: number; note: string };
    };
    expect(parsed.available_skills.map((entry) => entry.name)).toEqual(choice.listed);
    expect(parsed.available_skills.map((entry) => entry.description)).toEqual(
      choice.listed.map((name) => view.skills.get(name)!.description),
    );
    if (choice.unlisted > 0)
      expect(parsed.unlisted_skills).toEqual({ count: choice.unlisted, note: expect.any(String) });
    else expect(parsed.unlisted_skills).toBeUndefined();
  }
}

/** Skills about many things, a few about each topic, with descriptions of varied length and special characters. */
const TOPICS = [
  'pdf',
  'slides',
  'spreadsheet',
  'database',
  'docker',
  'kubernetes',
  'email',
  'invoice',
  'poster',
  'audio',
];
const FLEET: SkillRecord[] = TOPICS.flatMap((topic, t) =>
  Array.from({ length: 6 }, (_, i) =>
    record(
      `${topic}-${['helper', 'pro', 'kit', 'tool', 'assistant', 'expert'][i]}`,
      `Works with ${topic} files <${topic}> & "${topic}" tasks, variant ` +
        `${i}.${' Detailed notes.'.repeat((t + i) % 5)}\nUse when the user mentions ${topic}.`,
    ),
  ),
);

describe(chooseCatalogue.name, () => {
  describe('when every skill fits', () => {
    const skills = [
      record('zeta', 'Last one.'),
      record('alpha', 'Tom & Jerry <say> "hi"'),
      record('mid', 'Middle.\nTwo lines.'),
    ];
    const view = snapshotOf(skills);

    it.each(FORMATS)('%s: returns exactly the whole catalogue, the same every turn', (format) => {
      const choice = chooseCatalogue(view, limits({ format }), request('anything about pdf'));
      expect(choice).toEqual({
        text: view.catalogue(format),
        complete: true,
        listed: ['alpha', 'mid', 'zeta'],
        unlisted: 0,
        tokens: expect.any(Number),
      });
      expect(choice.tokens).toBeGreaterThanOrEqual(countTokens(choice.text));
      expect(
        chooseCatalogue(
          view,
          limits({ format }),
          request('', { pinned: ['zeta'], popularity: new Map([['mid', 9]]), searchable: false }),
        ),
      ).toEqual(choice);
    });

    it('is complete exactly up to the budget and the count', () => {
      const whole = chooseCatalogue(view, limits(), request('x'));
      expect(catalogueIsComplete(view, limits({ budgetTokens: whole.tokens }))).toBe(true);
      expect(catalogueIsComplete(view, limits({ budgetTokens: whole.tokens - 1 }))).toBe(false);
      expect(catalogueIsComplete(view, limits({ maxSkills: 3 }))).toBe(true);
      expect(catalogueIsComplete(view, limits({ maxSkills: 2 }))).toBe(false);
      expect(chooseCatalogue(view, limits({ budgetTokens: whole.tokens - 1 }), request('x')).complete).toBe(false);
    });

    it('lists an empty view as the empty catalogue', () => {
      const empty = snapshotOf([]);
      expect(chooseCatalogue(empty, limits(), request('pdf'))).toEqual({
        text: '',
        complete: true,
        listed: [],
        unlisted: 0,
        tokens: expect.any(Number),
      });
    });
  });

  describe('when the skills do not fit', () => {
    const view = snapshotOf(FLEET);

    it('holds more than the small budgets below (a guard)', () => {
      for (const format of FORMATS) expect(view.index.wholeCost(view, format)).toBeGreaterThan(1000);
    });

    it.each(FORMATS)('%s: stays within the budget, listing matches for the message, whole entries only', (format) => {
      for (const budgetTokens of [60, 150, 400, 900]) {
        for (const message of ['merge these pdf files', 'a docker image and kubernetes', 'email every invoice', '']) {
          const choice = chooseCatalogue(view, limits({ format, budgetTokens }), request(message));
          expect(countTokens(choice.text)).toBeLessThanOrEqual(budgetTokens);
          expect(choice.tokens).toBeLessThanOrEqual(budgetTokens);
          expectConsistent(choice, view, format);
        }
      }
      const pdf = chooseCatalogue(view, limits({ format, budgetTokens: 400 }), request('merge these pdf'));
      expect(pdf.listed.length).toBeGreaterThan(0);
      expect(pdf.listed.every((name) => name.startsWith('pdf-'))).toBe(true);
    });

    it.each(FORMATS)('%s: stays within the budget with locations too', (format) => {
      const located = snapshotOf(FLEET, { includeLocation: true, format });
      const choice = chooseCatalogue(located, limits({ format, budgetTokens: 300 }), request('invoice email'));
      expect(choice.listed.length).toBeGreaterThan(0);
      expect(countTokens(choice.text)).toBeLessThanOrEqual(300);
      expect(choice.tokens).toBeGreaterThanOrEqual(countTokens(choice.text));
      for (const name of choice.listed) expect(choice.text).toContain(`/s/${name}/SKILL.md`);
    });

    it('lists the best match first, then the others as ranked', () => {
      const choice = chooseCatalogue(view, limits({ budgetTokens: 3000 }), request('docker'));
      expect(choice.listed.slice(0, 6).every((name) => name.startsWith('docker-'))).toBe(true);
      expect(choice.listed).toEqual(view.index.search(view, 'docker', { limit: 50 }).map((match) => match.name));
    });

    it.each(FORMATS)('%s: lists pinned skills first, in their order, even past the budget', (format) => {
      const pinned = ['poster-expert', 'audio-helper', 'pdf-kit'];
      const tight = chooseCatalogue(view, limits({ format, budgetTokens: 10 }), request('docker', { pinned }));
      expect(tight.listed).toEqual(pinned);
      expect(tight.tokens).toBeGreaterThan(10);
      expectConsistent(tight, view, format);
      const roomy = chooseCatalogue(view, limits({ format, budgetTokens: 600 }), request('docker', { pinned }));
      expect(roomy.listed.slice(0, 3)).toEqual(pinned);
      expect(roomy.listed.length).toBeGreaterThan(3);
      expect(roomy.listed.slice(3).every((name) => name.startsWith('docker-'))).toBe(true);
      expect(countTokens(roomy.text)).toBeLessThanOrEqual(600);
      expectConsistent(roomy, view, format);
    });

    it('lists a pinned skill once, ignores unknown pinned names, and pins past maxSkills', () => {
      const choice = chooseCatalogue(
        view,
        limits({ maxSkills: 2 }),
        request('docker', { pinned: ['pdf-kit', 'nope', 'pdf-kit', 'audio-pro', 'email-pro'] }),
      );
      expect(choice.listed).toEqual(['pdf-kit', 'audio-pro', 'email-pro']);
      expectConsistent(choice, view, 'json');
    });

    it('caps the listed skills at maxSkills', () => {
      for (const maxSkills of [1, 3, 10]) {
        const choice = chooseCatalogue(
          view,
          limits({ maxSkills, budgetTokens: 100_000 }),
          request('pdf slides spreadsheet database docker kubernetes email invoice poster audio'),
        );
        expect(choice.listed).toHaveLength(maxSkills);
        expectConsistent(choice, view, 'json');
      }
    });

    it(
      'fills with the most used skills after the ranked matches, in the order the repository reads them (most ' +
        'used first)',
      () => {
        const popularity = new Map([
          ['not-in-view', 99],
          ['audio-helper', 7],
          ['poster-pro', 7],
          ['audio-kit', 3],
          ['email-tool', 0],
        ]);
        const choice = chooseCatalogue(
          view,
          limits({ budgetTokens: 100_000, maxSkills: 9 }),
          request('docker', { popularity }),
        );
        expect(choice.listed.slice(0, 6).every((name) => name.startsWith('docker-'))).toBe(true);
        expect(choice.listed.slice(6)).toEqual(['audio-helper', 'poster-pro', 'audio-kit']);
        // With no message, the most used only; unused skills are not listed for their use.
        const none = chooseCatalogue(
          view,
          limits({ budgetTokens: 100_000, maxSkills: 9 }),
          request('  ', { popularity }),
        );
        expect(none.listed).toEqual(['audio-helper', 'poster-pro', 'audio-kit']);
        expectConsistent(none, view, 'json');
      },
    );

    it('skips an entry that does not fit and takes a smaller one after it', () => {
      const big = record('pdf-big', `PDF ${'and more detail about pdf work '.repeat(40)}`);
      const small = record('pdf-small', 'PDF.');
      const skills = [big, small, ...FLEET.filter((skill) => !skill.name.startsWith('pdf-'))];
      const mixed = snapshotOf(skills);
      const choice = chooseCatalogue(
        mixed,
        limits({ budgetTokens: 120 }),
        request('pdf', { popularity: new Map([['pdf-big', 5]]) }),
      );
      expect(choice.listed).toContain('pdf-small');
      expect(choice.listed).not.toContain('pdf-big');
      expectConsistent(choice, mixed, 'json');
    });

    it.each(FORMATS)(
      '%s: the closing note counts the unlisted skills and names skills_search only when searchable',
      (format) => {
        const searchable = chooseCatalogue(view, limits({ format, budgetTokens: 200 }), request('pdf'));
        expect(searchable.text).toContain(
          `${searchable.unlisted} more skills are not listed here: find them with the skills_search tool`,
        );
        const plain = chooseCatalogue(
          view,
          limits({ format, budgetTokens: 200 }),
          request('pdf', { searchable: false }),
        );
        expect(plain.text).toContain(
          `${plain.unlisted} more skills are not listed here; the user can invoke any skill by name.`,
        );
        expect(plain.text).not.toContain('skills_search');
      },
    );

    it('says "1 more skill is" for one', () => {
      const three = snapshotOf([record('a-pdf', 'PDF one.'), record('b-pdf', 'PDF two.'), record('c-other', 'Other.')]);
      const choice = chooseCatalogue(three, limits({ maxSkills: 2 }), request('pdf'));
      expect(choice.listed).toEqual(['a-pdf', 'b-pdf']);
      expect(choice.text).toContain('1 more skill is not listed here');
    });

    it('renders each format as its frame says', () => {
      const choose = (format: CatalogueFormat) =>
        chooseCatalogue(view, limits({ format, budgetTokens: 200 }), request('pdf'));
      const json = JSON.parse(choose('json').text);
      expect(Object.keys(json)).toEqual(['available_skills', 'unlisted_skills']);
      expect(json.unlisted_skills.count).toBe(choose('json').unlisted);
      const xml = choose('xml').text;
      expect(xml.startsWith('<available_skills>\n<skill>')).toBe(true);
      expect(xml).toMatch(
        new RegExp(
          `\n<unlisted_skills count="${choose('xml').unlisted}">[^<]+</unlisted_skills>\n</available_skills>$`,
        ),
      );
      const markdown = choose('markdown').text;
      expect(
        markdown
          .split('\n')
          .slice(0, -1)
          .every((line) => line.startsWith('- ')),
      ).toBe(true);
      expect(markdown.split('\n').at(-1)).toMatch(/^\(\d+ more skills are not listed here.*\)$/);
    });

    it.each(FORMATS)('%s: with nothing listed, renders only the note', (format) => {
      const choice = chooseCatalogue(view, limits({ format, budgetTokens: 1 }), request('pdf'));
      expect(choice.listed).toEqual([]);
      expect(choice.unlisted).toBe(FLEET.length);
      if (format === 'markdown')
        expect(choice.text).toBe(
          `(${FLEET.length} more skills are not listed here: find them with the skills_search tool when no ` +
            `listed skill fits the task.)`,
        );
      if (format === 'json')
        expect(JSON.parse(choice.text)).toEqual({
          available_skills: [],
          unlisted_skills: { count: FLEET.length, note: expect.any(String) },
        });
      if (format === 'xml') expect(choice.text.startsWith('<available_skills>\n\n<unlisted_skills')).toBe(true);
    });

    it('counts another format than the configured one correctly', () => {
      const markdownBuilt = snapshotOf(FLEET, { format: 'markdown' });
      for (const format of FORMATS) {
        const choice = chooseCatalogue(markdownBuilt, limits({ format, budgetTokens: 300 }), request('spreadsheet'));
        expect(countTokens(choice.text)).toBeLessThanOrEqual(300);
        expectConsistent(choice, markdownBuilt, format);
      }
    });
  });

  describe('a narrowed view', () => {
    const team = FLEET;
    const base = snapshotOf(team, {
      personal: [
        personal('ann-pdf-secret', 'PDF work for Ann only.', 'ann'),
        personal('bob-pdf-private', 'PDF work for Bob only.', 'bob'),
      ],
    });

    it('lists only the skills of the view, whatever the message, pins or popularity name', () => {
      const view = narrowSnapshot(base, 'ann', [{ exclude: ['pdf-*'] }], CONFIG);
      expect(view.skills.has('ann-pdf-secret')).toBe(true);
      expect(view.skills.has('bob-pdf-private')).toBe(false);
      expect(view.skills.has('pdf-kit')).toBe(false);
      for (const format of FORMATS) {
        const choice = chooseCatalogue(
          view,
          limits({ format, budgetTokens: 500 }),
          request('pdf', {
            pinned: ['bob-pdf-private', 'pdf-kit'],
            popularity: new Map([
              ['bob-pdf-private', 9],
              ['pdf-pro', 9],
            ]),
          }),
        );
        expect(choice.listed[0]).toBe('ann-pdf-secret');
        for (const name of choice.listed) expect(view.skills.has(name)).toBe(true);
        expect(choice.text).not.toContain('bob-pdf-private');
        expectConsistent(choice, view, format);
      }
    });

    it("keeps another owner's and the base's personal skills out of a view without them", () => {
      const bob = narrowSnapshot(base, 'bob', [], CONFIG);
      const bobChoice = chooseCatalogue(bob, limits({ budgetTokens: 500 }), request('pdf'));
      expect(bobChoice.listed).toContain('bob-pdf-private');
      expect(bobChoice.listed).not.toContain('ann-pdf-secret');
      const nobody = chooseCatalogue(base, limits({ budgetTokens: 500 }), request('pdf'));
      expect(nobody.listed).not.toContain('ann-pdf-secret');
      expect(nobody.listed).not.toContain('bob-pdf-private');
      expect(base.index.search(base, 'pdf', { limit: 100 }).map((match) => match.name)).not.toContain('ann-pdf-secret');
    });

    it('keeps to an include filter, and a view that fits is listed whole', () => {
      const view = narrowSnapshot(base, undefined, [{ include: ['docker-*', 'audio-pro'] }], CONFIG);
      const partial = chooseCatalogue(view, limits({ maxSkills: 3 }), request('pdf docker audio'));
      for (const name of partial.listed) expect(name === 'audio-pro' || name.startsWith('docker-')).toBe(true);
      expectConsistent(partial, view, 'json');
      const whole = chooseCatalogue(view, limits(), request('pdf'));
      expect(whole).toMatchObject({ complete: true, text: view.catalogue('json'), listed: [...view.skills.keys()] });
    });
  });

  describe('skills from a folder, with triggers', () => {
    let tree: TempTree;
    let view: CatalogueSnapshot;

    beforeAll(() => {
      tree = tempTree();
      const description = 'Handles accounting documents for the finance team.';
      writeSkill(tree, 'skills', 'alpha-docs', { description });
      writeSkill(tree, 'skills', 'beta-docs', {
        description,
        extra: 'metadata:\n  triggers: "receipts, expense report; reimbursement"',
      });
      writeSkill(tree, 'skills', 'gamma-docs', {
        description,
        extra: 'metadata:\n  triggers: [quarterly close, ledger]',
      });
      for (let i = 0; i < 20; i++)
        writeSkill(tree, 'skills', `other-${i}`, { description: `Unrelated helper number ${i} for gardening.` });
      const path = tree.path('skills');
      const discovered = discoverSkills({
        directories: [{ configured: path, path }],
        mode: 'lenient',
        maxDepth: 1,
        maxSkills: 1000,
      });
      view = buildSnapshot(
        discovered,
        { ...CONFIG, validation: 'lenient' },
        { scannedAt: new Date(0), durationMs: 0 },
        NO_COMMANDS,
      );
    });
    afterAll(() => tree.cleanup());

    it('reads triggers from the frontmatter as text or a YAML list', () => {
      expect(view.skills.size).toBe(23);
      expect(triggersOf(view.skills.get('beta-docs')!)).toEqual(['receipts', 'expense report', 'reimbursement']);
      expect(triggersOf(view.skills.get('gamma-docs')!)).toEqual(['quarterly close', 'ledger']);
      expect(triggersOf(view.skills.get('alpha-docs')!)).toBeUndefined();
    });

    it('ranks by triggers: a trigger word or phrase lifts the skill above its equals', () => {
      const choose = (message: string) =>
        chooseCatalogue(view, limits({ maxSkills: 2 }), request(`accounting documents: ${message}`)).listed;
      expect(choose('an expense report')[0]).toBe('beta-docs');
      expect(choose('the quarterly close')[0]).toBe('gamma-docs');
      expect(choose('the ledger')[0]).toBe('gamma-docs');
      expect(choose('nothing else')).toEqual(['alpha-docs', 'beta-docs']);
    });
  });

  describe('on the whole corpus with the default limits (4000 tokens, 50 skills)', () => {
    const path = corpusPath();
    const corpus = snapshotOf(
      discoverSkills({ directories: [{ configured: path, path }], mode: 'lenient', maxDepth: 6, maxSkills: 1_000_000 })
        .skills,
    );

    it("stays within the budget for every request of the bench's labelled set, in every format", () => {
      const queries = JSON.parse(
        readFileSync(join(process.cwd(), 'bench', 'fixtures', 'skill-queries.json'), 'utf8'),
      ) as { query: string }[];
      expect(queries.length).toBeGreaterThan(50);
      for (const { query } of queries) {
        for (const format of FORMATS) {
          const choice = chooseCatalogue(
            corpus,
            limits({ format }),
            request(query, { context: 'earlier: a docker image and a pdf report' }),
          );
          expect(choice.tokens).toBeLessThanOrEqual(4000);
          expect(countTokens(choice.text)).toBeLessThanOrEqual(choice.tokens);
          expect(choice.listed.length).toBeLessThanOrEqual(50);
        }
      }
    });

    it('stays within the budget for hostile messages', () => {
      for (const message of [
        '\uD800'.repeat(100_000),
        'pdf '.repeat(300_000),
        '📄'.repeat(50_000),
        '\0 docker \0',
        Array.from({ length: 10_000 }, (_, i) => `word${i}`).join(' '),
      ]) {
        const choice = chooseCatalogue(corpus, limits({ format: 'xml' }), request(message, { context: message }));
        expect(countTokens(choice.text)).toBeLessThanOrEqual(4000);
        expect(choice.unlisted).toBe(corpus.skills.size - choice.listed.length);
      }
    });

    it.each([
      ['extract the text from this PDF', /pdf/],
      ['deploy my app to Vercel', /vercel/],
      ["write the postmortem for yesterday's outage", /postmortem/],
      ['crea un dockerfile para mi aplicación de node', /docker/],
      ['threat model the new payments service', /threat-model/],
    ])('lists a relevant skill within budget for "%s"', (message, relevant) => {
      for (const format of FORMATS) {
        const choice = chooseCatalogue(corpus, limits({ format }), request(message));
        expect(choice.complete).toBe(false);
        expect(choice.listed.length).toBeGreaterThan(5);
        expect(choice.listed.length).toBeLessThanOrEqual(50);
        expect(choice.tokens).toBeLessThanOrEqual(4000);
        expect(countTokens(choice.text)).toBeLessThanOrEqual(choice.tokens);
        expect(choice.listed.slice(0, 5).some((name) => relevant.test(name))).toBe(true);
        expect(choice.unlisted).toBe(corpus.skills.size - choice.listed.length);
        if (format === 'json') expectConsistent(choice, corpus, format);
      }
    });
  });
});

describe(triggersOf.name, () => {
  const of = (triggers: string | undefined) =>
    triggersOf({
      frontmatter: { name: 'n', description: 'd', ...(triggers === undefined ? {} : { metadata: { triggers } }) },
    });

  it('reads a JSON list, and a JSON object of lists (at any depth)', () => {
    expect(of('["pdf", "merge pdfs", " split "]')).toEqual(['pdf', 'merge pdfs', 'split']);
    expect(of('{"keywords": ["pdf", "form"], "verbs": ["fill"], "phrases": {"en": ["fill a form"]}}')).toEqual([
      'pdf',
      'form',
      'fill',
      'fill a form',
    ]);
  });

  it('ignores what is not a string in JSON', () => {
    expect(of('["pdf", 3, null, true, {"x": 4}, ["form", false]]')).toEqual(['pdf', 'form']);
    expect(of('42')).toBeUndefined();
    expect(of('null')).toBeUndefined();
    expect(of('[1, 2]')).toBeUndefined();
    expect(of('"one phrase, with a comma"')).toEqual(['one phrase, with a comma']);
  });

  it('reads text separated by commas, semicolons or lines', () => {
    expect(of('pdf, merge pdfs;split\nfill a form\r\n  forms  ')).toEqual([
      'pdf',
      'merge pdfs',
      'split',
      'fill a form',
      'forms',
    ]);
    expect(of('[not json, pdf')).toEqual(['[not json', 'pdf']);
  });

  it('gives undefined for no triggers, empty text or only separators', () => {
    expect(of(undefined)).toBeUndefined();
    expect(of('')).toBeUndefined();
    expect(of('   ')).toBeUndefined();
    expect(of(',;\n,')).toBeUndefined();
    expect(of('["", "  "]')).toBeUndefined();
    expect(triggersOf({ frontmatter: { name: 'n', description: 'd', metadata: {} } })).toBeUndefined();
    expect(
      triggersOf({ frontmatter: { name: 'n', description: 'd', metadata: { triggers: 5 as unknown as string } } }),
    ).toBeUndefined();
  });

  it('keeps the first 100', () => {
    const many = of(JSON.stringify(Array.from({ length: 150 }, (_, i) => `t${i}`)));
    expect(many).toHaveLength(100);
    expect(many?.[99]).toBe('t99');
  });
});
