import { readFileSync, renameSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestDatabase, query, type TestDatabase } from '../support/database.js';
import { type GitRepo, gitRepo } from '../support/files/git-repo.js';
import { skillMd, tempTree } from '../support/files/skill-tree.js';
import { run } from './run-cli.js';

const report = (guide: string) => ({
  'skills/report/SKILL.md': skillMd({ name: 'report', description: 'Writes weekly reports.' }),
  'skills/report/references/guide.md': guide,
});

/** `skillhost mirrors` on a real PostgreSQL, importing from a bare git repository over git+file://. */
describe('skillhost mirrors list / add / run / remove', () => {
  const tree = tempTree('skillhost-cli-mirrors-');
  let db: TestDatabase;
  let repo: GitRepo;
  const cli = (...argv: string[]) => run([...argv, '--config', 'cfg.toml'], tree.root);
  const currentVersion = async () => JSON.parse((await cli('versions', 'report', '--json')).out).current;

  beforeAll(async () => {
    db = await createTestDatabase();
    tree.write(
      'cfg.toml',
      `[app.database]\nurl = "${db.url}"\n[app.skills]\nstore_directory = "${tree.path('store')}"\n`,
    );
    repo = gitRepo(tree.path('repo'));
    repo.commit(report('guide, first edition'), 'first');
    repo.push();
  });
  afterAll(async () => {
    await db?.drop();
    tree.cleanup();
  });

  it('adds a mirror and lists it beside a configured one, which it cannot remove', async () => {
    expect(await cli('mirrors', 'list')).toMatchObject({ code: 0, out: expect.stringMatching(/^No mirrors\./) });
    // What a server writes at start-up for [app.skills.mirrors.configured].
    await query(
      db.url,
      "INSERT INTO skill_mirrors (name, origin, source, interval_seconds) VALUES ('configured', 'config', $1, 3600)",
      [`git+file://${tree.path('absent.git')}`],
    );
    const added = await cli('mirrors', 'add', 'team', `git+file://${repo.bare}#main:skills`, '--interval', '2h');
    expect(added).toMatchObject({ code: 0, err: '' });
    expect(added.out).toMatch(/^Added mirror 'team' of git\+file:\/\/.*#main:skills, every 2h/);
    const listed = await cli('mirrors', 'list');
    expect(listed.out.split('\n').map((line) => line.split(/\s+/).slice(0, 3))).toEqual([
      ['NAME', 'ORIGIN', 'INTERVAL'],
      ['configured', 'config', '1h'],
      ['team', 'api', '2h'],
    ]);
    const json = JSON.parse((await cli('mirrors', 'list', '--json')).out);
    expect(json.map((m: { name: string; readOnly: boolean }) => [m.name, m.readOnly])).toEqual([
      ['configured', true],
      ['team', false],
    ]);
    // The command's configuration is not the server's: its mirror tables are not written, the server's rows stay.
    tree.write(
      'other.toml',
      `${readFileSync(tree.path('cfg.toml'), 'utf8')}[app.skills.mirrors.elsewhere]\nsource = ` +
        `"git+file://${repo.bare}"\n`,
    );
    const other = await run(['mirrors', 'list', '--json', '--config', 'other.toml'], tree.root);
    expect(JSON.parse(other.out).map((m: { name: string }) => m.name)).toEqual(['configured', 'team']);
    const configured = await cli('mirrors', 'remove', 'configured');
    expect(configured.code).toBe(1);
    expect(configured.err).toMatch(/defined in the configuration \(\[app\.skills\.mirrors\.configured\]\)/);
    const taken = await cli('mirrors', 'add', 'team', `git+file://${repo.bare}`);
    expect(taken.code).toBe(1);
    expect(taken.err).toMatch(/A mirror named 'team' exists already/);
  });

  it('refuses a bad source, interval or name as a usage error (exit 2), adding nothing', async () => {
    const source = await cli('mirrors', 'add', 'other', 'git+ssh://host/repo.git');
    expect(source.code).toBe(2);
    expect(source.err).toMatch(
      /source: Cannot import from 'git\+ssh:\/\/host\/repo.git': git sources are git\+https:\/\/, .*#pdf'\.\n/,
    );
    const interval = await cli('mirrors', 'add', 'other', `git+file://${repo.bare}`, '--interval', '5s');
    expect(interval.code).toBe(2);
    expect(interval.err).toMatch(/interval: '5s' is not a duration from 1m to 7d/);
    expect((await cli('mirrors', 'add', 'Bad Name', `git+file://${repo.bare}`)).code).toBe(2);
    expect((await cli('mirrors', 'add', 'only-a-name')).code).toBe(2);
    expect((await cli('mirrors', 'frobnicate')).code).toBe(2);
    expect(await query(db.url, 'SELECT name FROM skill_mirrors ORDER BY name')).toEqual([
      { name: 'configured' },
      { name: 'team' },
    ]);
  });

  it('runs the import now and says what it installed; a new commit is a new version', async () => {
    const first = await cli('mirrors', 'run', 'team');
    expect(first).toMatchObject({ code: 0, err: '' });
    expect(first.out).toMatch(/^Installed shared skill 'report' version 1 \(sha256:[0-9a-f]{64}\)\.$/);
    expect((await cli('mirrors', 'run', 'team')).out).toMatch(/^Unchanged: shared skill 'report' version 1 /);
    repo.commit(report('guide, second edition'), 'second');
    repo.push();
    const second = JSON.parse((await cli('mirrors', 'run', 'team', '--json')).out);
    expect(second).toMatchObject({
      name: 'team',
      lastError: null,
      lastResult: { skills: [{ version: 2, created: true }] },
    });
    expect(await currentVersion()).toBe(2);
  });

  it('prints a failed run and exits 1; the last good version stays current', async () => {
    renameSync(repo.bare, `${repo.bare}.moved`);
    try {
      const failed = await cli('mirrors', 'run', 'team');
      expect(failed.code).toBe(1);
      expect(failed.out).toBe('');
      expect(failed.err).toMatch(/^Mirror 'team' of git\+file:\/\/\S+ failed: \S/);
      const listed = JSON.parse((await cli('mirrors', 'list', '--json')).out);
      expect(listed.find((m: { name: string }) => m.name === 'team').lastError).toBe(failed.err.split(' failed: ')[1]);
      expect(await currentVersion()).toBe(2);
    } finally {
      renameSync(`${repo.bare}.moved`, repo.bare);
    }
    expect((await cli('mirrors', 'run', 'team')).code).toBe(0);
    const absent = await cli('mirrors', 'run', 'nothing-here');
    expect(absent.code).toBe(1);
    expect(absent.err).toMatch(/No mirror named 'nothing-here'\. Mirrors: configured, team\./);
  });

  it('removes a mirror the API or the CLI added; the skills it installed stay', async () => {
    expect(await cli('mirrors', 'remove', 'team')).toMatchObject({
      code: 0,
      out: "Removed mirror 'team'; the skills it installed stay (skillhost uninstall NAME removes one).",
    });
    expect((await cli('mirrors', 'remove', 'team')).code).toBe(1);
    expect(await currentVersion()).toBe(2);
  });
});
