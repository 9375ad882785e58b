import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import { afterAll, describe, expect, it } from '@jest/globals';
import { tempTree } from '../support/files/skill-tree.js';

/**
 * `npm start` (tools/start.mjs) builds only when a build input changed since the last build
 * (tools/build-stamp.mjs), so the first start after `npm ci` (which builds) serves at once. Run
 * here in a stand-in project whose build counts its runs and whose server prints one line, so the
 * test does not compile.
 */
describe('npm start', () => {
  const tree = tempTree('skillhost-npm-start-');
  afterAll(() => tree.cleanup());
  for (const tool of ['start.mjs', 'build-stamp.mjs']) copyFileSync(`tools/${tool}`, tree.write(`tools/${tool}`, ''));
  tree.write(
    'package.json',
    JSON.stringify({
      name: 'stand-in',
      type: 'module',
      scripts: { build: 'node tools/build-stamp.mjs begin && node build.mjs && node tools/build-stamp.mjs finish' },
    }),
  );
  const build = (extra = '') =>
    tree.write(
      'build.mjs',
      [
        "import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';",
        "appendFileSync('builds.log', 'built\\n');",
        "mkdirSync('dist/src', { recursive: true });",
        // A server that prints one line, and stays up when told to (a Skillhost already serving).
        "writeFileSync('dist/src/main.js', \"console.log('served'); if (process.env.STAY) setInterval(() => {}, " +
          '1000);\\n");',
        extra,
      ].join('\n'),
    );
  build();
  tree.write('src/main.ts', 'export {};\n');
  tree.write('web/index.html', '<!doctype html>\n');

  const env = { PATH: process.env.PATH, HOME: process.env.HOME };
  const start = () => spawnSync(process.execPath, ['tools/start.mjs'], { cwd: tree.root, encoding: 'utf8', env });
  const builds = () => readFileSync(tree.path('builds.log'), 'utf8').split('\n').filter(Boolean).length;
  /** An edit to `file` after every earlier one (a clock of its own: file times are only so fine). */
  let clock = Date.now();
  const touch = (file: string) => {
    clock += 1000;
    utimesSync(tree.path(file), new Date(clock), new Date(clock));
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

  it('an edit made while the build runs is built by the next start', () => {
    build(
      "import { statSync, utimesSync } from 'node:fs'; const edited = new Date(statSync('src/main.ts').mtimeMs " +
        "+ 500); utimesSync('src/main.ts', edited, edited);",
    );
    touch('src/main.ts');
    start();
    expect(builds()).toBe(5);
    build();
    start();
    expect(builds()).toBe(6);
    start();
    expect(builds()).toBe(6);
  });

  it('does not rebuild under a Skillhost serving from this folder, and says which', async () => {
    const serving = spawn(process.execPath, ['dist/src/main.js'], {
      cwd: tree.root,
      env: { ...env, STAY: '1' },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      await new Promise((resolve) => serving.stdout!.once('data', resolve));
      touch('src/main.ts');
      const refused = start();
      expect(refused.status).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toContain(
        `a Skillhost started from this folder is running (pid ${serving.pid}); building now would replace its files`,
      );
      expect(builds()).toBe(6);
    } finally {
      serving.kill();
    }
    await new Promise((resolve) => serving.once('exit', resolve));
    expect(start().stdout).toBe('served\n');
    expect(builds()).toBe(7);
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
