import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { corpusPath } from '../support/files/corpus.js';
import { skillMd, tempTree, type TempTree, writeSkill } from '../support/files/skill-tree.js';
import { run } from './run-cli.js';

describe('skillhost CLI', () => {
  let tree: TempTree;
  beforeEach(() => {
    tree = tempTree();
    writeSkill(tree, 's', 'good');
    writeSkill(tree, 's', 'versioned', { extra: 'version: 1.0' });
    writeSkill(tree, 's', 'Bad');
  });
  afterEach(() => tree.cleanup());

  describe('validate', () => {
    it('prints Valid skill for a folder or its SKILL.md and exits 0', async () => {
      expect(await run(['validate', 's/good', 's/good/SKILL.md'], tree.root)).toEqual({
        code: 0,
        out: 'Valid skill: s/good\nValid skill: s/good/SKILL.md',
        err: '',
      });
    });

    it('prints every error on stderr and exits 1 when any skill is invalid', async () => {
      const result = await run(['validate', 's/good', 's/Bad', 's/missing', 's'], tree.root);
      expect(result.code).toBe(1);
      expect(result.out).toBe('Valid skill: s/good');
      expect(result.err).toBe(
        [
          'Validation failed for s/Bad:',
          "  - Skill name 'Bad' must be lowercase",
          'Validation failed for s/missing:',
          '  - Path does not exist: s/missing',
          'Validation failed for s:',
          '  - Missing required file: SKILL.md',
        ].join('\n'),
      );
    });

    it('is strict by default (unknown fields are errors) and follows --mode', async () => {
      expect((await run(['validate', 's/versioned'], tree.root)).code).toBe(1);
      const standard = await run(['validate', '--mode', 'standard', 's/versioned'], tree.root);
      expect(standard.code).toBe(0);
      expect(standard.err).toContain('warning: Unexpected fields in frontmatter: version.');
    });

    it('prints JSON with --json', async () => {
      const result = await run(['validate', '--json', 's/good', 's/Bad'], tree.root);
      expect(result.code).toBe(1);
      expect(JSON.parse(result.out)).toEqual([
        { path: 's/good', valid: true, name: 'good', errors: [], warnings: [] },
        { path: 's/Bad', valid: false, name: 'Bad', errors: ["Skill name 'Bad' must be lowercase"], warnings: [] },
      ]);
    });

    it('gives the reference verdicts on the anthropics-skills corpus', async () => {
      const folders = ['algorithmic-art', 'claude-api', 'template', 'mcp-builder'].map((f) =>
        corpusPath('anthropics-skills', f),
      );
      const results = JSON.parse((await run(['validate', '--json', ...folders], tree.root)).out);
      expect(results.map((r: { valid: boolean }) => r.valid)).toEqual([true, false, false, true]);
    });

    it('rejects a bad mode with usage and exit 2', async () => {
      expect(await run(['validate', '--mode', 'loose', 's/good'], tree.root)).toMatchObject({
        code: 2,
        err: expect.stringContaining("--mode must be one of strict, standard, lenient; got 'loose'"),
      });
      expect((await run(['validate'], tree.root)).code).toBe(2);
      expect((await run(['frobnicate'], tree.root)).code).toBe(2);
    });
  });

  describe('create', () => {
    it('scaffolds a skill folder that the strict validator accepts as it is', async () => {
      const created = await run(
        [
          'create',
          'release-notes',
          '--dir',
          'new',
          '--description',
          'Writes release notes. Use when a release is cut.',
        ],
        tree.root,
      );
      expect(created).toEqual({
        code: 0,
        err: '',
        out: [
          `Created ${tree.path('new/release-notes')}: edit SKILL.md (its description ` +
            `is what the catalogue shows), then check it with skillhost validate new/release-notes`,
          `Note: the server does not load skills from ${tree.path('new')}: its skills directories are ` +
            `./.skills, ./.agents/skills, ~/.agents/skills, ~/.skillhost/skills ([app.skills] directories).`,
        ].join('\n'),
      });
      expect(readdirSync(tree.path('new/release-notes')).sort()).toEqual([
        'SKILL.md',
        'assets',
        'references',
        'scripts',
      ]);
      expect(readFileSync(tree.path('new/release-notes/SKILL.md'), 'utf8')).toMatch(
        new RegExp(
          '^---\\nname: release-notes\\ndescription: "Writes release notes\\. Use when a release is ' +
            'cut\\."\\n---\\n\\n# release-notes\\n',
        ),
      );
      expect(await run(['validate', 'new/release-notes'], tree.root)).toMatchObject({
        code: 0,
        out: 'Valid skill: new/release-notes',
      });
      // With no description, a placeholder that still validates.
      expect((await run(['create', 'plain', '--dir', '.'], tree.root)).code).toBe(0);
      expect(await run(['validate', 'plain'], tree.root)).toMatchObject({ code: 0 });
    });

    it('without --dir goes into the first configured skills directory, where the server loads it', async () => {
      tree.write('create.toml', '[app.skills]\nenabled = true\ndirectories = ["./mine", "./shared"]\n');
      const created = await run(['create', 'weekly-report', '--config', 'create.toml'], tree.root);
      expect(created).toEqual({
        code: 0,
        err: '',
        out: [
          `Created ${tree.path('mine/weekly-report')}: edit SKILL.md (its description ` +
            `is what the catalogue shows), then check it with skillhost validate mine/weekly-report`,
          'The server loads it from there after a reload (POST /v1/admin/skills/reload, a restart, or at once ' +
            'with [app.skills] watch = true).',
        ].join('\n'),
      });
      expect(
        await run(['list', '--config', 'create.toml', '--json'], tree.root).then((r) =>
          JSON.parse(r.out).valid.map((s: { name: string }) => s.name),
        ),
      ).toEqual(['weekly-report']);
      // The shipped defaults: ./.skills, with skills off said.
      const defaulted = (await run(['create', 'defaulted'], tree.root)).out;
      expect(defaulted).toContain(`Created ${tree.path('.skills/defaulted')}`);
      expect(defaulted).toContain('Skills are off in this configuration ([app.skills] enabled = false).');
      expect((await run(['create', 'off', '--dir', 'shared', '--config', 'create.toml'], tree.root)).out).toContain(
        'The server loads it from there',
      );
      tree.write('empty.toml', '[app.skills]\ndirectories = []\n');
      expect(await run(['create', 'nowhere', '--config', 'empty.toml'], tree.root)).toMatchObject({
        code: 2,
        err: expect.stringContaining('give --dir'),
      });
    });

    it('refuses a name the specification does not allow, or a folder that exists, and changes nothing', async () => {
      const bad = await run(['create', 'Bad_Name'], tree.root);
      expect(bad.code).toBe(1);
      expect(bad.err).toMatch(/^Cannot create skill 'Bad_Name': .*lowercase/);
      expect(existsSync(tree.path('Bad_Name'))).toBe(false);
      await run(['create', 'twice', '--dir', '.'], tree.root);
      const again = await run(['create', 'twice', '--dir', '.'], tree.root);
      expect(again).toMatchObject({
        code: 1,
        err: `Cannot create skill 'twice': ${tree.path('twice')} already exists; choose another name or --dir.`,
      });
      expect(await run(['create'], tree.root)).toMatchObject({ code: 2 });
    });
  });

  describe('to-prompt', () => {
    it('renders xml with locations by default', async () => {
      const result = await run(['to-prompt', 's/good'], tree.root);
      expect(result).toEqual({
        code: 0,
        err: '',
        out: [
          '<available_skills>',
          '<skill>',
          '<name>good</name>',
          '<description>Does a useful thing. Use when a test needs a skill.</description>',
          `<location>${tree.path('s/good/SKILL.md')}</location>`,
          '</skill>',
          '</available_skills>',
        ].join('\n'),
      });
    });

    it('renders json and markdown on request', async () => {
      expect(
        JSON.parse((await run(['to-prompt', '--format', 'json', 's/good'], tree.root)).out).available_skills[0].name,
      ).toBe('good');
      // Locations as in every to-prompt format; in markdown as the aloop design writes them.
      expect((await run(['to-prompt', '--format', 'markdown', 's/good'], tree.root)).out).toBe(
        `- good: Does a useful thing. Use when a test needs a skill. (file: ${tree.path('s/good/SKILL.md')})`,
      );
    });

    it('refuses invalid skills with exit 1', async () => {
      expect(await run(['to-prompt', 's/Bad'], tree.root)).toMatchObject({ code: 1, out: '' });
    });
  });

  describe('list', () => {
    it('runs discovery with the configured directories', async () => {
      tree.write('cfg.toml', '[app.skills]\nenabled = true\ndirectories = ["s", "nowhere"]\n');
      tree.write('s/dup/SKILL.md', skillMd({ name: 'dup' }));
      const result = await run(['list', '--config', 'cfg.toml', '--json'], tree.root);
      expect(result.code).toBe(0);
      const report = JSON.parse(result.out);
      expect(report).toMatchObject({
        enabled: true,
        mode: 'standard',
        valid: [{ name: 'dup' }, { name: 'good' }, { name: 'versioned' }],
        invalid: [{ path: tree.path('s/Bad') }],
      });
      expect(report.directories.map((d: { exists: boolean }) => d.exists)).toEqual([true, false]);
      const text = (await run(['list', '--config', 'cfg.toml'], tree.root)).out;
      expect(text).toContain('Valid (3):');
      expect(text).toContain("  - Skill name 'Bad' must be lowercase");
    });

    it('reports an invalid configuration one line per problem, exit 2', async () => {
      tree.write('cfg.toml', '[app.skills]\nvalidation = "loose"\n');
      expect(await run(['list', '--config', 'cfg.toml'], tree.root)).toMatchObject({
        code: 2,
        err: 'config: app.skills.validation: "loose" is not allowed; expected one of strict, standard, lenient',
      });
    });
  });
});
