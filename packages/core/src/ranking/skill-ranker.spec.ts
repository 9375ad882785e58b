import { describe, expect, it } from '@jest/globals';
import { corpusPath } from '../../../../test/support/files/corpus.js';
import { runThrough } from '../util/sliced-work.js';
import { discoverSkills } from '../skill/skill-discovery.js';
import { MAX_QUERY_WORDS } from './query-terms.js';
import { POPULARITY_BOOST, type RankableSkill, type RankedSkill, SkillRanker } from './skill-ranker.js';

const skill = (overrides: Partial<RankableSkill> = {}): RankableSkill => ({
  name: 'csv-cleaner',
  description: 'Cleans CSV exports: trims whitespace, fixes encodings and removes duplicate rows.',
  ...overrides,
});

/** Skills of a corpus folder as the server would load them. */
function corpusSkills(folder: string[], mode: 'standard' | 'lenient', maxDepth: number): RankableSkill[] {
  const path = corpusPath(...folder);
  const { skills } = discoverSkills({
    directories: [{ configured: path, path }],
    mode,
    maxDepth,
    maxSkills: 1_000_000,
  });
  return skills.map(({ name, description }) => ({ name, description }));
}

/**
 * The shared corpus has no document skills (their folders are not permissively licensed), so these
 * stand in for them, written in the same style.
 */
const DOCUMENT_SKILLS: RankableSkill[] = [
  skill({
    name: 'pdf',
    description:
      'Extract text and tables from PDF files, fill PDF forms, merge and split documents, and create new PDFs. ' +
      'Use when the user works with .pdf files.',
  }),
  skill({
    name: 'pptx',
    description:
      'Create, edit and analyse PowerPoint presentations (.pptx): slide decks, layouts, speaker notes and ' +
      'themes. Use when the user asks for slides, a deck or a presentation.',
  }),
  skill({
    name: 'docx',
    description:
      'Create and edit Word documents (.docx) with tracked changes, comments and formatting. Use for reports, ' +
      'letters and memos in Word format.',
  }),
  skill({
    name: 'xlsx',
    description:
      'Create and analyse spreadsheets (.xlsx, .csv): formulas, charts, pivot tables and data cleaning. Use ' +
      'when the user works with Excel files.',
  }),
];

const ANTHROPIC_SKILLS = [...corpusSkills(['anthropics-skills'], 'standard', 3), ...DOCUMENT_SKILLS];

const names = (matches: readonly RankedSkill[]) => matches.map((match) => match.name);
const first = (ranker: SkillRanker, request: string) => ranker.rank(request)[0]?.name;

/**
 * Every result well formed: known skill, score and share in [0, 1], scores never rising (results come in score order).
 */
function expectWellFormed(matches: readonly RankedSkill[], skills: readonly RankableSkill[]): void {
  const known = new Map(skills.map((entry) => [entry.name, entry.description]));
  for (const match of matches) {
    expect(known.get(match.name)).toBe(match.description);
    expect(match.share).toBeGreaterThanOrEqual(0);
    expect(match.share).toBeLessThanOrEqual(1);
    expect(match.score).toBeGreaterThanOrEqual(0);
    expect(match.score).toBeLessThanOrEqual(1);
  }
  const scores = matches.map((match) => match.score);
  expect(scores).toEqual([...scores].sort((a, b) => b - a));
  expect(new Set(names(matches)).size).toBe(matches.length);
}

describe(SkillRanker.name, () => {
  describe('on the anthropics-skills corpus with the four document skills', () => {
    const sut = new SkillRanker(ANTHROPIC_SKILLS);

    it('holds the corpus (a guard: the tests below mean little on an empty corpus)', () => {
      expect(sut.size).toBe(ANTHROPIC_SKILLS.length);
      expect(sut.size).toBeGreaterThanOrEqual(14);
      expect(ANTHROPIC_SKILLS.map((entry) => entry.name)).toEqual(
        expect.arrayContaining([
          'mcp-builder',
          'slack-gif-creator',
          'webapp-testing',
          'internal-comms',
          'theme-factory',
        ]),
      );
    });

    it.each([
      ['extract the text from this PDF', 'pdf'],
      ['make a powerpoint deck', 'pptx'],
      ['edit this Word document with tracked changes', 'docx'],
      ['a pivot table for my Excel spreadsheet', 'xlsx'],
      ['make me a GIF for Slack', 'slack-gif-creator'],
      ['build an MCP server in TypeScript', 'mcp-builder'],
      ['test my local web application with Playwright', 'webapp-testing'],
      ['write a status report for leadership', 'internal-comms'],
    ])('puts the skill a plain request is about first: "%s" → %s', (request, expected) => {
      const matches = sut.rank(request);
      expect(matches[0]).toMatchObject({ name: expected, share: 1 });
      expect(matches[0].score).toBeGreaterThan(0.5);
      expectWellFormed(matches, ANTHROPIC_SKILLS);
    });

    it('returns the description with the name, and a full share when every meaningful word matches', () => {
      const [best] = sut.rank('extract the text from this PDF');
      expect(best).toEqual({
        name: 'pdf',
        description: DOCUMENT_SKILLS[0].description,
        score: expect.any(Number),
        share: 1,
      });
    });

    it('counts the share of the meaningful words the skill matches, stop words left out', () => {
      // extract, text, pdf match the pdf skill; klingon matches nothing: 3 of 4.
      const [best] = sut.rank('Can you please extract the text from this PDF for Klingon?');
      expect(best).toMatchObject({ name: 'pdf', share: 0.75 });
      expect(best.score).toBeLessThan(best.share);
    });

    it('matches inflected words and plurals ("extracting", "PDFs", "slides", "spreadsheets")', () => {
      expect(sut.rank('Extracting tables out of PDFs')[0]).toMatchObject({ name: 'pdf', share: 1 });
      expect(first(sut, 'I need slides for Monday')).toBe('pptx');
      expect(sut.rank('presentations')[0]).toMatchObject({ name: 'pptx', share: 1 });
      expect(sut.rank('spreadsheet')).toEqual(sut.rank('spreadsheets'));
    });

    it('matches folded case the same ("PDF", "pdf", "Pdf")', () => {
      expect(sut.rank('PDF')).toEqual(sut.rank('pdf'));
      expect(sut.rank('Pdf')).toEqual(sut.rank('pdf'));
    });

    it('tolerates two swapped letters ("powerpiont"), at a little less than the word itself', () => {
      const swapped = sut.rank('a powerpiont presentation')[0];
      expect(swapped.name).toBe('pptx');
      expect(swapped.share).toBeLessThan(1);
      expect(swapped.share).toBeGreaterThan(0.8);
      expect(sut.rank('a presentatoin')[0].name).toBe('pptx');
    });

    it('tolerates one wrong, missing or extra letter in a word of five letters or more', () => {
      expect(sut.rank('spreadsheat')[0]).toMatchObject({ name: 'xlsx', share: 1 });
      expect(sut.rank('a powerpont presentation')[0]).toMatchObject({ name: 'pptx', share: 1 });
      expect(first(sut, 'extrract tables')).toBe('pdf');
    });

    it('does not read a short unknown word as a typo (four letters or less)', () => {
      // "pdg" is one letter from "pdf", but three-letter words are too short to guess at.
      expect(names(sut.rank('pdg'))).not.toContain('pdf');
    });

    it('folds accents: "presentación" is "presentacion", whatever the case', () => {
      const accented = sut.rank('presentación');
      expect(accented[0].name).toBe('pptx');
      expect(sut.rank('presentacion')).toEqual(accented);
      expect(sut.rank('PRESENTACIÓN')).toEqual(accented);
      // Composed and decomposed forms are one word.
      expect(sut.rank('presentacio\u0301n')).toEqual(accented);
    });

    it('finds the English skill for a Spanish request', () => {
      expect(sut.rank('crea una presentación de diapositivas')[0]).toMatchObject({ name: 'pptx', share: 1 });
      expect(sut.rank('extrae el texto de este PDF')[0]).toMatchObject({ name: 'pdf', share: 1 });
      expect(first(sut, 'crea un documento de Word')).toBe('docx');
      expect(first(sut, 'una hoja de cálculo con gráficos')).toBe('xlsx');
    });

    it('returns nothing for a request of stop words only, or an empty one', () => {
      expect(sut.rank('Can you please help me with this?')).toEqual([]);
      expect(sut.rank('')).toEqual([]);
      expect(sut.rank('   \n\t ')).toEqual([]);
      expect(sut.rank('a I')).toEqual([]);
    });

    // Bug: "to do" is a related phrase ("to-do" → tasks), so a request of stop words gets a term but
    // no concept, and skills about tasks come back with share 0 and score 0.
    it('returns nothing for "I want you to do it" (stop words that happen to spell a related phrase)', () => {
      expect(sut.rank('I want you to do it')).toEqual([]);
      expect(
        new SkillRanker([skill({ name: 'tasks', description: 'Tracks tasks.' })]).rank('I want you to do it'),
      ).toEqual([]);
    });

    it('matches no skill for a request no skill is about', () => {
      expect(sut.rank('what is the weather like in Paris tomorrow?')).toEqual([]);
    });

    it('returns at most `limit` matches, the first of a longer list', () => {
      const request = 'create a poster, a slide deck and a spreadsheet with charts';
      const matches = sut.rank(request, { limit: 10 });
      expect(matches.length).toBeGreaterThan(3);
      expect(matches.length).toBeLessThanOrEqual(10);
      expect(sut.rank(request, { limit: 1 })).toEqual(matches.slice(0, 1));
      expect(sut.rank(request, { limit: 3 })).toEqual(matches.slice(0, 3));
      expect(sut.rank(request, { limit: 2.9 })).toEqual(matches.slice(0, 2));
      expect(sut.rank(request, { limit: Number.POSITIVE_INFINITY })).toEqual(sut.rank(request, { limit: 1000 }));
      expectWellFormed(sut.rank(request, { limit: 1000 }), ANTHROPIC_SKILLS);
    });

    it('returns 20 at most by default', () => {
      // Every skill says "create" or "use" somewhere; a broad request matches many.
      const matches = sut.rank(
        'create design build write test make art theme document files data web app slides code skill',
      );
      expect(matches.length).toBeLessThanOrEqual(20);
      expect(matches.length).toBeGreaterThan(5);
    });

    it.each([0, -1, -0.5, 0.9, Number.NaN, Number.NEGATIVE_INFINITY])('returns nothing for a limit of %s', (limit) => {
      expect(sut.rank('pdf', { limit })).toEqual([]);
    });

    it('ranks only the skills `include` accepts (by the position they were added at)', () => {
      const pptx = ANTHROPIC_SKILLS.findIndex((entry) => entry.name === 'pptx');
      const without = sut.rank('a slide deck', { include: (position) => position !== pptx });
      expect(names(without)).not.toContain('pptx');
      expect(without.length).toBeGreaterThan(0);
      expect(sut.rank('a slide deck', { include: (position) => position === pptx })).toEqual([
        expect.objectContaining({ name: 'pptx' }),
      ]);
      expect(sut.rank('a slide deck', { include: () => false })).toEqual([]);
      const all = sut.rank('a slide deck', { include: () => true });
      expect(all).toEqual(sut.rank('a slide deck'));
    });

    it('weighs the context below the request: a context-only skill adds no share and ranks below', () => {
      const matches = sut.rank('extract text from a PDF', { context: 'we talked about the slide deck before' });
      expect(matches[0]).toMatchObject({ name: 'pdf', share: 1 });
      const pptx = matches.find((match) => match.name === 'pptx');
      expect(pptx).toMatchObject({ share: 0 });
      expect(pptx!.score).toBeLessThan(matches[0].score);
      expectWellFormed(matches, ANTHROPIC_SKILLS);
    });
  });

  describe('words', () => {
    it('splits a compound word the index knows only as two ("blogpost", "spreadsheetcharts")', () => {
      const sut = new SkillRanker([
        skill({ name: 'blog-writer', description: 'Writes blog posts for the company site.' }),
        skill({ name: 'essay', description: 'Writes long essays.' }),
        skill({ name: 'sheets', description: 'Builds spreadsheet charts and pivot tables.' }),
      ]);
      expect(first(sut, 'blogpost')).toBe('blog-writer');
      expect(first(sut, 'blogposts')).toBe('blog-writer');
      expect(names(sut.rank('spreadsheetcharts'))).toEqual(['sheets']);
      // Each half counts for less than the word typed whole.
      const split = sut.rank('blogpost')[0];
      const whole = sut.rank('blog post')[0];
      expect(split.share).toBeLessThan(whole.share);
      expect(split.share).toBeGreaterThan(0.5);
    });

    it('treats the parts of a name split on - and _ as words', () => {
      const sut = new SkillRanker([
        skill({ name: 'release_notes-writer', description: 'Drafts text.' }),
        skill({ name: 'other', description: 'Drafts other text.' }),
      ]);
      expect(sut.rank('release notes')).toEqual([
        { name: 'release_notes-writer', description: 'Drafts text.', score: expect.any(Number), share: 1 },
      ]);
      expect(first(sut, 'writer')).toBe('release_notes-writer');
    });

    it('puts a skill whose name has the word before one that only mentions it', () => {
      const sut = new SkillRanker([
        skill({ name: 'data-tools', description: 'Invoices and more invoices.' }),
        skill({ name: 'invoice-maker', description: 'Generates finance documents for customers.' }),
      ]);
      expect(names(sut.rank('an invoice'))).toEqual(['invoice-maker', 'data-tools']);
    });

    it('leaves out skills that match no word', () => {
      const sut = new SkillRanker([skill(), skill({ name: 'haiku', description: 'Writes short poems.' })]);
      expect(names(sut.rank('remove duplicate rows'))).toEqual(['csv-cleaner']);
    });

    it('matches a rare word of five letters or more by its beginning ("kuber" → Kubernetes), not a shorter one', () => {
      const sut = new SkillRanker([
        skill({ name: 'cluster-ops', description: 'Kubernetes authentication and RBAC.' }),
        ...Array.from({ length: 30 }, (_, i) => skill({ name: `filler-${i}`, description: `Filler number ${i}.` })),
      ]);
      expect(names(sut.rank('kuber'))).toEqual(['cluster-ops']);
      expect(sut.rank('kube')).toEqual([]);
    });

    // Bug: "scrape" Spanish-stems like the glossary's "scrapear", so it is "translated" to itself
    // (an exact term, no prefix and no typo matching) and never reaches "scraper".
    it('matches "scrape" to a skill that says "scraper"', () => {
      const sut = new SkillRanker([
        skill({ name: 'site-tool', description: 'A scraper for product pages.' }),
        ...Array.from({ length: 30 }, (_, i) => skill({ name: `filler-${i}`, description: `Filler number ${i}.` })),
      ]);
      expect(first(sut, 'scrape')).toBe('site-tool');
    });
  });

  describe('triggers', () => {
    const description = 'Converts invoices to PDF.';

    it('lift a skill whose trigger keyword the request has above an otherwise equal skill', () => {
      const sut = new SkillRanker([
        skill({ name: 'a-tool', description }),
        skill({ name: 'b-tool', description, triggers: ['quotation', 'receipts'] }),
      ]);
      expect(names(sut.rank('convert invoices to pdf'))).toEqual(['a-tool', 'b-tool']);
      const matches = sut.rank('convert invoices receipts to pdf');
      expect(names(matches)).toEqual(['b-tool', 'a-tool']);
      expect(matches[0].share).toBe(1);
      expect(matches[1].share).toBe(0.75);
      // A trigger alone finds the skill.
      expect(names(sut.rank('quotation'))).toEqual(['b-tool']);
    });

    it(
      'lift a skill whose multiword trigger phrase the request contains above one with the same words as ' + 'keywords',
      () => {
        const sut = new SkillRanker([
          skill({ name: 'a-tool', description, triggers: ['accounts', 'receivable'] }),
          skill({ name: 'b-tool', description, triggers: ['Accounts Receivable'] }),
        ]);
        const together = sut.rank('accounts receivable invoices');
        expect(names(together)).toEqual(['b-tool', 'a-tool']);
        expect(together[0].score).toBeGreaterThan(together[1].score);
        // Apart, the words are only keywords for both: equal, by name.
        const apart = sut.rank('receivable invoices accounts');
        expect(names(apart)).toEqual(['a-tool', 'b-tool']);
        expect(apart[0].score).toBe(apart[1].score);
      },
    );
  });

  describe('trigger phrases', () => {
    const description = 'Syncs hub repositories and git mirrors.';
    const sut = new SkillRanker([
      skill({ name: 'a-tool', description, triggers: ['git hub'] }),
      skill({ name: 'b-tool', description, triggers: ['git', 'hub'] }),
    ]);

    it('count only when the request has the phrase', () => {
      const matches = sut.rank('hub git mirrors');
      expect(names(matches)).toEqual(['a-tool', 'b-tool']);
      expect(matches[0].score).toBe(matches[1].score);
    });

    // Bug: the phrase is looked for as a substring of the request's folded words joined by spaces,
    // so "legit hubris" contains "git hub" and doubles a-tool's relevance.
    it('count only as whole words ("legit hubris" does not contain "git hub")', () => {
      const matches = sut.rank('legit hubris mirrors');
      expect(matches[0].score).toBe(matches[1].score);
    });
  });

  describe('popularity', () => {
    const description = 'Converts invoices to PDF.';
    const sut = new SkillRanker([
      skill({ name: 'a-tool', description }),
      skill({ name: 'b-tool', description }),
      skill({ name: 'c-tool', description }),
    ]);

    it('breaks a tie in favour of the more used skill', () => {
      expect(names(sut.rank('convert invoices to pdf'))).toEqual(['a-tool', 'b-tool', 'c-tool']);
      expect(
        names(
          sut.rank('convert invoices to pdf', {
            popularity: new Map([
              ['c-tool', 5],
              ['b-tool', 1],
            ]),
          }),
        ),
      ).toEqual(['c-tool', 'b-tool', 'a-tool']);
      // Unused and unknown skills change nothing.
      expect(
        names(
          sut.rank('convert invoices to pdf', {
            popularity: new Map([
              ['b-tool', 0],
              ['zzz', 9],
            ]),
          }),
        ),
      ).toEqual(['a-tool', 'b-tool', 'c-tool']);
      expect(sut.rank('convert invoices to pdf', { popularity: new Map() })).toEqual(
        sut.rank('convert invoices to pdf'),
      );
    });

    it('raises the score by at most POPULARITY_BOOST of the relevance', () => {
      const [plain] = sut.rank('convert invoices to pdf');
      const [used] = sut.rank('convert invoices to pdf', { popularity: new Map([['a-tool', 1000]]) });
      expect(used.name).toBe('a-tool');
      expect(used.score).toBeGreaterThanOrEqual(plain.score);
      expect(used.share).toBe(plain.share);
      // score = share × r / (r + 6) grows by less than the boost when r grows by (1 + boost).
      expect(used.score).toBeLessThanOrEqual(plain.score * (1 + POPULARITY_BOOST) + 0.001);
    });

    it('never lifts a poor match above a clearly better one', () => {
      const ranker = new SkillRanker([
        skill({ name: 'pdf-tools', description: 'Extract text and tables from PDF files.' }),
        skill({ name: 'misc', description: 'Various helpers, including one for PDF.' }),
      ]);
      const popularity = new Map([
        ['misc', 1_000_000],
        ['pdf-tools', 1],
      ]);
      expect(names(ranker.rank('extract tables from pdf', { popularity }))).toEqual(['pdf-tools', 'misc']);
      const onlyMisc = new Map([['misc', 50]]);
      expect(names(ranker.rank('extract tables from pdf', { popularity: onlyMisc }))).toEqual(['pdf-tools', 'misc']);
    });
  });

  describe('ties and edges', () => {
    it('breaks ties by name (code point order), whatever the order skills were added in', () => {
      const sut = new SkillRanker([
        skill({ name: 'beta' }),
        skill({ name: 'alpha' }),
        skill({ name: 'gamma' }),
        skill({ name: 'Zulu' }),
      ]);
      const matches = sut.rank('clean my CSV');
      expect(names(matches)).toEqual(['Zulu', 'alpha', 'beta', 'gamma']);
      expect(new Set(matches.map((match) => match.score)).size).toBe(1);
      // The tie order holds when only some fit the limit.
      expect(names(sut.rank('clean my CSV', { limit: 2 }))).toEqual(['Zulu', 'alpha']);
    });

    it('ranks nothing from an empty list of skills', () => {
      expect(new SkillRanker([]).rank('csv')).toEqual([]);
      expect(new SkillRanker().rank('csv')).toEqual([]);
      expect(new SkillRanker().size).toBe(0);
    });

    it('counts each term once per skill in its vocabulary', () => {
      const sut = new SkillRanker([
        skill({ name: 'pdf', description: 'PDF pdf PDFs.' }),
        skill({ name: 'other', description: 'Reads a PDF.' }),
      ]);
      expect(sut.vocabulary.get('pdf')).toBe(2);
      expect(sut.vocabulary.get('read')).toBe(1);
      expect(sut.vocabulary.has('a')).toBe(false);
    });
  });

  describe(SkillRanker.building.name, () => {
    it('ranks as the constructor does, yielding between slices', () => {
      const whole = new SkillRanker(ANTHROPIC_SKILLS);
      const steps = SkillRanker.building(ANTHROPIC_SKILLS, 4);
      let yields = 0;
      let step = steps.next();
      while (!step.done) {
        yields++;
        step = steps.next();
      }
      const built = step.value;
      expect(yields).toBe(Math.floor(ANTHROPIC_SKILLS.length / 4));
      expect(built.size).toBe(whole.size);
      expect(built.vocabulary).toEqual(whole.vocabulary);
      for (const request of [
        'extract the text from this PDF',
        'una presentación',
        'powerpiont',
        'make me a GIF for Slack',
        'blogpost',
      ]) {
        expect(built.rank(request, { limit: 50 })).toEqual(whole.rank(request, { limit: 50 }));
      }
      expect(runThrough(SkillRanker.building(ANTHROPIC_SKILLS)).rank('slides')).toEqual(whole.rank('slides'));
    });
  });

  describe('hostile requests', () => {
    const sut = new SkillRanker(ANTHROPIC_SKILLS);

    it('ranks a 1 MB request on its first 64 distinct meaningful words', () => {
      const words = 'extract text pdf '.concat(Array.from({ length: 200 }, (_, i) => `filler${i}`).join(' '), ' ');
      const request = words.repeat(Math.ceil(1_048_576 / words.length)).slice(0, 1_048_576);
      const matches = sut.rank(request);
      expect(matches[0].name).toBe('pdf');
      expect(matches[0].share).toBeCloseTo(3 / MAX_QUERY_WORDS, 3);
      expectWellFormed(matches, ANTHROPIC_SKILLS);
    });

    it('stops at 64 distinct words in a request of 10,000', () => {
      // Short made-up words: neither typos of known words nor halves of them.
      const request = ['powerpoint', ...Array.from({ length: 10_000 }, (_, i) => `q${i.toString(36)}`), 'pdf'].join(
        ' ',
      );
      const matches = sut.rank(request);
      expect(matches[0]).toMatchObject({ name: 'pptx', share: Math.round(1000 / MAX_QUERY_WORDS) / 1000 });
      expect(names(matches)).not.toContain('pdf');
    });

    it('ignores a 1 MB word, 1 MB of punctuation and 1 MB of stop words', () => {
      expect(sut.rank('a'.repeat(1_048_576))).toEqual([]);
      expect(sut.rank('ñ'.repeat(1_048_576))).toEqual([]);
      expect(sut.rank('!?.,;:-_'.repeat(131_072))).toEqual([]);
      expect(sut.rank('the a please me '.repeat(65_536))).toEqual([]);
      // A word too long to be one does not hide the words around it.
      expect(first(sut, `${'x'.repeat(60_000)} pdf`)).toBe('pdf');
    });

    it("reads a request's words from its first 64 Ki characters only", () => {
      expect(first(sut, `${'the '.repeat(16_383)}pdf`)).toBe('pdf');
      expect(sut.rank(`${'the '.repeat(16_384)}pdf`)).toEqual([]);
    });

    it('reads words around emoji, NUL and unpaired surrogates', () => {
      expect(sut.rank('📄📄📄')).toEqual([]);
      expect(sut.rank('\0\uD800\uDFFF\uDC00')).toEqual([]);
      expect(sut.rank('\0'.repeat(100_000))).toEqual([]);
      expect(sut.rank('\uD800'.repeat(100_000))).toEqual([]);
      expect(sut.rank('📄pdf\0text\uD800extract\uDC00')[0]).toMatchObject({ name: 'pdf', share: 1 });
      expect(sut.rank('🎞️ slides 🎞️')[0].name).toBe('pptx');
    });

    it('returns well-formed results for any of these, with a context as hostile', () => {
      const hostile = [
        '\uFEFFpdf',
        'ｐｄｆ',
        'pdf\u200Btext',
        `${'pdf '.repeat(300_000)}`,
        '<script>pdf</script>',
        'pdf'.repeat(21),
        '１２３ pdf',
      ];
      for (const request of hostile) {
        const matches = sut.rank(request, { context: '\uD800'.repeat(10_000) + ' slides '.repeat(10_000) });
        expectWellFormed(matches, ANTHROPIC_SKILLS);
      }
      // Fullwidth letters fold to the plain word.
      expect(first(sut, 'ｐｄｆ')).toBe('pdf');
    });
  });

  describe('hostile skill texts', () => {
    it('indexes names and descriptions with surrogates, NUL, emoji and very long words', () => {
      const sut = new SkillRanker([
        skill({ name: '\uD800-\0', description: `${'x'.repeat(100_000)} 📄 PDF\0reader \uDC00` }),
        skill({ name: 'empty', description: '' }),
        skill({ name: 'punct', description: '!!!???...'.repeat(10_000) }),
        skill({
          name: 'big',
          description: 'spreadsheet '.repeat(50_000),
          triggers: ['\0', '', '   ', 'x'.repeat(10_000), '📄 🎞️', 'reader'],
        }),
      ]);
      expect(sut.size).toBe(4);
      expect(sut.rank('pdf reader')[0]).toMatchObject({ name: '\uD800-\0', share: 1 });
      expect(names(sut.rank('pdf reader'))).toEqual(['\uD800-\0', 'big']);
      expect(first(sut, 'spreadsheet')).toBe('big');
      expect(sut.rank('x'.repeat(100_000))).toEqual([]);
    });
  });

  describe('on the whole shared corpus (lenient, max_depth 6, as the server loads it)', () => {
    const corpus = corpusSkills([], 'lenient', 6);
    const sut = new SkillRanker(corpus);

    it('holds about 2,000 skills', () => {
      expect(sut.size).toBeGreaterThan(1500);
    });

    it.each([
      [
        "can you write a commit message for what I've staged and push it",
        ['git-pushing', 'git-pr-workflows-git-workflow'],
      ],
      ['deploy my app to Vercel', ['deploy-to-vercel', 'vercel-deployment', 'vercel-cli-with-tokens']],
      ['our docker image is 2GB, help me slim it down', ['docker-expert', 'docker-development']],
      ['draw the checkout flow as a mermaid sequence diagram', ['mermaid-expert', 'markdown-mermaid-writing']],
      ['write a cold email to CTOs pitching our monitoring tool', ['cold-email', 'draft-outreach']],
      ['reveiw my pull reqest pls', ['code-review', 'code-reviewer', 'pr-review-expert', 'code-review-excellence']],
      ['my dokcer contianer is way too big, shrink the imgae', ['docker-expert', 'docker-development']],
      [
        'diseña el esquema de base de datos para una tienda online',
        ['database-schema-designer', 'database-designer', 'database-design', 'database-architect'],
      ],
      [
        'convierte este PDF a Word',
        ['file-conversion', 'cloudconvert-automation', 'convertapi-automation', 'pdf-co-automation'],
      ],
      [
        'analiza a mis competidores',
        ['competitor-profiling', 'competitive-teardown', 'competitive-intel', 'competitive-intelligence'],
      ],
    ])('puts an acceptable skill in the top 5 for "%s"', (request, acceptable) => {
      for (const name of acceptable) expect(corpus.some((entry) => entry.name === name)).toBe(true);
      const top = sut.rank(request, { limit: 5 });
      expect(names(top).some((name) => acceptable.includes(name))).toBe(true);
      expectWellFormed(top, corpus);
    });
  });
});
