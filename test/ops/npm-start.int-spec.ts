import { spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import { afterAll, describe, expect, it } from '@jest/globals';
import { tempTree } from '../support/skill-tree.js';

/**
 * `npm start` (tools/start.mjs) builds only when a build input changed since the last build, so
 * the first start after `npm ci` (which builds) serves at once. Run here in a stand-in project
 * whose build counts its runs and whose server prints one line, so the test does not compile.
 */
describe('npm start', () => {
  const tree = tempTree('skillhost-npm-start-');
  afterAll(() => tree.cleanup());
  copyFileSync('tools/start.mjs', tree.write('tools/start.mjs', ''));
  tree.write('package.json', JSON.stringify({ name: 'stand-in', type: 'module', scripts: { build: 'node build.mjs && node tools/start.mjs --stamp' } }));
  tree.write(
    'build.mjs',
    [
      "import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';",
      "appendFileSync('builds.log', 'built\\n');",
      "mkdirSync('dist/src', { recursive: true });",
      "writeFileSync('dist/src/main.js', \"console.log('served')\\n\");",
    ].join('\n'),
  );
  tree.write('src/main.ts', 'export {};\n');
  tree.write('web/index.html', '<!doctype html>\n');

  const start = () => spawnSync(process.execPath, ['tools/start.mjs'], { cwd: tree.root, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: process.env.HOME } });
  const builds = () => readFileSync(tree.path('builds.log'), 'utf8').split('\n').filter(Boolean).length;
  /** An edit to `file` after the last build: the build is dated a minute back, the file now. */
  const touch = (file: string) => {
    const before = new Date(Date.now() - 60_000);
    utimesSync(tree.path('dist/.built'), before, before);
    const now = new Date();
    utimesSync(tree.path(file), now, now);
  };

  it('builds when there is no build, then serves the built files without building again', () => {
    const first = start();
    expect(first.stdout).toBe('served\n');
    expect(first.stderr).toContain('building first');
    expect(builds()).toBe(1);
    const again = start();
    expect(again).toMatchObject({ status: 0, stdout: 'served\n', stderr: '' });
    expect(builds()).toBe(1);
  });

  it('builds again when a source, the page or the lock changed, or the build is gone', () => {
    touch('src/main.ts');
    expect(start().stdout).toBe('served\n');
    expect(builds()).toBe(2);
    touch('web/index.html');
    start();
    expect(builds()).toBe(3);
    start();
    expect(builds()).toBe(3);
    rmSync(tree.path('dist/src/main.js'));
    expect(start().stdout).toBe('served\n');
    expect(builds()).toBe(4);
  });

  it('a failed build stops the start with its exit code, serving nothing stale', () => {
    tree.write('build.mjs', "console.error('tsc: error'); process.exit(3);\n");
    touch('src/main.ts');
    const failed = start();
    expect(failed.status).toBe(3);
    expect(failed.stdout).toBe('');
    expect(failed.stderr).toContain('tsc: error');
  });
});
