import { describe, expect, it } from '@jest/globals';
import { parseSkillsOptions } from './skills-options.schema.js';

/** The library's own check of its options: no server, no TOML keys, every problem named by its option. */
describe(parseSkillsOptions.name, () => {
  const place = { root: '/srv/app', home: '/home/app' };

  it('fills in the defaults and resolves the folders', () => {
    const sut = parseSkillsOptions({ directories: ['skills', '~/s'], catalogue: { format: 'xml' } }, place);
    expect(sut).toEqual({
      ok: true,
      options: {
        directories: [
          { configured: 'skills', path: '/srv/app/skills' },
          { configured: '~/s', path: '/home/app/s' },
        ],
        validation: 'standard',
        maxDepth: 1,
        maxSkills: 10_000,
        maxSkillMdBytes: 200_000,
        maxResourceBytes: 2_000_000,
        disabled: [],
        explicitPrefixes: ['/'],
        catalogue: { format: 'xml', includeLocation: false, budgetTokens: 4000, maxSkills: 50 },
        toolStyle: 'skillhost',
      },
    });
  });

  it('leaves rootDir and isGlobal to the module, checking only that they are what they say', () => {
    expect(parseSkillsOptions({ directories: ['/s'], rootDir: '/r', isGlobal: true }, place).ok).toBe(true);
    expect(parseSkillsOptions({ directories: ['/s'], rootDir: '', isGlobal: 'yes' }, place)).toEqual({
      ok: false,
      problems: [
        'SkillsModule option `rootDir` must be a folder path',
        'SkillsModule option `isGlobal` must be true or false',
      ],
    });
  });

  it('tells wrong types first, then, those all right, every value out of its rule, in the order of the options', () => {
    expect(parseSkillsOptions({ directories: ['/s'], maxDepth: '2', catalogue: { budgetTokens: -1 } }, place)).toEqual({
      ok: false,
      problems: ['SkillsModule option `maxDepth` must be a finite number'],
    });
    expect(
      parseSkillsOptions(
        { directories: ['/s'], catalogue: { budgetTokens: -1 }, maxDepth: 9, explicitPrefixes: ['#', '%'] },
        place,
      ),
    ).toEqual({
      ok: false,
      problems: [
        'SkillsModule option `maxDepth`: 9 is not allowed; expected an integer from 1 to 6',
        'SkillsModule option `explicitPrefixes`: ["#","%"] is not allowed; expected a list of /, $',
        'SkillsModule option `catalogue.budgetTokens`: -1 is not allowed; expected an integer from 100 to 1000000',
      ],
    });
  });
});
