import { describe, expect, it } from '@jest/globals';
import { ConfigError } from '../../../src/config/config-loader.js';
import { resolveSkillsOptions, type SkillsModuleOptions } from './skills-options.js';

/** What `SkillsModule.forRoot` options become, and every way they can be wrong. */
describe(resolveSkillsOptions.name, () => {
  const problemsOf = (options: unknown): readonly string[] => {
    try {
      resolveSkillsOptions(options as SkillsModuleOptions, '/home/app');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      return (error as ConfigError).problems;
    }
    throw new Error('expected a ConfigError');
  };

  it(
    "gives the server's defaults for everything but the folders; relative folders resolve from rootDir, ~ from " +
      'the home folder',
    () => {
      const sut = resolveSkillsOptions(
        { directories: ['skills', '~/.agents/skills', '/abs'], rootDir: '/srv/app' },
        '/home/app',
      );
      expect(sut.skills.directories.map((d) => d.path)).toEqual([
        '/srv/app/skills',
        '/home/app/.agents/skills',
        '/abs',
      ]);
      expect(sut.skills).toMatchObject({
        enabled: true,
        validation: 'standard',
        maxDepth: 1,
        catalogueFormat: 'json',
        catalogueBudgetTokens: 4000,
        catalogueMaxSkills: 50,
        disabled: [],
        explicitPrefixes: ['/'],
      });
      expect(sut).toMatchObject({ commandDirectories: [], scriptsEnabled: false, toolStyle: 'skillhost' });
    },
  );

  it('maps every option to its setting', () => {
    const sut = resolveSkillsOptions(
      {
        directories: ['/s'],
        validation: 'strict',
        maxDepth: 3,
        maxSkills: 10,
        maxSkillMdBytes: 4096,
        maxResourceBytes: 8192,
        disabled: ['pdf'],
        explicitPrefixes: ['/', '$'],
        catalogue: { format: 'xml', includeLocation: true, budgetTokens: 500, maxSkills: 5 },
        toolStyle: 'use_skill',
        isGlobal: true,
      },
      '/home/app',
    );
    expect(sut.skills).toMatchObject({
      validation: 'strict',
      maxDepth: 3,
      maxSkills: 10,
      maxSkillMdBytes: 4096,
      maxResourceBytes: 8192,
      disabled: ['pdf'],
      explicitPrefixes: ['/', '$'],
      catalogueFormat: 'xml',
      includeLocation: true,
      catalogueBudgetTokens: 500,
      catalogueMaxSkills: 5,
    });
    expect(sut.toolStyle).toBe('use_skill');
  });

  it.each([
    [null, ['SkillsModule options must be an object with `directories`']],
    [['/s'], ['SkillsModule options must be an object with `directories`']],
    [{}, ['SkillsModule option `directories` is required: the skill folders to scan']],
    [{ directories: '/s' }, ['SkillsModule option `directories` must be a list of strings']],
    [
      { directories: ['/s', 1, ''] },
      ['SkillsModule option `directories` must hold only non-empty strings (without NUL)'],
    ],
    [{ directories: ['/s\0x'] }, ['SkillsModule option `directories` must hold only non-empty strings (without NUL)']],
    [{ directories: ['/s'], maxDepth: '2' }, ['SkillsModule option `maxDepth` must be a finite number']],
    [{ directories: ['/s'], maxSkills: Number.NaN }, ['SkillsModule option `maxSkills` must be a finite number']],
    [{ directories: ['/s'], maxSkills: 10n }, ['SkillsModule option `maxSkills` must be a finite number']],
    [{ directories: ['/s'], catalogue: [] }, ['SkillsModule option `catalogue` must be an object']],
    [
      { directories: ['/s'], catalogue: { includeLocation: 'yes' } },
      ['SkillsModule option `catalogue.includeLocation` must be true or false'],
    ],
    [{ directories: ['/s'], isGlobal: 1 }, ['SkillsModule option `isGlobal` must be true or false']],
    [{ directories: ['/s'], rootDir: '' }, ['SkillsModule option `rootDir` must be a folder path']],
    [
      { directories: ['/s'], watch: true, catalogue: { colour: 'red' } },
      ['Unknown SkillsModule option `watch`', 'Unknown SkillsModule option `catalogue.colour`'],
    ],
    [
      JSON.parse('{"directories": ["/s"], "constructor": 1, "__proto__": {}}'),
      ['Unknown SkillsModule option `constructor`', 'Unknown SkillsModule option `__proto__`'],
    ],
  ])('refuses %j', (options, problems) => {
    expect(problemsOf(options)).toEqual(problems);
  });

  it("checks bounds and choices by the server's rules, naming each option", () => {
    expect(
      problemsOf({
        directories: ['/s'],
        maxDepth: 99,
        validation: 'loose',
        toolStyle: 'mine',
        explicitPrefixes: ['#'],
        catalogue: { budgetTokens: -1, format: 'yaml' },
      }),
    ).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^SkillsModule option `maxDepth`: 99 is not allowed/),
        expect.stringMatching(/^SkillsModule option `validation`: "loose" is not allowed/),
        expect.stringMatching(/^SkillsModule option `toolStyle`/),
        expect.stringMatching(/^SkillsModule option `explicitPrefixes`/),
        expect.stringMatching(/^SkillsModule option `catalogue.budgetTokens`: -1 is not allowed/),
        expect.stringMatching(/^SkillsModule option `catalogue.format`/),
      ]),
    );
  });
});
