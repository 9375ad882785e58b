import { describe, expect, it } from '@jest/globals';
import { corpusPath } from '../../../test/support/corpus.js';
import { discoverSkills } from '../skill-discovery.js';
import { type RankableSkill, type RankedSkill, SkillRanker } from './skill-ranker.js';

type Entry = RankableSkill;

const skill = (overrides: Partial<Entry> = {}): Entry => ({
  name: 'csv-cleaner',
  description: 'Cleans CSV exports: trims whitespace, fixes encodings and removes duplicate rows.',
  ...overrides,
});

function corpusSkills(...folder: string[]): Entry[] {
  const path = corpusPath(...folder);
  const { skills } = discoverSkills({ directories: [{ configured: path, path }], mode: 'standard', maxDepth: 3, maxSkills: 10_000 });
  return skills.map(({ name, description }) => ({ name, description }));
}

/**
 * The shared corpus has no document skills (their folders are not permissively licensed), so these
 * stand in for them, written in the same style.
 */
const DOCUMENT_SKILLS: Entry[] = [
  skill({ name: 'pdf', description: 'Extract text and tables from PDF files, fill PDF forms, merge and split documents, and create new PDFs. Use when the user works with .pdf files.' }),
  skill({ name: 'pptx', description: 'Create, edit and analyse PowerPoint presentations (.pptx): slide decks, layouts, speaker notes and themes. Use when the user asks for slides, a deck or a presentation.' }),
  skill({ name: 'docx', description: 'Create and edit Word documents (.docx) with tracked changes, comments and formatting. Use for reports, letters and memos in Word format.' }),
  skill({ name: 'xlsx', description: 'Create and analyse spreadsheets (.xlsx, .csv): formulas, charts, pivot tables and data cleaning. Use when the user works with Excel files.' }),
];

const ANTHROPIC_SKILLS = [...corpusSkills('anthropics-skills'), ...DOCUMENT_SKILLS];

const names = (matches: RankedSkill[]) => matches.map((match) => match.name);

describe(SkillMatcher.name, () => {
  describe('on the anthropics-skills corpus', () => {
    const sut = new SkillMatcher(ANTHROPIC_SKILLS);

    it('picks the pdf skill for a PDF request, above the default threshold of half the words', () => {
      const [best] = sut.rank('extract the text from this PDF');
      expect(best).toEqual({ name: 'pdf', description: DOCUMENT_SKILLS[0].description, score: 1 });
    });

    it('picks the pptx skill for a deck', () => {
      const matches = sut.rank('make a powerpoint deck');
      expect(matches[0]).toMatchObject({ name: 'pptx', score: 1 });
      expect(matches.length).toBeLessThanOrEqual(3);
    });

    it('matches inflected words and plurals ("extracting", "PDFs", "slides")', () => {
      expect(sut.rank('Extracting tables out of PDFs')[0]).toMatchObject({ name: 'pdf', score: 1 });
      expect(sut.rank('I need slides for Monday')[0]).toMatchObject({ name: 'pptx' });
    });

    it('tolerates a typo in a long word', () => {
      expect(sut.rank('a powerpont presentation')[0]).toMatchObject({ name: 'pptx', score: 1 });
    });

    it('scores the share of the meaningful words the skill matches, stop words left out', () => {
      // extract, text, pdf match; translate and klingon do not: 3 of 5.
      const [best] = sut.rank('Can you please extract the text from this PDF and translate it to Klingon?');
      expect(best.name).toBe('pdf');
      expect(best.score).toBeCloseTo(3 / 5, 10);
    });

    it('names the skills real requests are written for', () => {
      expect(sut.rank('make me a GIF for Slack')[0]).toMatchObject({ name: 'slack-gif-creator', score: 1 });
      expect(sut.rank('build an MCP server in TypeScript')[0]).toMatchObject({ name: 'mcp-builder', score: 1 });
      expect(sut.rank('test my local web application with Playwright')[0]).toMatchObject({ name: 'webapp-testing', score: 1 });
      expect(sut.rank('write a status report for leadership')[0]).toMatchObject({ name: 'internal-comms', score: 1 });
    });

    it('returns at most `limit` matches, best first by score', () => {
      const matches = sut.rank('create a poster, a slide deck and a spreadsheet with charts', 10);
      expect(matches.length).toBeGreaterThan(3);
      expect(matches.length).toBeLessThanOrEqual(10);
      const scores = matches.map((match) => match.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      expect(sut.rank('create a poster, a slide deck and a spreadsheet with charts', 1)).toEqual(matches.slice(0, 1));
    });

    it('finds nothing, or nothing above the threshold, for a request no skill is about', () => {
      const matches = sut.rank('what is the weather like in Paris tomorrow?');
      expect(matches.every((match) => match.score < 0.5)).toBe(true);
    });

    it('returns nothing for a request of stop words only', () => {
      expect(sut.rank('Can you please help me with this?')).toEqual([]);
      expect(sut.rank('I want you to do it')).toEqual([]);
      expect(sut.rank('')).toEqual([]);
    });
  });

  describe('on the whole shared corpus (about 2,000 skills)', () => {
    const sut = new SkillMatcher(corpusSkills());

    it('still puts a skill about the request first', () => {
      const [pdf] = sut.rank('extract the text from this PDF');
      expect(pdf.name).toMatch(/pdf/);
      expect(pdf.score).toBeGreaterThanOrEqual(0.5);
      const [deck] = sut.rank('make a powerpoint deck');
      expect(deck).toMatchObject({ score: 1, description: expect.stringMatching(/PowerPoint/) });
      expect(sut.rank('deploy my app to Vercel')[0].name).toBe('deploy-to-vercel');
    });

    it('puts the skills that match most of the request first, even where a rarer word would score higher', () => {
      // BM25 alone puts slack-messaging (only "message", in its name) before git-pushing (all but "write").
      const matches = sut.rank('write a commit message', 10);
      expect(matches[0]).toMatchObject({ name: 'git-pushing', score: 2 / 3 });
      const scores = matches.map((match) => match.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
    });
  });

  describe('ranking', () => {
    it('breaks ties by name', () => {
      const sut = new SkillMatcher([skill({ name: 'beta' }), skill({ name: 'alpha' }), skill({ name: 'gamma' })]);
      expect(names(sut.rank('clean my CSV'))).toEqual(['alpha', 'beta', 'gamma']);
    });

    it('puts a skill whose name has the word before one that only mentions it', () => {
      const sut = new SkillMatcher([
        skill({ name: 'data-tools', description: 'Invoices.' }),
        skill({ name: 'invoice-maker', description: 'Generates finance documents for customers.' }),
      ]);
      expect(names(sut.rank('an invoice'))).toEqual(['invoice-maker', 'data-tools']);
    });

    it('treats the parts of a name split on - and _ as words', () => {
      const sut = new SkillMatcher([skill({ name: 'release_notes-writer', description: 'Drafts text.' })]);
      expect(sut.rank('release notes')).toEqual([{ name: 'release_notes-writer', description: 'Drafts text.', score: 1 }]);
    });

    it('matches a word by its beginning ("auth", "kube")', () => {
      const sut = new SkillMatcher([skill({ name: 'cluster-ops', description: 'Kubernetes authentication and RBAC.' })]);
      expect(sut.rank('kube auth')).toMatchObject([{ name: 'cluster-ops', score: 1 }]);
    });

    it('leaves out skills that match no word', () => {
      const sut = new SkillMatcher([skill(), skill({ name: 'haiku', description: 'Writes short poems.' })]);
      expect(names(sut.rank('remove duplicate rows'))).toEqual(['csv-cleaner']);
    });

    it('returns nothing for a limit below one, and nothing from an empty list of skills', () => {
      const sut = new SkillMatcher([skill()]);
      expect(sut.rank('csv', 0)).toEqual([]);
      expect(sut.rank('csv', -1)).toEqual([]);
      expect(sut.rank('csv', Number.NaN)).toEqual([]);
      expect(new SkillMatcher([]).rank('csv')).toEqual([]);
    });
  });

  describe('hostile requests', () => {
    const sut = new SkillMatcher(ANTHROPIC_SKILLS);
    const timed = (request: string) => {
      const started = performance.now();
      const matches = sut.rank(request);
      return { matches, ms: performance.now() - started };
    };

    it('ranks a 1 MB request quickly, on its first 64 distinct words', () => {
      const words = 'extract text pdf '.concat(Array.from({ length: 200 }, (_, i) => `filler${i}`).join(' '), ' ');
      const request = words.repeat(Math.ceil(1_048_576 / words.length)).slice(0, 1_048_576);
      const { matches, ms } = timed(request);
      expect(matches[0]).toMatchObject({ name: 'pdf', score: 3 / 64 });
      expect(ms).toBeLessThan(250);
    });

    it('stops at 64 distinct words in a request of 10,000', () => {
      const request = ['powerpoint', ...Array.from({ length: 10_000 }, (_, i) => `word${i}`), 'pdf'].join(' ');
      const { matches, ms } = timed(request);
      expect(names(matches)).toEqual(['pptx']);
      expect(matches[0].score).toBe(1 / 64);
      expect(ms).toBeLessThan(250);
    });

    it('ignores a 1 MB word and 1 MB of punctuation or stop words', () => {
      expect(timed('a'.repeat(1_048_576)).matches).toEqual([]);
      expect(timed('!?.,;:-_'.repeat(131_072)).matches).toEqual([]);
      const stopWords = timed('the a please me '.repeat(65_536));
      expect(stopWords.matches).toEqual([]);
      expect(stopWords.ms).toBeLessThan(250);
    });

    it('reads a request\'s terms from its first 64 Ki characters only', () => {
      expect(sut.rank(`${'the '.repeat(16_383)}pdf`)[0]).toMatchObject({ name: 'pdf' });
      expect(sut.rank(`${'the '.repeat(16_384)}pdf`)).toEqual([]);
    });

    it('reads words around emoji, NUL and unpaired surrogates', () => {
      expect(sut.rank('📄📄📄')).toEqual([]);
      expect(sut.rank('\0\uD800\uDFFF\uDC00')).toEqual([]);
      expect(sut.rank('📄pdf\0text\uD800extract\uDC00')[0]).toMatchObject({ name: 'pdf', score: 1 });
    });

    it('indexes skills whose text is hostile too', () => {
      const odd = new SkillMatcher([skill({ name: '\uD800-\0', description: `${'x'.repeat(100_000)} 📄 PDF\0reader \uDC00` })]);
      expect(odd.rank('pdf reader')).toMatchObject([{ name: '\uD800-\0', score: 1 }]);
    });
  });
});

