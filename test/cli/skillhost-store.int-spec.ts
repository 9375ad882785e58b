import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';
import { tarGzOf, zipOf } from '../support/skill-archives.js';
import { skillMd, tempTree, writeSkill } from '../support/files/skill-tree.js';
import { gitRepo } from '../support/files/git-repo.js';
import { run } from './run-cli.js';

const DIGEST = /sha256:[0-9a-f]{64}/;

describe('skillhost install / versions / enable / disable / uninstall', () => {
  const tree = tempTree('skillhost-cli-store-');
  let db: TestDatabase;
  const cli = (...argv: string[]) => run([...argv, '--config', 'cfg.toml'], tree.root);

  beforeAll(async () => {
    db = await createTestDatabase();
    tree.write(
      'cfg.toml',
      `[app.database]\nurl = "${db.url}"\n[app.skills]\nstore_directory = ` +
        `"${tree.path('store')}"\ndisabled = ["locked"]\n`,
    );
    writeSkill(tree, 'src', 'weekly', { description: 'Writes the weekly summary.' });
    tree.write('src/weekly/references/how.md', 'one');
  });
  afterAll(async () => {
    await db?.drop();
    tree.cleanup();
  });

  it('installs a folder, then the same content again (unchanged), then a zip of new content as version 2', async () => {
    const first = await cli('install', 'src/weekly');
    expect(first).toMatchObject({ code: 0, err: '' });
    expect(first.out).toMatch(/^Installed shared skill 'weekly' version 1 \(sha256:[0-9a-f]{64}, 2 file\(s\)\)\.$/);
    expect((await cli('install', 'src/weekly')).out).toMatch(/^Already installed: shared skill 'weekly' version 1/);
    const archive = await zipOf({
      'weekly/SKILL.md': skillMd({ name: 'weekly', description: 'Writes the weekly summary.' }),
      'weekly/references/how.md': 'two',
    });
    writeFileSync(tree.path('weekly.zip'), archive.body);
    const second = await cli('install', 'weekly.zip', '--json');
    expect(JSON.parse(second.out)).toMatchObject({
      name: 'weekly',
      scope: 'shared',
      version: 2,
      created: true,
      digest: expect.stringMatching(DIGEST),
    });
    const versions = await cli('versions', 'weekly');
    expect(versions.code).toBe(0);
    expect(versions.out.split('\n').map((line) => line.split(/\s+/)[0])).toEqual(['VERSION', '1', '2']);
    expect(versions.out).toMatch(/^2 \*/m);
  });

  it("installs a user's personal skill from a tar.gz, and refuses an unsafe archive with nothing stored", async () => {
    await cli('users', 'add', 'ann');
    const archive = await tarGzOf({ 'SKILL.md': skillMd({ name: 'notes', description: 'Notes.' }) });
    writeFileSync(tree.path('notes.tar.gz'), archive.body);
    expect((await cli('install', 'notes.tar.gz', '--personal', '--user', 'ann')).out).toMatch(
      /^Installed ann's personal skill 'notes' version 1/,
    );
    expect((await cli('versions', 'notes')).code).toBe(1);
    expect((await cli('versions', 'notes', '--personal', '--user', 'ann')).code).toBe(0);
    const before = await query<{ n: number }>(db.url, 'SELECT count(*)::int AS n FROM skill_versions');
    const evil = await tarGzOf({ 'x/SKILL.md': skillMd({ name: 'x' }) }, [
      { name: 'x/link', type: 'symlink', linkname: '/etc/passwd' },
    ]);
    writeFileSync(tree.path('evil.tar.gz'), evil.body);
    const refused = await cli('install', 'evil.tar.gz');
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/link/i);
    expect(await query<{ n: number }>(db.url, 'SELECT count(*)::int AS n FROM skill_versions')).toEqual(before);
    expect((await cli('install', 'nowhere')).code).toBe(1);
    expect((await cli('install', 'cfg.toml')).err).toMatch(/not a folder/);
    expect((await cli('install', 'x', '--user', 'ann')).code).toBe(2);
  });

  it('switches skills off and on, persisted; a configured switch cannot be overridden', async () => {
    expect((await cli('disable', 'weekly')).code).toBe(0);
    expect(await query(db.url, 'SELECT name, enabled FROM skill_switches')).toEqual([
      { name: 'weekly', enabled: false },
    ]);
    expect((await cli('enable', 'weekly')).code).toBe(0);
    expect(await query(db.url, 'SELECT name, enabled FROM skill_switches')).toEqual([
      { name: 'weekly', enabled: true },
    ]);
    const locked = await cli('enable', 'locked');
    expect(locked.code).toBe(1);
    expect(locked.err).toMatch(/configuration/);
  });

  it('installs every skill under a path of a git repository, recording the commit; a bad source exits 1', async () => {
    const repo = gitRepo(tree.path('repo'));
    const commit = repo.commit(
      {
        'skills/glossary/SKILL.md': skillMd({ name: 'glossary', description: 'Team words.' }),
        'skills/deep/onboarding/SKILL.md': skillMd({ name: 'onboarding', description: 'Onboards.' }),
      },
      'two skills',
    );
    repo.push();
    const installed = await cli('install', `git+file://${repo.bare}#:skills`);
    expect(installed).toMatchObject({ code: 0, err: '' });
    expect(installed.out.split('\n').map((line) => line.replace(/ \(sha256.*/, ''))).toEqual([
      "Installed shared skill 'onboarding' version 1",
      "Installed shared skill 'glossary' version 1",
    ]);
    const versions = JSON.parse((await cli('versions', 'glossary', '--json')).out);
    expect(versions.versions[0].source).toEqual({ url: `file://${repo.bare}`, path: 'skills/glossary', commit });
    const refused = await cli('install', 'git+ssh://host/repo.git');
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/git\+https:\/\/, git\+http:\/\/ or git\+file:\/\//);
  });

  it("installs a git repository's submodules with --submodules, and only then", async () => {
    const vendored = gitRepo(tree.path('vendored'));
    vendored.commit({ 'SKILL.md': skillMd({ name: 'vendored', description: 'In a submodule.' }) }, 'vendored');
    vendored.push();
    const main = gitRepo(tree.path('with-submodule'));
    main.commit({ 'kit/own/SKILL.md': skillMd({ name: 'own', description: 'In the repository.' }) }, 'own');
    execFileSync(
      'git',
      ['-c', 'protocol.file.allow=always', 'submodule', 'add', '--quiet', `file://${vendored.bare}`, 'kit/vendored'],
      { cwd: tree.path('with-submodule', 'work'), env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null' } },
    );
    main.commit({}, 'with a submodule');
    main.push();
    const names = (out: string) => out.split('\n').map((line) => line.replace(/ version .*/, ''));
    const without = await cli('install', `git+file://${main.bare}#:kit`);
    expect(names(without.out)).toEqual(["Installed shared skill 'own'"]);
    const withSubmodules = await cli('install', `git+file://${main.bare}#:kit`, '--submodules');
    expect(withSubmodules).toMatchObject({ code: 0, err: '' });
    expect(names(withSubmodules.out)).toEqual([
      "Already installed: shared skill 'own'",
      "Installed shared skill 'vendored'",
    ]);
    const misplaced = await cli('install', 'src/weekly', '--submodules');
    expect(misplaced.code).toBe(2);
    expect(misplaced.err).toContain('--submodules goes with a git SOURCE');
  });

  it('installs the skills of a plugin marketplace folder, naming the plugins it could not follow', async () => {
    tree.write(
      'market/.claude-plugin/marketplace.json',
      JSON.stringify({
        name: 'team',
        plugins: [
          { name: 'docs', source: './plugins/docs' },
          { name: 'elsewhere', source: { source: 'url', url: 'https://example.test/plugin.git' } },
        ],
      }),
    );
    writeSkill(tree, 'market/plugins/docs/skills', 'api-docs', { description: 'Writes API docs.' });
    const installed = await cli('install', 'market');
    expect(installed.code).toBe(0);
    expect(installed.out).toMatch(/^Installed shared skill 'api-docs' version 1/);
    expect(installed.err).toBe(
      "warning: Plugin 'elsewhere' comes from elsewhere (url https://example.test/plugin.git): import it from " +
        'its own ' +
        'source.',
    );
  });

  it('uninstalls, and says so when there is nothing to uninstall', async () => {
    expect((await cli('uninstall', 'weekly')).out).toBe("Uninstalled shared skill 'weekly'.");
    const again = await cli('uninstall', 'weekly');
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/not installed/);
    expect((await cli('uninstall', 'notes', '--personal', '--user', 'ann')).code).toBe(0);
  });
});
