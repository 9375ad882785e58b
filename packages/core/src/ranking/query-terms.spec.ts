import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import {
  analyseQuery,
  MAX_QUERY_WORDS,
  MAX_REQUEST_CHARS,
  type QueryTerm,
  type Vocabulary,
  WEIGHTS,
} from './query-terms.js';
import { englishStem } from './text-terms.js';

/** An index's vocabulary: each term in one skill of `skills` (rare enough for prefix matching by default). */
function vocabulary(terms: readonly string[], skills = 100, count = 1): Vocabulary {
  return { terms: new Map(terms.map((term) => [term, count])), skills };
}

/** Terms known to a small index of document and design skills. */
const KNOWN = vocabulary([
  'con',
  'mui',
  'present',
  'slide',
  'deck',
  'chart',
  'databas',
  'design',
  'pdf',
  'text',
  'extract',
  'inform',
  'report',
  'powerpoint',
  'blog',
  'post',
  'mobil',
  'respons',
  'small',
  'screen',
  'spreadsheet',
]);

const termsOf = (request: string, vocab: Vocabulary = KNOWN, context?: string) =>
  analyseQuery(request, vocab, context).terms;
const keysOf = (request: string, vocab: Vocabulary = KNOWN, context?: string) =>
  [...termsOf(request, vocab, context).keys()].sort();

describe(analyseQuery.name, () => {
  describe('words as the index knows them', () => {
    it('stems each meaningful word, leaving out stop words, single letters and repeats', () => {
      const { terms, concepts } = analyseQuery('Please extract the TEXT from this PDF, a pdf, a Pdf', KNOWN);
      expect([...terms.keys()].sort()).toEqual(['extract', 'pdf', 'text']);
      expect(concepts).toBe(3);
      expect(terms.get('pdf')).toEqual({ weight: 1, prefix: false, fuzzy: false, concept: expect.any(Number) });
      expect(new Set([...terms.values()].map((term) => term.concept))).toEqual(new Set([0, 1, 2]));
    });

    // Bug: words are told apart by their folded form, not their stem, so "PDFs" and "pdf" take two
    // concepts for one term, and a skill about PDFs matches at most half of "PDFs, a pdf".
    it('counts inflections of one word once ("PDFs" and "pdf")', () => {
      expect(analyseQuery('PDFs, a pdf', KNOWN).concepts).toBe(1);
    });

    it('finds nothing in an empty request, or one of stop words, punctuation and single letters', () => {
      for (const request of ['', '   ', 'can you please help me with this?', '!!! ... ???', 'a b c']) {
        expect(analyseQuery(request, KNOWN)).toMatchObject({ terms: new Map(), concepts: 0 });
      }
    });

    it('matches a known rare word of five letters or more by its beginning too, a common or short one not', () => {
      expect(termsOf('slides').get('slide')).toMatchObject({ prefix: true, fuzzy: false });
      expect(termsOf('pdf').get('pdf')).toMatchObject({ prefix: false });
      const common = vocabulary(['slide'], 100, 6);
      expect(termsOf('slides', common).get('slide')).toMatchObject({ prefix: false });
      expect(termsOf('slides', vocabulary(['slide'], 100, 5)).get('slide')).toMatchObject({ prefix: true });
    });
  });

  describe('typos', () => {
    it('allows one edit in an unknown word of five letters or more, none in a shorter or known one', () => {
      expect(termsOf('spreadsheat').get(englishStem('spreadsheat'))).toMatchObject({ weight: 1, fuzzy: 1 });
      expect(termsOf('pdg').get('pdg')).toMatchObject({ fuzzy: false });
      expect(termsOf('spreadsheet').get('spreadsheet')).toMatchObject({ fuzzy: false });
    });

    it('tries two swapped letters ("powerpiont" → powerpoint) at WEIGHTS.transposed, as the same concept', () => {
      const { terms, concepts } = analyseQuery('powerpiont', KNOWN);
      expect(concepts).toBe(1);
      expect(terms.get('powerpoint')).toEqual({ weight: WEIGHTS.transposed, prefix: false, fuzzy: false, concept: 0 });
      expect(terms.get('powerpiont')).toMatchObject({ weight: 1, concept: 0 });
    });

    it('splits a word the index knows only as two ("blogpost") at WEIGHTS.split, as one concept', () => {
      const { terms, concepts } = analyseQuery('blogpost', KNOWN);
      expect(concepts).toBe(1);
      expect(terms.get('blog')).toEqual({ weight: WEIGHTS.split, prefix: false, fuzzy: false, concept: 0 });
      expect(terms.get('post')).toEqual({ weight: WEIGHTS.split, prefix: false, fuzzy: false, concept: 0 });
      // Halves are three letters or more, and not stop words.
      expect(keysOf('abpost', vocabulary(['ab', 'post']))).not.toContain('post');
      expect(keysOf('intothe', vocabulary(['into', 'the']))).toEqual(['intoth']);
    });
  });

  describe('related words', () => {
    it('maps a word people use to the words skills use, weakly, as the same concept', () => {
      const { terms, concepts } = analyseQuery('phone', KNOWN);
      expect(concepts).toBe(1);
      expect(terms.get('mobil')).toEqual({ weight: WEIGHTS.related, prefix: false, fuzzy: false, concept: 0 });
      expect(terms.get('respons')).toEqual({ weight: WEIGHTS.related, prefix: false, fuzzy: false, concept: 0 });
    });

    it('maps a phrase at WEIGHTS.relatedPhrase without a concept: its words count on their own', () => {
      const { terms, concepts } = analyseQuery('small screens', KNOWN);
      expect(concepts).toBe(2);
      expect(terms.get('respons')).toEqual({ weight: WEIGHTS.relatedPhrase, prefix: false, fuzzy: false, concept: -1 });
      expect(terms.get('small')).toMatchObject({ weight: 1 });
      expect(terms.get('screen')).toMatchObject({ weight: 1 });
    });
  });

  describe('Spanish', () => {
    it('translates the words of a Spanish request', () => {
      const { terms, concepts } = analyseQuery('extrae el texto de este PDF', KNOWN);
      expect([...terms.keys()].sort()).toEqual(['extract', 'pdf', 'text']);
      expect(concepts).toBe(3);
      for (const term of terms.values()) expect(term.weight).toBe(1);
    });

    it('drops Spanish function words even when English knows them ("con", "muy" → MUI)', () => {
      expect(englishStem('muy')).toBe('mui');
      const { terms, concepts } = analyseQuery('una presentación con gráficos muy bonitos', KNOWN);
      expect(terms.has('con')).toBe(false);
      expect(terms.has('mui')).toBe(false);
      expect(terms.has('present')).toBe(true);
      expect(terms.has('chart')).toBe(true);
      expect(concepts).toBe(3);
      // In an English request the same word is a word.
      expect(termsOf('the pros and the con of this approach').has('con')).toBe(true);
    });

    it('translates a word the glossary knows even when English has it too, in a Spanish request only', () => {
      expect(keysOf('un informe')).toEqual(['report']);
      expect(keysOf('informe')).toEqual(['inform']);
    });

    it('translates glossary phrases ("base de datos" → database) as one concept, their words not read alone', () => {
      const { terms, concepts } = analyseQuery('base de datos', KNOWN);
      expect(terms).toEqual(
        new Map([['databas', { weight: WEIGHTS.translated, prefix: false, fuzzy: false, concept: 0 }]]),
      );
      expect(concepts).toBe(1);
      expect(keysOf('diseña una base de datos')).toEqual(['databas', 'design']);
      expect(analyseQuery('diseña una base de datos', KNOWN).concepts).toBe(2);
      const sheet = analyseQuery('una hoja de cálculo', KNOWN);
      expect([...sheet.terms.keys()].sort()).toEqual(['excel', 'spreadsheet', 'xlsx']);
      expect(sheet.concepts).toBe(1);
    });

    it('reads accents either way ("presentacion", "PRESENTACIÓN")', () => {
      expect(analyseQuery('una presentacion', KNOWN)).toEqual(analyseQuery('una presentación', KNOWN));
      expect(analyseQuery('UNA PRESENTACIÓN', KNOWN)).toEqual(analyseQuery('una presentación', KNOWN));
    });

    // Bug: each occurrence of a glossary phrase takes a concept, though it adds the same terms, so a
    // repeated phrase halves the share of a skill that matches it.
    it('counts a repeated phrase once', () => {
      expect(analyseQuery('base de datos, base de datos', KNOWN).concepts).toBe(1);
    });
  });

  describe('context', () => {
    it('weighs context terms at WEIGHTS.context, with no concept, prefix or typo matching', () => {
      const { terms, concepts } = analyseQuery('pdf', KNOWN, 'we made slides and a spreadsheat for the base de datos');
      expect(concepts).toBe(1);
      expect(terms.get('pdf')).toMatchObject({ weight: 1, concept: 0 });
      for (const [term, query] of terms) {
        if (term === 'pdf') continue;
        expect(query.concept).toBe(-1);
        expect(query.weight).toBeLessThanOrEqual(WEIGHTS.context);
        expect(query).toMatchObject({ prefix: false, fuzzy: false });
      }
      expect(terms.get('slide')).toEqual({ weight: WEIGHTS.context, prefix: false, fuzzy: false, concept: -1 });
      expect(terms.get('databas')).toEqual({
        weight: WEIGHTS.context * WEIGHTS.translated,
        prefix: false,
        fuzzy: false,
        concept: -1,
      });
    });

    it('never weakens a word the request has', () => {
      expect(termsOf('slides', KNOWN, 'slides slides').get('slide')).toEqual(termsOf('slides').get('slide'));
    });

    it('counts no concept for a request of stop words, whatever the context', () => {
      const { terms, concepts } = analyseQuery('please do it', KNOWN, 'the pdf text');
      expect(concepts).toBe(0);
      expect([...terms.values()].every((term: QueryTerm) => term.concept === -1)).toBe(true);
    });
  });

  describe('limits', () => {
    it(`reads at most MAX_QUERY_WORDS (${MAX_QUERY_WORDS}) meaningful words, the first ones`, () => {
      const words = Array.from({ length: 200 }, (_, i) => `w${i.toString(36)}`);
      const { terms, concepts } = analyseQuery(words.join(' '), KNOWN);
      expect(concepts).toBe(MAX_QUERY_WORDS);
      expect(terms.has(`w${(MAX_QUERY_WORDS - 1).toString(36)}`)).toBe(true);
      expect(terms.has(`w${MAX_QUERY_WORDS.toString(36)}`)).toBe(false);
      // Stop words and repeats do not use up the allowance.
      const padded = analyseQuery(
        ['the', 'a', ...words.slice(0, 10), ...words.slice(0, 10), ...words.slice(10)].join(' '),
        KNOWN,
      );
      expect(padded.concepts).toBe(MAX_QUERY_WORDS);
      expect(padded.terms).toEqual(terms);
    });

    it('keeps concepts and terms bounded for 10,000 words and for a 1 MB request', () => {
      const many = analyseQuery(Array.from({ length: 10_000 }, (_, i) => `word${i}`).join(' '), KNOWN);
      expect(many.concepts).toBeLessThanOrEqual(MAX_QUERY_WORDS);
      expect(many.terms.size).toBeLessThanOrEqual(MAX_QUERY_WORDS * 4);
      const huge = analyseQuery('pdf slides deck '.repeat(65_536), KNOWN);
      expect(huge.concepts).toBe(3);
    });

    it(`reads the request's first MAX_REQUEST_CHARS (${MAX_REQUEST_CHARS}) characters only`, () => {
      expect(termsOf(`${' '.repeat(MAX_REQUEST_CHARS - 4)}pdf`).has('pdf')).toBe(true);
      expect(termsOf(`${' '.repeat(MAX_REQUEST_CHARS - 2)}pdf`).has('pdf')).toBe(false);
    });

    // Bug: phrases are read from the first 256 words and each occurrence takes a concept, so the
    // count of concepts is not held to MAX_QUERY_WORDS (85 here).
    it('counts at most MAX_QUERY_WORDS concepts with many glossary phrases', () => {
      expect(analyseQuery('base de datos '.repeat(100), KNOWN).concepts).toBeLessThanOrEqual(MAX_QUERY_WORDS);
    });
  });
});

describe('the word lists (data files)', () => {
  /**
   * The keys of a lexicon's entries, read from the file's text: JSON.parse keeps only the last of a key written twice.
   */
  const entryKeys = (file: string) =>
    [...readFileSync(new URL(file, import.meta.url), 'utf8').matchAll(/^ {4}"((?:[^"\\]|\\.)*)": "/gm)].map(
      (match) => match[1],
    );

  it.each(['spanish-glossary.json', 'related-terms.json'])('%s has each key once, across its sections', (file) => {
    const keys = entryKeys(file);
    expect(keys.length).toBeGreaterThan(1000);
    expect(keys.filter((key, index) => keys.indexOf(key) !== index)).toEqual([]);
  });
});
