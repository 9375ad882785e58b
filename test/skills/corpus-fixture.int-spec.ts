import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { corpusPath, findSkillFiles } from '../support/files/corpus.js';

/**
 * The real-world corpus ships with the repository (test/fixtures/skills-corpus.tar.gz), so the
 * suites that read it pass on a fresh clone; each collection keeps its source and license notice.
 */
describe('the skills corpus fixture', () => {
  it(
    'unpacks into this run’s folder with every collection, its source and license notice, and all 2,246 SKILL.md ' +
      'files',
    () => {
      const root = corpusPath();
      if (process.env.SKILLHOST_CORPUS === undefined)
        expect(root.startsWith(process.env.SKILLHOST_TEST_RUN_DIR!)).toBe(true);
      expect(readFileSync(corpusPath('README.md'), 'utf8')).toContain(
        'copied unchanged from permissively licensed repositories',
      );
      const collections = readdirSync(root, { withFileTypes: true })
        .filter((entry) => entry.isDirectory())
        .map((entry) => entry.name);
      expect(collections).toHaveLength(11);
      for (const collection of collections) {
        const notice = ['SOURCE.md', 'THIRD_PARTY_NOTICES.md'].find((file) => existsSync(corpusPath(collection, file)));
        expect([
          collection,
          notice !== undefined && /licen[sc]e/i.test(readFileSync(corpusPath(collection, notice), 'utf8')),
        ]).toEqual([collection, true]);
      }
      expect(findSkillFiles(root)).toHaveLength(2246);
    },
  );
});
